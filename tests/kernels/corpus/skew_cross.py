import warp as wp


@wp.kernel
def skew_check(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), err: wp.array(dtype=float)):
    tid = wp.tid()
    S = wp.skew(a[tid])
    c1 = S * b[tid]
    c2 = wp.cross(a[tid], b[tid])
    d = c1 - c2
    err[tid] = wp.length_sq(d)
    S2 = S * S
    err[tid] += wp.abs(wp.trace(S2) + 2.0 * wp.dot(a[tid], a[tid]))
