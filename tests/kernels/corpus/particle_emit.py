import warp as wp


@wp.func
def lcg(seed: wp.uint32) -> wp.uint32:
    return seed * wp.uint32(1664525) + wp.uint32(1013904223)


@wp.func
def to_unit(s: wp.uint32) -> float:
    return float(s >> wp.uint32(8)) / 16777216.0


@wp.kernel(enable_backward=False)
def emit_particles(
    counter: wp.array(dtype=int),
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    life: wp.array(dtype=float),
    origin: wp.vec3,
    speed: float,
    seed: wp.uint32,
    capacity: int,
):
    tid = wp.tid()
    slot = wp.atomic_add(counter, 0, 1)
    if slot >= capacity:
        return
    s = lcg(seed ^ wp.uint32(tid))
    a = to_unit(s)
    s = lcg(s)
    b = to_unit(s)
    s = lcg(s)
    c = to_unit(s)
    theta = 6.2831853 * a
    phi = wp.acos(1.0 - 2.0 * b)
    d = wp.vec3(wp.sin(phi) * wp.cos(theta), wp.cos(phi), wp.sin(phi) * wp.sin(theta))
    x[slot] = origin
    v[slot] = d * speed * (0.5 + 0.5 * c)
    life[slot] = 1.0 + c
