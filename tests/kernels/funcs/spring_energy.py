import warp as wp


@wp.func
def spring_force(x: float, rest: float, k: float) -> float:
    return -k * (x - rest)


@wp.func
def damp(v: float, c: float) -> float:
    return -c * v


@wp.func
def total_force(x: float, v: float, rest: float, k: float, c: float) -> float:
    return spring_force(x, rest, k) + damp(v, c)


@wp.kernel
def spring_step(x: wp.array(dtype=float), v: wp.array(dtype=float), rest: float, k: float, c: float, dt: float):
    i = wp.tid()
    f = total_force(x[i], v[i], rest, k, c)
    v[i] = v[i] + f * dt
    x[i] = x[i] + v[i] * dt


@wp.kernel(enable_backward=False)
def spring_energy(x: wp.array(dtype=float), e: wp.array(dtype=float), rest: float, k: float):
    i = wp.tid()
    d = x[i] - rest
    wp.atomic_add(e, 0, 0.5 * k * d * d + spring_force(x[i], rest, k) * 0.0)
