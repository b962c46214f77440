//! Kernel synthesizers, one file per category. Deterministic per sample:
//! everything about sample `i` comes from the generator handed to it.
//!
//! v1 writes only this subset of Warp (the Rust lowering supports exactly it):
//! one `@wp.kernel` per module over float32/int32 arrays and scalars; `i =
//! wp.tid()`; `name = expr`; `name += / -= / *= expr` on locals; `arr[idx] =
//! expr`; `if/elif/else` nested at most two deep; atomics as statements
//! (atomic category only). See `gen` for the expression forms.

mod arithmetic;
mod atomic;
mod builder;
mod control_flow;
mod math;
mod scalar_param;

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

/// Draws a category with probability proportional to its weight. Weights
/// that are not positive (or not finite) never win. The config validates that
/// at least one weight is positive; if none is, the first entry is returned
/// (`arithmetic` for an empty list) rather than panicking mid-run.
pub fn pick_category(rng: &mut Pcg64Mcg, weights: &[(&'static str, f64)]) -> &'static str {
    let valid = |w: f64| w.is_finite() && w > 0.0;
    let total: f64 = weights.iter().map(|&(_, w)| w).filter(|&w| valid(w)).sum();
    let Some(&(first, _)) = weights.first() else {
        return CATEGORIES[0];
    };
    if total <= 0.0 {
        return first;
    }
    let mut r = builder::unit(rng) * total;
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
    let (kernel_name, python_source) = match category {
        "arithmetic" => arithmetic::generate(rng),
        "math" => math::generate(rng),
        "control_flow" => control_flow::generate(rng),
        "scalar_param" => scalar_param::generate(rng),
        "atomic" => atomic::generate(rng),
        other => panic!("unknown synthesizer category {other:?} (known: {CATEGORIES:?})"),
    };
    Sample {
        index,
        category,
        kernel_name,
        python_source,
    }
}
