import warp as wp

TILE = wp.constant(16)


@wp.kernel
def strided_accumulate(a: wp.array(dtype=float), out: wp.array(dtype=float), n_tiles: int):
    i = wp.tid()
    acc = wp.tile_zeros(shape=TILE, dtype=float)
    for k in range(n_tiles):
        t = wp.tile_load(a, shape=TILE, offset=k * TILE)
        acc = acc + t * 0.5
    for k in range(n_tiles):
        t = wp.tile_load(a, shape=TILE, offset=k * TILE)
        acc -= t
    wp.tile_store(out, acc, offset=i * TILE)
