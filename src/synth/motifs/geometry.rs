//! Geometry motifs: rays against spheres, planes, triangles (Moller-Trumbore)
//! and boxes (slabs), AABB overlap and bounds, closest points on triangles
//! and segments, barycentric interpolation, normals and areas, and queries
//! on a `wp.Mesh` (closest point, signed distance, ray casts, collisions).
//! Divisions are by `wp.max(..., eps)` or `(... + eps)` of non-negative
//! values, so they are safe on every input.
//! (Hand-written references: tests/kernels/motifs/geometry_*.py.)

#[allow(unused_imports)]
use super::{ANY, D1, D2, D3, Domain, Motif, TILED, TILED2};
#[allow(unused_imports)]
use crate::synth::kernel::{
    Gen, Kernel, Role, Ty, Val, between, chance, lit, nice, pick, weighted,
};

const V3: Ty = Ty::V(3);

pub const MOTIFS: &[Motif] = &[
    Motif {
        name: "ray_sphere",
        domain: Domain::Geometry,
        categories: &["vector", "control_flow", "math"],
        dims: ANY,
        build: ray_sphere,
    },
    Motif {
        name: "ray_sphere_scene",
        domain: Domain::Geometry,
        categories: &["nested", "control_flow", "combined"],
        dims: D1,
        build: ray_sphere_scene,
    },
    Motif {
        name: "ray_plane",
        domain: Domain::Geometry,
        categories: &["control_flow", "multi_cond", "vector"],
        dims: ANY,
        build: ray_plane,
    },
    Motif {
        name: "ray_triangle",
        domain: Domain::Geometry,
        categories: &["vector", "multi_cond", "combined"],
        dims: ANY,
        build: ray_triangle,
    },
    Motif {
        name: "ray_triangle_list",
        domain: Domain::Geometry,
        categories: &["nested", "multi_cond", "combined"],
        dims: D1,
        build: ray_triangle_list,
    },
    Motif {
        name: "ray_aabb_slab",
        domain: Domain::Geometry,
        categories: &["vector", "multi_cond", "math"],
        dims: ANY,
        build: ray_aabb_slab,
    },
    Motif {
        name: "aabb_overlap",
        domain: Domain::Geometry,
        categories: &["multi_cond", "atomic", "control_flow"],
        dims: ANY,
        build: aabb_overlap,
    },
    Motif {
        name: "triangle_bounds",
        domain: Domain::Geometry,
        categories: &["vector", "combined"],
        dims: D1,
        build: triangle_bounds,
    },
    Motif {
        name: "closest_point_triangle",
        domain: Domain::Geometry,
        categories: &["control_flow", "multi_cond", "vector", "combined"],
        dims: ANY,
        build: closest_point_triangle,
    },
    Motif {
        name: "barycentric_interp",
        domain: Domain::Geometry,
        categories: &["vector", "arithmetic"],
        dims: D1,
        build: barycentric_interp,
    },
    Motif {
        name: "vertex_normals_scatter",
        domain: Domain::Geometry,
        categories: &["atomic", "vector", "reduction"],
        dims: D1,
        build: vertex_normals_scatter,
    },
    Motif {
        name: "triangle_normal_area",
        domain: Domain::Geometry,
        categories: &["vector", "math", "expression_tree"],
        dims: ANY,
        build: triangle_normal_area,
    },
    Motif {
        name: "segment_distance",
        domain: Domain::Geometry,
        categories: &["vector", "math"],
        dims: ANY,
        build: segment_distance,
    },
    Motif {
        name: "mesh_closest_point",
        domain: Domain::Geometry,
        categories: &["control_flow", "vector", "combined"],
        dims: ANY,
        build: mesh_closest_point,
    },
    Motif {
        name: "mesh_raycast",
        domain: Domain::Geometry,
        categories: &["control_flow", "vector", "combined"],
        dims: ANY,
        build: mesh_raycast,
    },
    Motif {
        name: "mesh_collision",
        domain: Domain::Geometry,
        categories: &["multi_cond", "control_flow", "combined"],
        dims: ANY,
        build: mesh_collision,
    },
    Motif {
        name: "point_region_test",
        domain: Domain::Geometry,
        categories: &["multi_cond", "control_flow"],
        dims: ANY,
        build: point_region_test,
    },
];

/// A ray aimed at `target` (an expression): an origin, and the direction
/// from it to the target plus a per-ray offset of at most `jitter` per
/// component, normalized (a camera looking at the scene, a shadow ray towards
/// a light). Geometry around the target is hit by most rays whatever the
/// origin; a ray in a random direction would miss it nearly always. An
/// offered origin must spread over most of `[-span, span]` (unit vectors
/// as origins would all start inside the geometry).
fn aimed_ray(k: &mut Kernel, rng: &mut Gen, span: f64, target: &str, jitter: f64) -> (Val, Val) {
    let o = k.input_covering(
        rng,
        &["origin", "ray_o", "o", "eye"],
        V3,
        -span,
        span,
        -0.6 * span,
        0.6 * span,
    );
    let j = k.input(
        rng,
        &["jitter", "aim_offset", "pixel_offset"],
        V3,
        -jitter,
        jitter,
    );
    let d = k.local_of(
        rng,
        &["d", "rd", "dir_n"],
        V3,
        &["wp.normalize(", target, " - ", &o.expr, " + ", &j.expr, ")"],
        -1.0,
        1.0,
    );
    (o, d)
}

/// A `look_at` point (a vec3 scalar near the world origin) for [`aimed_ray`].
fn look_at(k: &mut Kernel, rng: &mut Gen, span: f64) -> String {
    k.scalar(rng, &["look_at", "target", "aim"], V3, -span, span)
}

fn ray_sphere_helper(k: &mut Kernel) {
    k.helper(
        "intersect_sphere",
        "@wp.func\ndef intersect_sphere(o: wp.vec3, d: wp.vec3, center: wp.vec3, radius: float, t_max: float):\n    \
         oc = o - center\n    \
         b = wp.dot(oc, d)\n    \
         c = wp.dot(oc, oc) - radius * radius\n    \
         disc = b * b - c\n    \
         t = t_max\n    \
         if disc > 0.0:\n        \
         root = -b - wp.sqrt(wp.max(disc, 0.0))\n        \
         if root > 0.0 and root < t_max:\n            \
         t = root\n    \
         return t",
    );
}

/// Ray against one sphere (a `@wp.struct`): hit distance, point and normal.
/// Rays aim at the sphere's center (offsets of at most 1 per component, less
/// than its radius), so they hit it unless they start inside it or it lies
/// beyond `t_max` (then the depth is `t_max`, which some rays always reach).
fn ray_sphere(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let s = sphere_param(k, rng, &["sphere", "target", "ball"]);
    let (o, d) = aimed_ray(k, rng, 8.0, &format!("{s}.center"), 1.0);
    let t_max = k.scalar(rng, &["t_max", "max_dist", "far"], Ty::F, 4.0, 9.0);
    ray_sphere_helper(k);
    let t = k.local_of(
        rng,
        &["t", "t_hit", "dist"],
        Ty::F,
        &[
            "intersect_sphere(",
            &o.expr,
            ", ",
            &d.expr,
            ", ",
            &s,
            ".center, ",
            &s,
            ".radius, ",
            &t_max,
            ")",
        ],
        0.0,
        9.0,
    );
    if chance(rng, 0.5) {
        let p = k.local_of(
            rng,
            &["hit_p", "p", "hit_point"],
            V3,
            &[&o.expr, " + ", &d.expr, " * ", &t.expr],
            -17.0,
            17.0,
        );
        let n = k.local_of(
            rng,
            &["normal", "n", "hit_n"],
            V3,
            &["wp.normalize(", &p.expr, " - ", &s, ".center)"],
            -1.0,
            1.0,
        );
        k.offer(n, &["normals", "n_out"]);
    }
    k.offer(t, &["depth", "t_out", "hit_t"]);
    true
}

/// Closest of a list of spheres along each ray.
fn ray_sphere_scene(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.can_loop() {
        return false;
    }
    // A cluster of spheres around the origin, fewer ones larger (about the
    // same cross-section in all), and rays aimed at it from all around: most
    // rays hit a sphere, and some reach `t_max` (a miss, or one cut off).
    let ns = *pick(rng, &[4usize, 8, 16, 32]);
    let (rlo, rhi) = match ns {
        4 => (1.0, 2.0),
        8 => (0.7, 1.4),
        16 => (0.5, 1.0),
        _ => (0.35, 0.7),
    };
    let c = k.array(
        rng,
        &["centers", "sphere_pos", "spheres"],
        V3,
        vec![ns],
        Role::In,
        -2.0,
        2.0,
    );
    let r = k.array(
        rng,
        &["radii", "sphere_radius", "radius"],
        Ty::F,
        vec![ns],
        Role::In,
        rlo,
        rhi,
    );
    let aim = look_at(k, rng, 0.5);
    let (o, d) = aimed_ray(k, rng, 6.0, &aim, 1.0);
    let t_max = k.scalar(rng, &["t_max", "max_dist", "far"], Ty::F, 5.0, 7.0);
    ray_sphere_helper(k);
    let best = k.local_of(
        rng,
        &["closest", "t_best", "nearest"],
        Ty::F,
        &["float(", &t_max, ")"],
        0.0,
        7.0,
    );
    let id = if k.int_arrays() && chance(rng, 0.6) {
        Some(k.local(
            rng,
            &["closest_id", "hit_id", "best"],
            Ty::I,
            "int(-1)",
            -1.0,
            (ns - 1) as f64,
        ))
    } else {
        None
    };
    let s = k.fresh(rng, &["s", "sphere", "n"]);
    let count = if chance(rng, 0.5) {
        format!("{c}.shape[0]")
    } else {
        k.size_param(rng, &["num_spheres", "sphere_count", "n_spheres"], ns)
    };
    k.open_of(&["for ", &s, " in range(", &count, "):"]);
    let t = k.local_of(
        rng,
        &["t", "t_s", "hit"],
        Ty::F,
        &[
            "intersect_sphere(",
            &o.expr,
            ", ",
            &d.expr,
            ", ",
            &c,
            "[",
            &s,
            "], ",
            &r,
            "[",
            &s,
            "], ",
            &best.expr,
            ")",
        ],
        0.0,
        7.0,
    );
    k.open_of(&["if ", &t.expr, " < ", &best.expr, ":"]);
    k.line_of(&[&best.expr, " = ", &t.expr]);
    if let Some(id) = &id {
        k.line_of(&[&id.expr, " = ", &s]);
    }
    k.close(false);
    k.close(true);
    if let Some(id) = id {
        k.result(id, &["hit_id", "sphere_id"]);
    }
    k.offer(best, &["hit_t", "depth"]);
    true
}

/// Ray against a plane facing it: hit point, or the origin when it misses.
fn ray_plane(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    // Rays aimed at a point near the plane (the rays from above it reach
    // it) and a plane near the middle of the origins' range.
    let aim = look_at(k, rng, 2.0);
    let (o, d) = aimed_ray(k, rng, 10.0, &aim, 2.0);
    let axis = *pick(rng, &[0usize, 1, 1, 2]);
    let n = [
        "wp.vec3(1.0, 0.0, 0.0)",
        "wp.vec3(0.0, 1.0, 0.0)",
        "wp.vec3(0.0, 0.0, 1.0)",
    ][axis];
    let h = k.scalar(rng, &["plane_d", "offset", "height"], Ty::F, -2.5, 2.5);
    let cos = k.local_of(
        rng,
        &["cos_theta", "facing", "denom"],
        Ty::F,
        &["-wp.dot(", n, ", ", &d.expr, ")"],
        -1.0,
        1.0,
    );
    let dist = k.local_of(
        rng,
        &["dist", "s", "height_above"],
        Ty::F,
        &["wp.dot(", n, ", ", &o.expr, ") - ", &h],
        -15.0,
        15.0,
    );
    let hit = k.local_of(
        rng,
        &["hit_p", "p", "hit_point"],
        V3,
        &["wp.vec3(", &o.expr, ")"],
        -1.0e5,
        1.0e5,
    );
    let t = k.local(
        rng,
        &["t", "t_hit", "travel"],
        Ty::F,
        "float(-1.0)",
        -1.0,
        1.0e5,
    );
    if chance(rng, 0.5) {
        k.open_of(&["if ", &cos.expr, " > 1.0e-04 and ", &dist.expr, " > 0.0:"]);
    } else {
        k.open_of(&["if ", &cos.expr, " > 1.0e-04:"]);
    }
    k.line_of(&[
        &t.expr,
        " = ",
        &dist.expr,
        " / wp.max(",
        &cos.expr,
        ", 1.0e-04)",
    ]);
    k.line_of(&[&hit.expr, " = ", &o.expr, " + ", &d.expr, " * ", &t.expr]);
    k.close(false);
    k.offer(hit, &["hit_points", "hit_p_out"]);
    k.offer(t, &["hit_t", "t_out"]);
    true
}

fn moller_trumbore_helper(k: &mut Kernel) {
    k.helper(
        "intersect_triangle",
        "@wp.func\ndef intersect_triangle(o: wp.vec3, d: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):\n    \
         e1 = b - a\n    \
         e2 = c - a\n    \
         pvec = wp.cross(d, e2)\n    \
         det = wp.dot(e1, pvec)\n    \
         inv_det = wp.sign(det) / wp.max(wp.abs(det), 1.0e-08)\n    \
         tvec = o - a\n    \
         u = wp.dot(tvec, pvec) * inv_det\n    \
         qvec = wp.cross(tvec, e1)\n    \
         v = wp.dot(d, qvec) * inv_det\n    \
         result = wp.vec3(-1.0, 0.0, 0.0)\n    \
         if wp.abs(det) > 1.0e-08 and u >= 0.0 and v >= 0.0 and u + v <= 1.0:\n        \
         result = wp.vec3(wp.dot(e2, qvec) * inv_det, u, v)\n    \
         return result",
    );
}

/// Moller-Trumbore against each thread's own triangle.
fn ray_triangle(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::V(2)) {
        return false;
    }
    let a = k.input(rng, &["a", "v0", "tri_a"], V3, -5.0, 5.0);
    let b = k.input(rng, &["b", "v1", "tri_b"], V3, -5.0, 5.0);
    let c = k.input(rng, &["c", "v2", "tri_c"], V3, -5.0, 5.0);
    // Rays towards the triangle's centroid, offset by at most 0.5 per
    // component: most hit it (a random direction almost never would).
    let m = k.local_of(
        rng,
        &["centroid", "mid", "tri_center"],
        V3,
        &["(", &a.expr, " + ", &b.expr, " + ", &c.expr, ") / 3.0"],
        -5.0,
        5.0,
    );
    let (o, d) = aimed_ray(k, rng, 5.0, &m.expr, 0.5);
    moller_trumbore_helper(k);
    let r = k.local_of(
        rng,
        &["hit", "tuv", "isect"],
        V3,
        &[
            "intersect_triangle(",
            &o.expr,
            ", ",
            &d.expr,
            ", ",
            &a.expr,
            ", ",
            &b.expr,
            ", ",
            &c.expr,
            ")",
        ],
        -1.0e9,
        1.0e9,
    );
    let t = k.local_of(
        rng,
        &["t", "t_hit", "dist"],
        Ty::F,
        &[&r.expr, "[0]"],
        -1.0e9,
        1.0e9,
    );
    let uv = k.local_fmt(
        rng,
        &["uv", "bary", "st"],
        Ty::V(2),
        format_args!("wp.vec2({r}[1], {r}[2])", r = r.expr),
        -1.0e9,
        1.0e9,
    );
    k.offer(t, &["hit_t", "t_out"]);
    k.offer(uv, &["hit_uv", "bary_out"]);
    true
}

/// Closest hit over an indexed triangle list.
fn ray_triangle_list(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.allows(Ty::V(2)) || !k.can_loop() || !k.int_arrays() {
        return false;
    }
    // At least half as many triangles as vertices (most vertices belong to
    // a triangle), and rays aimed at the middle of the mesh.
    let nv = *pick(rng, &[16usize, 32]);
    let nt = *pick(rng, &[16usize, 32]);
    let verts = k.array(
        rng,
        &["vertices", "points", "verts"],
        V3,
        vec![nv],
        Role::In,
        -3.0,
        3.0,
    );
    let tris = k.array(
        rng,
        &["tri_indices", "faces", "indices"],
        Ty::I,
        vec![nt, 3],
        Role::In,
        0.0,
        (nv - 1) as f64,
    );
    let ntris = k.size_param(rng, &["num_tris", "num_faces", "tri_count"], nt);
    let aim = look_at(k, rng, 0.5);
    let (o, d) = aimed_ray(k, rng, 5.0, &aim, 0.5);
    moller_trumbore_helper(k);
    let best = k.local(
        rng,
        &["best", "t_min", "closest"],
        Ty::F,
        "float(1.0e10)",
        0.0,
        1.0e10,
    );
    let uv = k.local(
        rng,
        &["uv", "bary", "hit_uv"],
        Ty::V(2),
        "wp.vec2()",
        -1.0e9,
        1.0e9,
    );
    let f = k.fresh(rng, &["f", "face", "tri"]);
    k.open_of(&["for ", &f, " in range(", &ntris, "):"]);
    let r = k.local_of(
        rng,
        &["r", "isect", "tuv"],
        V3,
        &[
            "intersect_triangle(",
            &o.expr,
            ", ",
            &d.expr,
            ", ",
            &verts,
            "[",
            &tris,
            "[",
            &f,
            ", 0]], ",
            &verts,
            "[",
            &tris,
            "[",
            &f,
            ", 1]], ",
            &verts,
            "[",
            &tris,
            "[",
            &f,
            ", 2]])",
        ],
        -1.0e9,
        1.0e9,
    );
    k.open_fmt(format_args!(
        "if {r}[0] > 0.0 and {r}[0] < {b}:",
        r = r.expr,
        b = best.expr
    ));
    k.line_of(&[&best.expr, " = ", &r.expr, "[0]"]);
    k.line_fmt(format_args!(
        "{} = wp.vec2({r}[1], {r}[2])",
        uv.expr,
        r = r.expr
    ));
    k.close(false);
    k.close(true);
    k.offer(best, &["hit_t", "depth"]);
    k.offer(uv, &["hit_uv", "bary_out"]);
    true
}

/// Slab test of a ray against an axis-aligned box.
fn ray_aabb_slab(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let lo = k.scalar(rng, &["box_lower", "lower", "bmin"], V3, -4.0, -1.0);
    let hi = k.scalar(rng, &["box_upper", "upper", "bmax"], V3, 1.0, 4.0);
    // Rays aimed at the box's center: most enter it.
    let (o, d) = aimed_ray(k, rng, 10.0, &format!("0.5 * ({lo} + {hi})"), 1.0);
    let inv = k.local_fmt(
        rng,
        &["inv_d", "inv_dir", "rcp"],
        V3,
        format_args!(
            "wp.vec3(wp.sign({d}[0]) / wp.max(wp.abs({d}[0]), 1.0e-06), wp.sign({d}[1]) / wp.max(wp.abs({d}[1]), 1.0e-06), wp.sign({d}[2]) / wp.max(wp.abs({d}[2]), 1.0e-06))",
            d = d.expr
        ),
        -1.0e6,
        1.0e6,
    );
    let t0 = k.local_of(
        rng,
        &["t0", "t_lo", "near"],
        V3,
        &["wp.cw_mul(", &lo, " - ", &o.expr, ", ", &inv.expr, ")"],
        -1.0e7,
        1.0e7,
    );
    let t1 = k.local_of(
        rng,
        &["t1", "t_hi", "far"],
        V3,
        &["wp.cw_mul(", &hi, " - ", &o.expr, ", ", &inv.expr, ")"],
        -1.0e7,
        1.0e7,
    );
    let tmin = k.local_of(
        rng,
        &["tmin", "t_near", "slab_min"],
        V3,
        &["wp.min(", &t0.expr, ", ", &t1.expr, ")"],
        -1.0e7,
        1.0e7,
    );
    let tmax = k.local_of(
        rng,
        &["tmax", "t_far", "slab_max"],
        V3,
        &["wp.max(", &t0.expr, ", ", &t1.expr, ")"],
        -1.0e7,
        1.0e7,
    );
    let enter = k.local_fmt(
        rng,
        &["t_enter", "entry", "t_in"],
        Ty::F,
        format_args!("wp.max(wp.max({m}[0], {m}[1]), {m}[2])", m = tmin.expr),
        -1.0e7,
        1.0e7,
    );
    let exit = k.local_fmt(
        rng,
        &["t_exit", "exit_t", "t_out"],
        Ty::F,
        format_args!("wp.min(wp.min({m}[0], {m}[1]), {m}[2])", m = tmax.expr),
        -1.0e7,
        1.0e7,
    );
    let res = k.local(
        rng,
        &["t_hit", "hit_t", "t_box"],
        Ty::F,
        "float(-1.0)",
        -1.0,
        1.0e7,
    );
    k.open_fmt(format_args!(
        "if {e} <= {x} and {x} >= 0.0:",
        e = enter.expr,
        x = exit.expr
    ));
    k.line_of(&[&res.expr, " = wp.max(", &enter.expr, ", 0.0)"]);
    k.close(false);
    k.offer(res, &["box_t", "hit_out", "entry_t"]);
    true
}

/// Boxes overlapping a query box: a flag per box and an atomic count.
fn aabb_overlap(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    // Boxes (center and half extents) scattered around a query box at the
    // origin: about half of them overlap it, so moving one box, growing it
    // or moving the query's faces changes which do. An offered center or
    // half extent is taken only if its range spans most of the scene.
    let c = k.input_covering(
        rng,
        &["center", "box_center", "pos"],
        V3,
        -4.0,
        4.0,
        -3.0,
        3.0,
    );
    let ext = k.input_covering(
        rng,
        &["half_extent", "half_size", "extent"],
        V3,
        0.25,
        3.0,
        0.5,
        2.5,
    );
    let qlo = k.scalar(rng, &["query_lower", "q_min", "region_min"], V3, -2.5, -1.5);
    let qhi = k.scalar(rng, &["query_upper", "q_max", "region_max"], V3, 1.5, 2.5);
    let count = k.array(
        rng,
        &["overlap_count", "num_hits", "count"],
        Ty::I,
        vec![1],
        Role::Accum,
        0.0,
        0.0,
    );
    let lo = k.local_of(
        rng,
        &["lower", "box_min", "bmin"],
        V3,
        &[&c.expr, " - ", &ext.expr],
        -7.0,
        3.75,
    );
    let hi = k.local_of(
        rng,
        &["upper", "box_max", "bmax"],
        V3,
        &[&c.expr, " + ", &ext.expr],
        -3.75,
        7.0,
    );
    let sep = k.local_fmt(
        rng,
        &["separated", "disjoint", "apart"],
        Ty::I,
        format_args!(
            "{l}[0] > {qh}[0] or {h}[0] < {ql}[0] or {l}[1] > {qh}[1] or {h}[1] < {ql}[1] or {l}[2] > {qh}[2] or {h}[2] < {ql}[2]",
            l = lo.expr,
            h = hi.expr,
            ql = qlo,
            qh = qhi
        ),
        0.0,
        1.0,
    );
    let flag = k.local(rng, &["flag", "overlaps", "hit"], Ty::I, "int(0)", 0.0, 1.0);
    k.open_of(&["if not ", &sep.expr, ":"]);
    k.line_of(&[&flag.expr, " = 1"]);
    k.line_of(&["wp.atomic_add(", &count, ", 0, 1)"]);
    k.close(false);
    k.result(flag, &["overlap_flags", "hit_mask"]);
    true
}

/// Bounding box of each triangle of an indexed mesh, with a margin.
fn triangle_bounds(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let (verts, tris, _) = triangle_per_thread(k, rng, &[32, 64, 128, 256]);
    let margin = k.scalar(rng, &["margin", "thickness", "pad"], Ty::F, 0.0, 0.1);
    let a = k.local_of(
        rng,
        &["a", "p0", "va"],
        V3,
        &[&verts, "[", &tris, "[", t, ", 0]]"],
        -5.0,
        5.0,
    );
    let b = k.local_of(
        rng,
        &["b", "p1", "vb"],
        V3,
        &[&verts, "[", &tris, "[", t, ", 1]]"],
        -5.0,
        5.0,
    );
    let c = k.local_of(
        rng,
        &["c", "p2", "vc"],
        V3,
        &[&verts, "[", &tris, "[", t, ", 2]]"],
        -5.0,
        5.0,
    );
    let lo = k.local_of(
        rng,
        &["lower", "bmin", "box_lo"],
        V3,
        &[
            "wp.min(wp.min(",
            &a.expr,
            ", ",
            &b.expr,
            "), ",
            &c.expr,
            ") - wp.vec3(",
            &margin,
            ")",
        ],
        -5.1,
        5.0,
    );
    let hi = k.local_of(
        rng,
        &["upper", "bmax", "box_hi"],
        V3,
        &[
            "wp.max(wp.max(",
            &a.expr,
            ", ",
            &b.expr,
            "), ",
            &c.expr,
            ") + wp.vec3(",
            &margin,
            ")",
        ],
        -5.0,
        5.1,
    );
    k.offer(lo, &["lower_out", "bounds_lower"]);
    k.offer(hi, &["upper_out", "bounds_upper"]);
    true
}

fn closest_point_helper(k: &mut Kernel) {
    k.helper(
        "closest_on_triangle",
        "@wp.func\ndef closest_on_triangle(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):\n    \
         ab = b - a\n    \
         ac = c - a\n    \
         ap = p - a\n    \
         d1 = wp.dot(ab, ap)\n    \
         d2 = wp.dot(ac, ap)\n    \
         if d1 <= 0.0 and d2 <= 0.0:\n        \
         return wp.vec3(1.0, 0.0, 0.0)\n    \
         bp = p - b\n    \
         d3 = wp.dot(ab, bp)\n    \
         d4 = wp.dot(ac, bp)\n    \
         if d3 >= 0.0 and d4 <= d3:\n        \
         return wp.vec3(0.0, 1.0, 0.0)\n    \
         vc = d1 * d4 - d3 * d2\n    \
         if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:\n        \
         v = d1 / wp.max(d1 - d3, 1.0e-08)\n        \
         return wp.vec3(1.0 - v, v, 0.0)\n    \
         cp = p - c\n    \
         d5 = wp.dot(ab, cp)\n    \
         d6 = wp.dot(ac, cp)\n    \
         if d6 >= 0.0 and d5 <= d6:\n        \
         return wp.vec3(0.0, 0.0, 1.0)\n    \
         vb = d5 * d2 - d1 * d6\n    \
         if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:\n        \
         w = d2 / wp.max(d2 - d6, 1.0e-08)\n        \
         return wp.vec3(1.0 - w, 0.0, w)\n    \
         va = d3 * d6 - d5 * d4\n    \
         if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:\n        \
         w = (d4 - d3) / wp.max((d4 - d3) + (d5 - d6), 1.0e-08)\n        \
         return wp.vec3(0.0, 1.0 - w, w)\n    \
         denom = 1.0 / wp.max(va + vb + vc, 1.0e-08)\n    \
         v = vb * denom\n    \
         w = vc * denom\n    \
         return wp.vec3(1.0 - v - w, v, w)",
    );
}

/// Closest point on a triangle (barycentrics by region), and the distance to it.
fn closest_point_triangle(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let p = k.input(rng, &["p", "point", "query"], V3, -5.0, 5.0);
    let a = k.input(rng, &["a", "v0", "tri_a"], V3, -5.0, 5.0);
    let b = k.input(rng, &["b", "v1", "tri_b"], V3, -5.0, 5.0);
    let c = k.input(rng, &["c", "v2", "tri_c"], V3, -5.0, 5.0);
    closest_point_helper(k);
    let w = k.local_of(
        rng,
        &["bary", "w", "weights"],
        V3,
        &[
            "closest_on_triangle(",
            &p.expr,
            ", ",
            &a.expr,
            ", ",
            &b.expr,
            ", ",
            &c.expr,
            ")",
        ],
        -1.0e8,
        1.0e8,
    );
    let q = k.local_fmt(
        rng,
        &["q", "closest", "cp"],
        V3,
        format_args!(
            "{} * {w}[0] + {} * {w}[1] + {} * {w}[2]",
            a.expr,
            b.expr,
            c.expr,
            w = w.expr
        ),
        -1.0e9,
        1.0e9,
    );
    let dist = k.local_of(
        rng,
        &["dist", "distance", "d"],
        Ty::F,
        &["wp.length(", &p.expr, " - ", &q.expr, ")"],
        0.0,
        1.0e10,
    );
    if chance(rng, 0.5) {
        k.offer(w, &["bary_out", "weights_out"]);
    }
    k.offer(dist, &["dist_out", "distance"]);
    true
}

/// Interpolates per-vertex attributes at barycentric coordinates on a face.
fn barycentric_interp(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let nv = *pick(rng, &[32usize, 64, 128]);
    let nf = *pick(rng, &[16usize, 32, 64]);
    let tris = k.array(
        rng,
        &["tri_indices", "faces", "indices"],
        Ty::I,
        vec![nf, 3],
        Role::In,
        0.0,
        (nv - 1) as f64,
    );
    let attr = k.array(
        rng,
        &["vertex_colors", "vertex_uv", "vertex_attr"],
        V3,
        vec![nv],
        Role::In,
        0.0,
        1.0,
    );
    let face = k.array(
        rng,
        &["face_ids", "hit_face", "face"],
        Ty::I,
        k.shape(),
        Role::In,
        0.0,
        (nf - 1) as f64,
    );
    let uv = k.input(rng, &["bary_uv", "uv", "hit_uv"], Ty::V(2), 0.0, 1.0);
    let f = k.local_of(
        rng,
        &["f", "fi", "tri"],
        Ty::I,
        &[&face, "[", t, "]"],
        0.0,
        (nf - 1) as f64,
    );
    let u = k.local_of(
        rng,
        &["u", "b1", "s"],
        Ty::F,
        &["wp.clamp(", &uv.expr, "[0], 0.0, 1.0)"],
        0.0,
        1.0,
    );
    let v = k.local_of(
        rng,
        &["v", "b2", "r"],
        Ty::F,
        &["wp.clamp(", &uv.expr, "[1], 0.0, 1.0 - ", &u.expr, ")"],
        0.0,
        1.0,
    );
    let out = k.local_fmt(
        rng,
        &["value", "color", "interp"],
        V3,
        format_args!(
            "{attr}[{tris}[{f}, 0]] * (1.0 - {u} - {v}) + {attr}[{tris}[{f}, 1]] * {u} + {attr}[{tris}[{f}, 2]] * {v}",
            f = f.expr,
            u = u.expr,
            v = v.expr
        ),
        0.0,
        1.0,
    );
    k.offer(out, &["colors", "interp_out", "shaded"]);
    true
}

/// Area-weighted vertex normals: face normals added to the three corners.
fn vertex_normals_scatter(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) || !k.int_arrays() {
        return false;
    }
    let t = k.tid(0);
    let (verts, tris, nv) = triangle_per_thread(k, rng, &[32, 64, 128, 256]);
    let normals = k.array(
        rng,
        &["normals", "vertex_normals", "n_accum"],
        V3,
        vec![nv],
        Role::Accum,
        0.0,
        0.0,
    );
    let ids: Vec<Val> = (0..3)
        .map(|c| {
            k.local_fmt(
                rng,
                &[
                    ["i0", "ia", "a"][c],
                    ["i1", "ib", "b"][c],
                    ["i2", "ic", "c"][c],
                ],
                Ty::I,
                format_args!("{tris}[{t}, {c}]"),
                0.0,
                (nv - 1) as f64,
            )
        })
        .collect();
    let n = k.local_fmt(
        rng,
        &["n", "face_n", "cross_n"],
        V3,
        format_args!(
            "wp.cross({v}[{b}] - {v}[{a}], {v}[{c}] - {v}[{a}])",
            v = verts,
            a = ids[0].expr,
            b = ids[1].expr,
            c = ids[2].expr
        ),
        -200.0,
        200.0,
    );
    for id in &ids {
        k.line_of(&[
            "wp.atomic_add(",
            &normals,
            ", ",
            &id.expr,
            ", ",
            &n.expr,
            ")",
        ]);
    }
    if chance(rng, 0.5) {
        let area = k.array(
            rng,
            &["total_area", "area", "surface_area"],
            Ty::F,
            vec![1],
            Role::Accum,
            0.0,
            0.0,
        );
        k.line_of(&[
            "wp.atomic_add(",
            &area,
            ", 0, 0.5 * wp.length(",
            &n.expr,
            "))",
        ]);
    }
    true
}

/// Unit normal and area of each thread's triangle.
fn triangle_normal_area(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let a = k.input(rng, &["a", "v0", "p0"], V3, -5.0, 5.0);
    let b = k.input(rng, &["b", "v1", "p1"], V3, -5.0, 5.0);
    let c = k.input(rng, &["c", "v2", "p2"], V3, -5.0, 5.0);
    let n = k.local_fmt(
        rng,
        &["n", "cross_n", "face_normal"],
        V3,
        format_args!(
            "wp.cross({b} - {a}, {c} - {a})",
            a = a.expr,
            b = b.expr,
            c = c.expr
        ),
        -200.0,
        200.0,
    );
    let len = k.local_of(
        rng,
        &["len_n", "twice_area", "n_len"],
        Ty::F,
        &["wp.length(", &n.expr, ")"],
        0.0,
        350.0,
    );
    let unit = k.local_of(
        rng,
        &["normal", "unit_n", "n_hat"],
        V3,
        &[&n.expr, " / (", &len.expr, " + 1.0e-06)"],
        -1.0,
        1.0,
    );
    let area = k.local_of(
        rng,
        &["area", "tri_area", "a_tri"],
        Ty::F,
        &["0.5 * ", &len.expr],
        0.0,
        175.0,
    );
    k.offer(unit, &["normals", "normal_out"]);
    k.offer(area, &["areas", "area_out"]);
    true
}

/// Distance from a point to a segment (a capsule's signed distance).
fn segment_distance(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let p = k.input(rng, &["p", "point", "query"], V3, -5.0, 5.0);
    let a = k.input(rng, &["seg_a", "p0", "start"], V3, -5.0, 5.0);
    let b = k.input(rng, &["seg_b", "p1", "end"], V3, -5.0, 5.0);
    let ab = k.local_of(
        rng,
        &["ab", "seg", "axis"],
        V3,
        &[&b.expr, " - ", &a.expr],
        -10.0,
        10.0,
    );
    let s = k.local_fmt(
        rng,
        &["s", "t_proj", "param"],
        Ty::F,
        format_args!(
            "wp.clamp(wp.dot({p} - {a}, {ab}) / (wp.dot({ab}, {ab}) + 1.0e-08), 0.0, 1.0)",
            p = p.expr,
            a = a.expr,
            ab = ab.expr
        ),
        0.0,
        1.0,
    );
    let q = k.local_of(
        rng,
        &["closest", "q", "foot"],
        V3,
        &[&a.expr, " + ", &ab.expr, " * ", &s.expr],
        -5.0,
        5.0,
    );
    let d = if chance(rng, 0.5) {
        let r = k.scalar(
            rng,
            &["capsule_radius", "radius", "thickness"],
            Ty::F,
            0.05,
            1.0,
        );
        format!("wp.length({} - {}) - {r}", p.expr, q.expr)
    } else {
        format!("wp.length({} - {})", p.expr, q.expr)
    };
    let dist = k.local(rng, &["dist", "sdf", "d"], Ty::F, &d, -1.0, 18.0);
    k.offer(dist, &["dist_out", "sdf_out"]);
    true
}

/// Signed distance and closest point on a `wp.Mesh`.
fn mesh_closest_point(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let mesh = k.mesh_param(rng, &["mesh", "mesh_id", "collider"]);
    // Query points near and far from the mesh (about a unit sphere around
    // the origin): offered unit vectors would all lie on it.
    let p = k.input_covering(rng, &["points", "p", "query"], V3, -3.0, 3.0, -2.0, 2.0);
    let md = k.scalar(
        rng,
        &["max_dist", "query_radius", "cutoff"],
        Ty::F,
        0.2,
        2.0,
    );
    let q = k.local_of(
        rng,
        &["q", "query", "hit"],
        Ty::F,
        &["wp.mesh_query_point(", &mesh, ", ", &p.expr, ", ", &md, ")"],
        0.0,
        0.0,
    );
    let sdf = k.local_of(
        rng,
        &["sdf", "signed_dist", "phi"],
        Ty::F,
        &["float(", &md, ")"],
        -12.0,
        12.0,
    );
    let cp = k.local_of(
        rng,
        &["cp", "closest", "surface_p"],
        V3,
        &["wp.vec3(", &p.expr, ")"],
        -12.0,
        12.0,
    );
    k.open_of(&["if ", &q.expr, ".result:"]);
    k.line_fmt(format_args!(
        "{} = wp.mesh_eval_position({mesh}, {q}.face, {q}.u, {q}.v)",
        cp.expr,
        q = q.expr
    ));
    k.line_of(&[
        &sdf.expr,
        " = wp.length(",
        &cp.expr,
        " - ",
        &p.expr,
        ") * ",
        &q.expr,
        ".sign",
    ]);
    k.close(false);
    k.offer(sdf, &["sdf_out", "distance"]);
    if chance(rng, 0.6) {
        k.offer(cp, &["closest_out", "surface_points"]);
    } else {
        let out = k.output(rng, &["closest_out", "surface_points"], V3);
        let own = k.own();
        k.line_of(&[&out, "[", &own, "] = ", &cp.expr]);
    }
    true
}

/// Ray cast against a `wp.Mesh`: depth and Lambert shading.
fn mesh_raycast(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let mesh = k.mesh_param(rng, &["mesh", "mesh_id", "scene"]);
    // The mesh is about a unit sphere around the origin (what the launch
    // spec's `mesh` stands for): rays aimed at it, offset enough to hit it
    // at all angles (and to miss it now and then), or cut off by `max_t`.
    let aim = look_at(k, rng, 0.25);
    let (o, d) = aimed_ray(k, rng, 3.0, &aim, 1.0);
    let max_t = k.scalar(rng, &["max_t", "t_max", "far"], Ty::F, 2.0, 3.0);
    let q = k.local_of(
        rng,
        &["q", "hit", "query"],
        Ty::F,
        &[
            "wp.mesh_query_ray(",
            &mesh,
            ", ",
            &o.expr,
            ", ",
            &d.expr,
            ", ",
            &max_t,
            ")",
        ],
        0.0,
        0.0,
    );
    let depth = k.local_of(
        rng,
        &["depth", "t", "t_hit"],
        Ty::F,
        &["float(", &max_t, ")"],
        0.0,
        3.0,
    );
    let shade = k.local(
        rng,
        &["shade", "lambert", "ndotl"],
        Ty::F,
        "float(0.0)",
        0.0,
        1.0,
    );
    k.open_of(&["if ", &q.expr, ".result:"]);
    k.line_of(&[&depth.expr, " = ", &q.expr, ".t"]);
    k.line_of(&[
        &shade.expr,
        " = wp.max(-wp.dot(",
        &q.expr,
        ".normal, ",
        &d.expr,
        "), 0.0)",
    ]);
    k.close(false);
    k.offer(depth, &["depth_out", "t_out"]);
    k.offer(shade, &["shading", "shade_out"]);
    true
}

/// Particles pushed out of a `wp.Mesh` along the contact normal, velocity
/// reflected. The normal is the direction from the closest point to the
/// particle, signed by the query (inside or outside), as warp's own
/// particle-mesh contacts take it: the normal of the closest *face* is not
/// a function of the inputs where the closest point lies on an edge or a
/// vertex (the faces around it tie, and which one the BVH walk meets first
/// differs between BVH builds: CPU and GPU disagreed on such particles).
fn mesh_collision(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    let mesh = k.mesh_param(rng, &["mesh", "mesh_id", "collider"]);
    // Particles near the mesh (about a unit sphere around the origin) and a
    // contact distance that a good share of them are within.
    let x = k.input(rng, &["x", "pos", "particle_q"], V3, -1.25, 1.25);
    let v = k.input(rng, &["v", "vel", "particle_qd"], V3, -5.0, 5.0);
    let r = k.scalar(rng, &["radius", "contact_dist", "margin"], Ty::F, 0.2, 0.5);
    let e = k.scalar(rng, &["restitution", "bounce", "e"], Ty::F, 0.0, 1.0);
    let xc = k.local_of(
        rng,
        &["x_c", "x_new", "p"],
        V3,
        &["wp.vec3(", &x.expr, ")"],
        x.lo - 0.5,
        x.hi + 0.5,
    );
    let vc = k.local_of(
        rng,
        &["v_c", "v_new", "vel"],
        V3,
        &["wp.vec3(", &v.expr, ")"],
        -10.0,
        10.0,
    );
    let q = k.local_of(
        rng,
        &["q", "query", "contact"],
        Ty::F,
        &["wp.mesh_query_point(", &mesh, ", ", &x.expr, ", ", &r, ")"],
        0.0,
        0.0,
    );
    k.open_of(&["if ", &q.expr, ".result:"]);
    let cp = k.local_fmt(
        rng,
        &["cp", "closest", "contact_p"],
        V3,
        format_args!(
            "wp.mesh_eval_position({mesh}, {q}.face, {q}.u, {q}.v)",
            q = q.expr
        ),
        -3.0,
        3.0,
    );
    let delta = k.local_of(
        rng,
        &["delta", "offset", "d"],
        V3,
        &[&x.expr, " - ", &cp.expr],
        -5.0,
        5.0,
    );
    let dist = k.local_of(
        rng,
        &["dist", "sdf", "signed_d"],
        Ty::F,
        &["wp.length(", &delta.expr, ") * ", &q.expr, ".sign"],
        -10.0,
        10.0,
    );
    let n = k.local_of(
        rng,
        &["n", "normal", "contact_n"],
        V3,
        &["wp.normalize(", &delta.expr, ") * ", &q.expr, ".sign"],
        -1.0,
        1.0,
    );
    let pen = k.local_of(
        rng,
        &["penetration", "depth", "overlap"],
        Ty::F,
        &[&r, " - ", &dist.expr],
        -10.0,
        11.0,
    );
    let vn = k.local_of(
        rng,
        &["vn", "v_normal", "approach"],
        Ty::F,
        &["wp.dot(", &v.expr, ", ", &n.expr, ")"],
        -10.0,
        10.0,
    );
    k.open_of(&["if ", &pen.expr, " > 0.0 and ", &vn.expr, " < 0.0:"]);
    k.line_of(&[&xc.expr, " = ", &x.expr, " + ", &n.expr, " * ", &pen.expr]);
    k.line_of(&[
        &vc.expr,
        " = ",
        &v.expr,
        " - ",
        &n.expr,
        " * ((1.0 + ",
        &e,
        ") * ",
        &vn.expr,
        ")",
    ]);
    k.close(false);
    k.close(false);
    k.offer(xc, &["x_out", "pos_out"]);
    k.offer(vc, &["v_out", "vel_out"]);
    true
}

/// Classifies a point against a sphere and a slab: a region weight.
fn point_region_test(k: &mut Kernel, rng: &mut Gen) -> bool {
    if !k.allows(V3) {
        return false;
    }
    // Points spread over most of [-5, 5] (an offered value confined near
    // the origin would be inside the sphere and below or above the slab
    // everywhere).
    let p = k.input_covering(rng, &["p", "point", "pos"], V3, -5.0, 5.0, -3.0, 3.0);
    let s = sphere_param(k, rng, &["region", "sphere", "zone"]);
    let h = k.scalar(rng, &["floor", "slab_height", "y_min"], Ty::F, -3.0, 3.0);
    let d = k.local_of(
        rng,
        &["d", "dist", "r_p"],
        Ty::F,
        &["wp.length(", &p.expr, " - ", &s, ".center)"],
        0.0,
        16.0,
    );
    let inside = k.local_of(
        rng,
        &["inside", "in_sphere", "contained"],
        Ty::I,
        &[&d.expr, " < ", &s, ".radius"],
        0.0,
        1.0,
    );
    let w = k.local(
        rng,
        &["weight", "label", "region_w"],
        Ty::F,
        "float(0.0)",
        0.0,
        2.0,
    );
    let axis = *pick(rng, &[0usize, 1, 2]);
    k.open_fmt(format_args!(
        "if {} and {}[{axis}] > {h}:",
        inside.expr, p.expr
    ));
    k.line_of(&[&w.expr, " = 1.0 - ", &d.expr, " / ", &s, ".radius"]);
    k.close(false);
    k.open_of(&["elif ", &inside.expr, ":"]);
    k.line_of(&[&w.expr, " = 0.5"]);
    k.close(false);
    k.open_fmt(format_args!(
        "elif {}[{axis}] > {h} or {} < 2.0 * {s}.radius:",
        p.expr, d.expr
    ));
    k.line_of(&[&w.expr, " = 2.0"]);
    k.close(false);
    k.result(w, &["region_out", "weights", "labels"]);
    true
}

/// Vertices of an indexed triangle mesh (one of `sizes` many) and one
/// triangle (three vertex indices) per thread; also the vertex count.
pub(super) fn triangle_per_thread(
    k: &mut Kernel,
    rng: &mut Gen,
    sizes: &[usize],
) -> (String, String, usize) {
    let nv = *pick(rng, sizes);
    let verts = k.array(
        rng,
        &["vertices", "points", "mesh_points"],
        V3,
        vec![nv],
        Role::In,
        -5.0,
        5.0,
    );
    let tris = k.array(
        rng,
        &["tri_indices", "faces", "indices"],
        Ty::I,
        vec![k.launch.dim[0], 3],
        Role::In,
        0.0,
        (nv - 1) as f64,
    );
    (verts, tris, nv)
}

/// A `@wp.struct Sphere` parameter (center, radius) named from `pool`.
pub(super) fn sphere_param(k: &mut Kernel, rng: &mut Gen, pool: &[&str]) -> String {
    k.struct_param(
        rng,
        "Sphere",
        pool,
        &[("center", V3, -2.0, 2.0), ("radius", Ty::F, 3.0, 8.0)],
    )
}
