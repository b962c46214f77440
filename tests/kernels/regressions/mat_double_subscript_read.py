import warp as wp


@wp.kernel
def k(m: wp.array(dtype=wp.mat33), out: wp.array(dtype=float)):
    i = wp.tid()
    A = m[i]
    out[i] = A[0][1]
