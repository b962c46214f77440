import warp as wp


@wp.kernel
def not_square(gA: wp.array2d[float], gL: wp.array2d[float]):
    A = wp.tile_load(gA, shape=(4, 8))
    L = wp.tile_cholesky(A)
    wp.tile_store(gL, L)
