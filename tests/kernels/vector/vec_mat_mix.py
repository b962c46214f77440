import warp as wp


@wp.kernel
def k6(p: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), out: wp.array(dtype=float), s: wp.vec3, q: wp.quat):
    i = wp.tid()
    a = p[i]
    b = wp.vec3(1.0, 2.0, 3.0)
    c = a + b * 2.0
    d = wp.dot(c, s) + wp.length(wp.cross(a, b))
    e = m[i] * c
    f = a[0] + a.y + e[2]
    g = wp.normalize(c)
    M = wp.mat33(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    h = wp.transpose(M) * m[i]
    t = h[1, 2] + wp.determinant(h) + wp.trace(M)
    r = M[0]
    v2 = wp.vec2(f, t)
    v2 += wp.vec2(1.0, 1.0)
    c[1] = 5.0
    c.x += 1.0
    ii = wp.identity(n=3, dtype=float)
    z = wp.vec3()
    out[i] = d + f + g[1] + t + r[0] + v2[0] + c[1] + ii[0, 0] + z[0] - wp.length_sq(a)
    p[i] = -a / 2.0
