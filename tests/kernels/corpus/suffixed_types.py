import warp as wp


@wp.kernel
def suffixed(
    a: wp.array(dtype=wp.vec3f),
    b: wp.array(dtype=wp.vec2d),
    c: wp.array(dtype=wp.mat22d),
    d: wp.array(dtype=wp.vec4i),
    e: wp.array(dtype=wp.mat44f),
    f: wp.array(dtype=wp.float32),
    g: wp.array(dtype=wp.vec4d),
    s: wp.float32,
    k: wp.int32,
    u: wp.uint32,
    flag: bool,
):
    i = wp.tid()
    v = a[i] * s
    w = c[i] * b[i] + wp.vec2d(wp.float64(1.0), wp.float64(2.0))
    iv = d[i] + wp.vec4i(k, k, k, k)
    m = e[i] * wp.identity(n=4, dtype=wp.float32)
    I2 = wp.identity(n=2, dtype=wp.float64)
    w = I2 * w
    gg = wp.normalize(g[i]) * wp.float64(2.0)
    tot = v[0] + float(w[1]) + float(iv[2]) + m[3, 3] + float(gg[3]) + float(u)
    if flag:
        tot = -tot
    f[i] = tot
