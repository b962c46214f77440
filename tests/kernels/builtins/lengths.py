import warp as wp


@wp.kernel
def lengths(v: wp.array(dtype=wp.vec3), a: wp.array2d(dtype=float), q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    n = len(v[i])
    m = len(a)
    k = wp.len(wp.mat22())
    p = len(q[i]) + wp.len(v)
    a[0, 0] = float(n + m + k + p)
