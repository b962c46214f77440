import warp as wp

TILE_M = wp.constant(2)
TILE_N = wp.constant(512)


@wp.kernel
def fft_rows(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i, _ = wp.tid()
    t = wp.tile_load(x, shape=(TILE_M, TILE_N), offset=(i * TILE_M, 0))
    wp.tile_fft(t)
    wp.tile_store(y, t, offset=(i * TILE_M, 0))


@wp.kernel
def ifft_rows_double(x: wp.array2d(dtype=wp.vec2d), y: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(x, shape=(4, 256))
    wp.tile_ifft(t)
    wp.tile_store(y, t)
