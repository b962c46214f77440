import warp as wp


@wp.kernel(enable_backward=False)
def wave_step(
    h_prev: wp.array2d(dtype=float),
    h_cur: wp.array2d(dtype=float),
    h_next: wp.array2d(dtype=float),
    c: float,
    dt: float,
    dx: float,
    damping: float,
    nx: int,
    ny: int,
):
    i, j = wp.tid()
    il = wp.max(i - 1, 0)
    ir = wp.min(i + 1, nx - 1)
    jl = wp.max(j - 1, 0)
    jr = wp.min(j + 1, ny - 1)
    lap = (h_cur[il, j] + h_cur[ir, j] + h_cur[i, jl] + h_cur[i, jr] - 4.0 * h_cur[i, j]) / (dx * dx)
    k = c * c * dt * dt
    h = 2.0 * h_cur[i, j] - h_prev[i, j] + k * lap
    h_next[i, j] = h * (1.0 - damping)
