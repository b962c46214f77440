//! Field and image motifs: stencils over a launch-shaped grid read at
//! clamped or periodic neighbours (smoothing, Laplacian, diffusion, waves,
//! blur, Sobel), grid fluids (semi-Lagrangian advection with bilinear
//! sampling, divergence, gradient, Jacobi pressure, projection, vorticity)
//! and per-pixel image operations (thresholds, tone mapping, histograms).
//! Neighbour reads only touch input arrays; every write is the thread's own
//! cell. (Hand-written references: tests/kernels/motifs/fields_*.py.)

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};
use crate::text::Put;

pub const MOTIFS: &[Motif] = &[
    Motif {
        name: "smooth_1d",
        domain: Domain::Fields,
        categories: &["stencil", "arithmetic"],
        dims: D1,
        build: smooth_1d,
    },
    Motif {
        name: "laplacian",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d", "grid_3d"],
        dims: ANY,
        build: laplacian,
    },
    Motif {
        name: "heat_diffusion",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d", "grid_3d", "combined"],
        dims: ANY,
        build: heat_diffusion,
    },
    Motif {
        name: "wave_equation",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d"],
        dims: D2,
        build: wave_equation,
    },
    Motif {
        name: "box_blur",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d", "nested"],
        dims: D2,
        build: box_blur,
    },
    Motif {
        name: "gaussian_blur",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d", "nested", "math"],
        dims: D1 | D2,
        build: gaussian_blur,
    },
    Motif {
        name: "sobel_edges",
        domain: Domain::Fields,
        categories: &["stencil", "grid_2d", "vector"],
        dims: D2,
        build: sobel_edges,
    },
    Motif {
        name: "semi_lagrangian_advect",
        domain: Domain::Fields,
        categories: &["grid_2d", "stencil", "combined"],
        dims: D2,
        build: semi_lagrangian_advect,
    },
    Motif {
        name: "divergence",
        domain: Domain::Fields,
        categories: &["grid_2d", "grid_3d", "stencil"],
        dims: D2 | D3,
        build: divergence,
    },
    Motif {
        name: "gradient",
        domain: Domain::Fields,
        categories: &["grid_2d", "grid_3d", "stencil", "vector"],
        dims: D2 | D3,
        build: gradient,
    },
    Motif {
        name: "jacobi_pressure",
        domain: Domain::Fields,
        categories: &["grid_2d", "grid_3d", "stencil"],
        dims: D2 | D3,
        build: jacobi_pressure,
    },
    Motif {
        name: "pressure_projection",
        domain: Domain::Fields,
        categories: &["grid_2d", "stencil", "combined"],
        dims: D2,
        build: pressure_projection,
    },
    Motif {
        name: "vorticity",
        domain: Domain::Fields,
        categories: &["grid_2d", "stencil"],
        dims: D2,
        build: vorticity,
    },
    Motif {
        name: "soft_threshold",
        domain: Domain::Fields,
        categories: &["math", "grid_2d", "arithmetic"],
        dims: ANY,
        build: soft_threshold,
    },
    Motif {
        name: "tone_map",
        domain: Domain::Fields,
        categories: &["math", "vector", "grid_2d"],
        dims: ANY,
        build: tone_map,
    },
    Motif {
        name: "contrast_stretch",
        domain: Domain::Fields,
        categories: &["arithmetic", "math", "grid_2d", "grid_3d"],
        dims: ANY,
        build: contrast_stretch,
    },
    Motif {
        name: "image_histogram",
        domain: Domain::Fields,
        categories: &["atomic", "reduction", "grid_2d"],
        dims: ANY,
        build: image_histogram,
    },
    Motif {
        name: "bilinear_resample",
        domain: Domain::Fields,
        categories: &["grid_2d", "math"],
        dims: D2,
        build: bilinear_resample,
    },
];

/// How a stencil reaches its neighbours: the thread indices, the size of
/// each axis (a literal, `arr.shape[d]`, or a local holding it) and the
/// boundary rule.
struct Grid {
    tid: Vec<&'static str>,
    size: Vec<String>,
    periodic: bool,
}

impl Grid {
    /// Sizes spelled for `arr` (declared `In` with the launch shape).
    fn new(k: &mut Kernel, rng: &mut Gen, arr: &str, periodic: bool) -> Grid {
        Grid::for_axes(k, rng, arr, periodic, usize::MAX)
    }

    /// Like [`Grid::new`] when only axis `only` (or every axis: `usize::MAX`)
    /// has its size read (the others are spelled as literals).
    fn for_axes(k: &mut Kernel, rng: &mut Gen, arr: &str, periodic: bool, only: usize) -> Grid {
        let dims = k.dims();
        let tid: Vec<&'static str> = (0..dims).map(|d| k.tid(d)).collect();
        let style = between(rng, 0, 2);
        let names: [&[&str]; 3] = [
            &["nx", "n0", "size_x"],
            &["ny", "n1", "size_y"],
            &["nz", "n2", "size_z"],
        ];
        let size = (0..dims)
            .map(|d| match style {
                // the dataflow pass knows literal sizes (a periodic index divides by it)
                _ if periodic || (only != usize::MAX && d != only) => k.launch.dim[d].to_string(),
                0 => k.launch.dim[d].to_string(),
                1 => format!("{arr}.shape[{d}]"),
                _ => {
                    let n = k.fresh(rng, names[d]);
                    k.line_fmt(format_args!("{n} = {arr}.shape[{d}]"));
                    n
                }
            })
            .collect();
        Grid {
            tid,
            size,
            periodic,
        }
    }

    /// Appends the index along axis `d` offset by `off` cells (in place:
    /// a stencil reads many neighbours, and a `format!` per index and per
    /// read cost more than the text).
    fn push_idx(&self, out: &mut String, d: usize, off: i32) {
        let t = self.tid[d];
        let n = self.size[d].as_str();
        let mut num = itoa::Buffer::new();
        let o = num.format(off.unsigned_abs());
        match (off, self.periodic) {
            (0, _) => out.put(t),
            (_, false) if off < 0 => out.put_all(&["wp.max(", t, " - ", o, ", 0)"]),
            (_, false) => out.put_all(&["wp.min(", t, " + ", o, ", ", n, " - 1)"]),
            (_, true) if off < 0 => out.put_all(&["(", t, " + ", n, " - ", o, ") % ", n]),
            (_, true) => out.put_all(&["(", t, " + ", o, ") % ", n]),
        }
    }

    /// `arr[...]` at the neighbour offset by `off` along axis `d`.
    fn at(&self, arr: &str, d: usize, off: i32) -> String {
        self.at_each(arr, self.tid.len(), |e| if e == d { off } else { 0 })
    }

    /// `arr[...]` at offsets (one per axis).
    fn at2(&self, arr: &str, offs: &[i32]) -> String {
        self.at_each(arr, offs.len(), |e| offs[e])
    }

    /// `arr[...]` with `n` indices, offset by `off(e)` along axis `e`.
    fn at_each(&self, arr: &str, n: usize, off: impl Fn(usize) -> i32) -> String {
        let mut s = String::with_capacity(arr.len() + 24 * n);
        s.put_all(&[arr, "["]);
        for e in 0..n {
            if e > 0 {
                s.put(", ");
            }
            self.push_idx(&mut s, e, off(e));
        }
        s.put("]");
        s
    }
}

/// A launch-shaped input field read at neighbours.
fn field(k: &mut Kernel, rng: &mut Gen, pool: &[&str], ty: Ty, lo: f64, hi: f64) -> String {
    let shape = k.shape();
    k.array(rng, pool, ty, shape, Role::In, lo, hi)
}

/// Three-point smoothing with clamped ends.
fn smooth_1d(k: &mut Kernel, rng: &mut Gen) -> bool {
    let u = field(
        k,
        rng,
        &["u", "signal", "values", "samples"],
        Ty::F,
        -1.0,
        1.0,
    );
    let periodic = chance(rng, 0.3);
    let g = Grid::new(k, rng, &u, periodic);
    let w = k.scalar(rng, &["weight", "alpha", "blend"], Ty::F, 0.0, 0.5);
    let l = k.local(
        rng,
        &["left", "u_l", "prev"],
        Ty::F,
        &g.at(&u, 0, -1),
        -1.0,
        1.0,
    );
    let r = k.local(
        rng,
        &["right", "u_r", "next"],
        Ty::F,
        &g.at(&u, 0, 1),
        -1.0,
        1.0,
    );
    let s = k.local_of(
        rng,
        &["smoothed", "u_s", "filtered"],
        Ty::F,
        &[
            "(1.0 - 2.0 * ",
            &w,
            ") * ",
            &g.at(&u, 0, 0),
            " + ",
            &w,
            " * (",
            &l.expr,
            " + ",
            &r.expr,
            ")",
        ],
        -1.0,
        1.0,
    );
    k.offer(s, &["u_out", "smoothed_out", "signal_out"]);
    true
}

/// The sum of the 2*dims neighbours minus 2*dims times the centre.
fn neighbour_sum(g: &Grid, arr: &str, centre: &str) -> String {
    let mut s = String::from("(");
    for d in 0..g.tid.len() {
        if d > 0 {
            s.push_str(" + ");
        }
        s.push_str(&format!("{} + {}", g.at(arr, d, -1), g.at(arr, d, 1)));
    }
    s.push_str(&format!(" - {}.0 * {centre})", 2 * g.tid.len()));
    s
}

/// Discrete Laplacian (clamped or periodic boundary).
fn laplacian(k: &mut Kernel, rng: &mut Gen) -> bool {
    let phi = field(
        k,
        rng,
        &["phi", "u", "potential", "height"],
        Ty::F,
        -1.0,
        1.0,
    );
    let periodic = chance(rng, 0.4);
    let g = Grid::new(k, rng, &phi, periodic);
    let inv_h2 = k.scalar(rng, &["inv_h2", "inv_dx2", "scale"], Ty::F, 0.1, 100.0);
    let c = k.local(
        rng,
        &["c", "center", "phi_c"],
        Ty::F,
        &g.at(&phi, 0, 0),
        -1.0,
        1.0,
    );
    let lap = k.local_of(
        rng,
        &["lap", "laplacian", "del2"],
        Ty::F,
        &[&neighbour_sum(&g, &phi, &c.expr), " * ", &inv_h2],
        -1200.0,
        1200.0,
    );
    k.offer(lap, &["lap_out", "laplacian", "del2_out"]);
    true
}

/// Explicit heat-equation step with a per-cell conductivity.
fn heat_diffusion(k: &mut Kernel, rng: &mut Gen) -> bool {
    let temp = field(
        k,
        rng,
        &["temp", "temperature", "heat", "density"],
        Ty::F,
        0.0,
        100.0,
    );
    let g = Grid::new(k, rng, &temp, false);
    let kappa = k.input(
        rng,
        &["conductivity", "kappa", "diffusivity"],
        Ty::F,
        0.0,
        1.0,
    );
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.05);
    let t = k.local(
        rng,
        &["t", "t_c", "center"],
        Ty::F,
        &g.at(&temp, 0, 0),
        0.0,
        100.0,
    );
    let lap = k.local(
        rng,
        &["lap", "flux", "del2"],
        Ty::F,
        &neighbour_sum(&g, &temp, &t.expr),
        -600.0,
        600.0,
    );
    let t1 = k.local_of(
        rng,
        &["t_new", "temp_next", "t1"],
        Ty::F,
        &[&t.expr, " + ", &dt, " * ", &kappa.expr, " * ", &lap.expr],
        -30.0,
        130.0,
    );
    k.offer(t1, &["temp_out", "temperature_out", "t_next"]);
    true
}

/// Leapfrog step of the 2-D wave equation.
fn wave_equation(k: &mut Kernel, rng: &mut Gen) -> bool {
    let u = field(k, rng, &["u", "height", "displacement"], Ty::F, -1.0, 1.0);
    let periodic = chance(rng, 0.3);
    let g = Grid::new(k, rng, &u, periodic);
    let up = k.input(rng, &["u_prev", "height_prev", "u_old"], Ty::F, -1.0, 1.0);
    let c = k.scalar(rng, &["speed", "c", "wave_speed"], Ty::F, 0.1, 1.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.1);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 1.0, 5.0);
    let uc = k.local(
        rng,
        &["uc", "u0", "center"],
        Ty::F,
        &g.at(&u, 0, 0),
        -1.0,
        1.0,
    );
    let lap = k.local(
        rng,
        &["lap", "del2", "curv"],
        Ty::F,
        &neighbour_sum(&g, &u, &uc.expr),
        -8.0,
        8.0,
    );
    let cr = k.local_of(
        rng,
        &["courant", "cfl", "r"],
        Ty::F,
        &[&c, " * ", &dt, " * ", &inv_dx],
        0.0,
        0.5,
    );
    let un = k.local_fmt(
        rng,
        &["u_next", "u_new", "height_next"],
        Ty::F,
        format_args!(
            "2.0 * {} - {} + {cr} * {cr} * {}",
            uc.expr,
            up.expr,
            lap.expr,
            cr = cr.expr
        ),
        -5.0,
        5.0,
    );
    k.offer(un, &["u_out", "height_out"]);
    true
}

/// Box blur over a (2r+1)^2 window (or a row when only one loop may nest).
fn box_blur(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let img = field(k, rng, &["img", "image", "src", "pixels"], Ty::F, 0.0, 1.0);
    let g = Grid::new(k, rng, &img, false);
    let r = k.scalar(rng, &["radius", "r", "half_width"], Ty::I, 1.0, 3.0);
    let total = k.local(
        rng,
        &["total", "acc", "window_sum"],
        Ty::F,
        "float(0.0)",
        0.0,
        49.0,
    );
    let di = k.fresh(rng, &["di", "dy", "oy"]);
    let (a, b) = (g.tid[0], g.tid[1]);
    let (na, nb) = (g.size[0].clone(), g.size[1].clone());
    let two = {
        k.open_of(&["for ", &di, " in range(-", &r, ", ", &r, " + 1):"]);
        if k.can_loop() {
            let dj = k.fresh(rng, &["dj", "dx", "ox"]);
            k.open_of(&["for ", &dj, " in range(-", &r, ", ", &r, " + 1):"]);
            k.line_of(&[
                &total.expr,
                " += ",
                &img,
                "[wp.clamp(",
                a,
                " + ",
                &di,
                ", 0, ",
                &na,
                " - 1), wp.clamp(",
                b,
                " + ",
                &dj,
                ", 0, ",
                &nb,
                " - 1)]",
            ]);
            k.close(true);
            true
        } else {
            k.line_of(&[
                &total.expr,
                " += ",
                &img,
                "[",
                a,
                ", wp.clamp(",
                b,
                " + ",
                &di,
                ", 0, ",
                &nb,
                " - 1)]",
            ]);
            false
        }
    };
    k.close(true);
    let side = k.local_of(
        rng,
        &["side", "width", "taps"],
        Ty::I,
        &["2 * ", &r, " + 1"],
        3.0,
        7.0,
    );
    let den = if two {
        format!("float({s} * {s})", s = side.expr)
    } else {
        format!("float({})", side.expr)
    };
    let avg = k.local_of(
        rng,
        &["blurred", "mean", "avg"],
        Ty::F,
        &[&total.expr, " / ", &den],
        0.0,
        1.0,
    );
    k.offer(avg, &["out", "blurred_out", "dst"]);
    true
}

/// Gaussian blur along the last axis, weights from a `@wp.func`.
fn gaussian_blur(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.can_loop() {
        return false;
    }
    let vec = k.allows(Ty::V(3)) && chance(rng, 0.4);
    let ty = if vec { Ty::V(3) } else { Ty::F };
    let img = field(k, rng, &["img", "image", "src", "signal"], ty, 0.0, 1.0);
    let last = k.dims() - 1;
    let g = Grid::for_axes(k, rng, &img, false, last);
    let sigma = k.scalar(rng, &["sigma", "std_dev", "blur_sigma"], Ty::F, 0.5, 3.0);
    let r = k.scalar(rng, &["radius", "r", "half_width"], Ty::I, 1.0, 4.0);
    k.helper(
        "gauss_tap",
        "@wp.func\ndef gauss_tap(offset: int, sigma: float):\n    \
         d = float(offset)\n    \
         return wp.exp(-(d * d) / (2.0 * sigma * sigma))",
    );
    let zero = if vec { "wp.vec3()" } else { "float(0.0)" };
    let acc = k.local(rng, &["color", "acc", "blurred"], ty, zero, 0.0, 10.0);
    let wsum = k.local(
        rng,
        &["weight_sum", "norm", "w_total"],
        Ty::F,
        "float(0.0)",
        0.0,
        10.0,
    );
    let o = k.fresh(rng, &["o", "tap", "kk"]);
    k.open_of(&["for ", &o, " in range(-", &r, ", ", &r, " + 1):"]);
    let w = k.local_of(
        rng,
        &["w", "wt", "g"],
        Ty::F,
        &["gauss_tap(", &o, ", ", &sigma, ")"],
        0.0,
        1.0,
    );
    let t = g.tid[last];
    let n = &g.size[last];
    let mut idx: Vec<String> = g.tid.iter().map(|s| s.to_string()).collect();
    idx[last] = format!("wp.clamp({t} + {o}, 0, {n} - 1)");
    k.line_of(&[
        &acc.expr,
        " += ",
        &img,
        "[",
        &idx.join(", "),
        "] * ",
        &w.expr,
    ]);
    k.line_of(&[&wsum.expr, " += ", &w.expr]);
    k.close(true);
    let out = k.local_of(
        rng,
        &["filtered", "blurred_px", "smooth"],
        ty,
        &[&acc.expr, " / (", &wsum.expr, " + 1.0e-06)"],
        0.0,
        1.0,
    );
    k.offer(out, &["out", "blurred_out", "dst"]);
    true
}

/// Sobel gradient magnitude and direction of an image.
fn sobel_edges(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(2)) {
        return false;
    }
    let img = field(k, rng, &["img", "image", "luma", "gray"], Ty::F, 0.0, 1.0);
    let g = Grid::new(k, rng, &img, false);
    let p = |a: i32, b: i32| g.at2(&img, &[a, b]);
    let gx = k.local_of(
        rng,
        &["gx", "grad_x", "sx"],
        Ty::F,
        &[
            "(",
            &p(-1, 1),
            " + 2.0 * ",
            &p(0, 1),
            " + ",
            &p(1, 1),
            ") - (",
            &p(-1, -1),
            " + 2.0 * ",
            &p(0, -1),
            " + ",
            &p(1, -1),
            ")",
        ],
        -4.0,
        4.0,
    );
    let gy = k.local_of(
        rng,
        &["gy", "grad_y", "sy"],
        Ty::F,
        &[
            "(",
            &p(1, -1),
            " + 2.0 * ",
            &p(1, 0),
            " + ",
            &p(1, 1),
            ") - (",
            &p(-1, -1),
            " + 2.0 * ",
            &p(-1, 0),
            " + ",
            &p(-1, 1),
            ")",
        ],
        -4.0,
        4.0,
    );
    let gv = k.local_of(
        rng,
        &["grad", "g", "edge"],
        Ty::V(2),
        &["wp.vec2(", &gx.expr, ", ", &gy.expr, ")"],
        -4.0,
        4.0,
    );
    let mag = k.local_of(
        rng,
        &["mag", "magnitude", "edge_strength"],
        Ty::F,
        &["wp.length(", &gv.expr, ")"],
        0.0,
        6.0,
    );
    if chance(rng, 0.6) {
        let dir = k.local_of(
            rng,
            &["direction", "dir", "orient"],
            Ty::V(2),
            &[&gv.expr, " / (", &mag.expr, " + 1.0e-06)"],
            -1.0,
            1.0,
        );
        k.offer(dir, &["direction_out", "dir_out"]);
    }
    k.offer(mag, &["magnitude_out", "edges", "mag_out"]);
    true
}

/// The bilinear-sampling helper over a 2-D float field.
fn bilinear_helper(k: &mut Kernel) {
    k.helper(
        "sample_bilinear",
        "@wp.func\ndef sample_bilinear(f: wp.array2d(dtype=float), x: float, y: float):\n    \
         ny = f.shape[0]\n    \
         nx = f.shape[1]\n    \
         px = wp.clamp(x, 0.0, float(nx - 1))\n    \
         py = wp.clamp(y, 0.0, float(ny - 1))\n    \
         x0 = wp.min(int(px), nx - 2)\n    \
         y0 = wp.min(int(py), ny - 2)\n    \
         tx = px - float(x0)\n    \
         ty = py - float(y0)\n    \
         a = wp.lerp(f[y0, x0], f[y0, x0 + 1], tx)\n    \
         b = wp.lerp(f[y0 + 1, x0], f[y0 + 1, x0 + 1], tx)\n    \
         return wp.lerp(a, b, ty)",
    );
}

/// Semi-Lagrangian advection: trace back along the velocity, sample bilinearly.
fn semi_lagrangian_advect(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(2)) {
        return false;
    }
    let q = field(k, rng, &["density", "dye", "q", "smoke"], Ty::F, 0.0, 1.0);
    let vel = k.input(rng, &["vel", "velocity", "u"], Ty::V(2), -5.0, 5.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.1);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 1.0, 20.0);
    bilinear_helper(k);
    let (a, b) = (k.tid(0), k.tid(1));
    let x = k.local_of(
        rng,
        &["x_back", "src_x", "bx"],
        Ty::F,
        &[
            "float(", b, ") - ", &vel.expr, "[0] * ", &dt, " * ", &inv_dx,
        ],
        -100.0,
        200.0,
    );
    let y = k.local_of(
        rng,
        &["y_back", "src_y", "by"],
        Ty::F,
        &[
            "float(", a, ") - ", &vel.expr, "[1] * ", &dt, " * ", &inv_dx,
        ],
        -100.0,
        200.0,
    );
    let s = k.local_of(
        rng,
        &["advected", "q_new", "density_new"],
        Ty::F,
        &["sample_bilinear(", &q, ", ", &x.expr, ", ", &y.expr, ")"],
        0.0,
        1.0,
    );
    k.offer(s, &["density_out", "q_out", "advected_out"]);
    true
}

/// A launch-shaped velocity field (vec2 on a 2-D grid, vec3 on a 3-D one).
fn velocity_field(k: &mut Kernel, rng: &mut Gen) -> Option<(String, Ty)> {
    let ty = Ty::V(k.dims() as u8);
    if !k.allows(ty) {
        return None;
    }
    Some((
        field(k, rng, &["vel", "velocity", "u", "flow"], ty, -5.0, 5.0),
        ty,
    ))
}

/// Central-difference divergence of a velocity field.
fn divergence(k: &mut Kernel, rng: &mut Gen) -> bool {
    let Some((vel, _)) = velocity_field(k, rng) else {
        return false;
    };
    let g = Grid::new(k, rng, &vel, false);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 0.5, 20.0);
    let terms: Vec<String> = (0..k.dims())
        .map(|d| format!("({}[{d}] - {}[{d}])", g.at(&vel, d, 1), g.at(&vel, d, -1)))
        .collect();
    let div = k.local_of(
        rng,
        &["div", "divergence", "div_u"],
        Ty::F,
        &["0.5 * (", &terms.join(" + "), ") * ", &inv_dx],
        -600.0,
        600.0,
    );
    k.offer(div, &["div_out", "divergence"]);
    true
}

/// Central-difference gradient of a scalar field.
fn gradient(k: &mut Kernel, rng: &mut Gen) -> bool {
    let ty = Ty::V(k.dims() as u8);
    if !k.allows(ty) {
        return false;
    }
    let phi = field(
        k,
        rng,
        &["phi", "pressure", "sdf", "potential"],
        Ty::F,
        -1.0,
        1.0,
    );
    let periodic = chance(rng, 0.3);
    let g = Grid::new(k, rng, &phi, periodic);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 0.5, 20.0);
    let comps: Vec<String> = (0..k.dims())
        .map(|d| format!("{} - {}", g.at(&phi, d, 1), g.at(&phi, d, -1)))
        .collect();
    let gr = k.local_of(
        rng,
        &["grad", "grad_phi", "g"],
        ty,
        &[ty.py(), "(", &comps.join(", "), ") * (0.5 * ", &inv_dx, ")"],
        -20.0,
        20.0,
    );
    if chance(rng, 0.4) {
        let n = k.local_of(
            rng,
            &["normal", "n", "dir"],
            ty,
            &["wp.normalize(", &gr.expr, ")"],
            -1.0,
            1.0,
        );
        k.offer(n, &["normal_out", "normals"]);
    } else {
        k.offer(gr, &["grad_out", "gradient"]);
    }
    true
}

/// One Jacobi iteration of the pressure Poisson equation.
fn jacobi_pressure(k: &mut Kernel, rng: &mut Gen) -> bool {
    let p = field(k, rng, &["pressure", "p", "p_old"], Ty::F, -10.0, 10.0);
    let g = Grid::new(k, rng, &p, false);
    let div = k.input(rng, &["div", "divergence", "rhs"], Ty::F, -600.0, 600.0);
    let dx = k.scalar(rng, &["dx", "h", "cell_size"], Ty::F, 0.01, 1.0);
    let mut s = String::new();
    for d in 0..k.dims() {
        if d > 0 {
            s.push_str(" + ");
        }
        s.push_str(&format!("{} + {}", g.at(&p, d, -1), g.at(&p, d, 1)));
    }
    let sum = k.local_of(
        rng,
        &["s", "nb_sum", "neighbors"],
        Ty::F,
        &["(", &s, ")"],
        -60.0,
        60.0,
    );
    let inv = lit(1.0 / (2.0 * k.dims() as f64));
    let pn = k.local_of(
        rng,
        &["p_new", "pressure_new", "p1"],
        Ty::F,
        &[
            &inv, " * (", &sum.expr, " - ", &div.expr, " * ", &dx, " * ", &dx, ")",
        ],
        -400.0,
        400.0,
    );
    k.offer(pn, &["pressure_out", "p_out"]);
    true
}

/// Makes a velocity divergence-free by subtracting the pressure gradient.
fn pressure_projection(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(2)) {
        return false;
    }
    let p = field(k, rng, &["pressure", "p", "phi"], Ty::F, -10.0, 10.0);
    let g = Grid::new(k, rng, &p, false);
    let vel = k.input(rng, &["vel", "velocity", "u"], Ty::V(2), -5.0, 5.0);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 0.5, 20.0);
    let gx = k.local_of(
        rng,
        &["gx", "dpdx", "grad_x"],
        Ty::F,
        &[&g.at(&p, 1, 1), " - ", &g.at(&p, 1, -1)],
        -20.0,
        20.0,
    );
    let gy = k.local_of(
        rng,
        &["gy", "dpdy", "grad_y"],
        Ty::F,
        &[&g.at(&p, 0, 1), " - ", &g.at(&p, 0, -1)],
        -20.0,
        20.0,
    );
    let v1 = k.local_of(
        rng,
        &["vel_new", "u_proj", "v_div_free"],
        Ty::V(2),
        &[
            &vel.expr,
            " - wp.vec2(",
            &gx.expr,
            ", ",
            &gy.expr,
            ") * (0.5 * ",
            &inv_dx,
            ")",
        ],
        -210.0,
        210.0,
    );
    k.offer(v1, &["vel_out", "velocity_out"]);
    true
}

/// The curl (vorticity) of a 2-D velocity field.
fn vorticity(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(2)) {
        return false;
    }
    let vel = field(
        k,
        rng,
        &["vel", "velocity", "u", "flow"],
        Ty::V(2),
        -5.0,
        5.0,
    );
    let periodic = chance(rng, 0.3);
    let g = Grid::new(k, rng, &vel, periodic);
    let inv_dx = k.scalar(rng, &["inv_dx", "inv_h", "inv_cell"], Ty::F, 0.5, 20.0);
    let dvdx = k.local_of(
        rng,
        &["dvdx", "dv_dx", "vx"],
        Ty::F,
        &[&g.at(&vel, 1, 1), "[1] - ", &g.at(&vel, 1, -1), "[1]"],
        -10.0,
        10.0,
    );
    let dudy = k.local_of(
        rng,
        &["dudy", "du_dy", "uy"],
        Ty::F,
        &[&g.at(&vel, 0, 1), "[0] - ", &g.at(&vel, 0, -1), "[0]"],
        -10.0,
        10.0,
    );
    let w = k.local_of(
        rng,
        &["curl", "omega", "vort"],
        Ty::F,
        &["0.5 * (", &dvdx.expr, " - ", &dudy.expr, ") * ", &inv_dx],
        -200.0,
        200.0,
    );
    if chance(rng, 0.4) {
        let m = k.local_of(
            rng,
            &["curl_mag", "omega_abs", "enstrophy"],
            Ty::F,
            &["wp.abs(", &w.expr, ")"],
            0.0,
            200.0,
        );
        k.offer(m, &["curl_mag_out", "vorticity_mag"]);
    } else {
        k.offer(w, &["curl_out", "vorticity"]);
    }
    true
}

/// A smooth threshold mask of an intensity.
fn soft_threshold(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["img", "intensity", "luma", "value"], Ty::F, 0.0, 1.0);
    // Level and softness in the input's range (an offered value may span
    // far less than [0, 1]).
    let span = x.hi - x.lo;
    let level = k.scalar(
        rng,
        &["level", "threshold", "iso"],
        Ty::F,
        x.at(0.3),
        x.at(0.7),
    );
    let soft = k.scalar(
        rng,
        &["softness", "width", "feather"],
        Ty::F,
        0.01 * span,
        0.2 * span,
    );
    let m = k.local_of(
        rng,
        &["mask", "alpha", "coverage"],
        Ty::F,
        &[
            "wp.smoothstep(",
            &level,
            " - ",
            &soft,
            ", ",
            &level,
            " + ",
            &soft,
            ", ",
            &x.expr,
            ")",
        ],
        0.0,
        1.0,
    );
    if chance(rng, 0.4) {
        let bg = k.input(rng, &["background", "bg", "base"], Ty::F, 0.0, 1.0);
        let c = k.local_of(
            rng,
            &["composite", "blended", "mixed"],
            Ty::F,
            &["wp.lerp(", &bg.expr, ", ", &x.expr, ", ", &m.expr, ")"],
            0.0,
            1.0,
        );
        k.offer(c, &["out", "composite_out"]);
    } else {
        k.offer(m, &["mask_out", "alpha_out"]);
    }
    true
}

/// Reinhard tone mapping and gamma of an HDR colour.
fn tone_map(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) {
        return false;
    }
    let hdr = k.input(rng, &["hdr", "radiance", "color"], Ty::V(3), 0.0, 20.0);
    let exposure = k.scalar(rng, &["exposure", "ev_scale", "gain"], Ty::F, 0.1, 4.0);
    let gamma = k.scalar(rng, &["gamma", "display_gamma"], Ty::F, 1.8, 2.4);
    k.helper(
        "luminance",
        "@wp.func\ndef luminance(c: wp.vec3):\n    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]",
    );
    let c = k.local_of(
        rng,
        &["c", "exposed", "scaled"],
        Ty::V(3),
        &[&hdr.expr, " * ", &exposure],
        0.0,
        80.0,
    );
    let lum = k.local_of(
        rng,
        &["lum", "luma", "y"],
        Ty::F,
        &["luminance(", &c.expr, ")"],
        0.0,
        80.0,
    );
    let mapped = k.local_of(
        rng,
        &["mapped", "ldr", "tonemapped"],
        Ty::V(3),
        &[&c.expr, " / (1.0 + ", &lum.expr, ")"],
        0.0,
        80.0,
    );
    let ig = k.local_of(
        rng,
        &["inv_gamma", "ig", "expo"],
        Ty::F,
        &["1.0 / ", &gamma],
        0.4,
        0.56,
    );
    let m = &mapped.expr;
    let out = k.local_fmt(
        rng,
        &["srgb", "display", "out_color"],
        Ty::V(3),
        format_args!(
            "wp.vec3(wp.pow(wp.max({m}[0], 1.0e-06), {g}), wp.pow(wp.max({m}[1], 1.0e-06), {g}), wp.pow(wp.max({m}[2], 1.0e-06), {g}))",
            g = ig.expr
        ),
        0.0,
        12.0,
    );
    k.offer(out, &["ldr_out", "display_out", "rgb"]);
    true
}

/// Linear contrast stretch between two levels, clamped to [0, 1].
fn contrast_stretch(k: &mut Kernel, rng: &mut Gen) -> bool {
    let x = k.input(rng, &["img", "pixel", "value"], Ty::F, 0.0, 1.0);
    let lo = k.scalar(rng, &["black_level", "low", "lo"], Ty::F, 0.0, 0.3);
    let hi = k.scalar(rng, &["white_level", "high", "hi"], Ty::F, 0.7, 1.0);
    let s = k.local_of(
        rng,
        &["stretched", "normalized", "y"],
        Ty::F,
        &[
            "wp.clamp((",
            &x.expr,
            " - ",
            &lo,
            ") / (",
            &hi,
            " - ",
            &lo,
            "), 0.0, 1.0)",
        ],
        0.0,
        1.0,
    );
    k.offer(s, &["out", "stretched_out"]);
    true
}

/// Histogram of intensities with atomic counters.
fn image_histogram(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.int_arrays() {
        return false;
    }
    let x = k.input(rng, &["img", "intensity", "luma"], Ty::F, 0.0, 1.0);
    let bins = *pick(rng, &[8usize, 16, 32, 64, 256]);
    let hist = k.array(
        rng,
        &["hist", "histogram", "bins"],
        Ty::I,
        vec![bins],
        Role::Accum,
        0.0,
        0.0,
    );
    let nb = if chance(rng, 0.5) {
        k.size_param(rng, &["num_bins", "n_bins", "bin_count"], bins)
    } else {
        format!("{hist}.shape[0]")
    };
    let v = k.local_of(
        rng,
        &["v", "level", "x"],
        Ty::F,
        &["wp.clamp(", &x.expr, ", 0.0, 1.0)"],
        0.0,
        1.0,
    );
    let b = k.local_of(
        rng,
        &["b", "bin", "slot"],
        Ty::I,
        &[
            "wp.min(int(",
            &v.expr,
            " * float(",
            &nb,
            ")), ",
            &nb,
            " - 1)",
        ],
        0.0,
        (bins - 1) as f64,
    );
    if chance(rng, 0.5) {
        k.line_of(&["wp.atomic_add(", &hist, ", ", &b.expr, ", 1)"]);
    } else {
        k.line_of(&[&hist, "[", &b.expr, "] += 1"]);
    }
    true
}

/// Resamples a source image of another size at the thread's pixel.
fn bilinear_resample(k: &mut Kernel, rng: &mut Gen) -> bool {
    let (a, b) = (k.tid(0), k.tid(1));
    let (h, w) = (k.launch.dim[0], k.launch.dim[1]);
    // A source of a quarter to the full size of the launch (upsampled): every
    // texel is read; a larger one would be sampled at a few of its texels.
    let sh = (h * *pick(rng, &[1usize, 2, 3, 4]) / 4).max(2);
    let sw = (w * *pick(rng, &[1usize, 2, 3, 4]) / 4).max(2);
    let src = k.array(
        rng,
        &["src", "source", "low_res"],
        Ty::F,
        vec![sh, sw],
        Role::In,
        0.0,
        1.0,
    );
    bilinear_helper(k);
    let round = |x: f64| (x * 1.0e4).round() / 1.0e4;
    let sx = lit(round((sw as f64 - 1.0) / (w as f64 - 1.0).max(1.0)));
    let sy = lit(round((sh as f64 - 1.0) / (h as f64 - 1.0).max(1.0)));
    let x = k.local_of(
        rng,
        &["sx", "u", "src_x"],
        Ty::F,
        &["float(", b, ") * ", &sx],
        0.0,
        64.0,
    );
    let y = k.local_of(
        rng,
        &["sy", "v", "src_y"],
        Ty::F,
        &["float(", a, ") * ", &sy],
        0.0,
        64.0,
    );
    let s = k.local_of(
        rng,
        &["sample", "resampled", "texel"],
        Ty::F,
        &["sample_bilinear(", &src, ", ", &x.expr, ", ", &y.expr, ")"],
        0.0,
        1.0,
    );
    k.offer(s, &["dst", "resampled_out", "out"]);
    true
}
