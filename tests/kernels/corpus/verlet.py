import warp as wp


@wp.kernel
def verlet_step(x: wp.array(dtype=wp.vec3), x_prev: wp.array(dtype=wp.vec3), a: wp.array(dtype=wp.vec3), pinned: wp.array(dtype=wp.uint32), dt: float, damping: float):
    i = wp.tid()
    if pinned[i] != wp.uint32(0):
        return
    cur = x[i]
    prev = x_prev[i]
    nxt = cur + (cur - prev) * (1.0 - damping) + a[i] * (dt * dt)
    x_prev[i] = cur
    x[i] = nxt
