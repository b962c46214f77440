import warp as wp


@wp.kernel
def accumulate_frames(R: wp.array(dtype=wp.mat33), t: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat), n: int, out_R: wp.array(dtype=wp.mat33), out_t: wp.array(dtype=wp.vec3), out_q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    M = wp.identity(n=3, dtype=float)
    p = wp.vec3()
    r = wp.quat_identity()
    for k in range(n):
        M *= R[k]
        p += t[k]
        r *= q[k]
    M *= 0.5
    M += wp.identity(n=3, dtype=float)
    M -= wp.diag(wp.vec3(0.1))
    M /= 2.0
    p *= 2.0
    p /= 3.0
    p -= wp.vec3(1.0)
    out_R[i] = M
    out_t[i] = p
    out_q[i] = r
