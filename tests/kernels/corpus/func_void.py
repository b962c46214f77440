import warp as wp


@wp.func
def deposit(grid: wp.array2d(dtype=float), p: wp.vec2, value: float, n: int):
    i = int(p[0])
    j = int(p[1])
    if i < 0 or j < 0 or i >= n - 1 or j >= n - 1:
        return
    fx = p[0] - float(i)
    fy = p[1] - float(j)
    wp.atomic_add(grid, i, j, value * (1.0 - fx) * (1.0 - fy))
    wp.atomic_add(grid, i + 1, j, value * fx * (1.0 - fy))
    wp.atomic_add(grid, i, j + 1, value * (1.0 - fx) * fy)
    wp.atomic_add(grid, i + 1, j + 1, value * fx * fy)


@wp.kernel
def splat(points: wp.array(dtype=wp.vec2), mass: wp.array(dtype=float), grid: wp.array2d(dtype=float), dx: float, n: int):
    tid = wp.tid()
    deposit(grid, points[tid] / dx, mass[tid], n)
