import warp as wp


@wp.kernel
def closest_point(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    tid = wp.tid()
    p = points[tid]
    q = wp.mesh_query_point(mesh, p, 10.0)
    if q.result:
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        out[tid] = cp
        dist[tid] = wp.length(cp - p) * q.sign
    q2 = wp.mesh_query_point_no_sign(mesh, p, 10.0)
    q3 = wp.mesh_query_point_sign_normal(mesh, p, 10.0)
    q4 = wp.mesh_query_point_sign_winding_number(mesh, p, 10.0, 2.0)
    q5 = wp.mesh_query_point_sign_parity(mesh, p, 10.0)
    q6 = wp.mesh_query_furthest_point_no_sign(mesh, p, 0.0)
    v = wp.mesh_eval_velocity(mesh, q2.face, q3.u, q4.v)
    dist[tid] += q5.sign + q6.u + v[0]


@wp.kernel
def closest_point_outputs(mesh: wp.handle, points: wp.array(dtype=wp.vec3), faces: wp.array(dtype=int), dist: wp.array(dtype=float)):
    tid = wp.tid()
    p = points[tid]
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    if wp.mesh_query_point(mesh, p, 100.0, sign, face, u, v):
        dist[tid] = wp.length(wp.mesh_eval_position(mesh, face, u, v) - p)
    hit = wp.mesh_query_point_no_sign(mesh, p, 100.0, face, u, v)
    hit2 = wp.mesh_query_point_sign_normal(mesh, p, 100.0, sign, face, u, v, 0.01)
    faces[tid] = face
    if hit and hit2:
        dist[tid] += sign


@wp.kernel
def rays(mesh: wp.uint64, origins: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), t_out: wp.array(dtype=float), n_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    q = wp.mesh_query_ray(mesh, o, d, 1.0e6)
    if q.result:
        t_out[tid] = q.t
        n_out[tid] = q.normal * q.sign
    t = float(0.0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    normal = wp.vec3()
    face = int(0)
    if wp.mesh_query_ray(mesh, o, d, 100.0, t, u, v, sign, normal, face):
        t_out[tid] += t
    any_hit = wp.mesh_query_ray_anyhit(mesh, o, d, 100.0)
    crossings = wp.mesh_query_ray_count_intersections(mesh, o, d)
    if any_hit and crossings % 2 == 1:
        n_out[tid] = wp.mesh_eval_face_normal(mesh, face)


@wp.kernel
def overlaps(mesh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    tid = wp.tid()
    query = wp.mesh_query_aabb(mesh, lowers[tid], uppers[tid])
    face = int(0)
    n = int(0)
    while wp.mesh_query_aabb_next(query, face):
        i = wp.mesh_get_index(mesh, face * 3)
        p = wp.mesh_get_point(mesh, i)
        if p[0] > 0.0:
            n += 1
    for f in wp.mesh_query_aabb(mesh, lowers[tid], uppers[tid]):
        n += f
    sphere = wp.mesh_query_sphere(mesh, lowers[tid], 0.5)
    while wp.mesh_query_next(sphere, face):
        n -= 1
    for f in sphere:
        n += wp.mesh_get_index(mesh, f)
    counts[tid] = n + int(wp.mesh_get_bvh(mesh) > wp.uint64(0)) + wp.mesh_get_group_root(mesh, 0)
    wp.mesh_get_velocity(mesh, 0)
