import warp as wp


@wp.func
def barycentric(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec3:
    v0 = b - a
    v1 = c - a
    v2 = p - a
    d00 = wp.dot(v0, v0)
    d01 = wp.dot(v0, v1)
    d11 = wp.dot(v1, v1)
    d20 = wp.dot(v2, v0)
    d21 = wp.dot(v2, v1)
    denom = d00 * d11 - d01 * d01
    v = (d11 * d20 - d01 * d21) / denom
    w = (d00 * d21 - d01 * d20) / denom
    u = 1.0 - v - w
    return wp.vec3(u, v, w)


@wp.kernel
def project_points(
    queries: wp.array(dtype=wp.vec3),
    tri: wp.array(dtype=wp.vec3),
    weights: wp.array(dtype=wp.vec3),
    inside: wp.array(dtype=int),
):
    tid = wp.tid()
    a = tri[0]
    b = tri[1]
    c = tri[2]
    p = queries[tid]
    n = wp.normalize(wp.cross(b - a, c - a))
    # project onto plane
    d = wp.dot(p - a, n)
    q = p - n * d
    bc = barycentric(q, a, b, c)
    weights[tid] = bc
    if bc[0] >= 0.0 and bc[1] >= 0.0 and bc[2] >= 0.0:
        inside[tid] = 1
    else:
        inside[tid] = 0
