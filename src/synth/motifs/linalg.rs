//! Per-thread linear algebra motifs: mat-vec, 3x3 solves, quaternion and
//! transform math, spatial vectors.

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

pub const MOTIFS: &[Motif] = &[];
