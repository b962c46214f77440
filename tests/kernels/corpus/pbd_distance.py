import warp as wp


@wp.kernel
def solve_distance_constraints(
    x: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    edges: wp.array(dtype=wp.vec2i),
    rest: wp.array(dtype=float),
    compliance: float,
    dt: float,
    lambdas: wp.array(dtype=float),
    deltas: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    e = edges[tid]
    i = e[0]
    j = e[1]
    wi = inv_mass[i]
    wj = inv_mass[j]
    w = wi + wj
    if w == 0.0:
        return
    d = x[i] - x[j]
    l = wp.length(d)
    if l < 1.0e-9:
        return
    n = d / l
    C = l - rest[tid]
    alpha = compliance / (dt * dt)
    dlambda = (-C - alpha * lambdas[tid]) / (w + alpha)
    lambdas[tid] = lambdas[tid] + dlambda
    wp.atomic_add(deltas, i, n * (dlambda * wi))
    wp.atomic_sub(deltas, j, n * (dlambda * wj))
