import warp as wp


@wp.kernel
def diffuse(
    u0: wp.array2d(dtype=float),
    u1: wp.array2d(dtype=float),
    nx: int,
    ny: int,
    alpha: float,
    dt: float,
):
    i, j = wp.tid()
    if i == 0 or j == 0 or i == nx - 1 or j == ny - 1:
        u1[i, j] = u0[i, j]
        return
    c = u0[i, j]
    lap = u0[i - 1, j] + u0[i + 1, j] + u0[i, j - 1] + u0[i, j + 1] - 4.0 * c
    u1[i, j] = c + alpha * dt * lap
