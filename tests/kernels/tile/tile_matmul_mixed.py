import warp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)
TILE_K = wp.constant(8)


@wp.kernel
def gemm_mixed(A: wp.array2d(dtype=float), B: wp.array2d(dtype=wp.float16), C: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=wp.float64)
    count = A.shape[1] // TILE_K
    for k in range(count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE_M, j * TILE_N))


@wp.kernel
def gemm_half_out(A: wp.array2d(dtype=wp.float16), B: wp.array2d(dtype=float), C: wp.array2d(dtype=wp.float16)):
    a = wp.tile_load(A, shape=(TILE_M, TILE_K))
    b = wp.tile_load(B, shape=(TILE_K, TILE_N))
    c = wp.tile_matmul(a, b)
    wp.tile_store(C, c)
