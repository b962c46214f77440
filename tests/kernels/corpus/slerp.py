import warp as wp


@wp.func
def quat_slerp(a: wp.quat, b: wp.quat, t: float) -> wp.quat:
    d = wp.dot(a, b)
    bb = b
    if d < 0.0:
        bb = -b
        d = -d
    if d > 0.9995:
        return wp.normalize(a + (bb - a) * t)
    theta0 = wp.acos(d)
    theta = theta0 * t
    s0 = wp.cos(theta) - d * wp.sin(theta) / wp.sin(theta0)
    s1 = wp.sin(theta) / wp.sin(theta0)
    return a * s0 + bb * s1


@wp.kernel
def interpolate_poses(q0: wp.array(dtype=wp.quat), q1: wp.array(dtype=wp.quat), p0: wp.array(dtype=wp.vec3), p1: wp.array(dtype=wp.vec3), t: float, q_out: wp.array(dtype=wp.quat), p_out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q_out[i] = quat_slerp(q0[i], q1[i], t)
    p_out[i] = wp.lerp(p0[i], p1[i], t)
