import warp as wp


@wp.kernel
def matrix_ops(
    A: wp.array(dtype=wp.mat33),
    b: wp.array(dtype=wp.vec3),
    x: wp.array(dtype=wp.vec3),
    det_out: wp.array(dtype=float),
    tr_out: wp.array(dtype=float),
    M_out: wp.array(dtype=wp.mat33),
):
    tid = wp.tid()
    m = A[tid]
    d = wp.determinant(m)
    det_out[tid] = d
    tr_out[tid] = wp.trace(m)
    if wp.abs(d) < 1.0e-6:
        x[tid] = wp.vec3(0.0)
        return
    minv = wp.inverse(m)
    x[tid] = minv * b[tid]
    sym = 0.5 * (m + wp.transpose(m))
    o = wp.outer(b[tid], b[tid])
    D = wp.diag(wp.vec3(1.0, 2.0, 3.0))
    M_out[tid] = sym * D + o - m * minv
