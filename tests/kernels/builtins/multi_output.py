import warp as wp


@wp.kernel
def multi_output(m: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat), out: wp.array(dtype=wp.vec3), m2: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    U = wp.mat33()
    s = wp.vec3()
    V = wp.mat33()
    wp.svd3(m[i], U, s, V)
    U2, s2, V2 = wp.svd3(m[i])
    axis, angle = wp.quat_to_axis_angle(q[i])
    a = wp.vec3()
    t = float(0.0)
    wp.quat_to_axis_angle(q[i], a, t)
    u, sig, v = wp.svd2(m2[i])
    out[i] = s + s2 + axis * angle + a * t + wp.vec3(sig[0], sig[1], 0.0)
    m[i] = U * V + U2 * V2
