//! Random-sampling motifs: a per-thread generator (`wp.rand_init(seed,
//! thread)`) with uniform, normal and integer draws, geometric samplers
//! (sphere, hemisphere, disk, triangle, cube), Monte Carlo estimates summed
//! with atomics, noise fields (`noise`, `pnoise`, `curlnoise`), random walks,
//! dropout, Poisson events and Metropolis acceptance.
//! (Hand-written references: tests/kernels/motifs/random_sampling.py.)

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

const V3: Ty = Ty::V(3);

pub const MOTIFS: &[Motif] = &[
    Motif {
        name: "position_jitter",
        domain: Domain::Random,
        categories: &["vector", "arithmetic", "scalar_param"],
        dims: ANY,
        build: position_jitter,
    },
    Motif {
        name: "gaussian_noise",
        domain: Domain::Random,
        categories: &["math", "arithmetic", "scalar_param"],
        dims: ANY,
        build: gaussian_noise,
    },
    Motif {
        name: "sphere_surface_sample",
        domain: Domain::Random,
        categories: &["vector", "math"],
        dims: ANY,
        build: sphere_surface_sample,
    },
    Motif {
        name: "cosine_hemisphere",
        domain: Domain::Random,
        categories: &["vector", "math", "matrix"],
        dims: ANY,
        build: cosine_hemisphere,
    },
    Motif {
        name: "monte_carlo_pi",
        domain: Domain::Random,
        categories: &["reduction", "atomic", "nested", "control_flow"],
        dims: ANY,
        build: monte_carlo_pi,
    },
    Motif {
        name: "monte_carlo_integral",
        domain: Domain::Random,
        categories: &["reduction", "math", "nested"],
        dims: ANY,
        build: monte_carlo_integral,
    },
    Motif {
        name: "fbm_noise",
        domain: Domain::Random,
        categories: &["grid_2d", "math", "nested"],
        dims: D2,
        build: fbm_noise,
    },
    Motif {
        name: "periodic_noise_3d",
        domain: Domain::Random,
        categories: &["grid_3d", "math"],
        dims: D3,
        build: periodic_noise_3d,
    },
    Motif {
        name: "curl_noise_flow",
        domain: Domain::Random,
        categories: &["vector", "combined"],
        dims: ANY,
        build: curl_noise_flow,
    },
    Motif {
        name: "random_walk",
        domain: Domain::Random,
        categories: &["nested", "vector", "control_flow"],
        dims: ANY,
        build: random_walk,
    },
    Motif {
        name: "random_gossip",
        domain: Domain::Random,
        categories: &["arithmetic", "scalar_param"],
        dims: D1,
        build: random_gossip,
    },
    Motif {
        name: "triangle_surface_sample",
        domain: Domain::Random,
        categories: &["vector", "combined"],
        dims: D1,
        build: triangle_surface_sample,
    },
    Motif {
        name: "poisson_events",
        domain: Domain::Random,
        categories: &["atomic", "math", "reduction"],
        dims: ANY,
        build: poisson_events,
    },
    Motif {
        name: "dropout",
        domain: Domain::Random,
        categories: &["control_flow", "arithmetic", "grid_2d"],
        dims: ANY,
        build: dropout,
    },
    Motif {
        name: "metropolis_accept",
        domain: Domain::Random,
        categories: &["control_flow", "multi_cond", "math"],
        dims: ANY,
        build: metropolis_accept,
    },
    Motif {
        name: "random_rotation",
        domain: Domain::Random,
        categories: &["transform", "vector"],
        dims: ANY,
        build: random_rotation,
    },
    Motif {
        name: "stochastic_rounding",
        domain: Domain::Random,
        categories: &["arithmetic", "math"],
        dims: ANY,
        build: stochastic_rounding,
    },
];

/// The thread's linear index (`i`, `i * 64 + j`, `(i * 8 + j) * 8 + k`).
fn linear_tid(k: &Kernel) -> String {
    let d = &k.launch.dim;
    match k.dims() {
        1 => k.tid(0).to_string(),
        2 => format!("{} * {} + {}", k.tid(0), d[1], k.tid(1)),
        _ => format!(
            "({} * {} + {}) * {} + {}",
            k.tid(0),
            d[1],
            k.tid(1),
            d[2],
            k.tid(2)
        ),
    }
}

/// A seed parameter and this thread's generator state.
fn rand_state(k: &mut Kernel, rng: &mut Gen) -> String {
    let seed = k.scalar(
        rng,
        &["seed", "rng_seed", "random_seed"],
        Ty::I,
        0.0,
        1_000_000.0,
    );
    let lin = linear_tid(k);
    let st = k.local_of(
        rng,
        &["state", "rng", "rand_state"],
        Ty::I,
        &["wp.rand_init(", &seed, ", ", &lin, ")"],
        0.0,
        0.0,
    );
    st.expr
}

/// A generator shared by every thread (noise fields are functions of position).
fn shared_state(k: &mut Kernel, rng: &mut Gen) -> String {
    let seed = k.scalar(
        rng,
        &["seed", "noise_seed", "pattern_seed"],
        Ty::I,
        0.0,
        1_000_000.0,
    );
    k.local_of(
        rng,
        &["state", "noise_state", "ns"],
        Ty::I,
        &["wp.rand_init(", &seed, ")"],
        0.0,
        0.0,
    )
    .expr
}

/// Uniform jitter of a position.
fn position_jitter(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(rng, &["x", "pos", "points", "samples"], V3, -10.0, 10.0);
    let amp = k.scalar(
        rng,
        &["amplitude", "jitter", "noise_scale"],
        Ty::F,
        0.0,
        0.5,
    );
    let st = rand_state(k, rng);
    let off = k.local_of(
        rng,
        &["offset", "delta", "jitter_v"],
        V3,
        &[
            "wp.vec3(wp.randf(",
            &st,
            ", -1.0, 1.0), wp.randf(",
            &st,
            ", -1.0, 1.0), wp.randf(",
            &st,
            ", -1.0, 1.0))",
        ],
        -1.0,
        1.0,
    );
    let y = k.local_of(
        rng,
        &["x_jit", "jittered", "p_new"],
        V3,
        &[&x.expr, " + ", &off.expr, " * ", &amp],
        -10.5,
        10.5,
    );
    k.offer(y, &["x_out", "jittered_out"]);
    true
}

/// Additive Gaussian noise.
fn gaussian_noise(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["signal", "x", "values", "clean"], Ty::F, -10.0, 10.0);
    let sigma = k.scalar(rng, &["sigma", "noise_std", "std"], Ty::F, 0.0, 1.0);
    let st = rand_state(k, rng);
    let mean = if chance(rng, 0.3) {
        format!(
            " + {}",
            k.scalar(rng, &["mu", "bias", "noise_mean"], Ty::F, -1.0, 1.0)
        )
    } else {
        String::new()
    };
    let y = k.local_of(
        rng,
        &["noisy", "y", "observed"],
        Ty::F,
        &[&x.expr, " + ", &sigma, " * wp.randn(", &st, ")", &mean],
        -20.0,
        20.0,
    );
    k.offer(y, &["noisy_out", "observations"]);
    true
}

/// Points on spheres around centres.
fn sphere_surface_sample(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let c = k.input(rng, &["centers", "center", "origin"], V3, -10.0, 10.0);
    let r = k.input(rng, &["radius", "radii", "r"], Ty::F, 0.0, 5.0);
    let st = rand_state(k, rng);
    let sampler = *pick(
        rng,
        &["wp.sample_unit_sphere_surface", "wp.sample_unit_sphere"],
    );
    let dir = k.local_of(
        rng,
        &["dir", "u", "s"],
        V3,
        &[sampler, "(", &st, ")"],
        -1.0,
        1.0,
    );
    let p = k.local_of(
        rng,
        &["p", "sample", "point"],
        V3,
        &[&c.expr, " + ", &dir.expr, " * ", &r.expr],
        -15.0,
        15.0,
    );
    k.offer(p, &["points", "samples_out"]);
    true
}

/// Cosine-weighted hemisphere directions about a normal, and their pdf.
fn cosine_hemisphere(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::M(3)) {
        return false;
    }
    let nin = k.input(rng, &["normals", "normal", "n"], V3, -1.0, 1.0);
    let st = rand_state(k, rng);
    k.helper(
        "orthonormal_basis",
        "@wp.func\ndef orthonormal_basis(n: wp.vec3):\n    \
         up = wp.where(wp.abs(n[2]) < 0.9, wp.vec3(0.0, 0.0, 1.0), wp.vec3(1.0, 0.0, 0.0))\n    \
         t = wp.normalize(wp.cross(up, n))\n    \
         b = wp.cross(n, t)\n    \
         return wp.matrix_from_cols(t, b, n)",
    );
    let n = k.local_of(
        rng,
        &["nrm", "n_hat", "axis"],
        V3,
        &["wp.normalize(", &nin.expr, ")"],
        -1.0,
        1.0,
    );
    let disk = k.local_of(
        rng,
        &["disk", "xy", "d"],
        Ty::V(2),
        &["wp.sample_unit_disk(", &st, ")"],
        -1.0,
        1.0,
    );
    let z = k.local_fmt(
        rng,
        &["z", "cos_theta", "h"],
        Ty::F,
        format_args!(
            "wp.sqrt(wp.max(1.0 - {d}[0] * {d}[0] - {d}[1] * {d}[1], 0.0))",
            d = disk.expr
        ),
        0.0,
        1.0,
    );
    let dir = k.local_fmt(
        rng,
        &["wi", "dir", "bounce_dir"],
        V3,
        format_args!(
            "orthonormal_basis({}) * wp.vec3({d}[0], {d}[1], {})",
            n.expr,
            z.expr,
            d = disk.expr
        ),
        -1.0,
        1.0,
    );
    if chance(rng, 0.5) {
        let pdf = k.local_of(
            rng,
            &["pdf", "p_dir", "density"],
            Ty::F,
            &[&z.expr, " / wp.pi"],
            0.0,
            0.32,
        );
        k.offer(pdf, &["pdf_out", "pdfs"]);
    }
    k.offer(dir, &["dirs", "directions"]);
    true
}

/// Counts random points of the unit square inside the quarter disk.
fn monte_carlo_pi(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() || !k.int_arrays() {
        return false;
    }
    let st = rand_state(k, rng);
    let n = k.scalar(
        rng,
        &["samples_per_thread", "num_samples", "n_samples"],
        Ty::I,
        1.0,
        64.0,
    );
    let out = k.array(
        rng,
        &["inside", "hits", "count"],
        Ty::I,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let c = k.local(
        rng,
        &["c", "local_hits", "n_in"],
        Ty::I,
        "int(0)",
        0.0,
        64.0,
    );
    let s = k.fresh(rng, &["s", "it", "sample"]);
    k.open_of(&["for ", &s, " in range(", &n, "):"]);
    let x = k.local_of(
        rng,
        &["x", "u", "px"],
        Ty::F,
        &["wp.randf(", &st, ")"],
        0.0,
        1.0,
    );
    let y = k.local_of(
        rng,
        &["y", "v", "py"],
        Ty::F,
        &["wp.randf(", &st, ")"],
        0.0,
        1.0,
    );
    k.open_fmt(format_args!(
        "if {x} * {x} + {y} * {y} <= 1.0:",
        x = x.expr,
        y = y.expr
    ));
    k.line_of(&[&c.expr, " += 1"]);
    k.close(false);
    k.close(true);
    k.line_of(&["wp.atomic_add(", &out, ", 0, ", &c.expr, ")"]);
    true
}

/// Monte Carlo estimate of an integral, summed with an atomic add.
fn monte_carlo_integral(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let st = rand_state(k, rng);
    let n = k.scalar(
        rng,
        &["samples_per_thread", "num_samples", "n_samples"],
        Ty::I,
        1.0,
        64.0,
    );
    let lo = k.scalar(rng, &["lower", "a", "x_min"], Ty::F, -3.0, -0.5);
    let hi = k.scalar(rng, &["upper", "b", "x_max"], Ty::F, 0.5, 3.0);
    let freq = k.scalar(rng, &["freq", "omega", "k"], Ty::F, 0.5, 8.0);
    let out = k.array(
        rng,
        &["integral", "estimate", "result"],
        Ty::F,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let total = k.local(
        rng,
        &["total", "acc", "sum_f"],
        Ty::F,
        "float(0.0)",
        -64.0,
        64.0,
    );
    let s = k.fresh(rng, &["s", "it", "sample"]);
    k.open_of(&["for ", &s, " in range(", &n, "):"]);
    let x = k.local_of(
        rng,
        &["x", "xs", "u"],
        Ty::F,
        &["wp.randf(", &st, ", ", &lo, ", ", &hi, ")"],
        -3.0,
        3.0,
    );
    let f = *pick(
        rng,
        &[
            "wp.sin({f} * {x}) * wp.exp(-{x} * {x})",
            "wp.cos({f} * {x}) / (1.0 + {x} * {x})",
            "wp.exp(-{f} * wp.abs({x}))",
        ],
    );
    let fx = f.replace("{f}", &freq).replace("{x}", &x.expr);
    k.line_of(&[&total.expr, " += ", &fx]);
    k.close(true);
    k.line_of(&[
        "wp.atomic_add(",
        &out,
        ", 0, ",
        &total.expr,
        " * (",
        &hi,
        " - ",
        &lo,
        ") / float(",
        &n,
        "))",
    ]);
    true
}

/// Fractal (fBm) value noise over a 2-D grid.
fn fbm_noise(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() || !k.allows(Ty::V(2)) {
        return false;
    }
    let st = shared_state(k, rng);
    let freq = k.scalar(rng, &["frequency", "scale", "base_freq"], Ty::F, 0.01, 0.5);
    let oct = k.scalar(rng, &["octaves", "num_octaves", "layers"], Ty::I, 1.0, 6.0);
    let fn_ = *pick(rng, &["wp.noise", "wp.noise", "wp.pnoise"]);
    let p = k.local_of(
        rng,
        &["p", "coord", "uv"],
        Ty::V(2),
        &[
            "wp.vec2(float(",
            k.tid(0),
            "), float(",
            k.tid(1),
            ")) * ",
            &freq,
        ],
        0.0,
        32.0,
    );
    let amp = k.local(
        rng,
        &["amp", "amplitude", "weight"],
        Ty::F,
        "float(1.0)",
        0.0,
        1.0,
    );
    let val = k.local(
        rng,
        &["value", "height", "n"],
        Ty::F,
        "float(0.0)",
        -2.0,
        2.0,
    );
    let o = k.fresh(rng, &["o", "octave", "layer"]);
    k.open_of(&["for ", &o, " in range(", &oct, "):"]);
    if fn_ == "wp.pnoise" {
        let per = *pick(rng, &[4, 8, 16]);
        k.line_fmt(format_args!(
            "{} += {} * wp.pnoise({st}, {}, {per}, {per})",
            val.expr, amp.expr, p.expr
        ));
    } else {
        k.line_of(&[
            &val.expr,
            " += ",
            &amp.expr,
            " * wp.noise(",
            &st,
            ", ",
            &p.expr,
            ")",
        ]);
    }
    k.line_fmt(format_args!("{p} = {p} * 2.0", p = p.expr));
    k.line_fmt(format_args!("{a} = {a} * 0.5", a = amp.expr));
    k.close(true);
    k.offer(val, &["field", "heightmap", "noise_out"]);
    true
}

/// Tileable 3-D Perlin noise sampled at each cell.
fn periodic_noise_3d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let st = shared_state(k, rng);
    // Coordinates reach past 2 even on a 4-wide grid: below the smallest
    // period (2) every period gives the same lattice and `period` is moot.
    let scale = k.scalar(rng, &["scale", "frequency", "cell_scale"], Ty::F, 0.7, 1.5);
    let period = k.scalar(rng, &["period", "tile_size", "wrap"], Ty::I, 2.0, 4.0);
    let p = k.local_of(
        rng,
        &["p", "coord", "xyz"],
        V3,
        &[
            "wp.vec3(float(",
            k.tid(0),
            "), float(",
            k.tid(1),
            "), float(",
            k.tid(2),
            ")) * ",
            &scale,
        ],
        0.0,
        24.0,
    );
    let n = k.local_of(
        rng,
        &["density", "noise_v", "value"],
        Ty::F,
        &[
            "wp.pnoise(",
            &st,
            ", ",
            &p.expr,
            ", ",
            &period,
            ", ",
            &period,
            ", ",
            &period,
            ")",
        ],
        -1.0,
        1.0,
    );
    if chance(rng, 0.5) {
        // Perlin noise stays mostly within +-0.5: iso levels near zero.
        let th = k.scalar(rng, &["threshold", "iso", "cutoff"], Ty::F, -0.2, 0.2);
        let m = k.local_of(
            rng,
            &["solid", "occupancy", "mask"],
            Ty::F,
            &[
                "wp.smoothstep(",
                &th,
                " - 0.25, ",
                &th,
                " + 0.25, ",
                &n.expr,
                ")",
            ],
            0.0,
            1.0,
        );
        k.offer(m, &["occupancy_out", "mask_out"]);
    } else {
        k.offer(n, &["noise_out", "density_out"]);
    }
    true
}

/// Advects points along divergence-free curl noise.
fn curl_noise_flow(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::V(4)) {
        return false;
    }
    let x = k.input(rng, &["x", "pos", "particles"], V3, -10.0, 10.0);
    let st = shared_state(k, rng);
    let freq = k.scalar(rng, &["frequency", "noise_scale", "k"], Ty::F, 0.1, 2.0);
    let time = k.scalar(rng, &["time", "t", "phase"], Ty::F, 0.0, 100.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.05);
    let v = k.local_fmt(
        rng,
        &["vel", "flow", "v_curl"],
        V3,
        format_args!(
            "wp.curlnoise({st}, wp.vec4({x}[0] * {freq}, {x}[1] * {freq}, {x}[2] * {freq}, {time}))",
            x = x.expr
        ),
        -10.0,
        10.0,
    );
    let x1 = k.local_of(
        rng,
        &["x_new", "advected", "p_next"],
        V3,
        &[&x.expr, " + ", &v.expr, " * ", &dt],
        -11.0,
        11.0,
    );
    k.offer(x1, &["x_out", "particles_out"]);
    true
}

/// Random walk with unit-sphere steps.
fn random_walk(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.can_loop() {
        return false;
    }
    let start = k.input(rng, &["start", "x0", "origin"], V3, -10.0, 10.0);
    let st = rand_state(k, rng);
    // On a leash, the walk takes at least 4 steps of 0.08-0.1 and the leash
    // is 1.2-3 steps long: every step count reaches it somewhere (a long leash
    // never met, or one shorter than a step, would leave it or the steps
    // without effect).
    let leashed = chance(rng, 0.4);
    let steps = k.scalar(
        rng,
        &["num_steps", "steps", "walk_length"],
        Ty::I,
        if leashed { 4.0 } else { 1.0 },
        32.0,
    );
    let (h_min, h_max) = if leashed { (0.08, 0.1) } else { (0.01, 0.5) };
    let h = k.scalar(rng, &["step_size", "step", "stride"], Ty::F, h_min, h_max);
    let p = k.local_of(
        rng,
        &["p", "walker", "x"],
        V3,
        &["wp.vec3(", &start.expr, ")"],
        -26.0,
        26.0,
    );
    let s = k.fresh(rng, &["s", "it", "step_i"]);
    k.open_of(&["for ", &s, " in range(", &steps, "):"]);
    if leashed {
        // a walk on a leash: steps leaving a ball around the start are refused
        let r = k.scalar(rng, &["leash", "max_radius", "r_max"], Ty::F, 0.12, 0.25);
        let cand = k.local_of(
            rng,
            &["cand", "trial", "q"],
            V3,
            &[
                &p.expr,
                " + wp.sample_unit_sphere_surface(",
                &st,
                ") * ",
                &h,
            ],
            -26.0,
            26.0,
        );
        k.open_of(&[
            "if wp.length(",
            &cand.expr,
            " - ",
            &start.expr,
            ") < ",
            &r,
            ":",
        ]);
        k.line_of(&[&p.expr, " = ", &cand.expr]);
        k.close(false);
    } else {
        k.line_fmt(format_args!(
            "{p} = {p} + wp.sample_unit_sphere_surface({st}) * {h}",
            p = p.expr
        ));
    }
    k.close(true);
    if chance(rng, 0.5) {
        let d = k.local_of(
            rng,
            &["travelled", "displacement", "dist"],
            Ty::F,
            &["wp.length(", &p.expr, " - ", &start.expr, ")"],
            0.0,
            50.0,
        );
        k.offer(d, &["travelled_out", "dist_out"]);
    }
    k.offer(p, &["end", "x_out"]);
    true
}

/// Each value blends with a randomly chosen other one (gossip averaging).
fn random_gossip(k: &mut Kernel, rng: &mut Gen) -> bool {
    let t = k.tid(0);
    let vals = k.array(
        rng,
        &["values", "opinions", "x"],
        Ty::F,
        k.shape(),
        Role::In,
        -10.0,
        10.0,
    );
    let mix = k.scalar(rng, &["mix", "alpha", "blend"], Ty::F, 0.0, 1.0);
    let st = rand_state(k, rng);
    let n = if chance(rng, 0.5) {
        format!("{vals}.shape[0]")
    } else {
        k.size_param(rng, &["n", "count", "num_nodes"], k.launch.dim[0])
    };
    let j = k.local_of(
        rng,
        &["j", "peer", "other"],
        Ty::I,
        &["wp.randi(", &st, ", 0, ", &n, ")"],
        0.0,
        1.0e6,
    );
    let y = k.local_of(
        rng,
        &["blended", "v_new", "avg"],
        Ty::F,
        &[
            "wp.lerp(", &vals, "[", t, "], ", &vals, "[", &j.expr, "], ", &mix, ")",
        ],
        -10.0,
        10.0,
    );
    k.offer(y, &["values_out", "opinions_out"]);
    true
}

/// A uniform point on each triangle of an indexed mesh.
fn triangle_surface_sample(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::V(2)) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let (verts, tris, _) = super::geometry::triangle_per_thread(k, rng, &[32, 64, 128]);
    let st = rand_state(k, rng);
    let uv = k.local_of(
        rng,
        &["uv", "bary", "st"],
        Ty::V(2),
        &["wp.sample_triangle(", &st, ")"],
        0.0,
        1.0,
    );
    let p = k.local_fmt(
        rng,
        &["p", "sample", "surface_p"],
        V3,
        format_args!(
            "{v}[{f}[{t}, 0]] * (1.0 - {uv}[0] - {uv}[1]) + {v}[{f}[{t}, 1]] * {uv}[0] + {v}[{f}[{t}, 2]] * {uv}[1]",
            v = verts,
            f = tris,
            uv = uv.expr
        ),
        -5.0,
        5.0,
    );
    k.offer(p, &["samples", "surface_points"]);
    true
}

/// Poisson-distributed event counts per cell, and their total.
fn poisson_events(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let rate = k.input(rng, &["rate", "lam", "intensity"], Ty::F, 0.0, 50.0);
    // Expected counts up to 5-50 (an offered rate may be far below 50: with
    // means near zero nearly every draw is 0 whatever the rate).
    let rh = rate.hi.max(0.1);
    let dt = k.scalar(
        rng,
        &["dt", "window", "exposure_time"],
        Ty::F,
        5.0 / rh,
        50.0 / rh,
    );
    let st = rand_state(k, rng);
    let total = k.array(
        rng,
        &["total", "event_count", "num_events"],
        Ty::I,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let n = k.local_of(
        rng,
        &["events", "count", "n_emit"],
        Ty::I,
        &["int(wp.poisson(", &st, ", ", &rate.expr, " * ", &dt, "))"],
        0.0,
        200.0,
    );
    k.line_of(&["wp.atomic_add(", &total, ", 0, ", &n.expr, ")"]);
    if chance(rng, 0.5) {
        k.result(n, &["emitted", "counts"]);
    }
    true
}

/// Inverted dropout: keep with probability p, rescaled by 1/p.
fn dropout(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "activations", "features"], Ty::F, -10.0, 10.0);
    // Dropout rates of 5-30%: a dropped value hides what it was made of.
    let p = k.scalar(rng, &["keep_prob", "p_keep", "keep"], Ty::F, 0.7, 0.95);
    let st = rand_state(k, rng);
    let y = if chance(rng, 0.5) {
        let keep = k.local_of(
            rng,
            &["keep_mask", "kept", "mask"],
            Ty::I,
            &["wp.randf(", &st, ") < ", &p],
            0.0,
            1.0,
        );
        k.local_of(
            rng,
            &["y", "dropped", "out_v"],
            Ty::F,
            &["wp.where(", &keep.expr, ", ", &x.expr, " / ", &p, ", 0.0)"],
            -20.0,
            20.0,
        )
    } else {
        let y = k.local(
            rng,
            &["y", "dropped", "out_v"],
            Ty::F,
            "float(0.0)",
            -20.0,
            20.0,
        );
        k.open_of(&["if wp.randf(", &st, ") < ", &p, ":"]);
        k.line_of(&[&y.expr, " = ", &x.expr, " / ", &p]);
        k.close(false);
        y
    };
    k.offer(y, &["y_out", "activations_out"]);
    true
}

/// Metropolis acceptance of a proposed state.
fn metropolis_accept(k: &mut Kernel, rng: &mut Gen) -> bool {
    // States and energies of the same scale as the proposal's energy
    // (0.5 x^2) and the temperature: a good share of the proposals is
    // accepted, and which depends on the current energy.
    let x = k.input(rng, &["x", "state_x", "current"], Ty::F, -3.0, 3.0);
    // Energies up to 0.8 and temperatures of 0.05-0.3 times the largest
    // proposal energy of the state's range (an offered state may span far
    // less than [-3, 3]): a good share of the moves is rejected.
    let xm = x.lo.abs().max(x.hi.abs()).max(0.5);
    let scale = 0.5 * xm * xm;
    let e0 = k.input(rng, &["energy", "e_old", "e_cur"], Ty::F, 0.0, 0.8 * scale);
    let temp = k.scalar(
        rng,
        &["temperature", "kT", "temp"],
        Ty::F,
        0.05 * scale,
        0.3 * scale,
    );
    let step = k.scalar(rng, &["step", "proposal_width", "delta"], Ty::F, 0.01, 1.0);
    let st = rand_state(k, rng);
    let xp = k.local_of(
        rng,
        &["x_prop", "proposal", "x_try"],
        Ty::F,
        &[&x.expr, " + ", &step, " * wp.randn(", &st, ")"],
        -20.0,
        20.0,
    );
    let e1 = k.local_fmt(
        rng,
        &["e_prop", "e_new", "energy_try"],
        Ty::F,
        format_args!("0.5 * {x} * {x}", x = xp.expr),
        0.0,
        200.0,
    );
    let de = k.local_of(
        rng,
        &["de", "delta_e", "d_energy"],
        Ty::F,
        &[&e1.expr, " - ", &e0.expr],
        -10.0,
        210.0,
    );
    let res = k.local_of(
        rng,
        &["x_next", "accepted", "x_new"],
        Ty::F,
        &["float(", &x.expr, ")"],
        -20.0,
        20.0,
    );
    // The chain's energy goes along with its state (a rejected move keeps
    // the current one).
    let en = k.local_of(
        rng,
        &["e_next", "energy_new", "e_kept"],
        Ty::F,
        &["float(", &e0.expr, ")"],
        0.0,
        200.0,
    );
    k.open_fmt(format_args!(
        "if {de} <= 0.0 or wp.randf({st}) < wp.exp(-wp.max({de}, 0.0) / {temp}):",
        de = de.expr
    ));
    k.line_of(&[&res.expr, " = ", &xp.expr]);
    k.line_of(&[&en.expr, " = ", &e1.expr]);
    k.close(false);
    k.offer(res, &["x_out", "chain_out"]);
    k.offer(en, &["energy_out", "e_out"]);
    true
}

/// Rotates vectors by uniformly random axis-angle rotations.
fn random_rotation(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let v = k.input(rng, &["v", "vectors", "dirs"], V3, -10.0, 10.0);
    let st = rand_state(k, rng);
    let max_angle = k.scalar(
        rng,
        &["max_angle", "spread", "angle_range"],
        Ty::F,
        0.0,
        3.14159,
    );
    let axis = k.local_of(
        rng,
        &["axis", "rot_axis", "u"],
        V3,
        &["wp.sample_unit_sphere_surface(", &st, ")"],
        -1.0,
        1.0,
    );
    let q = k.local_of(
        rng,
        &["q", "rot", "spin"],
        Ty::Quat,
        &[
            "wp.quat_from_axis_angle(",
            &axis.expr,
            ", wp.randf(",
            &st,
            ", 0.0, ",
            &max_angle,
            "))",
        ],
        -1.0,
        1.0,
    );
    let r = k.local_of(
        rng,
        &["rotated", "v_rot", "v_new"],
        V3,
        &["wp.quat_rotate(", &q.expr, ", ", &v.expr, ")"],
        -18.0,
        18.0,
    );
    if chance(rng, 0.4) {
        k.offer(q, &["rotations", "q_out"]);
    }
    k.offer(r, &["rotated_out", "v_out"]);
    true
}

/// Stochastic rounding to a grid step.
fn stochastic_rounding(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["x", "values", "weights"], Ty::F, -100.0, 100.0);
    // A quantum of 1/2000 to 1/200 of the input's span (an offered value may
    // span far less than [-100, 100]: a coarse step would round its changes
    // away).
    let span = (x.hi - x.lo).max(0.01);
    let (qlo, qhi) = (span / 2000.0, span / 200.0);
    let q = k.scalar(rng, &["quantum", "step", "resolution"], Ty::F, qlo, qhi);
    let st = rand_state(k, rng);
    let y = k.local_of(
        rng,
        &["rounded", "quantized", "y"],
        Ty::F,
        &[
            "wp.floor(",
            &x.expr,
            " / ",
            &q,
            " + wp.randf(",
            &st,
            ")) * ",
            &q,
        ],
        x.lo - qhi,
        x.hi + qhi,
    );
    k.offer(y, &["rounded_out", "quantized_out"]);
    true
}

#[cfg(test)]
mod tests {
    use super::super::{D1, D2, D3, Motif, TILED, TILED2};
    use crate::synth::kernel::{Kernel, pick};
    use crate::synth::knobs::Knobs;
    use crate::synth::sample_rng;

    /// The motifs of helper "motifs"' four domains.
    fn mine() -> Vec<&'static Motif> {
        [
            super::super::physics::MOTIFS,
            super::super::fields::MOTIFS,
            super::super::geometry::MOTIFS,
            super::MOTIFS,
        ]
        .iter()
        .flat_map(|m| m.iter())
        .collect()
    }

    /// A kernel may be named after its first motif: no helper this file
    /// set defines may have a motif's name (warp would resolve the call to
    /// the kernel and refuse it).
    #[test]
    fn helper_names_are_not_motif_names() {
        let knobs = Knobs::default();
        let names: Vec<&str> = super::super::all().iter().map(|m| m.name).collect();
        for (mi, m) in mine().into_iter().enumerate() {
            for n in 0..4u64 {
                let mut rng = sample_rng(99 + mi as u64, n);
                let dims = [(D1, 1), (D2, 2), (D3, 3)]
                    .iter()
                    .find(|s| m.dims & s.0 != 0)
                    .map_or(1, |s| s.1);
                let mut k = Kernel::new(&mut rng, &knobs, m.categories[0], dims, false);
                if !(m.build)(&mut k, &mut rng) {
                    continue;
                }
                let (src, _) = k.finish(&mut rng, "k");
                for line in src.lines() {
                    let def = line
                        .strip_prefix("def ")
                        .or_else(|| line.strip_prefix("class "));
                    if let Some(rest) = def {
                        let name = rest.split(['(', ':']).next().unwrap();
                        assert!(!names.contains(&name), "{}: helper {name}", m.name);
                    }
                }
            }
        }
    }

    /// Builds kernels that start with each motif (then more of its first
    /// category's family) in every launch shape it declares; with
    /// PP_MOTIF_DUMP=DIR set, writes each as DIR/NAME_N.py (+ .json spec).
    #[test]
    fn every_motif_builds_in_every_shape_it_declares() {
        let dump = std::env::var("PP_MOTIF_DUMP").ok();
        let per = std::env::var("PP_MOTIF_PER")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3u64);
        let knobs = Knobs::default();
        let mut failures = Vec::new();
        for (mi, m) in mine().into_iter().enumerate() {
            let shapes: Vec<(usize, bool)> = [
                (D1, 1, false),
                (D2, 2, false),
                (D3, 3, false),
                (TILED, 1, true),
                (TILED2, 2, true),
            ]
            .iter()
            .filter(|s| m.dims & s.0 != 0)
            .map(|s| (s.1, s.2))
            .collect();
            for n in 0..per {
                let mut rng = sample_rng(7 + mi as u64, n);
                let (dims, tiled) = *pick(&mut rng, &shapes);
                let cat = m.categories[n as usize % m.categories.len()];
                let mut k = Kernel::new(&mut rng, &knobs, cat, dims, tiled);
                assert!(
                    (m.build)(&mut k, &mut rng),
                    "{} refused default knobs",
                    m.name
                );
                k.motifs.push(m.name);
                // a second motif of the same family, when one fits
                let fam: Vec<&Motif> = super::super::family(cat)
                    .iter()
                    .copied()
                    .filter(|o| o.fits(&k))
                    .collect();
                if n % 2 == 1 && !fam.is_empty() {
                    let o = *pick(&mut rng, &fam);
                    if (o.build)(&mut k, &mut rng) {
                        k.motifs.push(o.name);
                    }
                }
                let (src, spec) = k.finish(&mut rng, &format!("{}_{n}", m.name));
                assert!(src.contains("@wp.kernel"));
                if let Err(rule) = crate::synth::dataflow::check(&src, &k.params, &k.launch.dim) {
                    let rule = crate::synth::dataflow::RULE_NAMES[rule as usize];
                    failures.push(format!("{} #{n} ({:?}): {rule}", m.name, k.motifs));
                    if let Some(dir) = &dump {
                        std::fs::create_dir_all(format!("{dir}/refused")).unwrap();
                        std::fs::write(format!("{dir}/refused/{}_{n}.py", m.name), &src).unwrap();
                    }
                    continue;
                }
                if let Some(dir) = &dump {
                    std::fs::create_dir_all(dir).unwrap();
                    std::fs::write(format!("{dir}/{}_{n}.py", m.name), &src).unwrap();
                    std::fs::write(format!("{dir}/{}_{n}.json", m.name), &spec).unwrap();
                }
            }
        }
        for f in &failures {
            eprintln!("dataflow refuses {f}");
        }
        assert!(
            failures.len() * 10 <= mine().len() * per as usize,
            "{} kernels of {} refused by the dataflow pass",
            failures.len(),
            mine().len() * per as usize
        );
    }
}
