//! Kernel synthesizers, one file per category. Deterministic per sample:
//! everything about sample `i` comes from the generator handed to it.

use rand_pcg::Pcg64Mcg;

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

/// The generator for sample `index` of a run with `seed`.
pub fn sample_rng(seed: u64, index: u64) -> Pcg64Mcg {
    todo!("derive from (seed, index)")
}

/// Synthesize sample `index` of `category`.
pub fn synthesize(category: &'static str, index: u64, rng: &mut Pcg64Mcg) -> Sample {
    todo!()
}
