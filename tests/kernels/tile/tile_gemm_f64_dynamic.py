import warp as wp

TM = wp.constant(16)
TN = wp.constant(8)
TK = wp.constant(8)


@wp.kernel
def gemm_dyn(a: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), c: wp.array2d(dtype=wp.float64), k_tiles: int, alpha: wp.float64):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TM, TN), dtype=wp.float64)
    for k in range(k_tiles):
        ta = wp.tile_load(a, shape=(TM, TK), offset=(i * TM, k * TK))
        tb = wp.tile_load(b, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(ta, tb, acc, alpha)
    s = wp.tile_sum(acc)
    wp.tile_store(c, acc, offset=(i * TM, j * TN))
    c[i, j] = s[0]
