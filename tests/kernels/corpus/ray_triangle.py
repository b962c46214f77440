import warp as wp


@wp.func
def moller_trumbore(o: wp.vec3, d: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec4:
    e1 = b - a
    e2 = c - a
    pv = wp.cross(d, e2)
    det = wp.dot(e1, pv)
    miss = wp.vec4(-1.0, 0.0, 0.0, 0.0)
    if wp.abs(det) < 1.0e-8:
        return miss
    inv_det = 1.0 / det
    tv = o - a
    u = wp.dot(tv, pv) * inv_det
    if u < 0.0 or u > 1.0:
        return miss
    qv = wp.cross(tv, e1)
    v = wp.dot(d, qv) * inv_det
    if v < 0.0 or u + v > 1.0:
        return miss
    t = wp.dot(e2, qv) * inv_det
    return wp.vec4(t, u, v, 1.0 - u - v)


@wp.kernel
def intersect_all(
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    verts: wp.array(dtype=wp.vec3),
    faces: wp.array(dtype=wp.vec3i),
    num_faces: int,
    hit_t: wp.array(dtype=float),
    hit_face: wp.array(dtype=int),
    hit_bary: wp.array(dtype=wp.vec3),
):
    r = wp.tid()
    o = origins[r]
    d = dirs[r]
    best_t = float(1.0e20)
    best_f = int(-1)
    best_b = wp.vec3()
    for f in range(num_faces):
        tri = faces[f]
        h = moller_trumbore(o, d, verts[tri[0]], verts[tri[1]], verts[tri[2]])
        if h[0] > 0.0 and h[0] < best_t:
            best_t = h[0]
            best_f = f
            best_b = wp.vec3(h[3], h[1], h[2])
    hit_t[r] = best_t
    hit_face[r] = best_f
    hit_bary[r] = best_b
