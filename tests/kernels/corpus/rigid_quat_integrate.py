import warp as wp


@wp.kernel
def integrate_bodies(
    body_q: wp.array(dtype=wp.quat),
    body_p: wp.array(dtype=wp.vec3),
    body_v: wp.array(dtype=wp.vec3),
    body_w: wp.array(dtype=wp.vec3),
    body_f: wp.array(dtype=wp.vec3),
    body_t: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    inv_inertia: wp.array(dtype=wp.mat33),
    gravity: wp.vec3,
    angular_damping: float,
    dt: float,
):
    tid = wp.tid()
    q = body_q[tid]
    p = body_p[tid]
    v = body_v[tid]
    w = body_w[tid]
    m_inv = inv_mass[tid]
    I_inv = inv_inertia[tid]

    # linear part
    v1 = v + (body_f[tid] * m_inv + gravity) * dt
    p1 = p + v1 * dt

    # angular part, torque in body frame
    wb = wp.quat_rotate_inv(q, w)
    tb = wp.quat_rotate_inv(q, body_t[tid])
    wb1 = wb + I_inv * tb * dt
    w1 = wp.quat_rotate(q, wb1)
    w1 = w1 * (1.0 - angular_damping * dt)

    # quaternion derivative
    dq = wp.quat(w1[0], w1[1], w1[2], 0.0) * q * 0.5
    q1 = wp.normalize(q + dq * dt)

    body_q[tid] = q1
    body_p[tid] = p1
    body_v[tid] = v1
    body_w[tid] = w1
