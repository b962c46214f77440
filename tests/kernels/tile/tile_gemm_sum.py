import warp as wp

TILE_M = wp.constant(16)
TILE_N = wp.constant(8)
K_TILES = 4


@wp.kernel
def tiled_row_block_sum(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=float)
    for k in range(K_TILES):
        ta = wp.tile_load(a, shape=(TILE_M, TILE_N), offset=(i * TILE_M, k * TILE_N))
        tb = wp.tile_load(b, shape=(TILE_M, TILE_N), offset=(k * TILE_M, j * TILE_N))
        acc += ta * tb
    wp.tile_store(c, acc, offset=(i * TILE_M, j * TILE_N))
