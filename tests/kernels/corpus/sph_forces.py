import warp as wp


@wp.func
def spiky_grad(r: wp.vec3, h: float) -> wp.vec3:
    l = wp.length(r)
    if l <= 0.0 or l >= h:
        return wp.vec3(0.0, 0.0, 0.0)
    d = h - l
    c = -45.0 / (3.14159265 * h * h * h * h * h * h)
    return r * (c * d * d / l)


@wp.kernel
def pressure_force(
    x: wp.array(dtype=wp.vec3),
    rho: wp.array(dtype=float),
    neighbors: wp.array2d(dtype=int),
    num_neighbors: wp.array(dtype=int),
    force: wp.array(dtype=wp.vec3),
    mass: float,
    stiffness: float,
    rest_density: float,
    h: float,
):
    i = wp.tid()
    pi = stiffness * (rho[i] - rest_density)
    f = wp.vec3()
    n = num_neighbors[i]
    for k in range(n):
        j = neighbors[i, k]
        if j < 0:
            break
        pj = stiffness * (rho[j] - rest_density)
        grad = spiky_grad(x[i] - x[j], h)
        f -= grad * (mass * (pi + pj) / (2.0 * rho[j]))
    force[i] = f
