import warp as wp


@wp.kernel
def k7(p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), q: wp.quat, k: int):
    i = wp.tid()
    c = p[i]
    c[1] += 2.0
    c[k] -= 1.0
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    m[0, 1] = 7.0
    m[1] = wp.vec2(0.5, 0.5)
    m[1, 0] *= 3.0
    r = wp.quat_rotate(q, c)
    qi = wp.quat_identity()
    v = wp.vec3(1.0)
    wp.atomic_add(out, i, r + v + wp.quat_rotate(qi, c) * m[0, 1])
    out[i] += c
    x = p[i].x
    out[i] = wp.vec3(x, 0.0, float(k))
