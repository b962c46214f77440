import warp as wp

# Mesh queries on a wp.Mesh id: closest point / signed distance, ray casts, surface sampling.


@wp.kernel
def mesh_signed_distance(
    mesh: wp.uint64,
    points: wp.array(dtype=wp.vec3),
    max_dist: float,
    sdf: wp.array(dtype=float),
    closest: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = points[tid]
    d = max_dist
    cp = p
    q = wp.mesh_query_point(mesh, p, max_dist)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        d = wp.length(cp - p) * q.sign
    sdf[tid] = d
    closest[tid] = cp


@wp.kernel
def mesh_raycast(
    mesh: wp.uint64,
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    max_t: float,
    depth: wp.array(dtype=float),
    shading: wp.array(dtype=float),
):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    t = max_t
    lambert = float(0.0)
    q = wp.mesh_query_ray(mesh, o, d, max_t)
    if q.result:
        t = q.t
        lambert = wp.max(-wp.dot(q.normal, d), 0.0)
    depth[tid] = t
    shading[tid] = lambert


@wp.kernel
def mesh_particle_collision(
    mesh: wp.uint64,
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    radius: float,
    restitution: float,
):
    tid = wp.tid()
    p = x[tid]
    vel = v[tid]
    q = wp.mesh_query_point_no_sign(mesh, p, radius)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        delta = p - cp
        dist = wp.length(delta)
        n = wp.mesh_eval_face_normal(mesh, q.face)
        penetration = radius - dist
        if penetration > 0.0:
            p = p + n * penetration
            vn = wp.dot(vel, n)
            if vn < 0.0:
                vel = vel - n * ((1.0 + restitution) * vn)
    x[tid] = p
    v[tid] = vel


@wp.kernel
def mesh_inside_count(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), inside: wp.array(dtype=int)):
    tid = wp.tid()
    q = wp.mesh_query_point_sign_winding_number(mesh, points[tid], 10.0)
    if q.result and q.sign < 0.0:
        wp.atomic_add(inside, 0, 1)
