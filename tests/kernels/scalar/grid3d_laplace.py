import warp as wp


@wp.kernel
def laplace3d(u: wp.array3d(dtype=float), out: wp.array(dtype=float, ndim=3), n: int, h: float):
    i, j, k = wp.tid()
    if i == 0 or j == 0 or k == 0 or i >= n - 1 or j >= n - 1 or k >= n - 1:
        return
    c = u[i, j, k]
    s = u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k] + u[i, j, k - 1] + u[i, j, k + 1]
    out[i, j, k] = (s - 6.0 * c) / (h * h)
