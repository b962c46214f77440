import warp as wp


@wp.kernel
def apply_scales(
    a: wp.array(dtype=float),
    g: wp.array2d(dtype=float),
    v: wp.array(dtype=wp.vec3),
    m: wp.array(dtype=wp.mat33),
    s: float,
):
    i = wp.tid()
    a[i] *= s
    a[i] /= 2.0
    a[i] -= 1.0
    g[i, 0] += s
    g[i, 1] -= s
    v[i] += wp.vec3(1.0, 2.0, 3.0)
    v[i] -= wp.vec3(s)
    m[i] += wp.identity(n=3, dtype=float)
