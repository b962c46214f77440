import warp as wp


@wp.kernel
def divergence(u: wp.array2d(dtype=wp.vec2), div: wp.array2d(dtype=float), nx: int, ny: int, inv_dx: float):
    i, j = wp.tid()
    if i == 0 or j == 0 or i == nx - 1 or j == ny - 1:
        div[i, j] = 0.0
        return
    du = u[i + 1, j][0] - u[i - 1, j][0]
    dv = u[i, j + 1][1] - u[i, j - 1][1]
    div[i, j] = 0.5 * (du + dv) * inv_dx


@wp.kernel
def pressure_jacobi(p: wp.array2d(dtype=float), div: wp.array2d(dtype=float), p_out: wp.array2d(dtype=float), nx: int, ny: int, dx: float):
    i, j = wp.tid()
    if i == 0 or j == 0 or i == nx - 1 or j == ny - 1:
        p_out[i, j] = 0.0
        return
    p_out[i, j] = (p[i - 1, j] + p[i + 1, j] + p[i, j - 1] + p[i, j + 1] - div[i, j] * dx * dx) * 0.25


@wp.kernel
def subtract_gradient(u: wp.array2d(dtype=wp.vec2), p: wp.array2d(dtype=float), nx: int, ny: int, inv_dx: float):
    i, j = wp.tid()
    if i == 0 or j == 0 or i == nx - 1 or j == ny - 1:
        return
    g = wp.vec2(p[i + 1, j] - p[i - 1, j], p[i, j + 1] - p[i, j - 1]) * (0.5 * inv_dx)
    u[i, j] = u[i, j] - g
