import warp as wp

TILE = wp.constant(16)


@wp.kernel
def wrong_dtype(a: wp.array(dtype=float), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(out, t, offset=i * TILE)
