//! Kernel synthesizer: kernels composed of motifs, small pieces of real
//! Warp code from six domains (physics, fields and images, data-parallel
//! patterns, per-thread linear algebra, geometry, random sampling), written
//! into one builder ([`kernel::Kernel`]) with domain names, typed parameters
//! with roles and value ranges, helper `@wp.func`s / `@wp.struct`s, and a
//! launch shape. Deterministic per sample: everything about sample `i` comes
//! from the generator handed to it.
//!
//! - `kernel.rs`: the builder; writes the module and the `launch_spec` JSON.
//! - `motifs/`: one file per domain, each a `MOTIFS` table; a category is a
//!   family of motifs (`Motif::categories`).
//! - `compose.rs`: a category's kernel = a launch shape + motifs of its family
//!   until the `statements` goal; motifs compose through offered values.
//! - `dataflow.rs`: the guarantees, checked on the parsed kernel: every local
//!   and parameter reaches an output, no condition known before running, no
//!   race on a GPU, no division/log/sqrt/pow/acos/asin outside its domain on
//!   the declared ranges. [`synthesize_with`] redraws (same generator) while a
//!   sample fails them or falls outside the knobs.
//!
//! Categories are assigned to indices by [`pick_category`], a golden-ratio
//! sequence (not a random draw), so shares follow the weights closely.

mod compose;
pub mod dataflow;
// The builder's and the motif table's whole API is for motif authors; not
// every part is used by the motifs of every branch.
#[allow(dead_code)]
pub(crate) mod kernel;
mod knobs;
#[allow(dead_code)]
pub(crate) mod motifs;

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
    /// How to launch it: JSON text (dims, tiled, per-parameter shapes, roles
    /// and value ranges); schema in `kernel.rs` / `launch_spec`.
    pub launch_spec: String,
    /// The motifs it is made of, in order.
    pub motifs: Vec<&'static str>,
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
/// `knobs`. A drawn kernel that fails the dataflow guarantees
/// ([`dataflow::check`]) or falls outside the knobs ([`Knobs::admits`]) is
/// drawn again from the same generator, at most [`knobs::MAX_REDRAWS`] times
/// (then the last draw that passes the dataflow check is kept, else the last
/// draw: only knobs far outside what a category can write get there).
///
/// # Panics
/// If `category` is not one of [`CATEGORIES`].
pub fn synthesize_with(
    category: &'static str,
    index: u64,
    rng: &mut Pcg64Mcg,
    knobs: &Knobs,
) -> Sample {
    synthesize_counting(category, index, rng, knobs, &mut [0; dataflow::RULES])
}

/// `PAIRPIPE_SYNTH_DEBUG=1`: print every redrawn kernel with its rule on stderr.
static DEBUG: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::env::var_os("PAIRPIPE_SYNTH_DEBUG").is_some());

/// [`synthesize_with`], adding to `redrawn[r]` each draw that failed
/// dataflow rule `r` (see [`dataflow::RULE_NAMES`]).
pub fn synthesize_counting(
    category: &'static str,
    index: u64,
    rng: &mut Pcg64Mcg,
    knobs: &Knobs,
    redrawn: &mut [u64; dataflow::RULES],
) -> Sample {
    synthesize_parsed(category, index, rng, knobs, redrawn, |_, _, _| ()).0
}

/// The parse of a kept sample that [`synthesize_parsed`] hands on: its
/// tokens and its syntax tree (in the arena handed along with it).
pub type Parsed<'t, 'a> = (&'t [crate::lang::Token<'a>], crate::lang::ast::Module<'a>);

/// [`synthesize_counting`], then `then` on the kept sample and the parse the
/// dataflow check made of it (`None` only if it does not parse), so that a
/// caller that lowers the sample does not tokenize and parse it again.
/// Returns the sample and what `then` returned. Runs on a grown stack, in
/// the thread's syntax-tree arena.
pub fn synthesize_parsed<R>(
    category: &'static str,
    index: u64,
    rng: &mut Pcg64Mcg,
    knobs: &Knobs,
    redrawn: &mut [u64; dataflow::RULES],
    then: impl for<'t, 'a> FnOnce(&'a Sample, Option<Parsed<'t, 'a>>, &'a bumpalo::Bump) -> R,
) -> (Sample, R) {
    assert!(
        CATEGORIES.contains(&category),
        "unknown synthesizer category {category:?} (known: {CATEGORIES:?})"
    );
    let sample_of = |d: compose::Drawn| {
        (
            Sample {
                index,
                category,
                kernel_name: d.kernel_name,
                python_source: d.python_source,
                launch_spec: d.launch_spec,
                motifs: d.motifs,
            },
            d.params,
            d.dim,
        )
    };
    crate::lower::with_stack(|| {
        crate::lang::ast::with_arena(|arena| {
            let mut kept: Option<Sample> = None;
            for _ in 0..=knobs::MAX_REDRAWS {
                let (sample, params, dim) = sample_of(compose::compose(category, rng, knobs));
                let (tokens, module) = parse_in(&sample.python_source, arena);
                let verdict = match &module {
                    Some(m) => dataflow::check_module(m, &params, &dim),
                    None => Err(dataflow::Rule::Unparsed),
                };
                match verdict {
                    Ok(()) => {
                        if knobs.admits(&sample.python_source) {
                            let parsed = tokens.as_deref().zip(module);
                            let r = then(&sample, parsed, arena);
                            drop(tokens);
                            return (sample, r);
                        }
                        kept = Some(sample);
                    }
                    Err(rule) => {
                        redrawn[rule as usize] += 1;
                        if *DEBUG {
                            eprintln!("# redrawn ({rule:?}):\n{}", sample.python_source);
                        }
                        if kept.is_none() {
                            kept = Some(sample);
                        }
                    }
                }
            }
            // No draw passed everything: the kept one, parsed again (rare).
            let sample = kept.expect("at least one draw");
            let (tokens, module) = parse_in(&sample.python_source, arena);
            let parsed = tokens.as_deref().zip(module);
            let r = then(&sample, parsed, arena);
            drop(tokens);
            (sample, r)
        })
    })
}

/// `src`'s tokens and its syntax tree in `arena` (each `None` if it fails).
fn parse_in<'a>(
    src: &'a str,
    arena: &'a bumpalo::Bump,
) -> (
    Option<Vec<crate::lang::Token<'a>>>,
    Option<crate::lang::ast::Module<'a>>,
) {
    let tokens = crate::lang::tokenize(src).ok();
    let module = tokens
        .as_deref()
        .and_then(|t| crate::lang::parse_tokens(t, arena).ok());
    (tokens, module)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Kernels rarely repeat, even up to renaming.
    #[test]
    fn samples_are_varied() {
        for &category in CATEGORIES {
            let mut exact = std::collections::HashSet::new();
            let mut shapes = std::collections::HashSet::new();
            for index in 0..300 {
                let s = sample(category, 5, index);
                shapes.insert(renamed(&s.python_source));
                exact.insert(s.python_source);
            }
            assert!(
                exact.len() >= 290,
                "{category}: {} distinct of 300",
                exact.len()
            );
            assert!(
                shapes.len() >= 150,
                "{category}: {} distinct up to renaming of 300",
                shapes.len()
            );
        }
    }

    /// The module layout, the launch spec and the motifs of every category.
    #[test]
    fn every_category_writes_a_plausible_module() {
        for &category in CATEGORIES {
            let mut with_feature = 0;
            for index in 0..300 {
                let s = sample(category, 13, index);
                let src = &s.python_source;
                let name = &s.kernel_name;
                assert!(!s.motifs.is_empty(), "{category}: no motif\n{src}");
                for m in &s.motifs {
                    let motif = motifs::all().iter().find(|x| x.name == *m).unwrap();
                    assert!(motif.categories.contains(&category) || category == "combined");
                }
                assert!(
                    name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                    "{name}"
                );
                assert!(src.starts_with("import warp as wp\n"), "{src}");
                assert!(src.ends_with('\n') && !src.ends_with("\n\n"), "{src}");
                assert_eq!(src.matches("@wp.kernel").count(), 1, "{src}");
                assert!(src.contains(&format!("@wp.kernel\ndef {name}(")), "{src}");
                for banned in [
                    "#", "\"", "'", "\t", "  =", "= =", "( ", " )", ",)", "+ -", "- -",
                ] {
                    assert!(!src.contains(banned), "{banned:?} in\n{src}");
                }
                // The launch spec parses, lists every parameter in order and
                // launches as many thread indices as the kernel reads.
                let spec: serde_json::Value = serde_json::from_str(&s.launch_spec).unwrap();
                let head = src.split(&format!("def {name}(")).nth(1).unwrap();
                let sig = head.split("):\n").next().unwrap();
                let names: Vec<&str> = sig
                    .split(", ")
                    .map(|p| p.split(": ").next().unwrap())
                    .collect();
                let spec_names: Vec<&str> = spec["params"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["name"].as_str().unwrap())
                    .collect();
                assert_eq!(names, spec_names, "{src}\n{}", s.launch_spec);
                let tid = head.lines().nth(1).unwrap().trim_start();
                assert!(tid.ends_with(" = wp.tid()"), "{src}");
                let dims = spec["dim"].as_array().unwrap().len();
                assert_eq!(tid.matches(',').count() + 1, dims, "{src}");
                assert_eq!(spec["tiled"].as_bool().unwrap(), category == "tile");
                let has = match category {
                    "math" => src.matches("wp.").count() >= 3,
                    "control_flow" => src.contains("    if ") || src.contains("wp.where("),
                    "scalar_param" => spec["params"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| p["kind"] == "scalar"),
                    "atomic" => src.contains("wp.atomic_") || src.contains("] += "),
                    "vector" => {
                        src.contains("wp.vec")
                            || src.contains("wp.quat")
                            || src.contains("wp.spatial")
                    }
                    "matrix" => src.contains("wp.mat") || src.contains("wp.transform"),
                    "nested" => knobs::measure(src).loop_depth >= 1,
                    "grid_2d" => dims == 2,
                    "grid_3d" => dims == 3,
                    "multi_cond" => {
                        src.contains("elif ") || src.contains(" and ") || src.contains(" or ")
                    }
                    "reduction" => src.contains("wp.atomic_") || src.contains("for "),
                    "expression_tree" => src.lines().any(|l| l.len() > 60),
                    "combined" => s.motifs.len() >= 2,
                    "transform" => {
                        src.contains("dtype=wp.int32")
                            || src.contains(" % ")
                            || src.contains(" - 1 - ")
                    }
                    "stencil" => src.contains(" - 1") || src.contains(" + 1"),
                    "tile" => src.contains("wp.tile_load("),
                    _ => src.contains(" * ") || src.contains(" + ") || src.contains(" - "),
                };
                with_feature += has as u32;
            }
            assert!(
                with_feature >= 270,
                "{category}: only {with_feature}/300 show the category's feature"
            );
        }
    }

    /// The spec marks `"order": "any"` exactly the arrays a stream
    /// compaction stores at a slot taken with `wp.atomic_add` (their order
    /// differs from GPU launch to launch), with `"slots"` naming the counter
    /// the slot came from, and such kernels do come up.
    #[test]
    fn compaction_outputs_are_marked_any_order() {
        let mut compacting = 0;
        for &category in CATEGORIES {
            for index in 0..400 {
                let s = sample(category, 77, index);
                let lines: Vec<&str> = s.python_source.lines().map(str::trim).collect();
                // (slot variable, counter array) of each `slot = wp.atomic_add(counter, ...)`.
                let slots: Vec<(&str, &str)> = lines
                    .iter()
                    .filter_map(|l| l.split_once(" = wp.atomic_add("))
                    .filter_map(|(slot, args)| Some((slot, args.split_once(',')?.0)))
                    .collect();
                let mut stored: Vec<(&str, &str)> = lines
                    .iter()
                    .filter_map(|l| l.split_once("] = "))
                    .filter_map(|(lhs, _)| lhs.split_once('['))
                    .filter_map(|(array, index)| {
                        let (_, counter) = slots.iter().find(|(slot, _)| *slot == index)?;
                        Some((array, *counter))
                    })
                    .collect();
                let spec: serde_json::Value = serde_json::from_str(&s.launch_spec).unwrap();
                let mut marked: Vec<(&str, &str)> = spec["params"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["order"] == "any")
                    .map(|p| (p["name"].as_str().unwrap(), p["slots"].as_str().unwrap()))
                    .collect();
                stored.sort();
                marked.sort();
                assert_eq!(stored, marked, "{category} {index}\n{}", s.python_source);
                compacting += usize::from(!marked.is_empty());
            }
        }
        assert!(compacting >= 20, "only {compacting} compacting kernels");
    }

    /// A fingerprint of the first samples of every category: the output
    /// changes only on purpose (update it with the reason in the commit).
    #[test]
    fn output_is_stable() {
        let mut all = String::new();
        for &category in CATEGORIES {
            for index in 0..60 {
                let s = sample(category, 2024, index);
                all.push_str(&s.python_source);
                all.push_str(&s.launch_spec);
            }
        }
        let h = xxhash_rust::xxh3::xxh3_64(all.as_bytes());
        assert_eq!(h, FINGERPRINT, "synthesizer output changed: {h:#x}");
    }

    /// xxh3 of the motif synthesizer's first samples (issue #20; since
    /// session 21 with `"slots"` beside `"order": "any"` on compaction
    /// outputs, and the mesh contact normal taken from the closest point;
    /// since session 32 with the tile category's slice stencil).
    const FINGERPRINT: u64 = 0x4304_5270_2038_a831;

    /// The dataflow guarantees hold on 10,000 kernels per category (checked
    /// again from the launch spec, as a user would); prints what the
    /// redraws were for.
    #[test]
    fn dataflow_holds_on_ten_thousand_kernels_per_category() {
        let n = std::env::var("PAIRPIPE_DATAFLOW_SAMPLES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000u64);
        let knobs = Knobs::default();
        println!(
            "category\tkernels\tdraws\t{}",
            dataflow::RULE_NAMES.join("\t")
        );
        for &category in CATEGORIES {
            let mut redrawn = [0u64; dataflow::RULES];
            for index in 0..n {
                let mut rng = sample_rng(99, index);
                let s = synthesize_counting(category, index, &mut rng, &knobs, &mut redrawn);
                if let Err(rule) = dataflow::check_spec(&s.python_source, &s.launch_spec) {
                    panic!(
                        "{category} {index}: {rule:?} after redraws\n{}",
                        s.python_source
                    );
                }
            }
            let draws = n + redrawn.iter().sum::<u64>();
            let counts: Vec<String> = redrawn.iter().map(|c| c.to_string()).collect();
            println!("{category}\t{n}\t{draws}\t{}", counts.join("\t"));
        }
    }

    /// Each rule refuses what it should.
    #[test]
    fn dataflow_rules_refuse_bad_kernels() {
        use kernel::{Param, ParamKind, Role, Ty};
        let arr = |name: &str, role, lo, hi| Param {
            name: name.into(),
            kind: ParamKind::Array {
                ty: Ty::F,
                shape: vec![16],
                role,
                init: None,
                unit: false,
                slots: None,
            },
            lo,
            hi,
        };
        let scalar = |name: &str, lo, hi| Param {
            name: name.into(),
            kind: ParamKind::Scalar { ty: Ty::F },
            lo,
            hi,
        };
        let params = [
            arr("x", Role::In, -1.0, 1.0),
            arr("out", Role::Out, 0.0, 0.0),
            scalar("s", 0.5, 2.0),
        ];
        let check = |body: &str| {
            let src = format!(
                "import warp as wp\n\n\n@wp.kernel\ndef k(x: wp.array(dtype=float), out: wp.array(dtype=float), s: float):\n    i = wp.tid()\n{body}"
            );
            dataflow::check(&src, &params, &[16])
        };
        use dataflow::Rule::*;
        assert_eq!(check("    out[i] = x[i] * s\n"), Ok(()));
        assert_eq!(check("    out[i] = x[i]\n"), Err(Dead));
        assert_eq!(
            check("    t = x[i] * s\n    out[i] = x[i] * s\n"),
            Err(Dead)
        );
        assert_eq!(
            check("    y = x[i] * s\n    if y < y:\n        y = s\n    out[i] = y\n"),
            Err(Known)
        );
        assert_eq!(
            check("    y = float(0.0)\n    if y > 0.0:\n        y = s\n    out[i] = y * x[i]\n"),
            Err(Known)
        );
        assert_eq!(
            check("    y = x[i] * s\n    if y < 5.0:\n        y = s\n    out[i] = y\n"),
            Err(Known)
        );
        assert_eq!(
            check("    y = x[i] * s\n    if y < 0.5:\n        y = s\n    out[i] = y\n"),
            Ok(())
        );
        assert_eq!(check("    out[0] = x[i] * s\n"), Err(Race));
        assert_eq!(
            check("    out[i] = x[i] * s\n    out[i] += out[(i + 1) % 16]\n"),
            Err(Race)
        );
        assert_eq!(
            check("    out[i] = x[i] * s\n    wp.atomic_max(out, 0, x[i])\n"),
            Err(Race)
        );
        assert_eq!(check("    out[i] = s / x[i]\n"), Err(Domain));
        assert_eq!(check("    out[i] = x[i] / s\n"), Ok(()));
        assert_eq!(check("    out[i] = wp.sqrt(x[i]) * s\n"), Err(Domain));
        assert_eq!(check("    out[i] = wp.sqrt(x[i] * x[i]) * s\n"), Ok(()));
        assert_eq!(check("    out[i] = wp.log(s + x[i])\n"), Err(Domain));
        assert_eq!(check("    out[i] = wp.log(s + x[i] * x[i])\n"), Ok(()));
        assert_eq!(check("    out[i] = wp.acos(x[i] * s)\n"), Err(Domain));
        assert_eq!(check("    out[i] = wp.acos(x[i]) * s\n"), Ok(()));
        // Loops widen: an accumulated square stays non-negative.
        assert_eq!(
            check(
                "    a = float(0.0)\n    for j in range(16):\n        a += x[j] * x[j]\n    out[i] = wp.sqrt(a) * s + x[i]\n"
            ),
            Ok(())
        );
        assert_eq!(
            check(
                "    a = float(0.0)\n    for j in range(16):\n        a += x[j]\n    out[i] = wp.sqrt(a) * s + x[i]\n"
            ),
            Err(Domain)
        );
    }

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
            lines[lines.len() - 1] >= 30,
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
