import warp as wp


@wp.kernel
def apply_wind(v: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.vec3), t: float, dt: float):
    i = wp.tid()
    v[i] = v[i] + wind_at(x[i], t) * dt


@wp.func
def wind_at(p: wp.vec3, t: float) -> wp.vec3:
    s = wp.sin(p[0] * 0.3 + t) * wp.cos(p[2] * 0.2 - t * 0.5)
    return wp.vec3(1.0 + 0.5 * s, 0.0, 0.25 * s)
