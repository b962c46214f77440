//! Physics motifs: particle integrators, damping and drag, rigid bodies with
//! quaternions, springs and position-based constraints scattered with
//! atomics, contacts against planes, spheres and boxes, neighbour-list
//! forces, SPH density and N-body gravity over tiles.
//! (Hand-written references: tests/kernels/motifs/physics_*.py.)

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

const V3: Ty = Ty::V(3);

pub const MOTIFS: &[Motif] = &[
    Motif {
        name: "semi_implicit_euler",
        domain: Domain::Physics,
        categories: &["vector", "combined", "arithmetic"],
        dims: ANY,
        build: semi_implicit_euler,
    },
    Motif {
        name: "explicit_euler",
        domain: Domain::Physics,
        categories: &["vector", "combined"],
        dims: ANY,
        build: explicit_euler,
    },
    Motif {
        name: "verlet_step",
        domain: Domain::Physics,
        categories: &["vector", "combined", "expression_tree"],
        dims: ANY,
        build: verlet_step,
    },
    Motif {
        name: "velocity_damping",
        domain: Domain::Physics,
        categories: &["vector", "math", "combined"],
        dims: ANY,
        build: velocity_damping,
    },
    Motif {
        name: "quadratic_drag",
        domain: Domain::Physics,
        categories: &["vector", "math", "combined"],
        dims: ANY,
        build: quadratic_drag,
    },
    Motif {
        name: "rigid_body_step",
        domain: Domain::Physics,
        categories: &["transform", "combined"],
        dims: D1,
        build: rigid_body_step,
    },
    Motif {
        name: "orientation_step",
        domain: Domain::Physics,
        categories: &["transform", "vector"],
        dims: ANY,
        build: orientation_step,
    },
    Motif {
        name: "kinetic_energy_sum",
        domain: Domain::Physics,
        categories: &["reduction", "atomic", "vector"],
        dims: ANY,
        build: kinetic_energy_sum,
    },
    Motif {
        name: "spring_forces",
        domain: Domain::Physics,
        categories: &["atomic", "vector", "combined"],
        dims: D1,
        build: spring_forces,
    },
    Motif {
        name: "distance_constraint",
        domain: Domain::Physics,
        categories: &["atomic", "vector", "combined"],
        dims: D1,
        build: distance_constraint,
    },
    Motif {
        name: "bending_constraint",
        domain: Domain::Physics,
        categories: &["atomic", "vector"],
        dims: D1,
        build: bending_constraint,
    },
    Motif {
        name: "ground_contact",
        domain: Domain::Physics,
        categories: &["control_flow", "multi_cond", "vector", "combined"],
        dims: ANY,
        build: ground_contact,
    },
    Motif {
        name: "sphere_obstacle",
        domain: Domain::Physics,
        categories: &["control_flow", "vector", "combined"],
        dims: ANY,
        build: sphere_obstacle,
    },
    Motif {
        name: "box_boundary",
        domain: Domain::Physics,
        categories: &["control_flow", "multi_cond", "nested", "vector"],
        dims: ANY,
        build: box_boundary,
    },
    Motif {
        name: "neighbor_forces",
        domain: Domain::Physics,
        categories: &["nested", "vector", "combined"],
        dims: D1,
        build: neighbor_forces,
    },
    Motif {
        name: "sph_density",
        domain: Domain::Physics,
        categories: &["nested", "math", "combined"],
        dims: D1,
        build: sph_density,
    },
    Motif {
        name: "nbody_direct",
        domain: Domain::Physics,
        categories: &["nested", "vector"],
        dims: D1,
        build: nbody_direct,
    },
    Motif {
        name: "nbody_tiled",
        domain: Domain::Physics,
        categories: &["nested", "combined"],
        dims: D1,
        build: nbody_tiled,
    },
    Motif {
        name: "tile_particle_step",
        domain: Domain::Physics,
        categories: &["tile"],
        dims: TILED,
        build: tile_particle_step,
    },
];

/// Formats a value expression times `scale` (a Python expression).
fn scaled(v: &Val, scale: &str) -> String {
    format!("{} * {scale}", v.expr)
}

/// `x_new = x + v_new * dt` after `v_new = v + (f * w + g) * dt`.
fn semi_implicit_euler(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(
        rng,
        &["x", "pos", "positions", "particle_q"],
        V3,
        -10.0,
        10.0,
    );
    let v = k.input(
        rng,
        &["v", "vel", "velocities", "particle_qd"],
        V3,
        -5.0,
        5.0,
    );
    let f = k.input(
        rng,
        &["f", "force", "forces", "particle_f"],
        V3,
        -20.0,
        20.0,
    );
    let w = k.input(
        rng,
        &["inv_mass", "w", "particle_inv_mass"],
        Ty::F,
        0.0,
        2.0,
    );
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    let g = if chance(rng, 0.5) {
        k.scalar(rng, &["gravity", "g"], V3, -10.0, 10.0)
    } else {
        format!("wp.vec3(0.0, {}, 0.0)", lit(-nice(rng, 1.0, 9.81)))
    };
    let a = k.local_of(
        rng,
        &["accel", "a", "acc"],
        V3,
        &[&f.expr, " * ", &w.expr, " + ", &g],
        -50.0,
        50.0,
    );
    let v1 = k.local_of(
        rng,
        &["v_new", "vel_new", "v1"],
        V3,
        &[&v.expr, " + ", &scaled(&a, &dt)],
        -6.0,
        6.0,
    );
    let x1 = k.local_of(
        rng,
        &["x_new", "pos_new", "x1"],
        V3,
        &[&x.expr, " + ", &scaled(&v1, &dt)],
        -11.0,
        11.0,
    );
    k.offer(v1, &["v_out", "vel_out", "velocities_out"]);
    k.offer(x1, &["x_out", "pos_out", "positions_out"]);
    true
}

/// Forward Euler: position from the old velocity, velocity from `f / m`.
fn explicit_euler(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(rng, &["x", "pos", "positions"], V3, -10.0, 10.0);
    let v = k.input(rng, &["v", "vel", "velocities"], V3, -5.0, 5.0);
    let f = k.input(rng, &["f", "force", "forces"], V3, -20.0, 20.0);
    let m = k.input(rng, &["mass", "m", "particle_mass"], Ty::F, 0.5, 5.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    let a = k.local_of(
        rng,
        &["accel", "a", "acc"],
        V3,
        &[&f.expr, " / ", &m.expr],
        -40.0,
        40.0,
    );
    let x1 = k.local_of(
        rng,
        &["x_next", "pos_next", "x1"],
        V3,
        &[&x.expr, " + ", &scaled(&v, &dt)],
        -11.0,
        11.0,
    );
    let v1 = k.local_of(
        rng,
        &["v_next", "vel_next", "v1"],
        V3,
        &[&v.expr, " + ", &scaled(&a, &dt)],
        -6.0,
        6.0,
    );
    k.offer(x1, &["x_out", "pos_out"]);
    k.offer(v1, &["v_out", "vel_out"]);
    true
}

/// Position Verlet: `x_next = 2 x - x_prev + a dt^2`.
fn verlet_step(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(rng, &["pos", "x", "positions"], V3, -10.0, 10.0);
    let xp = k.load(
        rng,
        &["pos_prev", "x_prev", "prev_positions"],
        V3,
        -10.0,
        10.0,
    );
    let a = k.input(rng, &["accel", "acc", "a"], V3, -20.0, 20.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    let d = k.local_of(
        rng,
        &["displacement", "dx", "delta"],
        V3,
        &[&x.expr, " - ", &xp.expr],
        -20.0,
        20.0,
    );
    let damp = if chance(rng, 0.5) {
        format!(" * {}", lit(nice(rng, 0.95, 1.0)))
    } else {
        String::new()
    };
    let xn = k.local_of(
        rng,
        &["pos_next", "x_next", "x_new"],
        V3,
        &[
            &x.expr, " + ", &d.expr, &damp, " + ", &a.expr, " * (", &dt, " * ", &dt, ")",
        ],
        -31.0,
        31.0,
    );
    k.offer(xn, &["pos_out", "x_out", "next_positions"]);
    true
}

/// Exponential velocity damping `v * exp(-c dt)`.
fn velocity_damping(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let v = k.input(rng, &["v", "vel", "velocity"], V3, -10.0, 10.0);
    let c = k.scalar(
        rng,
        &["damping", "c_damp", "linear_damping"],
        Ty::F,
        0.0,
        5.0,
    );
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.05);
    let decay = k.local_of(
        rng,
        &["decay", "damp_factor", "attenuation"],
        Ty::F,
        &["wp.exp(-", &c, " * ", &dt, ")"],
        0.0,
        1.0,
    );
    let v1 = k.local_of(
        rng,
        &["v_damped", "vel_damped", "v_new"],
        V3,
        &[&v.expr, " * ", &decay.expr],
        -10.0,
        10.0,
    );
    k.offer(v1, &["v_out", "vel_out"]);
    true
}

/// Quadratic air drag against the velocity, scaled by the inverse mass.
fn quadratic_drag(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let v = k.input(rng, &["v", "vel", "velocity"], V3, -10.0, 10.0);
    let w = k.input(rng, &["inv_mass", "w", "inv_m"], Ty::F, 0.0, 2.0);
    let cd = k.scalar(rng, &["drag", "drag_coeff", "c_drag"], Ty::F, 0.0, 0.5);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    let speed = k.local_of(
        rng,
        &["speed", "v_mag", "vel_len"],
        Ty::F,
        &["wp.length(", &v.expr, ")"],
        0.0,
        18.0,
    );
    let fd = k.local_of(
        rng,
        &["f_drag", "drag_force", "fd"],
        V3,
        &["-", &cd, " * ", &speed.expr, " * ", &v.expr],
        -100.0,
        100.0,
    );
    let v1 = k.local_of(
        rng,
        &["v_new", "vel_new", "v1"],
        V3,
        &[&v.expr, " + ", &fd.expr, " * (", &w.expr, " * ", &dt, ")"],
        -15.0,
        15.0,
    );
    k.offer(v1, &["v_out", "vel_out"]);
    true
}

/// The `integrate_rotation` helper: `q + 0.5 (omega, 0) q dt`, renormalized.
fn quat_helper(k: &mut Kernel) {
    k.helper(
        "integrate_rotation",
        "@wp.func\ndef integrate_rotation(q: wp.quat, omega: wp.vec3, dt: float):\n    \
         dq = wp.quat(omega, 0.0) * q * (0.5 * dt)\n    \
         return wp.normalize(q + dq)",
    );
}

/// Rigid-body step on a transform and a spatial velocity (twist), with a wrench.
fn rigid_body_step(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::M(3)) {
        return false;
    }
    let own = k.own();
    let q = k.array(
        rng,
        &["body_q", "body_transforms", "poses"],
        Ty::Transform,
        k.shape(),
        Role::In,
        -5.0,
        5.0,
    );
    let qd = k.array(
        rng,
        &["body_qd", "body_twists", "twists"],
        Ty::SpatialVector,
        k.shape(),
        Role::In,
        -2.0,
        2.0,
    );
    let wrench = k.array(
        rng,
        &["body_f", "wrenches", "body_wrench"],
        Ty::SpatialVector,
        k.shape(),
        Role::In,
        -10.0,
        10.0,
    );
    let w_inv = k.input(rng, &["inv_mass", "body_inv_mass"], Ty::F, 0.0, 2.0);
    let i_inv = k.input(
        rng,
        &["inv_inertia", "body_inv_inertia"],
        Ty::M(3),
        -1.0,
        1.0,
    );
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    quat_helper(k);
    let tf = k.local_of(
        rng,
        &["tf", "pose", "X_wb"],
        Ty::Transform,
        &[&q, "[", &own, "]"],
        -5.0,
        5.0,
    );
    let p = k.local_of(
        rng,
        &["p", "com", "pos"],
        V3,
        &["wp.transform_get_translation(", &tf.expr, ")"],
        -5.0,
        5.0,
    );
    let r = k.local_of(
        rng,
        &["r", "rot", "orientation"],
        Ty::Quat,
        &["wp.transform_get_rotation(", &tf.expr, ")"],
        -1.0,
        1.0,
    );
    let tw = k.local_of(
        rng,
        &["twist", "qd", "vel"],
        Ty::SpatialVector,
        &[&qd, "[", &own, "]"],
        -2.0,
        2.0,
    );
    let wr = k.local_of(
        rng,
        &["wrench", "f_body", "fw"],
        Ty::SpatialVector,
        &[&wrench, "[", &own, "]"],
        -10.0,
        10.0,
    );
    let w = k.local_of(
        rng,
        &["w", "omega", "ang_vel"],
        V3,
        &["wp.spatial_top(", &tw.expr, ")"],
        -2.0,
        2.0,
    );
    let v = k.local_of(
        rng,
        &["v", "lin_vel", "v_com"],
        V3,
        &["wp.spatial_bottom(", &tw.expr, ")"],
        -2.0,
        2.0,
    );
    let tau = k.local_of(
        rng,
        &["tau", "torque", "t"],
        V3,
        &["wp.spatial_top(", &wr.expr, ")"],
        -10.0,
        10.0,
    );
    let fo = k.local_of(
        rng,
        &["force", "f", "f_lin"],
        V3,
        &["wp.spatial_bottom(", &wr.expr, ")"],
        -10.0,
        10.0,
    );
    let wb = k.local_fmt(
        rng,
        &["w_body", "omega_b", "w_local"],
        V3,
        format_args!(
            "wp.quat_rotate_inv({r}, {w}) + {i} * wp.quat_rotate_inv({r}, {tau}) * {dt}",
            r = r.expr,
            w = w.expr,
            i = i_inv.expr,
            tau = tau.expr
        ),
        -4.0,
        4.0,
    );
    let w1 = k.local_of(
        rng,
        &["w_new", "omega_new", "w1"],
        V3,
        &["wp.quat_rotate(", &r.expr, ", ", &wb.expr, ")"],
        -7.0,
        7.0,
    );
    let v1 = k.local_of(
        rng,
        &["v_new", "vel_new", "v1"],
        V3,
        &[
            &v.expr,
            " + ",
            &fo.expr,
            " * (",
            &w_inv.expr,
            " * ",
            &dt,
            ")",
        ],
        -3.0,
        3.0,
    );
    let p1 = k.local_of(
        rng,
        &["p_new", "com_new", "x1"],
        V3,
        &[&p.expr, " + ", &v1.expr, " * ", &dt],
        -6.0,
        6.0,
    );
    let r1 = k.local_of(
        rng,
        &["rot_new", "r_new", "q1"],
        Ty::Quat,
        &[
            "integrate_rotation(",
            &r.expr,
            ", ",
            &w1.expr,
            ", ",
            &dt,
            ")",
        ],
        -1.0,
        1.0,
    );
    let qo = k.output(
        rng,
        &["body_q_out", "body_q_new", "poses_out"],
        Ty::Transform,
    );
    let qdo = k.output(
        rng,
        &["body_qd_out", "body_qd_new", "twists_out"],
        Ty::SpatialVector,
    );
    k.line_of(&[
        &qo,
        "[",
        &own,
        "] = wp.transform(",
        &p1.expr,
        ", ",
        &r1.expr,
        ")",
    ]);
    k.line_of(&[
        &qdo,
        "[",
        &own,
        "] = wp.spatial_vector(",
        &w1.expr,
        ", ",
        &v1.expr,
        ")",
    ]);
    true
}

/// Integrates an orientation by an angular velocity through a `@wp.func`.
fn orientation_step(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let q = k.input(rng, &["rot", "orientation", "q"], Ty::Quat, -1.0, 1.0);
    let w = k.input(rng, &["omega", "ang_vel", "w"], V3, -10.0, 10.0);
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    quat_helper(k);
    let r = k.local_of(
        rng,
        &["rot_new", "q_new", "orientation_new"],
        Ty::Quat,
        &[
            "integrate_rotation(",
            &q.expr,
            ", ",
            &w.expr,
            ", ",
            &dt,
            ")",
        ],
        -1.0,
        1.0,
    );
    if chance(rng, 0.5) {
        // the body's new forward axis
        let axis = pick(rng, &["wp.vec3(1.0, 0.0, 0.0)", "wp.vec3(0.0, 0.0, 1.0)"]);
        let f = k.local_of(
            rng,
            &["forward", "heading", "axis_world"],
            V3,
            &["wp.quat_rotate(", &r.expr, ", ", axis, ")"],
            -1.0,
            1.0,
        );
        k.offer(f, &["heading_out", "forward_out"]);
    }
    k.offer(r, &["rot_out", "orientation_out"]);
    true
}

/// Total kinetic energy `sum 0.5 m |v|^2` with an atomic add.
fn kinetic_energy_sum(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    // Velocities of any magnitude: offered unit vectors (directions) would
    // all have the same energy.
    let v = k.input_covering(rng, &["v", "vel", "velocity"], V3, -10.0, 10.0, -2.0, 2.0);
    let m = k.input(rng, &["mass", "m", "particle_mass"], Ty::F, 0.1, 5.0);
    let e = k.array(
        rng,
        &["energy", "kinetic_energy", "total_energy"],
        Ty::F,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let ke = k.local_fmt(
        rng,
        &["ke", "e_kin", "energy_i"],
        Ty::F,
        format_args!("0.5 * {} * wp.dot({v}, {v})", m.expr, v = v.expr),
        0.0,
        750.0,
    );
    if chance(rng, 0.5) {
        k.line_of(&["wp.atomic_add(", &e, ", 0, ", &ke.expr, ")"]);
    } else {
        k.line_of(&[&e, "[0] += ", &ke.expr]);
    }
    true
}

/// A particle count for motifs whose launch runs over edges/elements.
fn particle_count(rng: &mut Gen) -> usize {
    *pick(rng, &[64usize, 100, 128, 256, 512])
}

/// Damped springs over an edge list, forces scattered to both ends.
fn spring_forces(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let m = k.launch.dim[0];
    let n = particle_count(rng);
    let top = (n - 1) as f64;
    let x = k.array(
        rng,
        &["x", "particle_q", "pos"],
        V3,
        vec![n],
        Role::In,
        -5.0,
        5.0,
    );
    let v = k.array(
        rng,
        &["v", "particle_qd", "vel"],
        V3,
        vec![n],
        Role::In,
        -2.0,
        2.0,
    );
    let (ia, ib) = if chance(rng, 0.7) {
        let e = k.array(
            rng,
            &["spring_indices", "springs", "edges"],
            Ty::I,
            vec![m, 2],
            Role::In,
            0.0,
            top,
        );
        (format!("{e}[{t}, 0]"), format!("{e}[{t}, 1]"))
    } else {
        let a = k.array(
            rng,
            &["spring_i", "edge_a", "ia"],
            Ty::I,
            vec![m],
            Role::In,
            0.0,
            top,
        );
        let b = k.array(
            rng,
            &["spring_j", "edge_b", "ib"],
            Ty::I,
            vec![m],
            Role::In,
            0.0,
            top,
        );
        (format!("{a}[{t}]"), format!("{b}[{t}]"))
    };
    let rest = k.input(rng, &["rest_length", "rest", "l0"], Ty::F, 0.05, 2.0);
    let ke = k.scalar(rng, &["ke", "stiffness", "k_spring"], Ty::F, 10.0, 1000.0);
    let kd = k.scalar(rng, &["kd", "damping", "k_damp"], Ty::F, 0.0, 10.0);
    let f = k.array(
        rng,
        &["f", "particle_f", "forces"],
        V3,
        vec![n],
        Role::Accum,
        0.0,
        0.0,
    );
    let a = k.local(rng, &["a", "i0", "pi"], Ty::I, &ia, 0.0, top);
    let b = k.local(rng, &["b", "i1", "pj"], Ty::I, &ib, 0.0, top);
    let xij = k.local_of(
        rng,
        &["xij", "d", "delta"],
        V3,
        &[&x, "[", &a.expr, "] - ", &x, "[", &b.expr, "]"],
        -10.0,
        10.0,
    );
    let vij = k.local_of(
        rng,
        &["vij", "dv", "rel_vel"],
        V3,
        &[&v, "[", &a.expr, "] - ", &v, "[", &b.expr, "]"],
        -4.0,
        4.0,
    );
    let len = k.local_of(
        rng,
        &["length", "l", "dist"],
        Ty::F,
        &["wp.length(", &xij.expr, ") + 1.0e-06"],
        1.0e-6,
        18.0,
    );
    let dir = k.local_of(
        rng,
        &["dir", "n", "axis"],
        V3,
        &[&xij.expr, " / ", &len.expr],
        -1.0,
        1.0,
    );
    let stretch = k.local_of(
        rng,
        &["stretch", "c", "elongation"],
        Ty::F,
        &[&len.expr, " - ", &rest.expr],
        -2.0,
        18.0,
    );
    let fs = k.local_of(
        rng,
        &["fs", "spring_force", "fe"],
        V3,
        &[
            &dir.expr,
            " * (",
            &ke,
            " * ",
            &stretch.expr,
            " + ",
            &kd,
            " * wp.dot(",
            &dir.expr,
            ", ",
            &vij.expr,
            "))",
        ],
        -20000.0,
        20000.0,
    );
    if chance(rng, 0.5) {
        k.line_of(&["wp.atomic_sub(", &f, ", ", &a.expr, ", ", &fs.expr, ")"]);
        k.line_of(&["wp.atomic_add(", &f, ", ", &b.expr, ", ", &fs.expr, ")"]);
    } else {
        k.line_of(&[&f, "[", &a.expr, "] -= ", &fs.expr]);
        k.line_of(&[&f, "[", &b.expr, "] += ", &fs.expr]);
    }
    if chance(rng, 0.4) {
        let e = k.local_fmt(
            rng,
            &["energy", "spring_energy", "pe"],
            Ty::F,
            format_args!("0.5 * {ke} * {s} * {s}", s = stretch.expr),
            0.0,
            200000.0,
        );
        k.offer(e, &["spring_energy_out", "energy_out"]);
    }
    true
}

/// XPBD distance constraint: a correction scattered to both particles.
fn distance_constraint(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let n = particle_count(rng);
    let m = k.launch.dim[0];
    let top = (n - 1) as f64;
    let pos = k.array(
        rng,
        &["pos", "x", "particle_x"],
        V3,
        vec![n],
        Role::In,
        -5.0,
        5.0,
    );
    let w = k.array(
        rng,
        &["inv_mass", "w", "particle_w"],
        Ty::F,
        vec![n],
        Role::In,
        0.1,
        2.0,
    );
    let ea = k.array(
        rng,
        &["edge_i", "con_a", "ia"],
        Ty::I,
        vec![m],
        Role::In,
        0.0,
        top,
    );
    let eb = k.array(
        rng,
        &["edge_j", "con_b", "ib"],
        Ty::I,
        vec![m],
        Role::In,
        0.0,
        top,
    );
    let rest = k.input(rng, &["rest", "rest_length", "d0"], Ty::F, 0.05, 2.0);
    let compliance = k.scalar(rng, &["compliance", "alpha_c"], Ty::F, 0.0, 0.01);
    let dt = k.scalar(rng, &["dt", "h", "substep_dt"], Ty::F, 0.001, 0.02);
    let delta = k.array(
        rng,
        &["delta", "corrections", "dx"],
        V3,
        vec![n],
        Role::Accum,
        0.0,
        0.0,
    );
    let i = k.local_of(
        rng,
        &["i0", "a", "pa"],
        Ty::I,
        &[&ea, "[", t, "]"],
        0.0,
        top,
    );
    let j = k.local_of(
        rng,
        &["i1", "b", "pb"],
        Ty::I,
        &[&eb, "[", t, "]"],
        0.0,
        top,
    );
    let wi = k.local_of(
        rng,
        &["wi", "w0", "inv_m0"],
        Ty::F,
        &[&w, "[", &i.expr, "]"],
        0.1,
        2.0,
    );
    let wj = k.local_of(
        rng,
        &["wj", "w1", "inv_m1"],
        Ty::F,
        &[&w, "[", &j.expr, "]"],
        0.1,
        2.0,
    );
    let d = k.local_of(
        rng,
        &["d", "diff", "xij"],
        V3,
        &[&pos, "[", &i.expr, "] - ", &pos, "[", &j.expr, "]"],
        -10.0,
        10.0,
    );
    let dist = k.local_of(
        rng,
        &["dist", "length", "l"],
        Ty::F,
        &["wp.length(", &d.expr, ") + 1.0e-06"],
        0.0,
        18.0,
    );
    let nrm = k.local_of(
        rng,
        &["n", "dir", "grad"],
        V3,
        &[&d.expr, " / ", &dist.expr],
        -1.0,
        1.0,
    );
    let alpha = k.local_of(
        rng,
        &["alpha", "alpha_tilde", "a_t"],
        Ty::F,
        &[&compliance, " / (", &dt, " * ", &dt, ")"],
        0.0,
        10000.0,
    );
    let lam = k.local_of(
        rng,
        &["lam", "dlambda", "lambda_c"],
        Ty::F,
        &[
            "(",
            &dist.expr,
            " - ",
            &rest.expr,
            ") / (",
            &wi.expr,
            " + ",
            &wj.expr,
            " + ",
            &alpha.expr,
            ")",
        ],
        -10.0,
        100.0,
    );
    k.line_of(&[
        "wp.atomic_add(",
        &delta,
        ", ",
        &i.expr,
        ", -",
        &wi.expr,
        " * ",
        &lam.expr,
        " * ",
        &nrm.expr,
        ")",
    ]);
    k.line_of(&[
        "wp.atomic_add(",
        &delta,
        ", ",
        &j.expr,
        ", ",
        &wj.expr,
        " * ",
        &lam.expr,
        " * ",
        &nrm.expr,
        ")",
    ]);
    true
}

/// Three-particle bending: the middle one pulled to its neighbours' midpoint.
fn bending_constraint(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let n = particle_count(rng);
    let m = k.launch.dim[0];
    let top = (n - 1) as f64;
    let pos = k.array(
        rng,
        &["pos", "x", "particle_x"],
        V3,
        vec![n],
        Role::In,
        -5.0,
        5.0,
    );
    let w = k.array(
        rng,
        &["inv_mass", "w", "particle_w"],
        Ty::F,
        vec![n],
        Role::In,
        0.1,
        2.0,
    );
    let tri = k.array(
        rng,
        &["bend_indices", "triples", "hinges"],
        Ty::I,
        vec![m, 3],
        Role::In,
        0.0,
        top,
    );
    let stiff = k.scalar(rng, &["stiffness", "k_bend", "kb"], Ty::F, 0.0, 1.0);
    let delta = k.array(
        rng,
        &["delta", "corrections", "dx"],
        V3,
        vec![n],
        Role::Accum,
        0.0,
        0.0,
    );
    let ids: Vec<Val> = (0..3)
        .map(|c| {
            k.local_fmt(
                rng,
                &[
                    ["i0", "a", "left"][c],
                    ["i1", "b", "mid"][c],
                    ["i2", "c", "right"][c],
                ],
                Ty::I,
                format_args!("{tri}[{t}, {c}]"),
                0.0,
                top,
            )
        })
        .collect();
    let mid = k.local_of(
        rng,
        &["center", "midpoint", "p_mid"],
        V3,
        &[
            "(",
            &pos,
            "[",
            &(ids[0].expr),
            "] + ",
            &pos,
            "[",
            &(ids[2].expr),
            "]) * 0.5",
        ],
        -5.0,
        5.0,
    );
    let err = k.local_of(
        rng,
        &["err", "offset", "c_vec"],
        V3,
        &[&pos, "[", &(ids[1].expr), "] - ", &mid.expr],
        -10.0,
        10.0,
    );
    let ws = k.local_of(
        rng,
        &["w_sum", "w_total", "denom"],
        Ty::F,
        &[
            "0.25 * ",
            &w,
            "[",
            &(ids[0].expr),
            "] + ",
            &w,
            "[",
            &(ids[1].expr),
            "] + 0.25 * ",
            &w,
            "[",
            &(ids[2].expr),
            "]",
        ],
        0.15,
        3.0,
    );
    let corr = k.local_of(
        rng,
        &["corr", "dp", "correction"],
        V3,
        &[&err.expr, " * (", &stiff, " / ", &ws.expr, ")"],
        -70.0,
        70.0,
    );
    k.line_fmt(format_args!(
        "wp.atomic_add({delta}, {a}, {c} * (0.5 * {w}[{a}]))",
        a = ids[0].expr,
        c = corr.expr
    ));
    k.line_fmt(format_args!(
        "wp.atomic_sub({delta}, {b}, {c} * {w}[{b}])",
        b = ids[1].expr,
        c = corr.expr
    ));
    k.line_fmt(format_args!(
        "wp.atomic_add({delta}, {a}, {c} * (0.5 * {w}[{a}]))",
        a = ids[2].expr,
        c = corr.expr
    ));
    true
}

/// Ground-plane contact with restitution and friction.
fn ground_contact(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(rng, &["x", "pos", "particle_q"], V3, -10.0, 10.0);
    let v = k.input(rng, &["v", "vel", "particle_qd"], V3, -10.0, 10.0);
    // The ground in the middle fifth of the positions' range (an offered
    // position may span far less than [-10, 10]): some particles are below.
    let ground = k.scalar(
        rng,
        &["ground", "floor_height", "plane_offset"],
        Ty::F,
        x.at(0.4),
        x.at(0.6),
    );
    let radius = k.scalar(rng, &["radius", "particle_radius", "r"], Ty::F, 0.01, 0.5);
    let e = k.scalar(rng, &["restitution", "bounce", "e"], Ty::F, 0.0, 1.0);
    let mu = k.scalar(rng, &["friction", "mu", "k_friction"], Ty::F, 0.0, 1.0);
    let axis = *pick(rng, &[1usize, 1, 2]);
    let n = [
        "wp.vec3(1.0, 0.0, 0.0)",
        "wp.vec3(0.0, 1.0, 0.0)",
        "wp.vec3(0.0, 0.0, 1.0)",
    ][axis];
    let depth = k.local_fmt(
        rng,
        &["depth", "c", "phi"],
        Ty::F,
        format_args!("{}[{axis}] - {ground} - {radius}", x.expr),
        -13.0,
        12.0,
    );
    let vn = k.local_fmt(
        rng,
        &["vn", "v_normal", "approach"],
        Ty::F,
        format_args!("{}[{axis}]", v.expr),
        -10.0,
        10.0,
    );
    let xc = k.local_of(
        rng,
        &["x_c", "x_contact", "pos_c"],
        V3,
        &["wp.vec3(", &x.expr, ")"],
        -23.0,
        23.0,
    );
    let vc = k.local_of(
        rng,
        &["v_c", "v_contact", "vel_c"],
        V3,
        &["wp.vec3(", &v.expr, ")"],
        -20.0,
        20.0,
    );
    k.open_of(&["if ", &depth.expr, " < 0.0:"]);
    k.line_of(&[&xc.expr, " = ", &x.expr, " - ", n, " * ", &depth.expr]);
    if chance(rng, 0.5) {
        k.open_of(&["if ", &vn.expr, " < 0.0:"]);
    } else {
        k.open_of(&["if ", &vn.expr, " < 0.0 and ", &depth.expr, " < 0.0:"]);
    }
    k.line_fmt(format_args!(
        "{} = ({v} - {n} * {vn}) * (1.0 - {mu}) - {n} * ({vn} * {e})",
        vc.expr,
        v = v.expr,
        vn = vn.expr
    ));
    k.close(false);
    k.close(false);
    k.offer(xc, &["x_out", "pos_out"]);
    k.offer(vc, &["v_out", "vel_out"]);
    true
}

/// Pushes a point out of a spherical obstacle (a `@wp.struct`) through a `@wp.func`.
fn sphere_obstacle(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    // Points around the sphere (center within 2 of the origin, radius 3-8):
    // a good share of them starts inside it.
    let x = k.input_covering(rng, &["x", "pos", "points"], V3, -5.0, 5.0, -3.0, 3.0);
    let s = super::geometry::sphere_param(k, rng, &["obstacle", "sphere", "collider"]);
    let margin = k.scalar(rng, &["margin", "radius", "thickness"], Ty::F, 0.0, 0.2);
    k.helper(
        "push_out_of_sphere",
        "@wp.func\ndef push_out_of_sphere(p: wp.vec3, s: Sphere, margin: float):\n    \
         d = p - s.center\n    \
         dist = wp.length(d)\n    \
         r = s.radius + margin\n    \
         if dist < r:\n        \
         return s.center + d * (r / (dist + 1.0e-06))\n    \
         return p",
    );
    let p = k.local_of(
        rng,
        &["x_proj", "p_out", "projected"],
        V3,
        &["push_out_of_sphere(", &x.expr, ", ", &s, ", ", &margin, ")"],
        -10.5,
        10.5,
    );
    if chance(rng, 0.5) {
        let push = k.local_of(
            rng,
            &["push", "dp", "correction"],
            V3,
            &[&p.expr, " - ", &x.expr],
            -25.0,
            25.0,
        );
        k.offer(push, &["corrections", "push_out"]);
    }
    k.offer(p, &["x_out", "pos_out"]);
    true
}

/// Keeps particles inside an axis-aligned box, reflecting the velocity.
fn box_boundary(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let x = k.input(rng, &["x", "pos", "particle_q"], V3, -10.0, 10.0);
    let v = k.input(rng, &["v", "vel", "particle_qd"], V3, -10.0, 10.0);
    // Walls inside the positions' range (an offered position may span much
    // less than [-10, 10]), so some particles are always outside them.
    let lo = k.scalar(
        rng,
        &["box_lower", "lower", "bounds_min"],
        V3,
        x.at(0.1),
        x.at(0.4),
    );
    let hi = k.scalar(
        rng,
        &["box_upper", "upper", "bounds_max"],
        V3,
        x.at(0.6),
        x.at(0.9),
    );
    let e = k.scalar(rng, &["restitution", "bounce", "e"], Ty::F, 0.0, 1.0);
    let xc = k.local_of(
        rng,
        &["p", "x_c", "pos_c"],
        V3,
        &["wp.vec3(", &x.expr, ")"],
        -10.0,
        10.0,
    );
    let vc = k.local_of(
        rng,
        &["vel", "v_c", "vel_c"],
        V3,
        &["wp.vec3(", &v.expr, ")"],
        -10.0,
        10.0,
    );
    if k.can_loop() {
        let ax = k.fresh(rng, &["axis", "d", "c"]);
        k.open_of(&["for ", &ax, " in range(3):"]);
        k.open_of(&["if ", &xc.expr, "[", &ax, "] < ", &lo, "[", &ax, "]:"]);
        k.line_of(&[&xc.expr, "[", &ax, "] = ", &lo, "[", &ax, "]"]);
        k.line_fmt(format_args!(
            "{v}[{ax}] = wp.abs({v}[{ax}]) * {e}",
            v = vc.expr
        ));
        k.close(false);
        k.open_of(&["elif ", &xc.expr, "[", &ax, "] > ", &hi, "[", &ax, "]:"]);
        k.line_of(&[&xc.expr, "[", &ax, "] = ", &hi, "[", &ax, "]"]);
        k.line_fmt(format_args!(
            "{v}[{ax}] = -wp.abs({v}[{ax}]) * {e}",
            v = vc.expr
        ));
        k.close(false);
        k.close(true);
    } else {
        k.open_fmt(format_args!(
            "if wp.min({x} - {lo}) < 0.0 or wp.max({x} - {hi}) > 0.0:",
            x = x.expr
        ));
        k.line_of(&[
            &xc.expr,
            " = wp.min(wp.max(",
            &x.expr,
            ", ",
            &lo,
            "), ",
            &hi,
            ")",
        ]);
        k.line_of(&[&vc.expr, " = -", &v.expr, " * ", &e]);
        k.close(false);
    }
    k.offer(xc, &["x_out", "pos_out"]);
    k.offer(vc, &["v_out", "vel_out"]);
    true
}

/// Declares a fixed neighbour list (`[n, K]` indices and counts) over the launch.
fn neighbor_list(k: &mut Kernel, rng: &mut Gen) -> (String, String, usize) {
    let n = k.launch.dim[0];
    let kmax = *pick(rng, &[4usize, 8, 12, 16]);
    let nb = k.array(
        rng,
        &["neighbors", "neighbor_list", "adjacency"],
        Ty::I,
        vec![n, kmax],
        Role::In,
        0.0,
        (n - 1) as f64,
    );
    let cnt = k.array(
        rng,
        &["neighbor_count", "num_neighbors", "degree"],
        Ty::I,
        vec![n],
        Role::In,
        0.0,
        kmax as f64,
    );
    (nb, cnt, kmax)
}

/// Springs to a fixed list of neighbours, summed in a loop.
fn neighbor_forces(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() || !k.can_loop() {
        return false;
    }
    let t = k.tid(0);
    let n = k.launch.dim[0];
    let x = k.array(
        rng,
        &["x", "pos", "particle_q"],
        V3,
        vec![n],
        Role::In,
        -5.0,
        5.0,
    );
    let (nb, cnt, _) = neighbor_list(k, rng);
    let ks = k.scalar(rng, &["k", "stiffness", "ke"], Ty::F, 1.0, 100.0);
    let rest = k.scalar(rng, &["rest", "rest_length", "spacing"], Ty::F, 0.1, 1.0);
    let xi = k.local_of(rng, &["xi", "p", "x0"], V3, &[&x, "[", t, "]"], -5.0, 5.0);
    let force = k.local(
        rng,
        &["force", "f_sum", "fi"],
        V3,
        "wp.vec3()",
        -10000.0,
        10000.0,
    );
    let nn = k.fresh(rng, &["nn", "s", "slot"]);
    k.open_of(&["for ", &nn, " in range(", &cnt, "[", t, "]):"]);
    let j = k.local_of(
        rng,
        &["j", "other", "nbr"],
        Ty::I,
        &[&nb, "[", t, ", ", &nn, "]"],
        0.0,
        (n - 1) as f64,
    );
    let d = k.local_of(
        rng,
        &["d", "xij", "r"],
        V3,
        &[&x, "[", &j.expr, "] - ", &xi.expr],
        -10.0,
        10.0,
    );
    let dist = k.local_of(
        rng,
        &["dist", "r_len", "l"],
        Ty::F,
        &["wp.length(", &d.expr, ") + 1.0e-06"],
        0.0,
        18.0,
    );
    k.line_of(&[
        &force.expr,
        " += ",
        &d.expr,
        " * (",
        &ks,
        " * (",
        &dist.expr,
        " - ",
        &rest,
        ") / ",
        &dist.expr,
        ")",
    ]);
    k.close(true);
    k.offer(force, &["f", "forces", "f_out"]);
    true
}

/// SPH density with the poly6 kernel over a fixed neighbour list.
fn sph_density(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() || !k.can_loop() {
        return false;
    }
    let t = k.tid(0);
    let n = k.launch.dim[0];
    // Particles in a unit box and a smoothing length of the box's size: most
    // listed neighbours lie within it (a list drawn at random ignores
    // distance; with particles spread wider than `h` nearly none would).
    let x = k.array(
        rng,
        &["x", "pos", "particle_x"],
        V3,
        vec![n],
        Role::In,
        -0.5,
        0.5,
    );
    let (nb, cnt, _) = neighbor_list(k, rng);
    let mass = k.scalar(rng, &["mass", "particle_mass", "m"], Ty::F, 0.01, 1.0);
    let h = k.scalar(rng, &["h", "smoothing_length", "support"], Ty::F, 0.75, 1.5);
    k.helper(
        "poly6",
        "@wp.func\ndef poly6(r2: float, h: float):\n    \
         h3 = h * h * h\n    \
         diff = wp.max(h * h - r2, 0.0)\n    \
         return 315.0 / (64.0 * wp.pi * h3 * h3 * h3) * diff * diff * diff",
    );
    let xi = k.local_of(rng, &["xi", "p", "x0"], V3, &[&x, "[", t, "]"], -0.5, 0.5);
    let rho = k.local_of(
        rng,
        &["rho", "density", "rho_i"],
        Ty::F,
        &[&mass, " * poly6(0.0, ", &h, ")"],
        0.0,
        1.0e12,
    );
    let nn = k.fresh(rng, &["nn", "s", "slot"]);
    k.open_of(&["for ", &nn, " in range(", &cnt, "[", t, "]):"]);
    let r2 = k.local_of(
        rng,
        &["r2", "dist_sq", "rsq"],
        Ty::F,
        &[
            "wp.length_sq(",
            &x,
            "[",
            &nb,
            "[",
            t,
            ", ",
            &nn,
            "]] - ",
            &xi.expr,
            ")",
        ],
        0.0,
        3.0,
    );
    k.line_of(&[
        &rho.expr,
        " += ",
        &mass,
        " * poly6(",
        &r2.expr,
        ", ",
        &h,
        ")",
    ]);
    k.close(true);
    if chance(rng, 0.5) {
        let rho0 = k.scalar(rng, &["rest_density", "rho0"], Ty::F, 100.0, 1000.0);
        let stiff = k.scalar(
            rng,
            &["k_pressure", "gas_constant", "stiffness"],
            Ty::F,
            1.0,
            50.0,
        );
        let p = k.local_of(
            rng,
            &["pressure", "p_i", "press"],
            Ty::F,
            &[&stiff, " * (", &rho.expr, " - ", &rho0, ")"],
            -5.0e4,
            1.0e14,
        );
        k.offer(p, &["pressure_out", "pressure"]);
    } else {
        k.offer(rho, &["rho_out", "density"]);
    }
    true
}

/// The softened gravity helper.
fn gravity_helper(k: &mut Kernel) {
    k.helper(
        "gravity_accel",
        "@wp.func\ndef gravity_accel(p0: wp.vec3, p1: wp.vec3, m1: float, eps2: float):\n    \
         r = p1 - p0\n    \
         inv_dist = 1.0 / wp.sqrt(wp.length_sq(r) + eps2)\n    \
         return r * (m1 * inv_dist * inv_dist * inv_dist)",
    );
}

/// All-pairs N-body gravity, one body per thread.
fn nbody_direct(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.can_loop() {
        return false;
    }
    let nb = *pick(rng, &[32usize, 64, 128, 256]);
    let p = k.input(rng, &["p", "pos", "body_pos"], V3, -10.0, 10.0);
    let bodies = k.array(
        rng,
        &["bodies", "sources", "body_x"],
        V3,
        vec![nb],
        Role::In,
        -10.0,
        10.0,
    );
    let mass = k.array(
        rng,
        &["mass", "body_mass", "m"],
        Ty::F,
        vec![nb],
        Role::In,
        0.1,
        10.0,
    );
    let eps = lit(*pick(rng, &[0.01, 0.001, 0.1]));
    gravity_helper(k);
    let a = k.local(rng, &["accel", "acc", "a"], V3, "wp.vec3()", -1.0e6, 1.0e6);
    let j = k.fresh(rng, &["j", "b", "other"]);
    let count = if chance(rng, 0.5) {
        format!("{bodies}.shape[0]")
    } else {
        k.size_param(rng, &["num_bodies", "n_bodies", "count"], nb)
    };
    k.open_of(&["for ", &j, " in range(", &count, "):"]);
    k.line_of(&[
        &a.expr,
        " += gravity_accel(",
        &p.expr,
        ", ",
        &bodies,
        "[",
        &j,
        "], ",
        &mass,
        "[",
        &j,
        "], ",
        &eps,
        ")",
    ]);
    k.close(true);
    k.offer(a, &["accel_out", "acc_out", "a_out"]);
    true
}

/// N-body gravity whose source bodies are loaded tile by tile into shared memory.
fn nbody_tiled(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.can_loop() || k.depth() != 1 {
        return false;
    }
    let tile = *pick(rng, &[8usize, 16, 32]);
    let tiles = *pick(rng, &[2usize, 4, 8]);
    let nb = tile * tiles;
    let p = k.input(rng, &["p", "pos", "body_pos"], V3, -10.0, 10.0);
    let bodies = k.array(
        rng,
        &["bodies", "sources", "body_x"],
        V3,
        vec![nb],
        Role::In,
        -10.0,
        10.0,
    );
    let mass = k.array(
        rng,
        &["mass", "body_mass", "m"],
        Ty::F,
        vec![nb],
        Role::In,
        0.1,
        10.0,
    );
    let nbody = k.size_param(rng, &["num_bodies", "n_bodies", "count"], nb);
    k.constant("TILE_BODIES", &tile.to_string());
    gravity_helper(k);
    let eps = lit(*pick(rng, &[0.01, 0.001, 0.1]));
    let a = k.local(rng, &["accel", "acc", "a"], V3, "wp.vec3()", -1.0e6, 1.0e6);
    let t = k.fresh(rng, &["t", "blk", "tile_index"]);
    k.open_of(&["for ", &t, " in range(", &nbody, " // TILE_BODIES):"]);
    let bt = k.local_of(
        rng,
        &["body_tile", "x_tile", "src_tile"],
        V3,
        &[
            "wp.tile_load(",
            &bodies,
            ", shape=TILE_BODIES, offset=",
            &t,
            " * TILE_BODIES)",
        ],
        -10.0,
        10.0,
    );
    let mt = k.local_of(
        rng,
        &["mass_tile", "m_tile", "w_tile"],
        Ty::F,
        &[
            "wp.tile_load(",
            &mass,
            ", shape=TILE_BODIES, offset=",
            &t,
            " * TILE_BODIES)",
        ],
        0.1,
        10.0,
    );
    if k.can_loop() {
        let j = k.fresh(rng, &["j", "b", "lane"]);
        k.open_of(&["for ", &j, " in range(TILE_BODIES):"]);
        k.line_of(&[
            &a.expr,
            " += gravity_accel(",
            &p.expr,
            ", ",
            &bt.expr,
            "[",
            &j,
            "], ",
            &mt.expr,
            "[",
            &j,
            "], ",
            &eps,
            ")",
        ]);
        k.close(true);
    } else {
        k.line_of(&[
            &a.expr,
            " += gravity_accel(",
            &p.expr,
            ", ",
            &bt.expr,
            "[0], ",
            &mt.expr,
            "[0], ",
            &eps,
            ")",
        ]);
    }
    k.close(true);
    if chance(rng, 0.5) {
        let v = k.input(rng, &["v", "vel", "body_vel"], V3, -10.0, 10.0);
        let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
        let v1 = k.local_of(
            rng,
            &["v_new", "vel_new", "v1"],
            V3,
            &[&v.expr, " + ", &a.expr, " * ", &dt],
            -2.0e4,
            2.0e4,
        );
        k.offer(v1, &["v_out", "vel_out"]);
    } else {
        k.offer(a, &["accel_out", "acc_out"]);
    }
    true
}

/// The 1-D tile length constant (shared with the other tile motifs: the
/// same names, and `k.tile_len` once one is defined).
fn tile_len_1d(k: &mut Kernel, rng: &mut Gen) -> (String, usize) {
    const NAMES: [&str; 4] = ["TILE", "BLOCK", "TILE_SIZE", "CHUNK"];
    if let Some(p) = NAMES.iter().find(|n| k.has_helper(n)) {
        return (p.to_string(), k.tile_len);
    }
    let name = *pick(rng, &NAMES);
    let v = *pick(rng, &[32usize, 64, 128, 256]);
    k.constant(name, &v.to_string());
    k.tile_len = v;
    (name.to_string(), v)
}

/// A block of particles (one coordinate) integrated as tiles: damped
/// velocity update, then positions, both stored to the block's own tile.
fn tile_particle_step(k: &mut Kernel, rng: &mut Gen) -> bool {
    if k.dims() != 1 || !k.launch.tiled {
        return false;
    }
    let (ts, len) = tile_len_1d(k, rng);
    let b = k.tid(0);
    let n = k.launch.dim[0] * len;
    let x = k.array(
        rng,
        &["x", "pos", "particle_x"],
        Ty::F,
        vec![n],
        Role::In,
        -10.0,
        10.0,
    );
    let v = k.array(
        rng,
        &["v", "vel", "particle_v"],
        Ty::F,
        vec![n],
        Role::In,
        -5.0,
        5.0,
    );
    let a = k.array(
        rng,
        &["accel", "a", "force"],
        Ty::F,
        vec![n],
        Role::In,
        -20.0,
        20.0,
    );
    let dt = k.scalar(rng, &["dt", "h", "time_step"], Ty::F, 0.001, 0.02);
    let damped = chance(rng, 0.5);
    let c = if damped {
        Some(k.scalar(rng, &["damping", "drag", "c_damp"], Ty::F, 0.0, 5.0))
    } else {
        None
    };
    let off = format!("{b} * {ts}");
    let tx = k.fresh(rng, &["tx", "x_tile", "xt"]);
    let tv = k.fresh(rng, &["tv", "v_tile", "vt"]);
    let ta = k.fresh(rng, &["ta", "a_tile", "at"]);
    k.tile_load(&tx, &x, &ts, &[&off]);
    k.tile_load(&tv, &v, &ts, &[&off]);
    k.tile_load(&ta, &a, &ts, &[&off]);
    let tv1 = k.fresh(rng, &["tv_new", "v_next", "vt1"]);
    match c {
        Some(c) => k.line_of(&[
            &tv1,
            " = ",
            &tv,
            " * wp.exp(-",
            &c,
            " * ",
            &dt,
            ") + ",
            &ta,
            " * ",
            &dt,
        ]),
        None => k.line_of(&[&tv1, " = ", &tv, " + ", &ta, " * ", &dt]),
    }
    let tx1 = k.fresh(rng, &["tx_new", "x_next", "xt1"]);
    k.line_of(&[&tx1, " = ", &tx, " + ", &tv1, " * ", &dt]);
    let xo = k.array(
        rng,
        &["x_out", "pos_out", "x_new"],
        Ty::F,
        vec![n],
        Role::Out,
        0.0,
        0.0,
    );
    let vo = k.array(
        rng,
        &["v_out", "vel_out", "v_new"],
        Ty::F,
        vec![n],
        Role::Out,
        0.0,
        0.0,
    );
    k.line_of(&["wp.tile_store(", &xo, ", ", &tx1, ", offset=", &off, ")"]);
    k.line_of(&["wp.tile_store(", &vo, ", ", &tv1, ", offset=", &off, ")"]);
    true
}
