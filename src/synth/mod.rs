//! Kernel synthesizers, one file per category. Deterministic per sample:
//! everything about sample `i` comes from the generator handed to it.
//!
//! v1 (`arithmetic`, `math`, `control_flow`, `scalar_param`, `atomic`; the
//! `builder`) writes only this subset of Warp:
//! - one `@wp.kernel` per module, after `import warp as wp`; no `@wp.func`,
//!   loops, vectors, tuples, strings or comments;
//! - parameters `wp.array(dtype=float|wp.float32|int|wp.int32)` and scalars
//!   `float|wp.float32|int|wp.int32`;
//! - statements: `i = wp.tid()` first (named `i`, `tid`, `idx` or `gid`);
//!   `name = expr`; `name += / -= / *= expr` on locals; `arr[idx] = expr`;
//!   `if`/`elif`/`else` nested at most two deep, whose blocks only reassign
//!   locals defined before the `if` and store to arrays; in the atomic
//!   category `wp.atomic_add/sub/min/max(arr, idx, expr)` as statements and
//!   `arr[idx] += / -= expr`;
//! - indices: the thread index, `(i + c) % n` or `(i - 1) % n` with `n` an
//!   int parameter, an int local set once to `(i + c) % n`, `(i * c) % n`,
//!   `i % m` or `arr[idx] % m` (`m` a literal or int parameter), and for
//!   atomic targets also the literal `0`;
//! - expressions: float literals (`2.0`, `0.125`, `3.14159`) and int literals,
//!   names, `arr[idx]`, `+ - * /` on floats, `+ - * // %` on ints (the right
//!   side of `//` and `%` is a positive literal or an int parameter), unary
//!   `-`, `float(int_expr)`, `int(float_expr)`, `wp.sin cos tan exp log sqrt
//!   abs tanh floor ceil sinh cosh` (float), `wp.min wp.max` and
//!   `wp.clamp(x, lo, hi)` (float or int), `wp.abs` (int too), `wp.pow` (float);
//! - conditions: comparisons `< <= > >= == !=` of same-typed expressions,
//!   joined by `and`/`or`, `not`.
//!
//! Float32 and int32 never meet in one operation; tests/python/check_synth_warp.py
//! runs warp-lang's own code generator over dumped samples.
//!
//! v2 (`vector`, `matrix`, `nested`, `grid_2d`, `grid_3d`; the `typed`
//! builder) adds, still inside what the Rust lowering reproduces exactly:
//! - types `wp.vec2/3/4` and `wp.mat22/33/44` (float32) as array dtypes,
//!   kernel parameters and locals; `wp.array2d`/`wp.array3d` and
//!   `wp.array(dtype=.., ndim=N)` with `i, j = wp.tid()` / `i, j, k = wp.tid()`;
//! - `@wp.func` helpers before the kernel (typed parameters, `-> float`,
//!   `-> wp.vec3`, `-> wp.mat33`..., an early `return` under an `if`; grid
//!   lookups taking an array and its sizes), each called by the kernel;
//! - constructors (`wp.vec3(a, b, c)`, `wp.vec3(s)`, `wp.mat22(a, b, c, d)`,
//!   `wp.identity(n=3, dtype=float)`), components `v[0]`, `v.x`, `m[i, j]`,
//!   `m[i][j]`, rows `m[i]` (also of array elements: `a[i].y`), `+ - * /`
//!   between vectors, matrices and scalars as warp defines them, `m * v`,
//!   `v * m`, `m * m`, `wp.dot cross length length_sq normalize lerp min
//!   max abs cw_mul transpose determinant inverse trace outer diag`,
//!   `a if c else b` and `wp.where(c, a, b)`;
//! - component updates of locals (`v[1] = x`, `v.x += y`, `m[i, j] *= s`,
//!   `m[i] = row`), `out[i] += v` and `wp.atomic_add/sub` on vector and
//!   matrix arrays;
//! - `for` over `range(n)`, `range(a, b, step)` (descending, triangular
//!   `range(k + 1, n)`) and small constant ranges warp unrolls; counted
//!   `while` loops (`while it < n:`, `while True:` with a guarded `break`);
//!   `break`/`continue` under `if`s; early `return` (bounds guards, borders
//!   of a grid, inside loops);
//! - neighbour reads with `wp.clamp(i + 1, 0, nx - 1)`, `wp.min/max`,
//!   `(i + 1) % nx`, or raw `i + 1` behind a border `return`.
//!
//! v2 also writes the six categories added with the size knobs:
//! `multi_cond` (elif chains; conditions of up to four comparisons joined by
//! `and`/`or`, grouped, negated, and chained `lo < x < hi`), `reduction`
//! (loop sums / dots / min / max, fixed blocks, atomics into cell 0,
//! histograms), `expression_tree` (operator trees up to `expr_depth` deep),
//! `transform` (index arrays, permutations, scatter-add, computed remaps),
//! `stencil` (1-D and 2-D taps through `grid.rs`, which also takes 1-D
//! launches), and `combined` (features of the other five in one kernel).
//! They aim at the [`Knobs`] while writing; `synthesize_with` measures every
//! sample and redraws the ones outside (see `knobs.rs`).
//!
//! Categories are assigned to indices by [`pick_category`], a golden-ratio
//! sequence (not a random draw), so shares follow the weights closely.
//!
//! Every local starts from an expression that reads a variable, never from a
//! bare literal or name: a literal is a compile-time constant, which warp
//! refuses to mutate inside a dynamic loop; accumulators are `float(0.0)`,
//! `int(0)`, `wp.vec3()`.

mod arithmetic;
mod atomic;
mod builder;
mod combined;
#[allow(dead_code)]
mod compose;
mod control_flow;
mod expression_tree;
mod grid;
mod grid_2d;
mod grid_3d;
#[allow(dead_code)]
pub(crate) mod kernel;
mod knobs;
mod math;
mod matrix;
#[allow(dead_code)]
pub(crate) mod motifs;
mod multi_cond;
mod nested;
mod reduction;
mod scalar_param;
mod stencil;
mod tile;
mod transform;
mod typed;
mod vector;

pub use knobs::{DTYPES, Knobs};

use rand_pcg::Pcg64Mcg;
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// A synthesized kernel: a complete, importable Python module.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub index: u64,
    pub category: &'static str,
    pub kernel_name: String,
    pub python_source: String,
}

/// Every category this version of the synthesizer knows.
pub const CATEGORIES: &[&str] = &[
    "arithmetic",
    "math",
    "control_flow",
    "scalar_param",
    "atomic",
    "vector",
    "matrix",
    "nested",
    "grid_2d",
    "grid_3d",
    "multi_cond",
    "reduction",
    "expression_tree",
    "combined",
    "transform",
    "stencil",
    "tile",
];

/// Salt of the per-sample seed derivation; changing it changes every dataset.
const RNG_SALT: u64 = 0x7061_6972_7069_7065; // "pairpipe"

/// The generator for sample `index` of a run with `seed`: a Pcg64Mcg whose
/// 128-bit state is an xxh3 mix of both, so neighbouring indices are unrelated.
pub fn sample_rng(seed: u64, index: u64) -> Pcg64Mcg {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..].copy_from_slice(&index.to_le_bytes());
    Pcg64Mcg::new(xxh3_128_with_seed(&bytes, RNG_SALT))
}

/// The category of sample `index`: a pure function of `(seed, index)` and
/// the weights, so any worker count or `--part` split agrees.
///
/// The assignment is a low-discrepancy (Kronecker) sequence rather than a
/// random draw: `u = frac(index * phi + offset(seed))` falls into the slice
/// of [0, 1) that belongs to each category (slices sized by weight, in the
/// order given). For golden-ratio steps the count of any category over any
/// run of `n` consecutive indices is within a few samples of
/// `n * weight / total` (about ±2 for 16 equal weights and n in the
/// thousands), where a random draw is off by about `sqrt(n)`. The seed only
/// shifts the sequence. Weights that are not positive (or not finite) never
/// win; the config validates that at least one is positive, and if none is
/// the first entry is returned (`arithmetic` for an empty list).
pub fn pick_category(seed: u64, index: u64, weights: &[(&'static str, f64)]) -> &'static str {
    // 2^64 / phi, odd: the 64-bit golden-ratio step.
    const PHI: u64 = 0x9E37_79B9_7F4A_7C15;
    let valid = |w: f64| w.is_finite() && w > 0.0;
    let total: f64 = weights.iter().map(|&(_, w)| w).filter(|&w| valid(w)).sum();
    let Some(&(first, _)) = weights.first() else {
        return CATEGORIES[0];
    };
    if total <= 0.0 {
        return first;
    }
    let offset = xxhash_rust::xxh3::xxh3_64_with_seed(&seed.to_le_bytes(), RNG_SALT);
    let u = index.wrapping_mul(PHI).wrapping_add(offset);
    // The top 53 bits as a fraction of 1: exact in an f64.
    let mut r = (u >> 11) as f64 / (1u64 << 53) as f64 * total;
    let mut last = first;
    for &(name, w) in weights.iter().filter(|&&(_, w)| valid(w)) {
        if r < w {
            return name;
        }
        r -= w;
        last = name;
    }
    // Only reachable through floating-point rounding at the very top.
    last
}

/// Synthesize sample `index` of `category`.
///
/// # Panics
/// If `category` is not one of [`CATEGORIES`]; the config rejects unknown
/// categories before a run starts.
pub fn synthesize(category: &'static str, index: u64, rng: &mut Pcg64Mcg) -> Sample {
    synthesize_with(category, index, rng, &Knobs::default())
}

/// Synthesize sample `index` of `category` within the size and shape
/// `knobs`. The new categories aim at the knobs while they write; every
/// category is also measured afterwards (see [`Knobs::admits`]) and drawn
/// again, from the same generator, while it falls outside them, at most
/// [`knobs::MAX_REDRAWS`] times (then the last draw is kept: only knobs far
/// outside what a v1/v2 category can write get there). With the default
/// knobs every category's first draw is admitted, so its output is what it
/// was before the knobs existed.
///
/// # Panics
/// If `category` is not one of [`CATEGORIES`].
pub fn synthesize_with(
    category: &'static str,
    index: u64,
    rng: &mut Pcg64Mcg,
    knobs: &Knobs,
) -> Sample {
    let draw = |rng: &mut Pcg64Mcg| match category {
        "arithmetic" => arithmetic::generate(rng),
        "math" => math::generate(rng),
        "control_flow" => control_flow::generate(rng),
        "scalar_param" => scalar_param::generate(rng),
        "atomic" => atomic::generate(rng),
        "vector" => vector::generate(rng, knobs),
        "matrix" => matrix::generate(rng, knobs),
        "nested" => nested::generate(rng, knobs),
        "grid_2d" => grid_2d::generate(rng, knobs),
        "grid_3d" => grid_3d::generate(rng, knobs),
        "multi_cond" => multi_cond::generate(rng, knobs),
        "reduction" => reduction::generate(rng, knobs),
        "expression_tree" => expression_tree::generate(rng, knobs),
        "combined" => combined::generate(rng, knobs),
        "transform" => transform::generate(rng, knobs),
        "stencil" => stencil::generate(rng, knobs),
        "tile" => tile::generate(rng),
        other => panic!("unknown synthesizer category {other:?} (known: {CATEGORIES:?})"),
    };
    let mut drawn = draw(rng);
    for _ in 0..knobs::MAX_REDRAWS {
        if knobs.admits(&drawn.1) {
            break;
        }
        drawn = draw(rng);
    }
    let (kernel_name, python_source) = drawn;
    Sample {
        index,
        category,
        kernel_name,
        python_source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn sample(category: &'static str, seed: u64, index: u64) -> Sample {
        synthesize(category, index, &mut sample_rng(seed, index))
    }

    #[test]
    fn same_seed_and_index_give_the_same_source() {
        for &category in CATEGORIES {
            for index in 0..100 {
                let a = sample(category, 42, index);
                assert_eq!(a, sample(category, 42, index));
                assert_eq!(a.index, index);
                assert_eq!(a.category, category);
            }
        }
    }

    #[test]
    fn seed_and_index_both_change_the_sample() {
        use rand_core::Rng;
        let first = |seed, index| sample_rng(seed, index).next_u64();
        assert_ne!(first(1, 0), first(2, 0));
        assert_ne!(first(1, 0), first(1, 1));
        assert_ne!(first(0, 1), first(1, 0));
        let differ = (0..100)
            .filter(|&i| sample("arithmetic", 1, i) != sample("arithmetic", 2, i))
            .count();
        assert!(
            differ >= 99,
            "only {differ}/100 samples changed with the seed"
        );
    }

    /// Identifiers renamed `v0, v1, ...` in order of first appearance (keywords,
    /// `wp`, names after `wp.` and `float`/`int` kept): the "renamed" dedup level.
    fn renamed(src: &str) -> String {
        const KEEP: &[&str] = &[
            "import", "warp", "as", "wp", "def", "if", "elif", "else", "and", "or", "not", "float",
            "int", "for", "in", "range", "while", "break", "continue", "return", "True",
        ];
        let mut names: Vec<&str> = Vec::new();
        let mut out = String::with_capacity(src.len());
        let bytes = src.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &src[start..i];
                if KEEP.contains(&word) || (start > 0 && bytes[start - 1] == b'.') {
                    out.push_str(word);
                } else {
                    let n = names.iter().position(|&w| w == word).unwrap_or_else(|| {
                        names.push(word);
                        names.len() - 1
                    });
                    out.push('v');
                    out.push_str(&n.to_string());
                }
            } else {
                out.push(c as char);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn renaming_normalizes_only_identifiers() {
        let a = "x = wp.sin(a[i]) + float(k)\n";
        let b = "y = wp.sin(b[j]) + float(m)\n";
        assert_eq!(renamed(a), renamed(b));
        assert_ne!(renamed(a), renamed("y = wp.cos(b[j]) + float(m)\n"));
    }

    #[test]
    fn sources_vary_after_renaming_identifiers() {
        for &category in CATEGORIES {
            let distinct: HashSet<String> = (0..1000)
                .map(|i| renamed(&sample(category, 7, i).python_source))
                .collect();
            assert!(
                distinct.len() >= 950,
                "{category}: only {} of 1000 distinct after renaming",
                distinct.len()
            );
        }
    }

    /// Structural checks of the v1 subset; warp-lang itself checks the rest
    /// (tests/python/check_synth_warp.py).
    #[test]
    fn every_category_writes_a_plausible_module() {
        let prefixes = [
            ("arithmetic", "arith_"),
            ("math", "math_"),
            ("control_flow", "ctrl_"),
            ("scalar_param", "scalar_"),
            ("atomic", "atomic_"),
        ];
        for &(category, prefix) in &prefixes {
            let mut feature = 0;
            for index in 0..500 {
                let s = sample(category, 11, index);
                let src = &s.python_source;
                let name = &s.kernel_name;
                assert!(name.starts_with(prefix), "{name}");
                assert!(
                    name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                    "{name}"
                );
                let head = format!("import warp as wp\n\n\n@wp.kernel\ndef {name}(");
                assert!(src.starts_with(&head), "{src}");
                assert_eq!(src.matches("@wp.kernel").count(), 1);
                for banned in [
                    "@wp.func", "for ", "while ", "#", "\"", "'", "\t", "wp.vec", "wp.mat",
                ] {
                    assert!(!src.contains(banned), "{banned:?} in\n{src}");
                }
                let lines: Vec<&str> = src.lines().collect();
                let body = &lines[5..];
                assert!(lines[4].ends_with("):"), "{src}");
                assert!(body[0].ends_with(" = wp.tid()"), "{src}");
                assert!(
                    (3..=32).contains(&body.len()),
                    "{} body lines:\n{src}",
                    body.len()
                );
                for line in body {
                    let indent = line.len() - line.trim_start().len();
                    assert!(indent % 4 == 0 && (4..=12).contains(&indent), "{src}");
                    let opened = line.matches('(').count();
                    assert_eq!(opened, line.matches(')').count(), "{line}");
                    assert_eq!(
                        line.matches('[').count(),
                        line.matches(']').count(),
                        "{line}"
                    );
                }
                assert!(src.ends_with('\n'));
                let has = match category {
                    // Builtin calls besides `wp.tid()`, at least two.
                    "math" => src.matches("wp.").count() - src.matches("wp.array").count() >= 4,
                    "control_flow" => src.contains("\n    if "),
                    "scalar_param" => {
                        lines[4].matches(": float").count()
                            + lines[4].matches(": wp.float32").count()
                            + lines[4].matches(": int").count()
                            + lines[4].matches(": wp.int32").count()
                            >= 2
                    }
                    "atomic" => {
                        src.contains("wp.atomic_") || src.contains("] += ") || src.contains("] -= ")
                    }
                    _ => {
                        src.contains(" + ")
                            || src.contains(" - ")
                            || src.contains(" * ")
                            || src.contains(" / ")
                    }
                };
                feature += has as u32;
            }
            // Every atomic kernel accumulates and every control_flow kernel branches; the
            // others have their feature in (almost) every sample.
            assert!(
                feature >= 480,
                "{category}: only {feature}/500 show the category's feature"
            );
        }
    }

    /// The v2 categories: kernel (and helper) layout, blocks, the rules that
    /// keep warp happy (no local set to a bare name or literal, accumulators
    /// declared dynamic), and each category's feature in every sample.
    #[test]
    fn v2_categories_write_plausible_modules() {
        let cats = [
            ("vector", "vec_", 1..=1),
            ("matrix", "mat_", 1..=1),
            ("nested", "nested_", 1..=2),
            ("grid_2d", "grid2d_", 2..=2),
            ("grid_3d", "grid3d_", 3..=3),
            ("multi_cond", "cond_", 1..=1),
            ("reduction", "reduce_", 1..=1),
            ("expression_tree", "expr_", 1..=1),
            ("combined", "combo_", 1..=1),
            ("transform", "remap_", 1..=1),
            ("stencil", "stencil_", 1..=2),
        ];
        let mut helpers = 0;
        for (category, prefix, dims) in cats {
            for index in 0..500 {
                let s = sample(category, 13, index);
                let src = &s.python_source;
                let name = &s.kernel_name;
                assert!(name.starts_with(prefix), "{name}");
                assert!(src.starts_with("import warp as wp\n\n\n@wp."), "{src}");
                assert!(src.ends_with('\n') && !src.ends_with("\n\n"), "{src}");
                assert_eq!(src.matches("@wp.kernel").count(), 1, "{src}");
                let funcs = src.matches("@wp.func\ndef ").count();
                helpers += funcs;
                assert_eq!(src.matches("\ndef ").count(), funcs + 1, "{src}");
                let head = format!("@wp.kernel\ndef {name}(");
                assert!(src.contains(&head), "{src}");
                for banned in ["#", "\"", "'", "\t", "  =", "= =", "( ", " )", ",)"] {
                    assert!(!src.contains(banned), "{banned:?} in\n{src}");
                }
                let lines: Vec<&str> = src.lines().collect();
                let k = lines
                    .iter()
                    .position(|l| l.starts_with("def ") && l.contains(name.as_str()))
                    .unwrap();
                // The launch: as many thread indices as the category's dimensions.
                let tid = lines[k + 1].trim_start();
                assert!(tid.ends_with(" = wp.tid()"), "{src}");
                let n_tid = tid.matches(',').count() + 1;
                assert!(dims.contains(&n_tid), "{n_tid} thread indices:\n{src}");
                let body = &lines[k + 1..];
                assert!(
                    (2..=90).contains(&body.len()),
                    "{} lines:\n{src}",
                    body.len()
                );
                let mut loop_indents: Vec<usize> = Vec::new();
                // (indent, constant range, dynamic inside a constant loop, constant loops inside)
                let mut loops: Vec<(usize, bool, bool, u32)> = Vec::new();
                let mut max_loops = 0;
                let mut prev_indent = 4;
                let mut opens = false;
                for line in &lines[3..] {
                    if line.is_empty() || line.starts_with('@') || line.starts_with("def ") {
                        opens = line.starts_with("def ");
                        prev_indent = 0;
                        continue;
                    }
                    let indent = line.len() - line.trim_start().len();
                    assert!(indent % 4 == 0 && indent >= 4, "{line}\n{src}");
                    if opens {
                        assert_eq!(indent, prev_indent + 4, "{line}\n{src}");
                    } else {
                        assert!(indent <= prev_indent, "{line}\n{src}");
                    }
                    let t = line.trim_start();
                    opens = t.ends_with(':');
                    prev_indent = indent;
                    for open in ["(", "["] {
                        let close = if open == "(" { ")" } else { "]" };
                        assert_eq!(t.matches(open).count(), t.matches(close).count(), "{line}");
                    }
                    loop_indents.retain(|&i| i < indent);
                    loops.retain(|l| l.0 < indent);
                    if t.starts_with("for ") || t.starts_with("while ") {
                        loop_indents.push(indent);
                        max_loops = max_loops.max(loop_indents.len());
                        // A dynamic loop inside a constant one holds at most one
                        // constant loop (warp orders the leftover-iterator copies
                        // of several by a Python set, see typed.rs `Loop`).
                        let args = t
                            .split_once("range(")
                            .map(|(_, a)| a.trim_end_matches("):"));
                        let constant = args.is_some_and(|a| {
                            a.bytes()
                                .all(|b| b.is_ascii_digit() || b == b'-' || b == b',' || b == b' ')
                        });
                        if constant {
                            for l in loops.iter_mut().filter(|l| l.2) {
                                l.3 += 1;
                                assert!(
                                    l.3 <= 1,
                                    "two constant loops in a re-emitted dynamic loop:\n{src}"
                                );
                            }
                        }
                        let limited = !constant && loops.iter().any(|l| l.1);
                        loops.push((indent, constant, limited, 0));
                    }
                    if t == "break" || t == "continue" {
                        assert!(!loop_indents.is_empty(), "{t} outside a loop:\n{src}");
                    }
                    // `x = <bare name or literal>` would make an alias or a
                    // compile-time constant (warp refuses to mutate those in
                    // dynamic loops): never written.
                    if let Some((lhs, rhs)) = t.split_once(" = ") {
                        let lhs_is_name =
                            lhs.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                        let rhs = rhs.strip_prefix('-').unwrap_or(rhs);
                        let rhs_is_atom = rhs
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                            && (rhs.as_bytes()[0].is_ascii_digit() || !rhs.contains('.'));
                        assert!(!(lhs_is_name && rhs_is_atom), "{line}\n{src}");
                    }
                }
                let has = match category {
                    "vector" => src.contains("wp.vec"),
                    "matrix" => src.contains("wp.mat"),
                    "nested" => max_loops >= 2,
                    "grid_2d" => src.contains("array2d(") || src.contains("ndim=2"),
                    "grid_3d" => src.contains("array3d(") || src.contains("ndim=3"),
                    "multi_cond" => {
                        src.contains("elif ") || src.contains(" and ") || src.contains(" or ")
                    }
                    "reduction" => {
                        src.contains("wp.atomic_") || src.contains("[0] ") || max_loops >= 1
                    }
                    "expression_tree" => lines.iter().any(|l| l.len() > 90),
                    "combined" => body.len() >= 8,
                    "transform" => {
                        // An index array, or a computed remap.
                        src.contains("dtype=int")
                            || src.contains("dtype=wp.int32")
                            || src.contains(" % ")
                            || src.contains(" - 1 - ")
                            || src.contains("wp.min(")
                    }
                    _ => src.contains(" - 1") || src.contains(" + 1"),
                };
                assert!(has, "{category} feature missing:\n{src}");
            }
        }
        assert!(
            helpers > 100,
            "only {helpers} @wp.func helpers in 2500 samples"
        );
    }

    /// The v1 categories do not change with v2: a fingerprint of their first samples.
    #[test]
    fn v1_categories_are_stable() {
        let mut all = String::new();
        for category in [
            "arithmetic",
            "math",
            "control_flow",
            "scalar_param",
            "atomic",
        ] {
            for index in 0..200 {
                all.push_str(&sample(category, 2024, index).python_source);
            }
        }
        let h = xxhash_rust::xxh3::xxh3_64(all.as_bytes());
        assert_eq!(h, V1_FINGERPRINT, "v1 output changed: {h:#x}");
    }

    /// xxh3 of the v1 code before v2 (main at b5bf522).
    const V1_FINGERPRINT: u64 = 0x2004_890f_21f1_703a;

    /// Counts of each weighted category over `n` consecutive indices from `start`.
    fn shares(seed: u64, start: u64, n: u64, weights: &[(&'static str, f64)]) -> Vec<u64> {
        let mut counts = vec![0u64; weights.len()];
        for index in start..start + n {
            let c = pick_category(seed, index, weights);
            counts[weights.iter().position(|w| w.0 == c).unwrap()] += 1;
        }
        counts
    }

    /// Every category within ±1% (relative) of its weight share.
    fn assert_shares(seed: u64, start: u64, n: u64, weights: &[(&'static str, f64)]) {
        let total: f64 = weights.iter().map(|w| w.1).sum();
        for (&(name, w), count) in weights.iter().zip(shares(seed, start, n, weights)) {
            let expected = n as f64 * w / total;
            assert!(
                (count as f64 - expected).abs() <= 0.01 * expected,
                "seed {seed}, {n} from {start}: {name} {count}, expected {expected:.1}"
            );
        }
    }

    #[test]
    fn equal_weights_give_equal_shares_within_one_percent() {
        let all: Vec<(&'static str, f64)> = CATEGORIES.iter().map(|&c| (c, 1.0)).collect();
        for seed in [0, 7, 2024, 20261121] {
            // 6,000 rows: 375 per category, ±3.75.
            assert_shares(seed, 0, 6000, &all);
            // Any window of indices, as `--part i/N` sees them.
            assert_shares(seed, 123_457, 6000, &all);
            assert_shares(seed, 0, 16_000, &all);
        }
        let six: Vec<(&'static str, f64)> = CATEGORIES[10..16].iter().map(|&c| (c, 1.0)).collect();
        assert_shares(3, 0, 3000, &six);
    }

    #[test]
    fn pick_category_follows_weights() {
        let weights = [
            ("arithmetic", 1.0),
            ("math", 2.0),
            ("control_flow", 0.5),
            ("atomic", 4.5),
        ];
        assert_shares(5, 0, 8000, &weights);
        assert_shares(5, 1 << 40, 8000, &weights);
    }

    #[test]
    fn pick_category_is_a_function_of_seed_and_index() {
        let all: Vec<(&'static str, f64)> = CATEGORIES.iter().map(|&c| (c, 1.0)).collect();
        let a: Vec<_> = (0..500).map(|i| pick_category(9, i, &all)).collect();
        let b: Vec<_> = (0..500).rev().map(|i| pick_category(9, i, &all)).collect();
        assert!(a.iter().eq(b.iter().rev()));
        let c: Vec<_> = (0..500).map(|i| pick_category(10, i, &all)).collect();
        assert_ne!(a, c, "the seed shifts the sequence");
        // Neighbouring indices do not repeat one category in runs.
        assert!(a.windows(2).filter(|w| w[0] == w[1]).count() < 10);
    }

    #[test]
    fn pick_category_skips_non_positive_weights() {
        let weights = [
            ("arithmetic", 0.0),
            ("math", -1.0),
            ("atomic", 1.0),
            ("control_flow", f64::NAN),
        ];
        for index in 0..1000 {
            assert_eq!(pick_category(1, index, &weights), "atomic");
        }
        assert_eq!(pick_category(1, 2, &[("math", 0.0)]), "math");
        assert_eq!(pick_category(1, 2, &[]), "arithmetic");
    }

    /// Knobs that admit anything.
    fn open_knobs() -> Knobs {
        Knobs {
            statements: (0, usize::MAX),
            params: (0, usize::MAX),
            expr_depth: u32::MAX,
            loop_depth: usize::MAX,
            dtypes: u8::MAX,
        }
    }

    /// The default knobs admit every first draw and cap no expression:
    /// what each category wrote before the knobs existed is unchanged.
    #[test]
    fn default_knobs_change_nothing() {
        let open = open_knobs();
        for &category in CATEGORIES {
            for index in 0..300 {
                let a = sample(category, 21, index);
                let b = synthesize_with(category, index, &mut sample_rng(21, index), &open);
                assert_eq!(a, b, "{category} {index}");
            }
        }
    }

    /// The six categories that came with the knobs.
    const NEW: std::ops::Range<usize> = 10..16;

    fn with(knobs: &Knobs, category: &'static str, index: u64) -> String {
        synthesize_with(category, index, &mut sample_rng(33, index), knobs).python_source
    }

    #[test]
    fn knobs_bound_statements_params_and_loops() {
        let knobs = Knobs {
            statements: (6, 14),
            params: (4, 7),
            loop_depth: 1,
            ..Knobs::default()
        };
        for &category in CATEGORIES[NEW]
            .iter()
            .chain(&["vector", "grid_2d", "arithmetic"])
        {
            for index in 0..200 {
                let src = with(&knobs, category, index);
                let m = knobs::measure(&src);
                assert!((6..=14).contains(&m.statements), "{m:?}\n{src}");
                assert!((4..=7).contains(&m.params), "{m:?}\n{src}");
                assert!(m.loop_depth <= 1, "{m:?}\n{src}");
            }
        }
        // No loops at all.
        let flat = Knobs {
            loop_depth: 0,
            ..Knobs::default()
        };
        for &category in &CATEGORIES[NEW] {
            for index in 0..100 {
                let src = with(&flat, category, index);
                assert!(!src.contains("for ") && !src.contains("while "), "{src}");
            }
        }
    }

    #[test]
    fn knobs_restrict_dtypes() {
        let float_only = Knobs {
            dtypes: Knobs::dtype_mask(&["float32"]).unwrap(),
            ..Knobs::default()
        };
        let vec3 = Knobs {
            dtypes: Knobs::dtype_mask(&["float32", "int32", "vec3"]).unwrap(),
            ..Knobs::default()
        };
        let mut vec3_seen = 0;
        for &category in CATEGORIES[NEW]
            .iter()
            .chain(&["nested", "grid_3d", "control_flow"])
        {
            for index in 0..200 {
                let src = with(&float_only, category, index);
                for banned in [
                    "wp.vec",
                    "wp.mat",
                    "dtype=int",
                    "dtype=wp.int32",
                    "wp.identity",
                ] {
                    assert!(!src.contains(banned), "{banned} in\n{src}");
                }
                let src = with(&vec3, category, index);
                for banned in ["wp.vec2", "wp.vec4", "wp.mat"] {
                    assert!(!src.contains(banned), "{banned} in\n{src}");
                }
                vec3_seen += src.contains("wp.vec3") as u32;
            }
        }
        assert!(vec3_seen > 50, "only {vec3_seen} samples with vec3");
        for index in 0..100 {
            let src = with(&vec3, "vector", index);
            assert!(src.contains("wp.vec3") && !src.contains("wp.vec2"), "{src}");
        }
    }

    #[test]
    fn expr_depth_bounds_expressions() {
        let longest = |knobs: &Knobs| {
            (0..200)
                .map(|i| {
                    with(knobs, "expression_tree", i)
                        .lines()
                        .map(str::len)
                        .max()
                        .unwrap_or(0)
                })
                .max()
                .unwrap_or(0)
        };
        let shallow = Knobs {
            expr_depth: 2,
            ..Knobs::default()
        };
        let (a, b) = (longest(&shallow), longest(&Knobs::default()));
        assert!(a * 2 < b, "longest line {a} at depth 2, {b} by default");
    }

    #[test]
    fn default_knobs_spread_kernel_sizes() {
        let mut lines: Vec<usize> = Vec::new();
        for &category in CATEGORIES {
            for index in 0..200 {
                lines.push(knobs::measure(&sample(category, 4, index).python_source).statements);
            }
        }
        lines.sort_unstable();
        assert!(lines[0] <= 3, "shortest {}", lines[0]);
        assert!(
            lines[lines.len() - 1] >= 40,
            "longest {}",
            lines[lines.len() - 1]
        );
    }

    #[test]
    #[should_panic(expected = "unknown synthesizer category")]
    fn unknown_category_is_refused() {
        sample("no_such_category", 0, 0);
    }
}
