import warp as wp


@wp.kernel
def transform_ops(xs: wp.array(dtype=wp.transform), ps: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), ts: wp.array(dtype=wp.transform)):
    i = wp.tid()
    t = xs[i]
    ident = wp.transform_identity()
    c = wp.transform_multiply(t, ident)
    inv = wp.transform_inverse(c)
    p = wp.transform_point(inv, ps[i])
    v = wp.transform_vector(t, ps[i])
    out[i] = p + v
    ts[i] = wp.transform_multiply(inv, t)


@wp.kernel
def matrix_point(ms: wp.array(dtype=wp.mat44), ps: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.transform_point(ms[i], ps[i]) + wp.transform_vector(ms[i], ps[i])


@wp.kernel
def identity_double(out: wp.array(dtype=wp.transformd)):
    out[0] = wp.transform_identity(dtype=wp.float64)


@wp.kernel
def smooth_and_fast(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.smoothstep(0.0, 1.0, a[i])
    d = wp.div_approx(s, a[i] + 2.0)
    w = wp.div_approx(v[i], 2.0)
    u = wp.div_approx(3.0, v[i])
    n = wp.div_approx(m[i], 4.0)
    out[i] = d + w[0] + u[1] + n[0, 0]
