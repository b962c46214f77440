//! Per-thread linear algebra motifs: vector geometry (projection,
//! reflection, frames, clamping), mat-vec, 3x3 SPD solves, rotations from
//! axis-angle, quaternion and transform math, spatial vectors, outer
//! products accumulated with atomics.

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, below, between, chance, lit, nice, pick, weighted,
};

const L: Domain = Domain::Linalg;

pub const MOTIFS: &[Motif] = &[
    Motif {
        name: "clamp_magnitude",
        domain: L,
        categories: &["vector", "control_flow", "combined"],
        dims: ANY,
        build: clamp_magnitude,
    },
    Motif {
        name: "project_tangent",
        domain: L,
        categories: &["vector", "combined"],
        dims: ANY,
        build: project_tangent,
    },
    Motif {
        name: "reflect_vector",
        domain: L,
        categories: &["vector", "combined"],
        dims: ANY,
        build: reflect_vector,
    },
    Motif {
        name: "orthonormal_frame",
        domain: L,
        categories: &["vector", "matrix"],
        dims: ANY,
        build: orthonormal_frame,
    },
    Motif {
        name: "vec_blend_normalize",
        domain: L,
        categories: &["vector", "scalar_param"],
        dims: ANY,
        build: vec_blend_normalize,
    },
    Motif {
        name: "mat_vec",
        domain: L,
        categories: &["matrix", "combined", "grid_2d"],
        dims: ANY,
        build: mat_vec,
    },
    Motif {
        name: "spd_solve3",
        domain: L,
        categories: &["matrix", "combined"],
        dims: ANY,
        build: spd_solve3,
    },
    Motif {
        name: "axis_angle_rotate",
        domain: L,
        categories: &["vector", "matrix", "combined"],
        dims: ANY,
        build: axis_angle_rotate,
    },
    Motif {
        name: "quat_integrate",
        domain: L,
        categories: &["vector", "combined"],
        dims: ANY,
        build: quat_integrate,
    },
    Motif {
        name: "transform_points",
        domain: L,
        categories: &["matrix", "vector", "combined"],
        dims: ANY,
        build: transform_points,
    },
    Motif {
        name: "spatial_twist",
        domain: L,
        categories: &["vector", "combined"],
        dims: ANY,
        build: spatial_twist,
    },
    Motif {
        name: "covariance_accum",
        domain: L,
        categories: &["matrix", "reduction", "atomic"],
        dims: ANY,
        build: covariance_accum,
    },
    Motif {
        name: "mat_decompose",
        domain: L,
        categories: &["matrix"],
        dims: ANY,
        build: mat_decompose,
    },
];

/// A vector size the knobs allow (3 preferred).
fn vsize(k: &Kernel, rng: &mut Gen) -> Option<u8> {
    let sizes = k.knobs.vec_sizes();
    if sizes.is_empty() {
        return None;
    }
    if sizes.contains(&3) && chance(rng, 0.6) {
        return Some(3);
    }
    Some(*pick(rng, &sizes))
}

/// Velocity clamped to a maximum speed.
fn clamp_magnitude(k: &mut Kernel, rng: &mut Gen) -> bool {
    let Some(n) = vsize(k, rng) else {
        return false;
    };
    let ty = Ty::V(n);
    let v = k.input(rng, &["vel", "v", "velocity", "force"], ty, -10.0, 10.0);
    let vmax = k.scalar(rng, &["max_speed", "v_max", "limit"], Ty::F, 1.0, 8.0);
    let s = k.local_of(
        rng,
        &["speed", "mag", "norm_v"],
        Ty::F,
        &["wp.length(", &v.expr, ")"],
        0.0,
        20.0,
    );
    let c = k.local_of(
        rng,
        &["v_clamped", "vc", "limited"],
        ty,
        &[&v.expr, " * 1.0"],
        -10.0,
        10.0,
    );
    k.open_of(&["if ", &s.expr, " > ", &vmax, ":"]);
    k.line_of(&[&c.expr, " = wp.normalize(", &v.expr, ") * ", &vmax]);
    k.close(false);
    k.offer(c, &["vel_out", "v_out", "clamped"]);
    true
}

/// Split a vector into its normal and tangential parts.
fn project_tangent(k: &mut Kernel, rng: &mut Gen) -> bool {
    let Some(n) = vsize(k, rng) else {
        return false;
    };
    let ty = Ty::V(n);
    let v = k.input(rng, &["v", "vel", "f", "dir"], ty, -10.0, 10.0);
    let nrm = k.load(rng, &["normal", "n", "axis"], ty, -1.0, 1.0);
    let name = nrm.expr.split('[').next().unwrap().to_string();
    k.set_unit(&name);
    let vn = k.local_of(
        rng,
        &["vn", "v_dot_n", "normal_comp"],
        Ty::F,
        &["wp.dot(", &v.expr, ", ", &nrm.expr, ")"],
        -20.0,
        20.0,
    );
    let vt = k.local_of(
        rng,
        &["vt", "tangential", "v_tan"],
        ty,
        &[&v.expr, " - ", &vn.expr, " * ", &nrm.expr],
        -30.0,
        30.0,
    );
    if chance(rng, 0.5) {
        let mu = k.scalar(rng, &["friction", "mu", "damping"], Ty::F, 0.0, 1.0);
        let r = k.local_of(
            rng,
            &["v_new", "resp", "v_out_l"],
            ty,
            &[
                &vt.expr,
                " * (1.0 - ",
                &mu,
                ") + ",
                &nrm.expr,
                " * ",
                &vn.expr,
            ],
            -30.0,
            30.0,
        );
        k.offer(r, &["vel_out", "out"]);
    } else {
        k.offer(vt, &["tangent", "vt_out"]);
    }
    true
}

/// Mirror reflection about a unit normal, with restitution.
fn reflect_vector(k: &mut Kernel, rng: &mut Gen) -> bool {
    let Some(n) = vsize(k, rng) else {
        return false;
    };
    let ty = Ty::V(n);
    let d = k.input(rng, &["d", "dir", "ray_dir", "v_in"], ty, -1.0, 1.0);
    let nrm = k.load(rng, &["normal", "n", "surface_n"], ty, -1.0, 1.0);
    let name = nrm.expr.split('[').next().unwrap().to_string();
    k.set_unit(&name);
    let e = if chance(rng, 0.5) {
        format!("{0} - 2.0 * wp.dot({0}, {1}) * {1}", d.expr, nrm.expr)
    } else {
        let e = k.scalar(rng, &["restitution", "e", "bounce"], Ty::F, 0.1, 1.0);
        format!(
            "{0} - (1.0 + {e}) * wp.dot({0}, {1}) * {1}",
            d.expr, nrm.expr
        )
    };
    // With a unit normal the reflection is no longer than the input: a
    // later motif's thresholds land among its values.
    let lim = (n as f64).sqrt() * d.lo.abs().max(d.hi.abs()) + 0.01;
    let r = k.local(rng, &["r", "reflected", "bounced"], ty, &e, -lim, lim);
    k.offer(r, &["reflected_out", "out", "dir_out"]);
    true
}

/// An orthonormal frame from a normal: tangent and bitangent (3-D).
fn orthonormal_frame(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) || (k.category == "matrix" && !k.allows(Ty::M(3))) {
        return false;
    }
    let nrm = k.input(rng, &["normal", "n", "z_axis"], Ty::V(3), -1.0, 1.0);
    let nn = k.local_of(
        rng,
        &["nz", "w", "n_hat"],
        Ty::V(3),
        &["wp.normalize(", &nrm.expr, ")"],
        -1.0,
        1.0,
    );
    let up = if chance(rng, 0.5) {
        "wp.vec3(0.0, 1.0, 0.0)"
    } else {
        "wp.vec3(1.0, 0.0, 0.0)"
    };
    let t = k.local_of(
        rng,
        &["t", "tangent", "u"],
        Ty::V(3),
        &["wp.normalize(wp.cross(", up, ", ", &nn.expr, "))"],
        -1.0,
        1.0,
    );
    let b = k.local_of(
        rng,
        &["b", "bitangent", "v"],
        Ty::V(3),
        &["wp.cross(", &nn.expr, ", ", &t.expr, ")"],
        -1.0,
        1.0,
    );
    if k.allows(Ty::M(3)) && chance(rng, 0.6) {
        let m = k.local_of(
            rng,
            &["frame", "basis", "rot"],
            Ty::M(3),
            &[
                "wp.matrix_from_cols(",
                &t.expr,
                ", ",
                &b.expr,
                ", ",
                &nn.expr,
                ")",
            ],
            -1.0,
            1.0,
        );
        k.offer(m, &["frames", "basis_out"]);
    } else {
        k.offer(t, &["tangents", "t_out"]);
        k.offer(b, &["bitangents", "b_out"]);
    }
    true
}

/// Blend two directions and renormalize (nlerp).
fn vec_blend_normalize(k: &mut Kernel, rng: &mut Gen) -> bool {
    let Some(n) = vsize(k, rng) else {
        return false;
    };
    let ty = Ty::V(n);
    let a = k.input(rng, &["a", "dir_a", "n0"], ty, -1.0, 1.0);
    let b = k.input(rng, &["b", "dir_b", "n1"], ty, -1.0, 1.0);
    let t = k.scalar(rng, &["t", "alpha", "blend"], Ty::F, 0.0, 1.0);
    let r = k.local_of(
        rng,
        &["d", "dir", "n_mix"],
        ty,
        &[
            "wp.normalize(wp.lerp(",
            &a.expr,
            ", ",
            &b.expr,
            ", ",
            &t,
            "))",
        ],
        -1.0,
        1.0,
    );
    k.offer(r, &["dirs_out", "out", "normals"]);
    true
}

/// A matrix applied to a vector (or its transpose), plus a bias.
fn mat_vec(k: &mut Kernel, rng: &mut Gen) -> bool {
    let sizes: Vec<u8> = (2..=4)
        .filter(|&n| k.allows(Ty::M(n)) && k.allows(Ty::V(n)))
        .collect();
    if sizes.is_empty() {
        return false;
    }
    let n = *pick(rng, &sizes);
    let m = k.input(rng, &["A", "m", "jac", "weights_m"], Ty::M(n), -1.0, 1.0);
    let x = k.input(rng, &["x", "v", "p", "feat"], Ty::V(n), -10.0, 10.0);
    let e = match below(rng, 3) {
        0 => format!("{} * {}", m.expr, x.expr),
        1 => format!("wp.transpose({}) * {}", m.expr, x.expr),
        _ => {
            let b = k.input(rng, &["bias", "b", "offset"], Ty::V(n), -1.0, 1.0);
            format!("{} * {} + {}", m.expr, x.expr, b.expr)
        }
    };
    let y = k.local(rng, &["y", "mx", "out_v"], Ty::V(n), &e, -41.0, 41.0);
    k.offer(y, &["y_out", "out", "result"]);
    true
}

/// Solve a regularized 3x3 SPD system `(M^T M + eps I) x = b`.
fn spd_solve3(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::M(3)) || !k.allows(Ty::V(3)) {
        return false;
    }
    let m = k.input(rng, &["M", "J", "jac"], Ty::M(3), -1.0, 1.0);
    let b = k.input(rng, &["b", "rhs", "residual"], Ty::V(3), -10.0, 10.0);
    let eps = k.scalar(rng, &["reg", "eps", "damping"], Ty::F, 0.1, 1.0);
    let a = k.local_fmt(
        rng,
        &["A", "JtJ", "normal_m"],
        Ty::M(3),
        format_args!(
            "wp.transpose({0}) * {0} + wp.identity(n=3, dtype=float) * {eps}",
            m.expr
        ),
        -10.0,
        10.0,
    );
    let x = k.local_of(
        rng,
        &["x", "delta", "sol"],
        Ty::V(3),
        &[
            "wp.inverse(",
            &a.expr,
            ") * (wp.transpose(",
            &m.expr,
            ") * ",
            &b.expr,
            ")",
        ],
        -300.0,
        300.0,
    );
    k.offer(x, &["x_out", "delta_out", "solution"]);
    true
}

/// Rotate a vector about an axis by an angle (quaternion or matrix form).
fn axis_angle_rotate(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) {
        return false;
    }
    let axis = k.load(rng, &["axis", "rot_axis", "w_dir"], Ty::V(3), -1.0, 1.0);
    let name = axis.expr.split('[').next().unwrap().to_string();
    k.set_unit(&name);
    let ang = k.input(rng, &["angle", "theta", "phi"], Ty::F, -3.2, 3.2);
    let v = k.input(rng, &["v", "p", "point", "offset"], Ty::V(3), -10.0, 10.0);
    let q = k.local_of(
        rng,
        &["q", "rot", "quat"],
        Ty::Quat,
        &["wp.quat_from_axis_angle(", &axis.expr, ", ", &ang.expr, ")"],
        -1.0,
        1.0,
    );
    let e = if k.allows(Ty::M(3)) && chance(rng, 0.4) {
        let r = k.local_of(
            rng,
            &["R", "rot_m", "mat"],
            Ty::M(3),
            &["wp.quat_to_matrix(", &q.expr, ")"],
            -1.0,
            1.0,
        );
        format!("{} * {}", r.expr, v.expr)
    } else if chance(rng, 0.5) {
        format!("wp.quat_rotate({}, {})", q.expr, v.expr)
    } else {
        format!("wp.quat_rotate_inv({}, {})", q.expr, v.expr)
    };
    let r = k.local(
        rng,
        &["rotated", "v_rot", "p_new"],
        Ty::V(3),
        &e,
        -18.0,
        18.0,
    );
    k.offer(r, &["rotated_out", "out", "points_out"]);
    true
}

/// Integrate an orientation with an angular velocity.
fn quat_integrate(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) {
        return false;
    }
    let q = k.load(rng, &["rot", "q", "orientation"], Ty::Quat, -1.0, 1.0);
    let name = q.expr.split('[').next().unwrap().to_string();
    k.set_unit(&name);
    let w = k.input(rng, &["omega", "ang_vel", "w"], Ty::V(3), -5.0, 5.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.05);
    let wq = k.local_fmt(
        rng,
        &["wq", "omega_q", "spin"],
        Ty::Quat,
        format_args!("wp.quat({0}[0], {0}[1], {0}[2], 0.0)", w.expr),
        -5.0,
        5.0,
    );
    let qn = k.local_fmt(
        rng,
        &["q_new", "rot_next", "q1"],
        Ty::Quat,
        format_args!(
            "wp.normalize({0} + {1} * {0} * (0.5 * {dt}))",
            q.expr, wq.expr
        ),
        -1.0,
        1.0,
    );
    k.offer(qn, &["rot_out", "q_out", "orientation_out"]);
    true
}

/// Points and directions through a rigid transform (and back).
fn transform_points(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) {
        return false;
    }
    let xf = k.load(
        rng,
        &["xform", "body_X", "pose", "tf"],
        Ty::Transform,
        -1.0,
        1.0,
    );
    let name = xf.expr.split('[').next().unwrap().to_string();
    k.set_unit(&name);
    let p = k.input(rng, &["p", "local_p", "point", "x"], Ty::V(3), -10.0, 10.0);
    let e = match below(rng, 4) {
        0 => format!("wp.transform_point({}, {})", xf.expr, p.expr),
        1 => format!("wp.transform_vector({}, {})", xf.expr, p.expr),
        2 => format!(
            "wp.transform_point(wp.transform_inverse({}), {})",
            xf.expr, p.expr
        ),
        _ => {
            let t = k.local_of(
                rng,
                &["t", "origin", "trans"],
                Ty::V(3),
                &["wp.transform_get_translation(", &xf.expr, ")"],
                -1.0,
                1.0,
            );
            format!("{} - {}", p.expr, t.expr)
        }
    };
    let r = k.local(rng, &["world_p", "p_w", "q_pt"], Ty::V(3), &e, -40.0, 40.0);
    k.offer(r, &["world_out", "out", "points_out"]);
    true
}

/// A spatial twist from angular and linear velocity, scaled by dt.
fn spatial_twist(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) {
        return false;
    }
    let w = k.input(rng, &["omega", "ang_vel", "w"], Ty::V(3), -5.0, 5.0);
    let v = k.input(rng, &["vel", "lin_vel", "v"], Ty::V(3), -5.0, 5.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.05);
    let t = k.local_fmt(
        rng,
        &["twist", "qd", "motion"],
        Ty::SpatialVector,
        format_args!(
            "wp.spatial_vector({0}[0], {0}[1], {0}[2], {1}[0], {1}[1], {1}[2])",
            w.expr, v.expr
        ),
        -5.0,
        5.0,
    );
    let s = k.local_of(
        rng,
        &["delta", "dq", "step"],
        Ty::SpatialVector,
        &[&t.expr, " * ", &dt],
        -1.0,
        1.0,
    );
    k.offer(s, &["twist_out", "delta_out", "body_qd"]);
    true
}

/// Covariance of points about a center, accumulated with atomics.
fn covariance_accum(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(Ty::V(3)) || !k.allows(Ty::M(3)) {
        return false;
    }
    let p = k.input(rng, &["points", "p", "pos"], Ty::V(3), -10.0, 10.0);
    let c = k.scalar(rng, &["center", "mean", "centroid"], Ty::V(3), -1.0, 1.0);
    let d = k.local_of(
        rng,
        &["d", "dp", "rel"],
        Ty::V(3),
        &[&p.expr, " - ", &c],
        -11.0,
        11.0,
    );
    let cov = k.array(
        rng,
        &["cov", "covariance", "moment"],
        Ty::M(3),
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    k.line_fmt(format_args!(
        "wp.atomic_add({cov}, 0, wp.outer({0}, {0}))",
        d.expr
    ));
    true
}

/// Trace, determinant and symmetric part of a matrix.
fn mat_decompose(k: &mut Kernel, rng: &mut Gen) -> bool {
    let sizes: Vec<u8> = (2..=4).filter(|&n| k.allows(Ty::M(n))).collect();
    if sizes.is_empty() {
        return false;
    }
    let n = *pick(rng, &sizes);
    let m = k.input(rng, &["F", "grad_u", "m", "strain_in"], Ty::M(n), -1.0, 1.0);
    let sym = k.local_fmt(
        rng,
        &["sym", "eps_m", "strain"],
        Ty::M(n),
        format_args!("0.5 * ({0} + wp.transpose({0}))", m.expr),
        -1.0,
        1.0,
    );
    let tr = k.local_of(
        rng,
        &["tr", "trace_v", "vol"],
        Ty::F,
        &["wp.trace(", &sym.expr, ")"],
        -4.0,
        4.0,
    );
    let dev = k.local_fmt(
        rng,
        &["dev", "deviatoric", "shear"],
        Ty::M(n),
        format_args!(
            "{} - wp.identity(n={n}, dtype=float) * ({} / {}.0)",
            sym.expr, tr.expr, n
        ),
        -3.0,
        3.0,
    );
    k.offer(dev, &["dev_out", "shear_out"]);
    if chance(rng, 0.5) {
        let det = k.local_of(
            rng,
            &["det", "J", "jac_det"],
            Ty::F,
            &["wp.determinant(", &m.expr, ")"],
            -24.0,
            24.0,
        );
        k.offer(det, &["det_out", "volume_ratio"]);
    }
    true
}
