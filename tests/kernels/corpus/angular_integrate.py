import warp as wp


@wp.kernel
def integrate_rotation(q: wp.array(dtype=wp.quat), omega: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    r = q[i]
    w = omega[i]
    # dq/dt = 0.5 * (w, 0) * q
    dq = wp.quat(w, 0.0) * r * 0.5
    r = wp.normalize(r + dq * dt)
    q[i] = r
