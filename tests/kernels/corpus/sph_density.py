import warp as wp


@wp.func
def poly6(r2: float, h: float) -> float:
    h2 = h * h
    if r2 >= h2:
        return 0.0
    d = h2 - r2
    return 315.0 / (64.0 * 3.14159265 * wp.pow(h, 9.0)) * d * d * d


@wp.kernel
def compute_density(
    x: wp.array(dtype=wp.vec3),
    cell_start: wp.array(dtype=int),
    cell_count: wp.array(dtype=int),
    sorted_ids: wp.array(dtype=int),
    density: wp.array(dtype=float),
    mass: float,
    h: float,
    max_neighbors: int,
):
    i = wp.tid()
    xi = x[i]
    rho = float(0.0)
    start = cell_start[i]
    count = cell_count[i]
    k = int(0)
    found = int(0)
    while k < count:
        j = sorted_ids[start + k]
        k += 1
        if j == i:
            continue
        r = xi - x[j]
        r2 = wp.dot(r, r)
        if r2 > h * h:
            continue
        rho += mass * poly6(r2, h)
        found += 1
        if found >= max_neighbors:
            break
    density[i] = rho + mass * poly6(0.0, h)
