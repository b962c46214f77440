import warp as wp

TILE = wp.constant(64)


@wp.kernel
def tile_axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float), alpha: float):
    i = wp.tid()
    tx = wp.tile_load(x, shape=TILE, offset=i * TILE)
    ty = wp.tile_load(y, shape=TILE, offset=i * TILE)
    r = tx * alpha + ty
    wp.tile_store(out, r, offset=i * TILE)
