import warp as wp

TILE_M = wp.constant(16)
TILE_N = wp.constant(16)
TILE_K = wp.constant(8)
K_STEPS = 4


@wp.kernel
def tile_gemm(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float32)
    for k in range(K_STEPS):
        ta = wp.tile_load(a, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        tb = wp.tile_load(b, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(ta, tb, acc)
    wp.tile_store(c, acc, offset=(i * TILE_M, j * TILE_N))
