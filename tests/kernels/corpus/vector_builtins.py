import warp as wp


@wp.kernel
def vec_builtins(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    lo = wp.min(x, y)
    hi = wp.max(x, y)
    ab = wp.abs(x - y)
    t = wp.lerp(lo, hi, 0.25)
    c = wp.min(wp.max(x, lo), hi)
    qa = q[i]
    qb = wp.quat_identity()
    qm = wp.lerp(qa, qb, 0.5)
    d = wp.dot(qa, qb)
    n4 = wp.normalize(wp.vec4(x[0], x[1], x[2], 1.0))
    l2 = wp.length(wp.vec2(x[0], y[0]))
    out[i] = ab + t + c + wp.quat_rotate(wp.normalize(qm), x) * d + wp.vec3(n4[3], l2, wp.length_sq(n4))
