//! Data-parallel motifs: map, gather, scatter, compaction with atomics,
//! histograms, reductions, scans and reductions within tiles, tile matmul;
//! and the v1-style families (arithmetic, math, control flow, conditions,
//! expression trees).

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

pub const MOTIFS: &[Motif] = &[Motif {
    name: "axpy",
    domain: Domain::Parallel,
    categories: &["arithmetic", "scalar_param", "combined"],
    dims: ANY,
    build: axpy,
}];

/// `r = alpha * x + y`: the BLAS map.
fn axpy(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "xs", "values", "signal"], Ty::F, -10.0, 10.0);
    let y = k.input(rng, &["y", "ys", "base", "offset"], Ty::F, -10.0, 10.0);
    let a = k.scalar(rng, &["alpha", "a", "scale", "gain"], Ty::F, -4.0, 4.0);
    let expr = format!("{a} * {} + {}", x.expr, y.expr);
    let r = k.local(rng, &["r", "res", "axpy"], Ty::F, &expr, -50.0, 50.0);
    k.offer(r, &["out", "result", "z"]);
    true
}
