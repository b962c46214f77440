import warp as wp


@wp.kernel
def integrate_1d(
    pos: wp.array(dtype=float),
    vel: wp.array(dtype=float),
    force: wp.array(dtype=float),
    inv_mass: wp.array(dtype=float),
    gravity: float,
    dt: float,
):
    i = wp.tid()
    v = vel[i] + (force[i] * inv_mass[i] + gravity) * dt
    # simple damping
    v = v * 0.999
    vel[i] = v
    pos[i] = pos[i] + v * dt
