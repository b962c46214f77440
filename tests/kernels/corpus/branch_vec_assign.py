import warp as wp


@wp.kernel
def reflect_velocities(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    lower: wp.vec3,
    upper: wp.vec3,
    restitution: float,
):
    tid = wp.tid()
    p = x[tid]
    u = v[tid]
    for d in range(3):
        if p[d] < lower[d]:
            p[d] = lower[d]
            u[d] = -u[d] * restitution
        elif p[d] > upper[d]:
            p[d] = upper[d]
            u[d] = -u[d] * restitution
    if wp.length(u) > 100.0:
        u = wp.normalize(u) * 100.0
    else:
        u = u * 0.999
    x[tid] = p
    v[tid] = u
