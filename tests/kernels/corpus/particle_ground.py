import warp as wp


@wp.kernel
def ground_collide(
    pos: wp.array(dtype=wp.vec3),
    vel: wp.array(dtype=wp.vec3),
    radius: float,
    restitution: float,
    friction: float,
    dt: float,
):
    tid = wp.tid()
    p = pos[tid]
    v = vel[tid]
    depth = p[1] - radius
    if depth < 0.0:
        n = wp.vec3(0.0, 1.0, 0.0)
        vn = wp.dot(v, n)
        vt = v - n * vn
        if vn < 0.0:
            vn = -vn * restitution
        vt_len = wp.length(vt)
        if vt_len > 0.0:
            scale = wp.max(0.0, 1.0 - friction * wp.abs(vn) / vt_len)
            vt = vt * scale
        v = vt + n * vn
        p = wp.vec3(p[0], radius, p[2])
    v = v * (1.0 - 0.01 * dt)
    pos[tid] = p + v * dt
    vel[tid] = v
