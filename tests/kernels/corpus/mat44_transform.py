import warp as wp


@wp.kernel
def transform_points(
    points: wp.array(dtype=wp.vec3),
    xform: wp.mat44,
    out: wp.array(dtype=wp.vec3),
    w_out: wp.array(dtype=float),
):
    tid = wp.tid()
    p = points[tid]
    h = xform * wp.vec4(p[0], p[1], p[2], 1.0)
    w = h[3]
    if w == 0.0:
        w = 1.0
    out[tid] = wp.vec3(h[0] / w, h[1] / w, h[2] / w)
    w_out[tid] = w


@wp.kernel
def compose(a: wp.array(dtype=wp.mat44), b: wp.array(dtype=wp.mat44), c: wp.array(dtype=wp.mat44)):
    tid = wp.tid()
    m = a[tid] * b[tid]
    inv = wp.inverse(m)
    d = wp.determinant(m)
    c[tid] = wp.transpose(inv) * d + wp.identity(n=4, dtype=float) * wp.trace(m)
