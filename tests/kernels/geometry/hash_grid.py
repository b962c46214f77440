import warp as wp


@wp.kernel
def neighbors_loop(grid: wp.uint64, points: wp.array(dtype=wp.vec3), radius: float, out: wp.array(dtype=float)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    x = points[i]
    total = float(0.0)
    count = int(0)
    neighbors = wp.hash_grid_query(grid, x, radius * 2.0)
    for index in neighbors:
        if index == i:
            continue
        d = wp.length(points[index] - x)
        if d < radius:
            total += d
            count += 1
    out[i] = total / float(wp.max(count, 1))


@wp.kernel
def neighbors_direct(grid: wp.uint64, points: wp.array(dtype=wp.vec3), group: int, out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    x = points[tid]
    f = wp.vec3()
    for j in wp.hash_grid_query(grid, x, 0.5, group):
        f += points[j] - x
    out[tid] = f


@wp.kernel
def neighbors_next(grid: wp.uint64, points: wp.array(dtype=wp.vec3d), counts: wp.array(dtype=int)):
    tid = wp.tid()
    query = wp.hash_grid_query(grid, points[tid], wp.float64(0.25))
    index = int(0)
    n = int(0)
    while wp.hash_grid_query_next(query, index):
        n += index
    counts[tid] = n
