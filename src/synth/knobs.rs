//! Size and shape knobs of the synthesizer (`[synth]` in the pipeline
//! config): how many statements a kernel body has, how many parameters the
//! kernel takes, how deep expressions and loop nests go, and which data
//! types its arrays and values may use.
//!
//! The composer (`compose.rs`) reads them while it writes: it draws a body
//! length inside `statements` and adds motifs until it gets there, stops
//! before the parameters pass `params`; motifs check `loop_depth`
//! (`Kernel::can_loop`), `expr_depth` (`Kernel::expr_depth`) and `dtypes`
//! (`Kernel::allows`). Every sample is then measured by [`Knobs::admits`]
//! and drawn again while it falls outside (see `synthesize_with`).

use super::kernel::{Gen, Ty, between};

/// The data types the `dtypes` knob may list. `float32` is always on (every
/// category computes in it); `int32` means int *data* arrays (index arrays,
/// labels, masks); int thread indices, sizes, counters and int locals are
/// always allowed. `float64` is not generated yet.
pub const DTYPES: &[&str] = &[
    "float32", "int32", "vec2", "vec3", "vec4", "mat22", "mat33", "mat44",
];

/// Every bit of [`DTYPES`].
const ALL_DTYPES: u8 = u8::MAX >> (8 - DTYPES.len());

/// How often a sample is drawn again when it falls outside the knobs.
pub(super) const MAX_REDRAWS: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    /// Lines of the kernel body (from `wp.tid()` to the end, helpers not
    /// counted), inclusive bounds.
    pub statements: (usize, usize),
    /// Kernel parameters, inclusive bounds.
    pub params: (usize, usize),
    /// Deepest operator nesting of one expression (v2 builder and the new
    /// categories; v1 writes at most 3 levels by construction).
    pub expr_depth: u32,
    /// Deepest nesting of `for`/`while` loops (0: no loops).
    pub loop_depth: usize,
    /// Bit `n` set: `DTYPES[n]` allowed.
    pub dtypes: u8,
}

impl Default for Knobs {
    /// Wide enough that every v1/v2 sample is admitted at its first draw.
    fn default() -> Knobs {
        Knobs {
            statements: (2, 120),
            params: (1, 16),
            expr_depth: 8,
            loop_depth: 3,
            dtypes: u8::MAX,
        }
    }
}

impl Knobs {
    /// The mask of a list of dtype names; `Err` names the first unknown one.
    pub fn dtype_mask<S: AsRef<str>>(names: &[S]) -> Result<u8, String> {
        let mut m = 0u8;
        for n in names {
            let n = n.as_ref();
            match DTYPES.iter().position(|&d| d == n) {
                Some(p) => m |= 1 << p,
                None => return Err(n.to_string()),
            }
        }
        Ok(m)
    }

    fn has(&self, name: &str) -> bool {
        DTYPES
            .iter()
            .position(|&d| d == name)
            .is_some_and(|p| self.dtypes & (1 << p) != 0)
    }

    /// Values of `ty` (the new builder's types) may appear; ints, quats,
    /// transforms, spatial vectors and mesh ids always may.
    pub(super) fn allows(&self, ty: Ty) -> bool {
        match ty {
            Ty::V(n) => self.has(["vec2", "vec3", "vec4"][n as usize - 2]),
            Ty::M(n) => self.has(["mat22", "mat33", "mat44"][n as usize - 2]),
            _ => true,
        }
    }

    /// Int data arrays may appear.
    pub(super) fn int_arrays(&self) -> bool {
        self.has("int32")
    }

    /// The allowed vector sizes.
    pub fn vec_sizes(&self) -> Vec<u8> {
        (2..=4).filter(|&n| self.allows(Ty::V(n))).collect()
    }

    /// A body length to aim at: uniform in the bounds, capped at `cap`
    /// (what the category writes comfortably).
    pub(super) fn statement_goal(&self, rng: &mut Gen, lo: usize, cap: usize) -> usize {
        let (min, max) = self.statements;
        let lo = lo.clamp(min, max);
        let hi = cap.clamp(lo, max);
        between(rng, lo, hi)
    }

    /// An expression depth in `lo..=hi` within `expr_depth` (at least 1).
    pub(super) fn depth(&self, rng: &mut Gen, lo: u32, hi: u32) -> u32 {
        let hi = hi.min(self.expr_depth).max(1);
        between(rng, lo.min(hi) as usize, hi as usize) as u32
    }

    /// Whether `src` (a module from `synthesize`) is inside the knobs.
    pub fn admits(&self, src: &str) -> bool {
        let (statements, params, loop_depth) = measure_shape(src);
        (self.statements.0..=self.statements.1).contains(&statements)
            && (self.params.0..=self.params.1).contains(&params)
            && loop_depth <= self.loop_depth
            // Scanning for every dtype is only needed when some are excluded.
            && (self.dtypes & ALL_DTYPES == ALL_DTYPES || used_dtypes(src) & !self.dtypes == 0)
    }
}

/// What [`Knobs::admits`] measures of a module (tests check samples with it).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    pub statements: usize,
    pub params: usize,
    pub loop_depth: usize,
    pub dtypes: u8,
}

/// Measures a synthesized module (the layout `finish_kernel` writes).
#[cfg(test)]
pub fn measure(src: &str) -> Measure {
    let (statements, params, loop_depth) = measure_shape(src);
    Measure {
        statements,
        params,
        loop_depth,
        dtypes: used_dtypes(src),
    }
}

/// Kernel body lines, kernel parameters and the deepest loop nesting.
fn measure_shape(src: &str) -> (usize, usize, usize) {
    let mut statements = 0;
    let mut params = 0;
    let mut in_kernel = false;
    let mut after_decorator = false;
    let mut loops: Vec<usize> = Vec::new();
    let mut loop_depth = 0;
    for line in lines(src) {
        if line.starts_with("@wp.kernel") {
            after_decorator = true;
            continue;
        }
        if line.starts_with("def ") {
            in_kernel = after_decorator;
            if in_kernel {
                // Each `: ` (which cannot overlap another) is a colon
                // found by memchr and a space after it: `str::matches`' or
                // memmem's searcher, built per call, cost more than the
                // rest of the measuring.
                let b = line.as_bytes();
                params = memchr::memchr_iter(b':', b)
                    .filter(|&at| b.get(at + 1) == Some(&b' '))
                    .count();
            }
            loops.clear();
            continue;
        }
        // Indentation is spaces: passed over a byte at a time before the
        // general (char by char) trim.
        let spaces = line.bytes().take_while(|&b| b == b' ').count();
        let t = line[spaces..].trim_start();
        if t.is_empty() || line.starts_with('@') {
            continue;
        }
        let indent = line.len() - t.len();
        loops.retain(|&i| i < indent);
        if t.starts_with("for ") || t.starts_with("while ") {
            loops.push(indent);
            loop_depth = loop_depth.max(loops.len());
        }
        statements += in_kernel as usize;
    }
    (statements, params, loop_depth)
}

/// `src.lines()`, the line ends found by `memchr`: `str::lines`' searcher
/// cost more than the rest of the measuring.
fn lines(src: &str) -> impl Iterator<Item = &str> {
    let mut rest = src;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(end) = memchr::memchr(b'\n', rest.as_bytes()) else {
            return Some(std::mem::take(&mut rest));
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Bit `n` set when `DTYPES[n]` is used; float32 always is.
fn used_dtypes(src: &str) -> u8 {
    let mut dtypes = 1u8; // float32
    for (n, &d) in DTYPES.iter().enumerate().skip(1) {
        let used = match d {
            "int32" => src.contains("dtype=int") || src.contains("dtype=wp.int32"),
            _ => {
                let dims = &d[3..];
                let tok = format!("wp.{d}");
                let ident = format!("wp.identity(n={}", &dims[..1]);
                src.match_indices(&tok).any(|(p, _)| {
                    // `wp.vec2` but not a longer name.
                    !src[p + tok.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                }) || (d.starts_with("mat") && src.contains(&ident))
            }
        };
        if used {
            dtypes |= 1 << n;
        }
    }
    dtypes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_str_lines() {
        for src in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "a\r",
            "\r\n\r\n",
            "x\n\ny\r\rz\n",
            "é\n ü",
        ] {
            let ours: Vec<&str> = lines(src).collect();
            assert_eq!(ours, src.lines().collect::<Vec<_>>(), "{src:?}");
        }
    }
}
