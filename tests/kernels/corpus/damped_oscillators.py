import warp as wp


@wp.func
def osc_accel(x: float, v: float, omega: float, zeta: float) -> float:
    return -2.0 * zeta * omega * v - omega * omega * x


@wp.kernel
def rk4_step(x: wp.array(dtype=float), v: wp.array(dtype=float), omega: wp.array(dtype=float), zeta: float, dt: float):
    i = wp.tid()
    w = omega[i]
    x0 = x[i]
    v0 = v[i]
    k1x = v0
    k1v = osc_accel(x0, v0, w, zeta)
    k2x = v0 + 0.5 * dt * k1v
    k2v = osc_accel(x0 + 0.5 * dt * k1x, v0 + 0.5 * dt * k1v, w, zeta)
    k3x = v0 + 0.5 * dt * k2v
    k3v = osc_accel(x0 + 0.5 * dt * k2x, v0 + 0.5 * dt * k2v, w, zeta)
    k4x = v0 + dt * k3v
    k4v = osc_accel(x0 + dt * k3x, v0 + dt * k3v, w, zeta)
    x[i] = x0 + dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
    v[i] = v0 + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
