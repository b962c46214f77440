import warp as wp


@wp.func
def quat_twist_angle(q: wp.quat, axis: wp.vec3) -> float:
    v = wp.vec3(q[0], q[1], q[2])
    p = axis * wp.dot(v, axis)
    t = wp.normalize(wp.quat(p[0], p[1], p[2], q[3]))
    return 2.0 * wp.acos(wp.clamp(t[3], -1.0, 1.0))


@wp.kernel
def spin_bodies(
    rot: wp.array(dtype=wp.quat),
    axis: wp.array(dtype=wp.vec3),
    omega: wp.array(dtype=float),
    angles: wp.array(dtype=float),
    dt: float,
):
    tid = wp.tid()
    a = wp.normalize(axis[tid])
    dq = wp.quat_from_axis_angle(a, omega[tid] * dt)
    q = rot[tid]
    q = dq * q
    qi = wp.quat_inverse(q)
    back = wp.quat_rotate(qi, wp.quat_rotate(q, a))
    angles[tid] = quat_twist_angle(q, a) + wp.length(back - a)
    rot[tid] = wp.normalize(q)
