import warp as wp


@wp.kernel
def jacobi_iter(u: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), u_new: wp.array2d(dtype=wp.float64), alpha: wp.float64, n: int, residual: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    if i == 0 or j == 0 or i >= n - 1 or j >= n - 1:
        u_new[i, j] = wp.float64(0.0)
        return
    s = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
    denom = wp.float64(1.0) + wp.float64(4.0) * alpha
    val = (b[i, j] + alpha * s) / denom
    u_new[i, j] = val
    r = val - u[i, j]
    wp.atomic_add(residual, 0, r * r)
    wp.atomic_max(residual, 1, wp.abs(r))
