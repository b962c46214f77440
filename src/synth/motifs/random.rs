//! random motifs (written by helper "motifs"; see /work/notes/synth_api.md).

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

pub const MOTIFS: &[Motif] = &[];
