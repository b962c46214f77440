import warp as wp


@wp.func
def clamp_length(v: wp.vec3, max_len: float) -> wp.vec3:
    l = wp.length(v)
    if l > max_len:
        v = v * (max_len / l)
    return v


@wp.func
def zero_y(p: wp.vec3) -> wp.vec3:
    p[1] = 0.0
    return p


@wp.kernel
def substep(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float, substeps: int, vmax: float):
    i = wp.tid()
    dt = dt / float(substeps)
    p = x[i]
    u = v[i]
    for _s in range(substeps):
        u = clamp_length(u + wp.vec3(0.0, -9.8, 0.0) * dt, vmax)
        p = p + u * dt
        if p[1] < 0.0:
            p = zero_y(p)
            u = zero_y(u)
    x[i] = p
    v[i] = u
