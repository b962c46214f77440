//! Data-parallel motifs: map, gather, scatter, compaction with atomics,
//! histograms, reductions, reductions within tiles, tile matmul; and the
//! v1-style families as formulas people write (arithmetic maps, activation
//! and normalization math, piecewise functions, classification with
//! thresholds, polynomial and formula evaluation).

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, below, between, chance, lit, nice, pick, plus, weighted,
};

const P: Domain = Domain::Parallel;

pub const MOTIFS: &[Motif] = &[
    // ---- maps (arithmetic, scalar_param)
    Motif {
        name: "axpy",
        domain: P,
        categories: &[
            "arithmetic",
            "scalar_param",
            "combined",
            "grid_2d",
            "grid_3d",
        ],
        dims: ANY,
        build: axpy,
    },
    Motif {
        name: "lerp_blend",
        domain: P,
        categories: &["arithmetic", "scalar_param", "combined", "grid_3d"],
        dims: ANY,
        build: lerp_blend,
    },
    Motif {
        name: "standardize",
        domain: P,
        categories: &["arithmetic", "scalar_param", "combined"],
        dims: ANY,
        build: standardize,
    },
    Motif {
        name: "weighted_sum",
        domain: P,
        categories: &["arithmetic", "combined"],
        dims: ANY,
        build: weighted_sum,
    },
    Motif {
        name: "unit_convert",
        domain: P,
        categories: &["arithmetic", "scalar_param"],
        dims: ANY,
        build: unit_convert,
    },
    Motif {
        name: "int_index_math",
        domain: P,
        categories: &["arithmetic", "transform"],
        dims: D1,
        build: int_index_math,
    },
    // ---- math
    Motif {
        name: "smoothstep",
        domain: P,
        categories: &["math", "combined", "grid_2d"],
        dims: ANY,
        build: smoothstep,
    },
    Motif {
        name: "activation",
        domain: P,
        categories: &["math", "scalar_param", "combined"],
        dims: ANY,
        build: activation,
    },
    Motif {
        name: "gaussian_weight",
        domain: P,
        categories: &["math", "scalar_param", "combined", "grid_3d"],
        dims: ANY,
        build: gaussian_weight,
    },
    Motif {
        name: "log_compress",
        domain: P,
        categories: &["math", "combined"],
        dims: ANY,
        build: log_compress,
    },
    Motif {
        name: "polar_coords",
        domain: P,
        categories: &["math", "combined"],
        dims: ANY,
        build: polar_coords,
    },
    Motif {
        name: "coord_field",
        domain: P,
        categories: &["math", "grid_2d", "grid_3d"],
        dims: D2 | D3,
        build: coord_field,
    },
    // ---- control flow
    Motif {
        name: "piecewise_linear",
        domain: P,
        categories: &["control_flow", "multi_cond", "combined"],
        dims: ANY,
        build: piecewise_linear,
    },
    Motif {
        name: "deadzone",
        domain: P,
        categories: &["control_flow", "scalar_param", "combined"],
        dims: ANY,
        build: deadzone,
    },
    Motif {
        name: "threshold_select",
        domain: P,
        categories: &["control_flow", "scalar_param", "combined"],
        dims: ANY,
        build: threshold_select,
    },
    Motif {
        name: "wrap_periodic",
        domain: P,
        categories: &["control_flow", "combined"],
        dims: ANY,
        build: wrap_periodic,
    },
    Motif {
        name: "fixed_point_iterate",
        domain: P,
        categories: &["control_flow", "nested", "combined"],
        dims: ANY,
        build: fixed_point_iterate,
    },
    // ---- multi_cond
    Motif {
        name: "classify_bucket",
        domain: P,
        categories: &["multi_cond", "combined"],
        dims: ANY,
        build: classify_bucket,
    },
    Motif {
        name: "band_mask",
        domain: P,
        categories: &["multi_cond", "control_flow"],
        dims: ANY,
        build: band_mask,
    },
    Motif {
        name: "quadrant_label",
        domain: P,
        categories: &["multi_cond", "combined"],
        dims: ANY,
        build: quadrant_label,
    },
    // ---- expression trees
    Motif {
        name: "horner_poly",
        domain: P,
        categories: &["expression_tree", "math", "combined"],
        dims: ANY,
        build: horner_poly,
    },
    Motif {
        name: "rational_approx",
        domain: P,
        categories: &["expression_tree", "math"],
        dims: ANY,
        build: rational_approx,
    },
    Motif {
        name: "formula_tree",
        domain: P,
        categories: &["expression_tree", "arithmetic"],
        dims: ANY,
        build: formula_tree,
    },
    // ---- atomics, reductions
    Motif {
        name: "histogram",
        domain: P,
        categories: &["atomic", "reduction", "combined"],
        dims: ANY,
        build: histogram,
    },
    Motif {
        name: "atomic_sum",
        domain: P,
        categories: &["atomic", "reduction", "combined", "grid_2d", "grid_3d"],
        dims: ANY,
        build: atomic_sum,
    },
    Motif {
        name: "atomic_extrema",
        domain: P,
        categories: &["atomic", "reduction"],
        dims: ANY,
        build: atomic_extrema,
    },
    Motif {
        name: "stream_compact",
        domain: P,
        categories: &["atomic", "transform"],
        dims: D1,
        build: stream_compact,
    },
    Motif {
        name: "count_if",
        domain: P,
        categories: &["atomic", "reduction", "multi_cond"],
        dims: ANY,
        build: count_if,
    },
    Motif {
        name: "row_reduce",
        domain: P,
        categories: &["reduction", "nested", "combined"],
        dims: D1,
        build: row_reduce,
    },
    Motif {
        name: "window_mean",
        domain: P,
        categories: &["reduction", "stencil", "nested", "combined"],
        dims: D1,
        build: window_mean,
    },
    Motif {
        name: "rank_count",
        domain: P,
        categories: &["nested", "reduction", "multi_cond"],
        dims: D1,
        build: rank_count,
    },
    Motif {
        name: "running_sum_cap",
        domain: P,
        categories: &["nested", "control_flow", "reduction"],
        dims: D1,
        build: running_sum_cap,
    },
    // ---- gather / scatter / remap
    Motif {
        name: "gather",
        domain: P,
        categories: &["transform", "combined"],
        dims: ANY,
        build: gather,
    },
    Motif {
        name: "reverse_permute",
        domain: P,
        categories: &["transform"],
        dims: D1,
        build: reverse_permute,
    },
    Motif {
        name: "scatter_add",
        domain: P,
        categories: &["transform", "atomic", "combined"],
        dims: ANY,
        build: scatter_add,
    },
    Motif {
        name: "strided_remap",
        domain: P,
        categories: &["transform"],
        dims: D1,
        build: strided_remap,
    },
    Motif {
        name: "roll_shift",
        domain: P,
        categories: &["transform", "stencil"],
        dims: D1,
        build: roll_shift,
    },
    Motif {
        name: "deinterleave",
        domain: P,
        categories: &["transform", "combined"],
        dims: D1,
        build: deinterleave,
    },
    Motif {
        name: "block_transpose",
        domain: P,
        categories: &["transform"],
        dims: D1,
        build: block_transpose,
    },
    Motif {
        name: "transpose_2d",
        domain: P,
        categories: &["grid_2d", "transform"],
        dims: D2,
        build: transpose_2d,
    },
    Motif {
        name: "pool_2x2",
        domain: P,
        categories: &["grid_2d", "stencil"],
        dims: D2,
        build: pool_2x2,
    },
    Motif {
        name: "downsample_3d",
        domain: P,
        categories: &["grid_3d"],
        dims: D3,
        build: downsample_3d,
    },
    // ---- neighbourhoods (stencil family on plain grids)
    Motif {
        name: "neighbor_avg_1d",
        domain: P,
        categories: &["stencil", "combined"],
        dims: D1,
        build: neighbor_avg_1d,
    },
    Motif {
        name: "neighbor_avg_2d",
        domain: P,
        categories: &["stencil", "grid_2d", "combined"],
        dims: D2,
        build: neighbor_avg_2d,
    },
    Motif {
        name: "neighbor_avg_3d",
        domain: P,
        categories: &["grid_3d", "stencil"],
        dims: D3,
        build: neighbor_avg_3d,
    },
    Motif {
        name: "box_filter_loop",
        domain: P,
        categories: &["stencil", "nested", "grid_2d"],
        dims: D2,
        build: box_filter_loop,
    },
    Motif {
        name: "pairwise_window",
        domain: P,
        categories: &["nested", "combined"],
        dims: D1,
        build: pairwise_window,
    },
    Motif {
        name: "matmul_row",
        domain: P,
        categories: &["nested", "matrix"],
        dims: D2,
        build: matmul_row,
    },
    // ---- tiles
    Motif {
        name: "tile_block_sum",
        domain: P,
        categories: &["tile"],
        dims: TILED,
        build: tile_block_sum,
    },
    Motif {
        name: "tile_map_store",
        domain: P,
        categories: &["tile"],
        dims: TILED | TILED2,
        build: tile_map_store,
    },
    Motif {
        name: "tile_extrema",
        domain: P,
        categories: &["tile"],
        dims: TILED,
        build: tile_extrema,
    },
    Motif {
        name: "tile_matmul",
        domain: P,
        categories: &["tile"],
        dims: TILED2,
        build: tile_matmul,
    },
    Motif {
        name: "tile_axpy",
        domain: P,
        categories: &["tile"],
        dims: TILED | TILED2,
        build: tile_axpy,
    },
    Motif {
        name: "tile_slice_stencil",
        domain: P,
        categories: &["tile"],
        dims: TILED,
        build: tile_slice_stencil,
    },
];

// -------------------------------------------------------------------- pools

const XS: &[&str] = &[
    "x", "xs", "values", "signal", "samples", "data", "inp", "src",
];
const YS: &[&str] = &["y", "ys", "base", "offset", "bias_in", "other", "ref_vals"];
const OUTS: &[&str] = &["out", "result", "dst", "output", "res"];

// -------------------------------------------------------------------- maps

/// `r = alpha * x + y`: the BLAS map.
fn axpy(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, XS, Ty::F, -10.0, 10.0);
    let y = k.input(rng, YS, Ty::F, -10.0, 10.0);
    let a = k.scalar(rng, &["alpha", "a", "scale", "gain"], Ty::F, -4.0, 4.0);
    let expr = format!("{a} * {} + {}", x.expr, y.expr);
    let r = k.local(rng, &["r", "axpy", "scaled"], Ty::F, &expr, -50.0, 50.0);
    k.offer(r, OUTS);
    true
}

/// Linear blend of two signals: `a + t * (b - a)` or `wp.lerp`.
fn lerp_blend(k: &mut Kernel, rng: &mut Gen) -> bool {
    let a = k.input(rng, &["a", "start", "prev", "old"], Ty::F, -10.0, 10.0);
    let b = k.input(
        rng,
        &["b", "target", "next", "new_vals"],
        Ty::F,
        -10.0,
        10.0,
    );
    let t = if chance(rng, 0.5) {
        k.scalar(rng, &["t", "alpha", "blend", "mix"], Ty::F, 0.0, 1.0)
    } else {
        k.load(rng, &["weight", "w", "mix_w", "t_in"], Ty::F, 0.0, 1.0)
            .expr
    };
    let expr = if chance(rng, 0.5) {
        format!("{} + {t} * ({} - {})", a.expr, b.expr, a.expr)
    } else {
        format!("wp.lerp({}, {}, {t})", a.expr, b.expr)
    };
    let r = k.local(
        rng,
        &["blended", "mixed", "lerped"],
        Ty::F,
        &expr,
        -10.0,
        10.0,
    );
    k.offer(r, &["out", "blend_out", "mixed_out"]);
    true
}

/// z-score: `(x - mean) / std` with the statistics as scalars.
fn standardize(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, XS, Ty::F, -10.0, 10.0);
    if chance(rng, 0.35) {
        let st = k.struct_param(
            rng,
            "Stats",
            &["stats", "norm", "moments"],
            &[("mean", Ty::F, -2.0, 2.0), ("inv_std", Ty::F, 0.25, 2.0)],
        );
        let e = format!("({} - {st}.mean) * {st}.inv_std", x.expr);
        let z = k.local(rng, &["z", "zscore", "normed"], Ty::F, &e, -24.0, 24.0);
        k.offer(z, &["z_out", "normalized", "out"]);
        return true;
    }
    let mean = k.scalar(rng, &["mean", "mu", "center"], Ty::F, -2.0, 2.0);
    let std = k.scalar(rng, &["std", "sigma", "scale"], Ty::F, 0.5, 4.0);
    let expr = if chance(rng, 0.5) {
        format!("({} - {mean}) / {std}", x.expr)
    } else {
        let inv = k.local_of(
            rng,
            &["inv_std", "inv_sigma"],
            Ty::F,
            &["1.0 / ", &std],
            0.25,
            2.0,
        );
        format!("({} - {mean}) * {}", x.expr, inv.expr)
    };
    let z = k.local(rng, &["z", "zscore", "normed"], Ty::F, &expr, -24.0, 24.0);
    k.offer(z, &["z_out", "normalized", "out"]);
    true
}

/// A weighted sum of two to four inputs with literal weights.
fn weighted_sum(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = between(rng, 2, 4);
    let pools: [&[&str]; 4] = [
        &["r", "red", "c0"],
        &["g", "green", "c1"],
        &["b", "blue", "c2"],
        &["a", "alpha_ch", "c3"],
    ];
    let mut terms = Vec::new();
    // The sum's range is exact (the weights are positive): a later motif's
    // thresholds land among its values.
    let (mut lo, mut hi) = (0.0, 0.0);
    for p in pools.iter().take(n) {
        let v = k.input(rng, p, Ty::F, 0.0, 1.0);
        let w = nice(rng, 0.15, 0.8);
        lo += w * v.lo;
        hi += w * v.hi;
        terms.push(format!("{} * {}", lit(w), v.expr));
    }
    let r = k.local(
        rng,
        &["luma", "gray", "mix", "combined"],
        Ty::F,
        &terms.join(" + "),
        lo,
        hi,
    );
    k.offer(r, &["luminance", "out", "gray_out"]);
    true
}

/// A unit conversion with offset: `c = (f - 32) * 5 / 9`-like.
fn unit_convert(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (ins, outs, off, fac): (&[&str], &[&str], f64, f64) = *pick(
        rng,
        &[
            (
                &["fahrenheit", "temp_f"][..],
                &["celsius", "temp_c"][..],
                32.0,
                5.0 / 9.0,
            ),
            (&["celsius", "temp_c"], &["kelvin", "temp_k"], -273.15, 1.0),
            (
                &["degrees", "angle_deg"],
                &["radians", "angle_rad"],
                0.0,
                0.017453,
            ),
            (&["mm", "length_mm"], &["meters", "length_m"], 0.0, 0.001),
        ],
    );
    let x = k.input(rng, ins, Ty::F, -100.0, 100.0);
    let scale = k.scalar(rng, &["scale", "factor", "gain"], Ty::F, 0.5, 2.0);
    let expr = if off != 0.0 {
        if fac == 1.0 {
            format!("({} {}) * {scale}", x.expr, plus(-off))
        } else {
            format!("({} {}) * {} * {scale}", x.expr, plus(-off), lit(fac))
        }
    } else {
        format!("{} * {} * {scale}", x.expr, lit(fac))
    };
    let v = k.local(rng, outs, Ty::F, &expr, -1000.0, 1000.0);
    k.offer(v, &["converted", "out"]);
    true
}

/// Integer index arithmetic: a cell id from a flat index and a row width.
fn int_index_math(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let n = k.launch.dim[0];
    let widths: Vec<usize> = [2usize, 4, 5, 8, 10, 16]
        .into_iter()
        .filter(|w| n % w == 0)
        .collect();
    if widths.is_empty() {
        return false;
    }
    let w = *pick(rng, &widths);
    let width = k.size_param(rng, &["width", "nx", "cols", "stride"], w);
    let row = k.local_of(
        rng,
        &["row", "r", "iy"],
        Ty::I,
        &[t, " // ", &width],
        0.0,
        (n / w) as f64,
    );
    let col = k.local_of(
        rng,
        &["col", "c", "ix"],
        Ty::I,
        &[t, " % ", &width],
        0.0,
        w as f64,
    );
    let out = k.output(rng, &["cell_id", "tile_of", "block_id"], Ty::I);
    let shift = k.scalar(rng, &["shift", "base_id", "first"], Ty::I, 0.0, 100.0);
    let expr = if chance(rng, 0.5) {
        format!(
            "{} * {width} + ({width} - 1 - {}) + {shift}",
            row.expr, col.expr
        )
    } else {
        format!("({} // 2) * 1000 + {} // 2 + {shift}", row.expr, col.expr)
    };
    k.line_of(&[&out, "[", t, "] = ", &expr]);
    true
}

// -------------------------------------------------------------------- math

/// Hermite smoothstep between two edges.
fn smoothstep(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(
        rng,
        &["x", "dist", "height", "depth", "d"],
        Ty::F,
        -5.0,
        5.0,
    );
    // Edges inside the input's range (an offered value may span far less
    // than [-5, 5]: fixed edges could lie wholly above or below it).
    let e0 = x.nice_between(rng, 0.2, 0.5);
    let w = nice(rng, 0.1 * (x.hi - x.lo), 0.4 * (x.hi - x.lo));
    if chance(rng, 0.4) {
        k.helper(
            "hermite_step",
            "@wp.func\ndef hermite_step(edge0: float, edge1: float, x: float) -> float:\n    t = wp.clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)\n    return t * t * (3.0 - 2.0 * t)",
        );
        let e = format!("hermite_step({}, {}, {})", lit(e0), lit(e0 + w), x.expr);
        let s = k.local(
            rng,
            &["smooth", "fade", "ramp", "blend_w"],
            Ty::F,
            &e,
            0.0,
            1.0,
        );
        k.offer(s, &["weights", "fade_out", "out"]);
        return true;
    }
    let t = k.local_of(
        rng,
        &["t", "u", "s"],
        Ty::F,
        &[
            "wp.clamp((",
            &x.expr,
            " ",
            &plus(-e0),
            ") / ",
            &lit(w),
            ", 0.0, 1.0)",
        ],
        0.0,
        1.0,
    );
    let expr = if chance(rng, 0.7) {
        format!("{0} * {0} * (3.0 - 2.0 * {0})", t.expr)
    } else {
        format!(
            "{0} * {0} * {0} * ({0} * ({0} * 6.0 - 15.0) + 10.0)",
            t.expr
        )
    };
    let s = k.local(
        rng,
        &["smooth", "fade", "ramp", "blend_w"],
        Ty::F,
        &expr,
        0.0,
        1.0,
    );
    k.offer(s, &["weights", "fade_out", "out"]);
    true
}

/// Neural-net activations: sigmoid, softplus, GELU, swish, leaky ReLU.
fn activation(k: &mut Kernel, rng: &mut Gen) -> bool {
    let kind = below(rng, 6);
    // The leaky ReLU's slope counts only for negative inputs: an offered
    // value must reach well below zero (and above: the kink is the point).
    let (clo, chi) = if kind == 4 { (-1.0, 1.0) } else { (1.0, -1.0) };
    let x = k.input_covering(
        rng,
        &["x", "pre_act", "logits", "z", "h"],
        Ty::F,
        -20.0,
        20.0,
        clo,
        chi,
    );
    let x = x.expr;
    let (expr, lo, names): (String, f64, &[&str]) = match kind {
        5 => {
            k.helper(
                "sigmoid",
                "@wp.func\ndef sigmoid(x: float) -> float:\n    return 1.0 / (1.0 + wp.exp(-x))",
            );
            (
                format!("{x} * sigmoid({x})"),
                -1.0,
                &["swish", "silu", "gated"],
            )
        }
        0 => (
            format!("1.0 / (1.0 + wp.exp(-{x}))"),
            0.0,
            &["sig", "gate", "prob"],
        ),
        1 => (
            format!("wp.log(1.0 + wp.exp({x}))"),
            0.0,
            &["softplus", "sp"],
        ),
        2 => (
            format!("0.5 * {x} * (1.0 + wp.tanh(0.7978846 * ({x} + 0.044715 * {x} * {x} * {x})))"),
            -1.0,
            &["gelu", "act"],
        ),
        3 => (
            format!("{x} / (1.0 + wp.exp(-{x}))"),
            -1.0,
            &["swish", "silu"],
        ),
        _ => {
            let slope = k.scalar(rng, &["slope", "leak", "negative_slope"], Ty::F, 0.01, 0.3);
            (
                format!("wp.max({x}, 0.0) + {slope} * wp.min({x}, 0.0)"),
                -6.0,
                &["leaky", "act", "relu_out"],
            )
        }
    };
    let a = k.local(rng, names, Ty::F, &expr, lo, 20.0);
    k.offer(a, &["activations", "act_out", "out"]);
    true
}

/// A Gaussian weight of a distance with a width parameter.
fn gaussian_weight(k: &mut Kernel, rng: &mut Gen) -> bool {
    // Distances of a few widths at most: the weights spread over (0, 1]
    // instead of being nearly all 0 (a later threshold on them would never
    // be crossed).
    let d = k.input_covering(
        rng,
        &["d", "dist", "r", "offset_d"],
        Ty::F,
        -3.0,
        3.0,
        -2.0,
        2.0,
    );
    let normalized = chance(rng, 0.4);
    // The normalized kernel peaks at 1 / (sigma sqrt(2 pi)): 0.8-1.0 here
    // (a peak far below the declared bound would stay under a later
    // threshold placed in that range).
    let (smin, smax) = if normalized { (0.4, 0.5) } else { (0.5, 2.0) };
    let sigma = k.scalar(
        rng,
        &["sigma", "width", "bandwidth", "h"],
        Ty::F,
        smin,
        smax,
    );
    let (expr, hi) = if normalized {
        k.helper(
            "gaussian",
            "@wp.func\ndef gaussian(r: float, h: float) -> float:\n    q = r / h\n    return wp.exp(-0.5 * (q * q)) / (h * 2.5066283)",
        );
        (format!("gaussian({}, {sigma})", d.expr), 1.0)
    } else {
        (
            format!("wp.exp(-({0} * {0}) / (2.0 * {sigma} * {sigma}))", d.expr),
            1.0,
        )
    };
    let w = k.local(
        rng,
        &["w", "weight", "kernel_w", "g"],
        Ty::F,
        &expr,
        0.0,
        hi,
    );
    k.offer(w, &["weights", "kernel_vals", "out"]);
    true
}

/// Log compression / dB conversion of a magnitude.
fn log_compress(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(
        rng,
        &["amp", "magnitude", "power", "intensity"],
        Ty::F,
        -100.0,
        100.0,
    );
    let expr = match below(rng, 3) {
        0 => format!("wp.log(1.0 + wp.abs({}))", x.expr),
        1 => format!("20.0 * wp.log10(wp.abs({}) + 1.0e-06)", x.expr),
        _ => format!("wp.sign({0}) * wp.log(1.0 + wp.abs({0}))", x.expr),
    };
    let v = k.local(
        rng,
        &["db", "log_mag", "compressed"],
        Ty::F,
        &expr,
        -120.0,
        45.0,
    );
    k.offer(v, &["log_out", "db_out", "out"]);
    true
}

/// Cartesian to polar: radius and angle.
fn polar_coords(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["px", "x", "re", "u"], Ty::F, -10.0, 10.0);
    let y = k.input(rng, &["py", "y", "im", "v"], Ty::F, -10.0, 10.0);
    let r = k.local_fmt(
        rng,
        &["radius", "r", "mag"],
        Ty::F,
        format_args!("wp.sqrt({0} * {0} + {1} * {1})", x.expr, y.expr),
        0.0,
        15.0,
    );
    let th = k.local_of(
        rng,
        &["theta", "angle", "phase"],
        Ty::F,
        &["wp.atan2(", &y.expr, ", ", &x.expr, ")"],
        -3.2,
        3.2,
    );
    k.offer(r, &["radius_out", "mag_out"]);
    k.offer(th, &["angle_out", "phase_out"]);
    true
}

/// A field from the cell coordinates (`x = float(i) * dx`).
fn coord_field(k: &mut Kernel, rng: &mut Gen) -> bool {
    let h = k.scalar(rng, &["dx", "h", "spacing", "cell_size"], Ty::F, 0.01, 0.5);
    let mut coords = Vec::new();
    let cpool: [&[&str]; 3] = [&["x", "cx", "xc"], &["y", "cy", "yc"], &["z", "cz", "zc"]];
    for (d, &pool) in cpool.iter().enumerate().take(k.dims()) {
        let t = k.tid(d);
        let c = k.local_of(rng, pool, Ty::F, &["float(", t, ") * ", &h], 0.0, 32.0);
        coords.push(c.expr);
    }
    let f = nice(rng, 0.5, 4.0);
    let expr = match below(rng, 3) {
        0 => coords
            .iter()
            .map(|c| format!("wp.sin({} * {c})", lit(f)))
            .collect::<Vec<_>>()
            .join(" * "),
        1 => coords
            .iter()
            .map(|c| format!("{c} * {c}"))
            .collect::<Vec<_>>()
            .join(" + "),
        _ => format!("wp.cos({} * ({}))", lit(f), coords.join(" + ")),
    };
    let v = k.local(
        rng,
        &["phi", "field_val", "psi", "value"],
        Ty::F,
        &expr,
        -1.0,
        3100.0,
    );
    k.offer(v, &["field", "phi_out", "init_field"]);
    true
}

// -------------------------------------------------------------------- control flow

/// A piecewise-linear transfer function with two breakpoints.
fn piecewise_linear(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "load", "strain", "level"], Ty::F, -10.0, 10.0);
    let b0 = x.nice_between(rng, 0.1, 0.4);
    let b1 = x.nice_between(rng, 0.6, 0.9);
    let s0 = nice(rng, 0.1, 0.5);
    let s1 = nice(rng, 1.0, 3.0);
    let y = k.local_of(
        rng,
        &["y", "resp", "stress", "gain_out"],
        Ty::F,
        &[&x.expr, " * ", &lit(s1)],
        -60.0,
        60.0,
    );
    k.open_of(&["if ", &x.expr, " < ", &lit(b0), ":"]);
    k.line_of(&[
        &y.expr,
        " = ",
        &x.expr,
        " * ",
        &lit(s0),
        " ",
        &plus(b0 * (s1 - s0)),
    ]);
    k.close(false);
    k.open_of(&["elif ", &x.expr, " > ", &lit(b1), ":"]);
    k.line_of(&[
        &y.expr,
        " = ",
        &x.expr,
        " * ",
        &lit(s0),
        " ",
        &plus(b1 * (s1 - s0)),
    ]);
    k.close(false);
    k.offer(y, &["response", "out", "y_out"]);
    true
}

/// Dead zone around zero with a scalar half-width.
fn deadzone(k: &mut Kernel, rng: &mut Gen) -> bool {
    // An offered value must reach past the widest dead zone on both sides.
    let x = k.input_covering(
        rng,
        &["u", "cmd", "input_sig", "stick"],
        Ty::F,
        -1.0,
        1.0,
        -0.6,
        0.6,
    );
    let dz = k.scalar(rng, &["deadzone", "eps", "threshold"], Ty::F, 0.05, 0.3);
    let y = k.local(
        rng,
        &["v", "filtered", "cmd_out"],
        Ty::F,
        "float(0.0)",
        -1.0,
        1.0,
    );
    k.open_of(&["if wp.abs(", &x.expr, ") > ", &dz, ":"]);
    k.line_of(&[
        &y.expr,
        " = (",
        &x.expr,
        " - wp.sign(",
        &x.expr,
        ") * ",
        &dz,
        ") / (1.0 - ",
        &dz,
        ")",
    ]);
    k.close(false);
    k.offer(y, &["command", "out", "shaped"]);
    true
}

/// `if x > threshold: a else b` with scalar values.
fn threshold_select(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["value", "x", "score", "level"], Ty::F, -5.0, 5.0);
    let thr = k.scalar(
        rng,
        &["threshold", "cutoff", "thr"],
        Ty::F,
        x.at(0.3),
        x.at(0.7),
    );
    let hi = k.input(rng, &["high", "on_val", "upper"], Ty::F, -5.0, 5.0);
    let out = k.output(rng, &["selected", "out", "gated"], Ty::F);
    let own = k.own();
    match below(rng, 3) {
        0 => {
            k.open_of(&["if ", &x.expr, " > ", &thr, ":"]);
            k.line_of(&[&out, "[", &own, "] = ", &hi.expr]);
            k.close(false);
            k.open("else:");
            k.line_of(&[&out, "[", &own, "] = ", &x.expr, " * 0.5"]);
            k.close(false);
        }
        1 => {
            k.line_of(&[
                &out,
                "[",
                &own,
                "] = wp.where(",
                &x.expr,
                " > ",
                &thr,
                ", ",
                &hi.expr,
                ", ",
                &x.expr,
                " * 0.5)",
            ]);
        }
        _ => {
            k.line_of(&[
                &out,
                "[",
                &own,
                "] = ",
                &hi.expr,
                " if ",
                &x.expr,
                " > ",
                &thr,
                " else 0.0",
            ]);
        }
    }
    true
}

/// Wrap a coordinate into a periodic box `[0, L)`.
fn wrap_periodic(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(
        rng,
        &["pos_x", "coord", "phase_in", "x"],
        Ty::F,
        -20.0,
        20.0,
    );
    // A period of 1/16 to 1/4 of the input's span: every value wraps
    // somewhere (a period longer than an offered value's span never would).
    let span = (x.hi - x.lo).max(1.0);
    let (llo, lhi) = (span / 16.0, span / 4.0);
    let l = k.scalar(rng, &["box_len", "period", "L"], Ty::F, llo, lhi);
    let w = k.local_of(
        rng,
        &["wrapped", "xw", "x_box"],
        Ty::F,
        &[&x.expr, " - ", &l, " * wp.floor(", &x.expr, " / ", &l, ")"],
        -0.01 * lhi,
        1.01 * lhi,
    );
    if chance(rng, 0.5) {
        k.open_of(&["if ", &w.expr, " >= ", &l, ":"]);
        k.line_of(&[&w.expr, " = ", &w.expr, " - ", &l]);
        k.close(false);
    }
    k.offer(w, &["wrapped_out", "out", "pos_wrapped"]);
    true
}

/// Kepler's equation `E = M + e sin(E)` by fixed-point iteration with an
/// early exit.
fn fixed_point_iterate(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let m = k.input(rng, &["mean_anomaly", "M", "phase"], Ty::F, 0.0, 6.28);
    // A tolerance parameter and a fixed iteration cap: with the cap a
    // parameter too, one of them would decide alone on some draws (a cap of
    // 2 stops every thread before any tolerance does; with a cap of 12 every
    // thread has converged long before, and changing the cap changes nothing).
    let e = k.scalar(rng, &["ecc", "e", "eccentricity"], Ty::F, 0.2, 0.9);
    let iters = *pick(rng, &["16", "20", "24", "32"]);
    let tol = k.scalar(rng, &["tol", "eps", "tolerance"], Ty::F, 1.0e-6, 1.0e-3);
    let g = k.local_of(
        rng,
        &["E", "ecc_anomaly", "guess"],
        Ty::F,
        &[&m.expr, " + ", &e, " * wp.sin(", &m.expr, ")"],
        -1.0,
        7.2,
    );
    let it = k.fresh(rng, &["it", "step", "n"]);
    let nxt = k.fresh(rng, &["nxt", "E_next", "upd"]);
    if chance(rng, 0.5) {
        k.open_of(&["for ", &it, " in range(", iters, "):"]);
        k.line_of(&[&nxt, " = ", &m.expr, " + ", &e, " * wp.sin(", &g.expr, ")"]);
        k.open_of(&["if wp.abs(", &nxt, " - ", &g.expr, ") < ", &tol, ":"]);
        k.line("break");
        k.close(false);
        k.line_of(&[&g.expr, " = ", &nxt]);
        k.close(true);
    } else {
        // Newton's method on f(E) = E - e sin(E) - M.
        k.line_of(&[&it, " = int(0)"]);
        k.open_of(&["while ", &it, " < ", iters, ":"]);
        let f = k.fresh(rng, &["f", "resid", "err"]);
        k.line_of(&[
            &f,
            " = ",
            &g.expr,
            " - ",
            &e,
            " * wp.sin(",
            &g.expr,
            ") - ",
            &m.expr,
        ]);
        k.line_of(&[
            &nxt,
            " = ",
            &g.expr,
            " - ",
            &f,
            " / (1.0 - ",
            &e,
            " * wp.cos(",
            &g.expr,
            "))",
        ]);
        k.open_of(&["if wp.abs(", &f, ") < ", &tol, ":"]);
        k.line("break");
        k.close(false);
        k.line_of(&[&g.expr, " = ", &nxt]);
        k.line_of(&[&it, " += 1"]);
        k.close(true);
    }
    k.offer(g, &["anomaly", "E_out", "out"]);
    true
}

// -------------------------------------------------------------------- multi_cond

/// Classify a value into 3-5 labelled buckets with thresholds (the first
/// one also looking at a second feature).
fn classify_bucket(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(
        rng,
        &["temp", "speed", "score", "energy", "value"],
        Ty::F,
        0.0,
        100.0,
    );
    let y = k.input(
        rng,
        &["humidity", "load", "weight", "pressure"],
        Ty::F,
        0.0,
        1.0,
    );
    let ty = if k.int_arrays() { Ty::I } else { Ty::F };
    let out = k.output(rng, &["label", "bucket", "class_id", "category"], ty);
    let own = k.own();
    let v = |n: usize| {
        if ty == Ty::I {
            n.to_string()
        } else {
            format!("{n}.0")
        }
    };
    let nb = between(rng, 3, 5);
    // Increasing thresholds inside x's range.
    let mut ts: Vec<f64> = (1..nb)
        .map(|m| {
            x.nice_between(
                rng,
                (m as f64 - 0.8) / nb as f64,
                (m as f64 - 0.2) / nb as f64,
            )
        })
        .collect();
    ts.dedup();
    // The second feature sends a low value to the first bucket whatever the
    // first feature (`or`: with `and` it would count only for the few values
    // the first threshold lets through); a low cutoff leaves most values to
    // the first feature's buckets.
    let yt = y.nice_between(rng, 0.2, 0.5);
    let cmp = *pick(rng, &["<", "<="]);
    for (m, t) in ts.iter().enumerate() {
        let head = if m == 0 { "if" } else { "elif" };
        if m == 0 {
            k.open_of(&[
                head,
                " ",
                &x.expr,
                " ",
                cmp,
                " ",
                &lit(*t),
                " or ",
                &y.expr,
                " ",
                cmp,
                " ",
                &lit(yt),
                ":",
            ]);
        } else {
            k.open_of(&[head, " ", &x.expr, " ", cmp, " ", &lit(*t), ":"]);
        }
        k.line_of(&[&out, "[", &own, "] = ", &v(m)]);
        k.close(false);
    }
    k.open("else:");
    k.line_of(&[&out, "[", &own, "] = ", &v(ts.len())]);
    k.close(false);
    true
}

/// Values inside a band `lo < x < hi` and not flagged, weighted by their
/// quality (zero elsewhere): both inputs count wherever the band lets them
/// through.
fn band_mask(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["signal", "freq", "depth", "x"], Ty::F, -10.0, 10.0);
    // A band over 40-80% of the value's range, and a quality threshold that
    // lets most values through (in both forms of the test below).
    let lo = k.scalar(
        rng,
        &["lo", "band_lo", "min_val"],
        Ty::F,
        x.at(0.1),
        x.at(0.3),
    );
    let hi = k.scalar(
        rng,
        &["hi", "band_hi", "max_val"],
        Ty::F,
        x.at(0.7),
        x.at(0.9),
    );
    let q = k.input(rng, &["quality", "conf", "snr"], Ty::F, 0.0, 1.0);
    let gated = chance(rng, 0.5);
    let qmin = if gated {
        lit(q.nice_between(rng, 0.1, 0.4))
    } else {
        lit(q.nice_between(rng, 0.6, 0.9))
    };
    // The value (or its height above the band's floor) times the quality.
    let above = chance(rng, 0.5);
    let (mlo, mhi) = if above {
        ((x.lo - x.at(0.3)).min(0.0), (x.hi - x.at(0.1)).max(0.0))
    } else {
        (x.lo.min(0.0), x.hi.max(0.0))
    };
    let m = k.local(
        rng,
        &["keep", "mask", "inside"],
        Ty::F,
        "float(0.0)",
        mlo,
        mhi,
    );
    if gated {
        k.open_of(&[
            "if ",
            &lo,
            " < ",
            &x.expr,
            " < ",
            &hi,
            " and not ",
            &q.expr,
            " < ",
            &qmin,
            ":",
        ]);
    } else {
        k.open_of(&[
            "if (", &x.expr, " > ", &lo, " and ", &x.expr, " < ", &hi, ") or ", &q.expr, " > ",
            &qmin, ":",
        ]);
    }
    if above {
        k.line_of(&[&m.expr, " = (", &x.expr, " - ", &lo, ") * ", &q.expr]);
    } else {
        k.line_of(&[&m.expr, " = ", &x.expr, " * ", &q.expr]);
    }
    k.close(false);
    k.result(m, &["mask_out", "keep_out", "out"]);
    true
}

/// The quadrant of a 2-D point around a center (0-3), with an axis band.
fn quadrant_label(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["px", "x", "u"], Ty::F, -1.0, 1.0);
    let y = k.input(rng, &["py", "y", "v"], Ty::F, -1.0, 1.0);
    // The center in the middle of the inputs' ranges (an offered value may
    // span far less than [-1, 1]), the band a few percent of the narrower.
    let span = (x.hi - x.lo).min(y.hi - y.lo);
    let eps = k.scalar(
        rng,
        &["eps", "band", "margin"],
        Ty::F,
        0.005 * span,
        0.1 * span,
    );
    let cx = x.nice_between(rng, 0.25, 0.75);
    let cy = y.nice_between(rng, 0.25, 0.75);
    let dx = k.local_of(
        rng,
        &["dx", "rx", "du"],
        Ty::F,
        &[&x.expr, " ", &plus(-cx)],
        x.lo - cx,
        x.hi - cx,
    );
    let dy = k.local_of(
        rng,
        &["dy", "ry", "dv"],
        Ty::F,
        &[&y.expr, " ", &plus(-cy)],
        y.lo - cy,
        y.hi - cy,
    );
    let (dx, dy) = (dx.expr, dy.expr);
    let q = k.local(
        rng,
        &["quad", "q", "sector"],
        Ty::F,
        "float(-1.0)",
        -1.0,
        3.0,
    );
    if chance(rng, 0.5) {
        k.open_of(&[
            "if wp.abs(",
            &dx,
            ") > ",
            &eps,
            " and wp.abs(",
            &dy,
            ") > ",
            &eps,
            ":",
        ]);
    } else {
        k.open_of(&[
            "if not (wp.abs(",
            &dx,
            ") < ",
            &eps,
            " or wp.abs(",
            &dy,
            ") < ",
            &eps,
            "):",
        ]);
    }
    k.open_of(&["if ", &dx, " > 0.0 and ", &dy, " > 0.0:"]);
    k.line_of(&[&q.expr, " = 0.0"]);
    k.close(false);
    k.open_of(&["elif ", &dx, " < 0.0 and ", &dy, " > 0.0:"]);
    k.line_of(&[&q.expr, " = 1.0"]);
    k.close(false);
    k.open_of(&["elif ", &dx, " < 0.0:"]);
    k.line_of(&[&q.expr, " = 2.0"]);
    k.close(false);
    k.open("else:");
    k.line_of(&[&q.expr, " = 3.0"]);
    k.close(false);
    k.close(false);
    k.result(q, &["quadrant", "sector_out", "out"]);
    true
}

// -------------------------------------------------------------------- expression trees

/// A polynomial in Horner form whose degree follows `expr_depth`.
fn horner_poly(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "t", "u", "s"], Ty::F, -1.0, 1.0);
    let deg = k.expr_depth(rng, 2, 8) as usize;
    // A nonzero leading coefficient (a zero one could make `x` irrelevant).
    let lead = nice(rng, 0.1, 1.0);
    let mut e = lit(if chance(rng, 0.5) { lead } else { -lead });
    for _ in 0..deg {
        e = format!("({e}) * {} {}", x.expr, plus(nice(rng, -1.0, 1.0)));
    }
    // Outer parens of the first term are redundant: drop them once.
    let e = e.replacen("(", "", 1).replacen(")", "", 1);
    let p = k.local(
        rng,
        &["poly", "p", "approx", "series"],
        Ty::F,
        &e,
        -9.0,
        9.0,
    );
    k.offer(p, &["poly_out", "out", "approx_out"]);
    true
}

/// A rational approximation `(a0 + a1 x + a2 x^2) / (1 + b x^2)`.
fn rational_approx(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "t", "arg"], Ty::F, -3.0, 3.0);
    let d = k.expr_depth(rng, 1, 4);
    let mut num = format!(
        "{} + {} * {}",
        lit(nice(rng, -1.0, 1.0)),
        lit(nice(rng, 0.1, 2.0)),
        x.expr
    );
    for _ in 1..d {
        let c = nice(rng, -1.0, 1.0);
        num = format!("{num} {} * {} * {}", plus(c), x.expr, x.expr);
    }
    let b = lit(nice(rng, 0.05, 1.0));
    let expr = format!("({num}) / (1.0 + {b} * ({0} * {0}))", x.expr);
    let r = k.local(rng, &["ratio", "pade", "approx"], Ty::F, &expr, -50.0, 50.0);
    k.offer(r, &["approx_out", "out"]);
    true
}

/// A formula over 2-3 inputs, nested `expr_depth` deep with operators that
/// keep values in [-1, 1] (products, means, sin/cos/tanh).
fn formula_tree(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = between(rng, 2, 3);
    let depth = k.expr_depth(rng, 1, 8);
    // Leaves are placeholders `#0`, `#1`...: only the inputs the tree uses
    // are declared. Appended to `out` in place (not a `String` per node):
    // operands `a` and `b` first, as they are drawn before the operator,
    // then the operator's text around them.
    fn tree(rng: &mut Gen, n: usize, d: u32, out: &mut String) {
        if d == 0 {
            out.push('#');
            out.push_str(itoa::Buffer::new().format(below(rng, n)));
            return;
        }
        let start = out.len();
        tree(rng, n, d - 1, out);
        let mid = out.len();
        let b_d = if chance(rng, 0.5) { d - 1 } else { 0 };
        tree(rng, n, b_d, out);
        // (before a, between a and b, after b)
        let (pre, sep, post) = match below(rng, 6) {
            0 => ("", " * ", ""),
            // `u - u` is zero: the difference of a subtree with itself would
            // leave its inputs without effect (and the mean of it with itself
            // is itself, which a later difference could cancel).
            1 | 2 if out[start..mid] == out[mid..] => ("", " * ", ""),
            1 => ("0.5 * (", " + ", ")"),
            2 => ("0.5 * (", " - ", ")"),
            3 => {
                out.truncate(mid);
                ("wp.sin(", "", ")")
            }
            4 => ("wp.tanh(", " + ", ")"),
            _ => ("wp.cos(", ") * ", ""),
        };
        out.push_str(post);
        out.insert_str(mid, sep);
        out.insert_str(start, pre);
    }
    let mut e = String::new();
    tree(rng, n, depth, &mut e);
    if !e.contains('(') && !e.contains('*') {
        return false;
    }
    let pools: [&[&str]; 3] = [&["u", "a", "p"], &["v", "b", "q"], &["w", "c", "r"]];
    for (m, pool) in pools.iter().enumerate().take(n) {
        let tag = format!("#{m}");
        if e.contains(&tag) {
            let v = k.input(rng, pool, Ty::F, -1.0, 1.0);
            e = e.replace(&tag, &v.expr);
        }
    }
    let f = k.local(rng, &["f", "val", "expr", "phi"], Ty::F, &e, -1.0, 1.0);
    k.offer(f, &["f_out", "out", "values_out"]);
    true
}

// -------------------------------------------------------------------- atomics / reductions

/// Histogram of values into `nbins` bins over a range.
fn histogram(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let x = k.input(
        rng,
        &["values", "samples", "x", "ages", "intensity"],
        Ty::F,
        0.0,
        10.0,
    );
    let nb = *pick(rng, &[8usize, 16, 32, 64, 10]);
    let bins = k.array(
        rng,
        &["hist", "counts", "bins"],
        Ty::I,
        vec![nb],
        Role::Accum,
        0.0,
        0.0,
    );
    let n = k.size_param(rng, &["num_bins", "nbins", "n_bins"], nb);
    // Bins over half to all of the values' range (an offered value may span
    // far less than [0, 10]: a fixed scale could put them all in one bin).
    let per = nb as f64 / x.hi.max(0.1);
    let inv = k.scalar(
        rng,
        &["inv_width", "bin_scale", "scale"],
        Ty::F,
        0.5 * per,
        per,
    );
    let b = k.local_of(
        rng,
        &["b", "bin", "slot"],
        Ty::I,
        &["wp.clamp(int(", &x.expr, " * ", &inv, "), 0, ", &n, " - 1)"],
        0.0,
        nb as f64,
    );
    k.line_of(&["wp.atomic_add(", &bins, ", ", &b.expr, ", 1)"]);
    true
}

/// Sum (or weighted sum) of all values into one cell with an atomic.
fn atomic_sum(k: &mut Kernel, rng: &mut Gen) -> bool {
    // Signed quantities, or masses (positive).
    let x = if chance(rng, 0.2) {
        k.input(rng, &["mass", "masses", "particle_mass"], Ty::F, 0.1, 10.0)
    } else {
        k.input(
            rng,
            &["energy", "values", "charge", "work"],
            Ty::F,
            -10.0,
            10.0,
        )
    };
    let total = k.array(
        rng,
        &["total", "sum_out", "acc"],
        Ty::F,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    if chance(rng, 0.5) {
        let w = k.input(rng, &["weights", "w", "area"], Ty::F, 0.0, 1.0);
        k.line_of(&[
            "wp.atomic_add(",
            &total,
            ", 0, ",
            &w.expr,
            " * ",
            &x.expr,
            ")",
        ]);
    } else if chance(rng, 0.5) {
        k.line_fmt(format_args!("wp.atomic_add({total}, 0, {0} * {0})", x.expr));
    } else {
        // The mean: each thread adds its share.
        let inv_n = 1.0 / k.launch.dim.iter().product::<usize>() as f64;
        let e = if chance(rng, 0.5) {
            format!("{} * {}", x.expr, lit(inv_n))
        } else {
            format!("wp.abs({}) * {}", x.expr, lit(nice(rng, 0.1, 2.0)))
        };
        k.line_of(&["wp.atomic_add(", &total, ", 0, ", &e, ")"]);
    }
    true
}

/// Global min and/or max with atomics.
fn atomic_extrema(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(
        rng,
        &["values", "depth", "height", "dist"],
        Ty::F,
        -100.0,
        100.0,
    );
    let which = below(rng, 3);
    // Sometimes the extrema of a scaled magnitude (a peak in other units);
    // not for a minimum alone: the least magnitude is near zero, where a
    // change of one value hardly ever lands.
    let x = if which != 0 && chance(rng, 0.5) {
        Val {
            expr: format!("wp.abs({}) * {}", x.expr, lit(nice(rng, 0.1, 4.0))),
            ..x
        }
    } else {
        x
    };
    if which != 1 {
        let lo = k.array(
            rng,
            &["min_out", "lo", "vmin"],
            Ty::F,
            vec![1],
            Role::Accum,
            0.0,
            0.0,
        );
        k.set_init(&lo, 1.0e6);
        k.line_of(&["wp.atomic_min(", &lo, ", 0, ", &x.expr, ")"]);
    }
    if which != 0 {
        let hi = k.array(
            rng,
            &["max_out", "hi", "vmax"],
            Ty::F,
            vec![1],
            Role::Accum,
            0.0,
            0.0,
        );
        k.set_init(&hi, -1.0e6);
        k.line_of(&["wp.atomic_max(", &hi, ", 0, ", &x.expr, ")"]);
    }
    true
}

/// Stream compaction: values above a threshold appended with a counter.
fn stream_compact(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let x = k.input(
        rng,
        &["values", "scores", "candidates", "x"],
        Ty::F,
        0.0,
        1.0,
    );
    // At most 60% kept: the slots past the kept ones keep their contents,
    // which a threshold near the bottom would leave to a few.
    let thr = k.scalar(
        rng,
        &["threshold", "cutoff", "min_score"],
        Ty::F,
        x.at(0.4),
        x.at(0.8),
    );
    let n = k.launch.dim[0];
    let count = k.array(
        rng,
        &["count", "num_kept", "counter"],
        Ty::I,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let kept = k.array(
        rng,
        &["kept", "compacted", "selected"],
        Ty::F,
        vec![n],
        Role::InOut,
        0.0,
        1.0,
    );
    let t = k.tid(0);
    let ids = if chance(rng, 0.5) {
        Some(k.array(
            rng,
            &["kept_ids", "indices_out", "ids"],
            Ty::I,
            vec![n],
            Role::InOut,
            0.0,
            (n - 1) as f64,
        ))
    } else {
        None
    };
    k.open_of(&["if ", &x.expr, " > ", &thr, ":"]);
    let slot = k.fresh(rng, &["slot", "dst_idx", "pos"]);
    k.line_of(&[&slot, " = wp.atomic_add(", &count, ", 0, 1)"]);
    k.line_of(&[&kept, "[", &slot, "] = ", &x.expr]);
    k.set_slots(&kept, &count);
    if let Some(ids) = ids {
        k.line_of(&[&ids, "[", &slot, "] = ", t]);
        k.set_slots(&ids, &count);
    }
    k.close(false);
    true
}

/// Count the elements satisfying a two-sided condition.
fn count_if(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let x = k.input(rng, &["values", "speed", "age", "x"], Ty::F, 0.0, 10.0);
    // A range over at least 30% of the values: a narrow one holds too few
    // for a change of one value to be seen in the count.
    let lo = k.scalar(rng, &["lo", "min_v", "lower"], Ty::F, x.at(0.05), x.at(0.3));
    let hi = k.scalar(rng, &["hi", "max_v", "upper"], Ty::F, x.at(0.6), x.at(0.95));
    let c = k.array(
        rng,
        &["num_in_range", "count", "hits"],
        Ty::I,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    k.open_of(&[
        "if ", &x.expr, " >= ", &lo, " and ", &x.expr, " <= ", &hi, ":",
    ]);
    k.line_of(&["wp.atomic_add(", &c, ", 0, 1)"]);
    k.close(false);
    true
}

/// Per-thread reduction over a row of a 2-D input (sum, dot, max, norm).
fn row_reduce(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let n = k.launch.dim[0];
    let m = *pick(rng, &[4usize, 8, 16, 32]);
    let a = k.array(
        rng,
        &["a", "rows", "matrix", "features"],
        Ty::F,
        vec![n, m],
        Role::In,
        -1.0,
        1.0,
    );
    let cols = k.size_param(rng, &["m", "cols", "num_features", "width"], m);
    let t = k.tid(0);
    let j = k.fresh(rng, &["j", "c", "col"]);
    let (init, upd, names, hi): (&str, String, &[&str], f64) = match below(rng, 4) {
        0 => (
            "float(0.0)",
            format!("+= {a}[{t}, {j}]"),
            &["total", "row_sum", "s"],
            32.0,
        ),
        1 => {
            let x = k.array(
                rng,
                &["x", "vec_in", "weights"],
                Ty::F,
                vec![m],
                Role::In,
                -1.0,
                1.0,
            );
            (
                "float(0.0)",
                format!("+= {a}[{t}, {j}] * {x}[{j}]"),
                &["dot", "acc", "proj"],
                32.0,
            )
        }
        2 => (
            "float(-1.0e6)",
            String::new(),
            &["best", "row_max", "mx"],
            1.0,
        ),
        _ => (
            "float(0.0)",
            format!("+= {a}[{t}, {j}] * {a}[{t}, {j}]"),
            &["sq", "norm_sq", "ss"],
            32.0,
        ),
    };
    let acc = k.fresh(rng, names);
    k.line_of(&[&acc, " = ", init]);
    k.open_of(&["for ", &j, " in range(", &cols, "):"]);
    if upd.is_empty() {
        k.line_of(&[&acc, " = wp.max(", &acc, ", ", &a, "[", t, ", ", &j, "])"]);
    } else {
        k.line_of(&[&acc, " ", &upd]);
    }
    k.close(true);
    let v = Val {
        expr: acc,
        ty: Ty::F,
        lo: -1.0e6,
        hi,
    };
    if chance(rng, 0.5) {
        let out = k.output(rng, &["row_out", "out", "per_row"], Ty::F);
        let e = if names[0] == "sq" {
            format!("wp.sqrt({})", v.expr)
        } else {
            v.expr.clone()
        };
        k.line_of(&[&out, "[", t, "] = ", &e]);
    } else {
        k.offer(v, &["row_out", "reduced", "out"]);
    }
    true
}

/// Mean over a window of neighbours (clamped at the ends).
fn window_mean(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let n = k.launch.dim[0];
    let x = k.array(
        rng,
        &["x", "signal", "prices", "series"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "length", "num"], n);
    let r = k.scalar(rng, &["radius", "half_width", "r"], Ty::I, 1.0, 4.0);
    let t = k.tid(0);
    let acc = k.fresh(rng, &["acc", "total", "s"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let j = k.fresh(rng, &["j", "o", "off"]);
    k.open_of(&["for ", &j, " in range(-", &r, ", ", &r, " + 1):"]);
    let idx = k.fresh(rng, &["jj", "idx", "src_i"]);
    k.line_of(&[&idx, " = wp.clamp(", t, " + ", &j, ", 0, ", &len, " - 1)"]);
    k.line_of(&[&acc, " += ", &x, "[", &idx, "]"]);
    k.close(true);
    let out = k.output(rng, &["smoothed", "mean_out", "avg"], Ty::F);
    k.line_of(&[&out, "[", t, "] = ", &acc, " / float(2 * ", &r, " + 1)"]);
    true
}

/// The rank of each element (how many are smaller; ties by index), as
/// counting sort computes it.
fn rank_count(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let n = k.launch.dim[0];
    let x = k.array(
        rng,
        &["keys", "x", "scores", "values"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "count", "num"], n);
    let t = k.tid(0);
    let me = k.local_of(
        rng,
        &["key", "mine", "xi"],
        Ty::F,
        &[&x, "[", t, "]"],
        -10.0,
        10.0,
    );
    let r = k.fresh(rng, &["rank", "pos", "smaller"]);
    k.line_of(&[&r, " = int(0)"]);
    let j = k.fresh(rng, &["j", "other", "m"]);
    k.open_of(&["for ", &j, " in range(", &len, "):"]);
    let oj = k.fresh(rng, &["kj", "xj", "other_key"]);
    k.line_of(&[&oj, " = ", &x, "[", &j, "]"]);
    if chance(rng, 0.5) {
        k.open_of(&[
            "if ", &oj, " < ", &me.expr, " or (", &oj, " == ", &me.expr, " and ", &j, " < ", t,
            "):",
        ]);
    } else {
        let tol = nice(rng, 0.0, 0.5);
        k.open_of(&["if ", &oj, " + ", &lit(tol), " < ", &me.expr, ":"]);
    }
    k.line_of(&[&r, " += 1"]);
    k.close(false);
    k.close(true);
    if k.int_arrays() {
        let out = k.output(rng, &["ranks", "order", "dst_index"], Ty::I);
        k.line_of(&[&out, "[", t, "] = ", &r]);
    } else {
        let out = k.output(rng, &["ranks", "quantile", "order_f"], Ty::F);
        k.line_of(&[&out, "[", t, "] = float(", &r, ") / float(", &len, ")"]);
    }
    true
}

/// A running sum along a row that stops at a budget (`break`).
fn running_sum_cap(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let n = k.launch.dim[0];
    let m = *pick(rng, &[8usize, 16, 32]);
    let a = k.array(
        rng,
        &["costs", "demand", "weights", "lengths"],
        Ty::F,
        vec![n, m],
        Role::In,
        0.0,
        1.0,
    );
    let cols = k.size_param(rng, &["m", "num_items", "cols"], m);
    // A budget for 40-90% of the items on average (costs average 0.5): the
    // costs past the first that overflows are never read.
    let budget = if chance(rng, 0.5) {
        k.scalar(
            rng,
            &["budget", "capacity", "limit"],
            Ty::F,
            m as f64 * 0.2,
            m as f64 * 0.45,
        )
    } else {
        lit(nice(rng, m as f64 * 0.2, m as f64 * 0.45))
    };
    let t = k.tid(0);
    let acc = k.fresh(rng, &["used", "total", "acc"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let cnt = k.fresh(rng, &["taken", "count", "n_items"]);
    k.line_of(&[&cnt, " = int(0)"]);
    let j = k.fresh(rng, &["j", "item", "c"]);
    k.open_of(&["for ", &j, " in range(", &cols, "):"]);
    k.open_of(&[
        "if ", &acc, " + ", &a, "[", t, ", ", &j, "] > ", &budget, ":",
    ]);
    k.line("break");
    k.close(false);
    k.line_of(&[&acc, " += ", &a, "[", t, ", ", &j, "]"]);
    k.line_of(&[&cnt, " += 1"]);
    k.close(true);
    let out = k.output(rng, &["fill", "used_out", "load"], Ty::F);
    k.line_of(&[&out, "[", t, "] = ", &acc]);
    let out2 = k.output(
        rng,
        &["num_taken", "items_out", "counts"],
        if k.int_arrays() { Ty::I } else { Ty::F },
    );
    if k.int_arrays() {
        k.line_of(&[&out2, "[", t, "] = ", &cnt]);
    } else {
        k.line_of(&[&out2, "[", t, "] = float(", &cnt, ")"]);
    }
    true
}

// -------------------------------------------------------------------- gather / scatter

/// Gather through an index array: `out[i] = src[idx[i]]`.
fn gather(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let m = *pick(rng, &[16usize, 64, 100, 256]);
    let src = k.array(
        rng,
        &["table", "src", "lut", "palette", "values"],
        Ty::F,
        vec![m],
        Role::In,
        -10.0,
        10.0,
    );
    let shape = k.shape();
    let idx = k.array(
        rng,
        &["indices", "idx", "ids", "lookup"],
        Ty::I,
        shape,
        Role::In,
        0.0,
        (m - 1) as f64,
    );
    let own = k.own();
    let v = k.local_of(
        rng,
        &["g", "gathered", "looked_up"],
        Ty::F,
        &[&src, "[", &idx, "[", &own, "]]"],
        -10.0,
        10.0,
    );
    k.offer(v, &["out", "gathered_out", "dst"]);
    true
}

/// Reverse (mirror) permutation.
fn reverse_permute(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let src = k.array(
        rng,
        &["src", "a", "seq"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "length", "count"], n);
    let t = k.tid(0);
    let v = k.local_of(
        rng,
        &["v", "mirrored", "rev"],
        Ty::F,
        &[&src, "[", &len, " - 1 - ", t, "]"],
        -10.0,
        10.0,
    );
    k.offer(v, &["dst", "reversed", "out"]);
    true
}

/// Scatter-add values into cells chosen by an index array.
fn scatter_add(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let m = *pick(rng, &[8usize, 16, 32, 100]);
    // Signed contributions, or masses (positive).
    let x = if chance(rng, 0.25) {
        k.input(rng, &["mass", "masses", "cell_mass"], Ty::F, 0.1, 5.0)
    } else {
        k.input(
            rng,
            &["values", "contrib", "charge", "flux"],
            Ty::F,
            -5.0,
            5.0,
        )
    };
    let shape = k.shape();
    let cell = k.array(
        rng,
        &["cell_ids", "owner", "segment", "bucket_of"],
        Ty::I,
        shape,
        Role::In,
        0.0,
        (m - 1) as f64,
    );
    let acc = k.array(
        rng,
        &["cell_sum", "per_cell", "seg_total"],
        Ty::F,
        vec![m],
        Role::Accum,
        0.0,
        0.0,
    );
    let own = k.own();
    if chance(rng, 0.5) {
        k.line_of(&[
            "wp.atomic_add(",
            &acc,
            ", ",
            &cell,
            "[",
            &own,
            "], ",
            &x.expr,
            ")",
        ]);
    } else {
        let c = k.fresh(rng, &["c", "dst_cell", "seg"]);
        k.line_of(&[&c, " = ", &cell, "[", &own, "]"]);
        k.line_of(&[&acc, "[", &c, "] += ", &x.expr]);
    }
    true
}

/// Strided read `src[(i * stride) % n]` (a computed permutation).
fn strided_remap(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let src = k.array(
        rng,
        &["src", "samples", "data"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "length", "size"], n);
    // A stride prime to the length, so the read is a permutation (a stride
    // sharing a factor with it would leave most elements unread).
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let prime_to_n = |s: &usize| gcd(*s, n) == 1;
    let strides = [3usize, 5, 7, 11, 13];
    let m = strides.iter().filter(|s| prime_to_n(s)).count();
    let stride = strides
        .into_iter()
        .filter(prime_to_n)
        .nth(below(rng, m))
        .unwrap();
    let t = k.tid(0);
    let j = k.local_fmt(
        rng,
        &["j", "src_idx", "k"],
        Ty::I,
        format_args!("({t} * {stride}) % {len}"),
        0.0,
        n as f64,
    );
    let v = k.local_of(
        rng,
        &["v", "picked", "sample"],
        Ty::F,
        &[&src, "[", &j.expr, "]"],
        -10.0,
        10.0,
    );
    k.offer(v, &["dst", "shuffled", "out"]);
    true
}

/// A shifted read: periodic roll or clamped shift by a scalar offset.
fn roll_shift(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let src = k.array(
        rng,
        &["src", "signal", "ring", "history"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "length", "size"], n);
    let shift = k.scalar(rng, &["shift", "lag", "delay"], Ty::I, 1.0, (n / 2) as f64);
    let t = k.tid(0);
    let e = match below(rng, 3) {
        0 => format!("{src}[({t} + {shift}) % {len}]"),
        1 => format!("{src}[({t} - {shift} + {len}) % {len}]"),
        _ => format!("{src}[wp.min({t} + {shift}, {len} - 1)]"),
    };
    let v = k.local(rng, &["v", "shifted", "lagged"], Ty::F, &e, -10.0, 10.0);
    if chance(rng, 0.5) {
        let g = nice(rng, 0.1, 0.9);
        let d = k.local_of(
            rng,
            &["echo", "mixed", "comb"],
            Ty::F,
            &[&src, "[", t, "] + ", &lit(g), " * ", &v.expr],
            -20.0,
            20.0,
        );
        k.offer(d, &["dst", "out", "filtered"]);
    } else {
        k.offer(v, &["dst", "rolled", "out"]);
    }
    true
}

/// Split interleaved pairs (re/im, x/y) of a 2n array.
fn deinterleave(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let (pool, a_names, b_names): (&[&str], &[&str], &[&str]) = *pick(
        rng,
        &[
            (
                &["iq", "complex_in", "pairs"][..],
                &["re", "real"][..],
                &["im", "imag"][..],
            ),
            (
                &["xy", "coords2", "interleaved"],
                &["px", "cx"],
                &["py", "cy"],
            ),
            (
                &["stereo", "frames", "lr"],
                &["left", "l_ch"],
                &["right", "r_ch"],
            ),
        ],
    );
    let src = k.array(rng, pool, Ty::F, vec![2 * n], Role::In, -1.0, 1.0);
    let t = k.tid(0);
    let a = k.local_of(rng, a_names, Ty::F, &[&src, "[2 * ", t, "]"], -1.0, 1.0);
    let b = k.local_of(rng, b_names, Ty::F, &[&src, "[2 * ", t, " + 1]"], -1.0, 1.0);
    match below(rng, 3) {
        0 => {
            let m = k.local_fmt(
                rng,
                &["mag", "amp", "norm2"],
                Ty::F,
                format_args!("wp.sqrt({0} * {0} + {1} * {1})", a.expr, b.expr),
                0.0,
                1.5,
            );
            k.offer(m, &["magnitude", "out", "amp_out"]);
        }
        1 => {
            let m = k.local_of(
                rng,
                &["mid", "mono", "avg"],
                Ty::F,
                &["0.5 * (", &a.expr, " + ", &b.expr, ")"],
                -1.0,
                1.0,
            );
            let d = k.local_of(
                rng,
                &["side", "diff", "delta"],
                Ty::F,
                &["0.5 * (", &a.expr, " - ", &b.expr, ")"],
                -1.0,
                1.0,
            );
            k.offer(m, &["mid_out", "mono_out"]);
            k.offer(d, &["side_out", "diff_out"]);
        }
        _ => {
            k.offer(a, &["first", "a_out", "re_out"]);
            k.offer(b, &["second", "b_out", "im_out"]);
        }
    }
    true
}

/// Transposed block order: element `i` of `nb` blocks reads the matching
/// element of the transposed layout.
fn block_transpose(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let sizes: Vec<usize> = [2usize, 4, 5, 8, 10, 16]
        .into_iter()
        .filter(|b| n % b == 0)
        .collect();
    if sizes.is_empty() {
        return false;
    }
    let bs = *pick(rng, &sizes);
    let src = k.array(
        rng,
        &["src", "soa", "packed"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let bsz = k.size_param(rng, &["block", "bs", "lanes"], bs);
    let nb = k.size_param(rng, &["num_blocks", "nb", "groups"], n / bs);
    let t = k.tid(0);
    let j = k.local_of(
        rng,
        &["j", "src_idx", "aos_i"],
        Ty::I,
        &["(", t, " % ", &bsz, ") * ", &nb, " + ", t, " // ", &bsz],
        0.0,
        n as f64,
    );
    let v = k.local_of(
        rng,
        &["v", "elem", "val"],
        Ty::F,
        &[&src, "[", &j.expr, "]"],
        -10.0,
        10.0,
    );
    k.offer(v, &["dst", "unpacked", "out"]);
    true
}

/// Matrix transpose of a 2-D array.
fn transpose_2d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (a, b) = (k.tid(0), k.tid(1));
    let d = k.shape();
    let src = k.array(
        rng,
        &["src", "a", "m_in", "image"],
        Ty::F,
        vec![d[1], d[0]],
        Role::In,
        -10.0,
        10.0,
    );
    let v = k.local_of(
        rng,
        &["v", "t", "elem"],
        Ty::F,
        &[&src, "[", b, ", ", a, "]"],
        -10.0,
        10.0,
    );
    k.offer(v, &["dst", "transposed", "at"]);
    true
}

/// 2x2 max or average pooling from a twice larger input.
fn pool_2x2(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (a, b) = (k.tid(0), k.tid(1));
    let d = k.shape();
    let img = k.array(
        rng,
        &["image", "fine", "src", "feat"],
        Ty::F,
        vec![2 * d[0], 2 * d[1]],
        Role::In,
        -1.0,
        1.0,
    );
    let (r, c) = (
        k.fresh(rng, &["r", "y0", "si"]),
        k.fresh(rng, &["c", "x0", "sj"]),
    );
    k.line_of(&[&r, " = 2 * ", a]);
    k.line_of(&[&c, " = 2 * ", b]);
    let e = if chance(rng, 0.5) {
        format!(
            "wp.max(wp.max({img}[{r}, {c}], {img}[{r} + 1, {c}]), wp.max({img}[{r}, {c} + 1], {img}[{r} + 1, {c} + 1]))"
        )
    } else {
        format!(
            "0.25 * ({img}[{r}, {c}] + {img}[{r} + 1, {c}] + {img}[{r}, {c} + 1] + {img}[{r} + 1, {c} + 1])"
        )
    };
    let v = k.local(rng, &["pooled", "p", "coarse_v"], Ty::F, &e, -1.0, 1.0);
    k.offer(v, &["coarse", "pooled_out", "out"]);
    true
}

/// 3-D 2x downsampling by averaging 8 children.
fn downsample_3d(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let d = k.shape();
    let fine = k.array(
        rng,
        &["fine", "src", "density"],
        Ty::F,
        vec![2 * d[0], 2 * d[1], 2 * d[2]],
        Role::In,
        0.0,
        1.0,
    );
    let (a, b, c) = (k.tid(0), k.tid(1), k.tid(2));
    let acc = k.fresh(rng, &["acc", "total", "s"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let o = k.fresh(rng, &["o", "child", "n"]);
    k.open_of(&["for ", &o, " in range(8):"]);
    k.line_of(&[
        &acc,
        " += ",
        &fine,
        "[2 * ",
        a,
        " + ",
        &o,
        " % 2, 2 * ",
        b,
        " + (",
        &o,
        " // 2) % 2, 2 * ",
        c,
        " + ",
        &o,
        " // 4]",
    ]);
    k.close(true);
    let v = Val {
        expr: acc,
        ty: Ty::F,
        lo: 0.0,
        hi: 8.0,
    };
    let m = k.local_of(
        rng,
        &["mean", "avg", "coarse_v"],
        Ty::F,
        &[&v.expr, " * 0.125"],
        0.0,
        1.0,
    );
    k.offer(m, &["coarse", "out", "down"]);
    true
}

// -------------------------------------------------------------------- neighbourhoods

/// Left/right neighbour indices of `t` in `0..len`: clamped or periodic.
fn lr_index(
    k: &mut Kernel,
    rng: &mut Gen,
    t: &str,
    len: &str,
    pools: [&[&str]; 2],
) -> (String, String) {
    let (l, r) = match below(rng, 3) {
        0 => (
            format!("wp.max({t} - 1, 0)"),
            format!("wp.min({t} + 1, {len} - 1)"),
        ),
        1 => (
            format!("wp.clamp({t} - 1, 0, {len} - 1)"),
            format!("wp.clamp({t} + 1, 0, {len} - 1)"),
        ),
        _ => (
            format!("({t} - 1 + {len}) % {len}"),
            format!("({t} + 1) % {len}"),
        ),
    };
    let n = 1.0e4;
    let l = k.local(rng, pools[0], Ty::I, &l, 0.0, n).expr;
    let r = k.local(rng, pools[1], Ty::I, &r, 0.0, n).expr;
    (l, r)
}

/// 1-D three-point stencils: smoothing, diffusion, central gradient,
/// upwind advection.
fn neighbor_avg_1d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let n = k.launch.dim[0];
    let u = k.array(
        rng,
        &["u", "signal", "temp", "heights", "conc"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "num_cells", "length"], n);
    let t = k.tid(0);
    let (l, r) = lr_index(
        k,
        rng,
        t,
        &len,
        [&["left", "il", "prev_i"], &["right", "ir", "next_i"]],
    );
    let (e, names): (String, &[&str]) = match below(rng, 4) {
        0 => {
            let w = *pick(rng, &[(0.25, 0.5), (1.0 / 3.0, 1.0 / 3.0), (0.2, 0.6)]);
            (
                format!(
                    "{} * ({u}[{l}] + {u}[{r}]) + {} * {u}[{t}]",
                    lit(w.0),
                    lit(w.1)
                ),
                &["smoothed", "avg", "u_s"],
            )
        }
        1 => {
            let a = k.scalar(rng, &["alpha", "kappa", "coeff"], Ty::F, 0.05, 0.25);
            (
                format!("{u}[{t}] + {a} * ({u}[{l}] - 2.0 * {u}[{t}] + {u}[{r}])"),
                &["u_new", "diffused", "next_u"],
            )
        }
        2 => {
            let h = k.scalar(rng, &["dx", "h", "spacing"], Ty::F, 0.01, 1.0);
            (
                format!("({u}[{r}] - {u}[{l}]) / (2.0 * {h})"),
                &["grad", "du_dx", "slope"],
            )
        }
        _ => {
            let c = k.scalar(rng, &["courant", "cfl", "c"], Ty::F, 0.1, 0.9);
            (
                format!("0.5 * ({u}[{l}] + {u}[{r}]) - 0.5 * {c} * ({u}[{r}] - {u}[{l}])"),
                &["u_adv", "advected", "u_lf"],
            )
        }
    };
    let v = k.local(rng, names, Ty::F, &e, -2000.0, 2000.0);
    k.offer(v, &["u_out", "out", "result"]);
    true
}

/// 2-D five-point stencils: average, Laplacian, gradient magnitude.
fn neighbor_avg_2d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let d = k.shape();
    let f = k.array(
        rng,
        &["f", "img", "field", "heat", "phi"],
        Ty::F,
        d.clone(),
        Role::In,
        0.0,
        1.0,
    );
    let w = k.size_param(rng, &["nx", "height", "rows"], d[0]);
    let h = k.size_param(rng, &["ny", "width", "cols"], d[1]);
    let (a, b) = (k.tid(0), k.tid(1));
    let (xm, xp) = lr_index(k, rng, a, &w, [&["xm", "im", "up"], &["xp", "ip", "down"]]);
    let (ym, yp) = lr_index(
        k,
        rng,
        b,
        &h,
        [&["ym", "jm", "left"], &["yp", "jp", "right"]],
    );
    let (e, names): (String, &[&str]) = match below(rng, 3) {
        0 => (
            format!(
                "0.2 * ({f}[{a}, {b}] + {f}[{xm}, {b}] + {f}[{xp}, {b}] + {f}[{a}, {ym}] + {f}[{a}, {yp}])"
            ),
            &["avg", "blurred", "f_new"],
        ),
        1 => {
            let dt = k.scalar(rng, &["alpha", "dt_k", "rate"], Ty::F, 0.01, 0.2);
            (
                format!(
                    "{f}[{a}, {b}] + {dt} * ({f}[{xm}, {b}] + {f}[{xp}, {b}] + {f}[{a}, {ym}] + {f}[{a}, {yp}] - 4.0 * {f}[{a}, {b}])"
                ),
                &["f_next", "diffused", "u_new"],
            )
        }
        _ => {
            let gx = k.local_of(
                rng,
                &["gx", "dfdx", "grad_x"],
                Ty::F,
                &[
                    "0.5 * (", &f, "[", &xp, ", ", b, "] - ", &f, "[", &xm, ", ", b, "])",
                ],
                -0.5,
                0.5,
            );
            let gy = k.local_of(
                rng,
                &["gy", "dfdy", "grad_y"],
                Ty::F,
                &[
                    "0.5 * (", &f, "[", a, ", ", &yp, "] - ", &f, "[", a, ", ", &ym, "])",
                ],
                -0.5,
                0.5,
            );
            (
                format!("wp.sqrt({0} * {0} + {1} * {1})", gx.expr, gy.expr),
                &["edge", "grad_mag", "g"],
            )
        }
    };
    let v = k.local(rng, names, Ty::F, &e, 0.0, 1.0);
    k.offer(v, &["out", "f_out", "smoothed"]);
    true
}

/// Seven-point average in 3-D with clamped borders.
fn neighbor_avg_3d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let d = k.shape();
    let f = k.array(
        rng,
        &["phi", "density", "vol", "field"],
        Ty::F,
        d.clone(),
        Role::In,
        0.0,
        1.0,
    );
    let t = [k.tid(0), k.tid(1), k.tid(2)];
    let sizes = [
        k.size_param(rng, &["nx", "dim_x"], d[0]),
        k.size_param(rng, &["ny", "dim_y"], d[1]),
        k.size_param(rng, &["nz", "dim_z"], d[2]),
    ];
    let mut terms = vec![format!("{f}[{}, {}, {}]", t[0], t[1], t[2])];
    for ax in 0..3 {
        let m = format!("wp.max({} - 1, 0)", t[ax]);
        let p = format!("wp.min({} + 1, {} - 1)", t[ax], sizes[ax]);
        for e in [m, p] {
            let mut idx = [t[0].to_string(), t[1].to_string(), t[2].to_string()];
            idx[ax] = e;
            terms.push(format!("{f}[{}]", idx.join(", ")));
        }
    }
    let s = k.local(
        rng,
        &["s", "total", "nsum"],
        Ty::F,
        &terms.join(" + "),
        0.0,
        7.0,
    );
    let v = k.local_of(
        rng,
        &["avg", "smoothed", "phi_new"],
        Ty::F,
        &[&s.expr, " / 7.0"],
        0.0,
        1.0,
    );
    k.offer(v, &["out", "phi_out", "result"]);
    true
}

/// A (2r+1)^2 box filter with nested loops, clamped at the borders.
fn box_filter_loop(k: &mut Kernel, rng: &mut Gen) -> bool {
    if k.knobs.loop_depth < 2 {
        return false;
    }
    let d = k.shape();
    let img = k.array(
        rng,
        &["img", "src", "image", "f"],
        Ty::F,
        d.clone(),
        Role::In,
        0.0,
        1.0,
    );
    let w = k.size_param(rng, &["height", "nx", "rows"], d[0]);
    let h = k.size_param(rng, &["width", "ny", "cols"], d[1]);
    let r = k.scalar(rng, &["radius", "r", "half"], Ty::I, 1.0, 3.0);
    let (a, b) = (k.tid(0), k.tid(1));
    let acc = k.fresh(rng, &["acc", "total", "s"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let (di, dj) = (
        k.fresh(rng, &["di", "dy", "oy"]),
        k.fresh(rng, &["dj", "dx", "ox"]),
    );
    k.open_of(&["for ", &di, " in range(-", &r, ", ", &r, " + 1):"]);
    k.open_of(&["for ", &dj, " in range(-", &r, ", ", &r, " + 1):"]);
    let (si, sj) = (
        k.fresh(rng, &["si", "yy", "ii"]),
        k.fresh(rng, &["sj", "xx", "jj"]),
    );
    k.line_of(&[&si, " = wp.clamp(", a, " + ", &di, ", 0, ", &w, " - 1)"]);
    k.line_of(&[&sj, " = wp.clamp(", b, " + ", &dj, ", 0, ", &h, " - 1)"]);
    k.line_of(&[&acc, " += ", &img, "[", &si, ", ", &sj, "]"]);
    k.close(true);
    k.close(true);
    let side = k.fresh(rng, &["side", "k", "width_k"]);
    k.line_of(&[&side, " = float(2 * ", &r, " + 1)"]);
    let out = k.output(rng, &["blurred", "out", "dst"], Ty::F);
    k.line_of(&[
        &out, "[", a, ", ", b, "] = ", &acc, " / (", &side, " * ", &side, ")",
    ]);
    true
}

/// Pairwise interactions inside a window of neighbours (nested loops).
fn pairwise_window(k: &mut Kernel, rng: &mut Gen) -> bool {
    if k.knobs.loop_depth < 2 {
        return false;
    }
    let n = k.launch.dim[0];
    let x = k.array(
        rng,
        &["x", "pos", "coords"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let len = k.size_param(rng, &["n", "count", "num"], n);
    let win = k.scalar(rng, &["window", "k", "span"], Ty::I, 1.0, 4.0);
    let soft = k.scalar(rng, &["eps", "softening", "soft"], Ty::F, 0.01, 0.5);
    let t = k.tid(0);
    let acc = k.fresh(rng, &["energy", "e", "acc"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let a = k.fresh(rng, &["a", "p", "s0"]);
    let b = k.fresh(rng, &["b", "q", "s1"]);
    k.open_of(&["for ", &a, " in range(", &win, "):"]);
    k.open_of(&["for ", &b, " in range(", &a, " + 1, ", &win, " + 1):"]);
    let (ia, ib) = (
        k.fresh(rng, &["ia", "ja", "u"]),
        k.fresh(rng, &["ib", "jb", "v"]),
    );
    k.line_of(&[&ia, " = (", t, " + ", &a, ") % ", &len]);
    k.line_of(&[&ib, " = (", t, " + ", &b, ") % ", &len]);
    let dd = k.fresh(rng, &["d", "dx", "r"]);
    k.line_of(&[&dd, " = ", &x, "[", &ia, "] - ", &x, "[", &ib, "]"]);
    k.line_of(&[&acc, " += 1.0 / (", &dd, " * ", &dd, " + ", &soft, ")"]);
    k.close(true);
    k.close(true);
    let out = k.output(rng, &["energy_out", "out", "pair_e"], Ty::F);
    k.line_of(&[&out, "[", t, "] = ", &acc]);
    true
}

/// One element of a matrix product `C[i, j] = sum_k A[i, k] * B[k, j]`.
fn matmul_row(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let d = k.shape();
    let inner = *pick(rng, &[4usize, 8, 16, 32]);
    let a = k.array(
        rng,
        &["a", "lhs", "A"],
        Ty::F,
        vec![d[0], inner],
        Role::In,
        -1.0,
        1.0,
    );
    let b = k.array(
        rng,
        &["b", "rhs", "B"],
        Ty::F,
        vec![inner, d[1]],
        Role::In,
        -1.0,
        1.0,
    );
    let kk = k.size_param(rng, &["inner", "k_dim", "depth"], inner);
    let (i, j) = (k.tid(0), k.tid(1));
    let acc = k.fresh(rng, &["acc", "s", "dot"]);
    k.line_of(&[&acc, " = float(0.0)"]);
    let l = k.fresh(rng, &["l", "kk", "p"]);
    k.open_of(&["for ", &l, " in range(", &kk, "):"]);
    k.line_of(&[
        &acc, " += ", &a, "[", i, ", ", &l, "] * ", &b, "[", &l, ", ", j, "]",
    ]);
    k.close(true);
    let v = Val {
        expr: acc,
        ty: Ty::F,
        lo: -32.0,
        hi: 32.0,
    };
    k.offer(v, &["c", "out", "product"]);
    true
}

// -------------------------------------------------------------------- tiles

/// The tile size constant of a 1-D tiled kernel (one per module).
fn tile_size(k: &mut Kernel, rng: &mut Gen) -> (String, usize) {
    if let Some(p) = ["TILE", "BLOCK", "TILE_SIZE", "CHUNK"]
        .iter()
        .find(|n| k.has_helper(n))
    {
        let v = k.tile_len;
        return (p.to_string(), v);
    }
    let name = *pick(rng, &["TILE", "BLOCK", "TILE_SIZE", "CHUNK"]);
    let v = *pick(rng, &[32usize, 64, 128, 256]);
    k.constant(name, &v.to_string());
    k.tile_len = v;
    (name.to_string(), v)
}

/// A 1-D tiled kernel's block: the tile size constant and its value, the
/// number of blocks, the block index, and the block's tile (`t`), loaded
/// from a new input array of `nb * len` values drawn from `range`.
struct BlockTile {
    ts: String,
    len: usize,
    nb: usize,
    b: &'static str,
    t: String,
}

/// Loads the block's tile of a new input array (see [`BlockTile`]).
fn block_tile(
    k: &mut Kernel,
    rng: &mut Gen,
    arrays: &[&'static str],
    range: (f64, f64),
    tiles: &[&'static str],
) -> BlockTile {
    let (ts, len) = tile_size(k, rng);
    let nb = k.launch.dim[0];
    let b = k.tid(0);
    let x = k.array(
        rng,
        arrays,
        Ty::F,
        vec![nb * len],
        Role::In,
        range.0,
        range.1,
    );
    let t = k.fresh(rng, tiles);
    k.tile_load(&t, &x, &ts, &[b, " * ", &ts]);
    BlockTile { ts, len, nb, b, t }
}

/// Block sum with `wp.tile_sum`: one partial per block, or one atomic total.
fn tile_block_sum(k: &mut Kernel, rng: &mut Gen) -> bool {
    let BlockTile { nb, b, t, .. } = block_tile(
        k,
        rng,
        &["x", "values", "data", "a"],
        (-1.0, 1.0),
        &["t", "vals", "blk"],
    );
    let sq = chance(rng, 0.4);
    let src = if sq {
        let t2 = k.fresh(rng, &["sq", "t2", "prod"]);
        k.line_of(&[&t2, " = wp.tile_map(wp.mul, ", &t, ", ", &t, ")"]);
        t2
    } else {
        t
    };
    let s = k.fresh(rng, &["s", "total", "part"]);
    k.line_of(&[&s, " = wp.tile_sum(", &src, ")"]);
    if chance(rng, 0.5) {
        let out = k.array(
            rng,
            &["partial", "block_sums", "sums"],
            Ty::F,
            vec![nb],
            Role::Out,
            0.0,
            0.0,
        );
        k.line_of(&["wp.tile_store(", &out, ", ", &s, ", offset=", b, ")"]);
    } else {
        let out = k.array(
            rng,
            &["total", "sum_out", "acc"],
            Ty::F,
            vec![1],
            Role::Accum,
            0.0,
            0.0,
        );
        k.line_of(&["wp.tile_atomic_add(", &out, ", ", &s, ")"]);
    }
    true
}

/// Elementwise map of a tile with a builtin, stored back.
fn tile_map_store(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (shape, off, total) = tile_shape(k, rng);
    let x = k.array(
        rng,
        &["x", "src", "inp", "field"],
        Ty::F,
        total.clone(),
        Role::In,
        -1.0,
        1.0,
    );
    let t = k.fresh(rng, &["t", "a", "blk"]);
    k.tile_load(&t, &x, &shape, &[&off]);
    let f = *pick(rng, &["wp.sin", "wp.cos", "wp.tanh", "wp.abs", "wp.exp"]);
    let m = k.fresh(rng, &["m", "mapped", "y"]);
    k.line_of(&[&m, " = wp.tile_map(", f, ", ", &t, ")"]);
    let out = k.array(
        rng,
        &["out", "dst", "result"],
        Ty::F,
        total,
        Role::Out,
        0.0,
        0.0,
    );
    k.line_of(&["wp.tile_store(", &out, ", ", &m, ", offset=", &off, ")"]);
    true
}

/// Block min/max with `wp.tile_max` / `wp.tile_min`.
fn tile_extrema(k: &mut Kernel, rng: &mut Gen) -> bool {
    let BlockTile { nb, b, t, .. } = block_tile(
        k,
        rng,
        &["x", "values", "depth", "dist"],
        (-10.0, 10.0),
        &["t", "vals", "blk"],
    );
    let f = *pick(rng, &["tile_max", "tile_min"]);
    let m = k.fresh(rng, &["m", "ext", "best"]);
    k.line_of(&[&m, " = wp.", f, "(", &t, ")"]);
    let out = k.array(
        rng,
        &["block_ext", "out", "per_block"],
        Ty::F,
        vec![nb],
        Role::Out,
        0.0,
        0.0,
    );
    k.line_of(&["wp.tile_store(", &out, ", ", &m, ", offset=", b, ")"]);
    true
}

/// A 2-D tile of a matrix product, accumulated over the k tiles.
fn tile_matmul(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() || k.has_helper("TM") {
        return false;
    }
    let tm = *pick(rng, &[8usize, 16]);
    let tn = *pick(rng, &[8usize, 16]);
    let tk = *pick(rng, &[8usize, 16]);
    let kt = *pick(rng, &[1usize, 2, 4]);
    k.constant("TM", &tm.to_string());
    k.constant("TN", &tn.to_string());
    k.constant("TK", &tk.to_string());
    let d = k.shape();
    let (m, n, kd) = (d[0] * tm, d[1] * tn, kt * tk);
    let a = k.array(
        rng,
        &["a", "A", "lhs"],
        Ty::F,
        vec![m, kd],
        Role::In,
        -1.0,
        1.0,
    );
    let b = k.array(
        rng,
        &["b", "B", "rhs"],
        Ty::F,
        vec![kd, n],
        Role::In,
        -1.0,
        1.0,
    );
    let c = k.array(
        rng,
        &["c", "C", "out"],
        Ty::F,
        vec![m, n],
        Role::Out,
        0.0,
        0.0,
    );
    let (i, j) = (k.tid(0), k.tid(1));
    let kt_name = k.size_param(rng, &["k_tiles", "num_k", "kt"], kt);
    let acc = k.fresh(rng, &["acc", "sum", "c_tile"]);
    k.line_of(&[&acc, " = wp.tile_zeros(shape=(TM, TN), dtype=float)"]);
    let l = k.fresh(rng, &["l", "kk", "step"]);
    k.open_of(&["for ", &l, " in range(", &kt_name, "):"]);
    let (ta, tb) = (
        k.fresh(rng, &["ta", "a_tile"]),
        k.fresh(rng, &["tb", "b_tile"]),
    );
    k.tile_load(&ta, &a, "(TM, TK)", &["(", i, " * TM, ", &l, " * TK)"]);
    k.tile_load(&tb, &b, "(TK, TN)", &["(", &l, " * TK, ", j, " * TN)"]);
    k.line_of(&["wp.tile_matmul(", &ta, ", ", &tb, ", ", &acc, ")"]);
    k.close(true);
    k.line_of(&[
        "wp.tile_store(",
        &c,
        ", ",
        &acc,
        ", offset=(",
        i,
        " * TM, ",
        j,
        " * TN))",
    ]);
    true
}

/// `y = alpha * x + y` on tiles.
fn tile_axpy(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (shape, off, total) = tile_shape(k, rng);
    let x = k.array(
        rng,
        &["x", "a", "src"],
        Ty::F,
        total.clone(),
        Role::In,
        -1.0,
        1.0,
    );
    let y = k.array(
        rng,
        &["y", "b", "base"],
        Ty::F,
        total.clone(),
        Role::In,
        -1.0,
        1.0,
    );
    let alpha = k.scalar(rng, &["alpha", "scale", "a_coef"], Ty::F, -2.0, 2.0);
    let (tx, ty) = (
        k.fresh(rng, &["tx", "xt", "ta"]),
        k.fresh(rng, &["ty", "yt", "tb"]),
    );
    k.tile_load(&tx, &x, &shape, &[&off]);
    k.tile_load(&ty, &y, &shape, &[&off]);
    let r = k.fresh(rng, &["r", "z", "res"]);
    k.line_of(&[&r, " = ", &tx, " * ", &alpha, " + ", &ty]);
    let out = k.array(
        rng,
        &["out", "z_out", "dst"],
        Ty::F,
        total,
        Role::Out,
        0.0,
        0.0,
    );
    k.line_of(&["wp.tile_store(", &out, ", ", &r, ", offset=", &off, ")"]);
    true
}

/// A three-point stencil inside each block's tile by shifted slices
/// (`t[0:L-2]`, `t[1:L-1]`, `t[2:]`: views of the tile, which warp moves to
/// shared memory): a box blur or a discrete Laplacian of the block's
/// interior, `L - 2` values per block stored contiguously.
fn tile_slice_stencil(k: &mut Kernel, rng: &mut Gen) -> bool {
    let BlockTile { ts, len, nb, b, t } = block_tile(
        k,
        rng,
        &["u", "signal", "field", "x"],
        (-1.0, 1.0),
        &["t", "blk", "seg"],
    );
    let (l, c, r) = (
        k.fresh(rng, &["left", "west", "lo"]),
        k.fresh(rng, &["mid", "center", "here"]),
        k.fresh(rng, &["right", "east", "hi"]),
    );
    let (n2, n1) = ((len - 2).to_string(), (len - 1).to_string());
    k.line_of(&[&l, " = ", &t, "[0:", &n2, "]"]);
    k.line_of(&[&c, " = ", &t, "[1:", &n1, "]"]);
    k.line_of(&[&r, " = ", &t, "[2:]"]);
    let s = k.fresh(rng, &["smooth", "lap", "res"]);
    if chance(rng, 0.5) {
        k.line_of(&[&s, " = (", &l, " + ", &c, " + ", &r, ") * (1.0 / 3.0)"]);
    } else {
        k.line_of(&[&s, " = ", &l, " + ", &r, " - ", &c, " * 2.0"]);
    }
    let out = k.array(
        rng,
        &["out", "dst", "interior"],
        Ty::F,
        vec![nb * (len - 2)],
        Role::Out,
        0.0,
        0.0,
    );
    k.line_of(&[
        "wp.tile_store(",
        &out,
        ", ",
        &s,
        ", offset=",
        b,
        " * (",
        &ts,
        " - 2))",
    ]);
    true
}

/// (shape text, offset text, array shape) of the kernel's tiles: 1-D
/// `TILE` tiles or 2-D `(TH, TW)` tiles, per the launch.
fn tile_shape(k: &mut Kernel, rng: &mut Gen) -> (String, String, Vec<usize>) {
    if k.dims() == 1 {
        let (ts, len) = tile_size(k, rng);
        let b = k.tid(0);
        let nb = k.launch.dim[0];
        (ts.clone(), format!("{b} * {ts}"), vec![nb * len])
    } else {
        if !k.has_helper("TH") {
            let th = *pick(rng, &[4usize, 8, 16]);
            let tw = *pick(rng, &[8usize, 16, 32]);
            k.constant("TH", &th.to_string());
            k.constant("TW", &tw.to_string());
            k.tile_len = th * 100 + tw;
        }
        let (th, tw) = (k.tile_len / 100, k.tile_len % 100);
        let (i, j) = (k.tid(0), k.tid(1));
        let d = k.shape();
        (
            "(TH, TW)".to_string(),
            format!("({i} * TH, {j} * TW)"),
            vec![d[0] * th, d[1] * tw],
        )
    }
}
