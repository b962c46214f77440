import warp as wp

TILE = wp.constant(16)


@wp.kernel
def accumulate_blocks(src: wp.array(dtype=float), total: wp.array(dtype=float), partial: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(src, shape=TILE, offset=i * TILE)
    s = wp.tile_sum(t * t)
    wp.tile_atomic_add(total, s)
    wp.tile_atomic_add(partial, t, offset=(i % 4) * TILE)
