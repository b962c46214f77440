import warp as wp

TILE = wp.constant(64)


@wp.kernel
def count_and_clip(labels: wp.array(dtype=int), counts: wp.array(dtype=int), clipped: wp.array(dtype=int)):
    i = wp.tid()
    t = wp.tile_load(labels, shape=TILE, offset=i * TILE)
    ones = wp.tile_ones(shape=TILE, dtype=int)
    c = wp.tile_map(wp.min, t, ones * 7)
    r = wp.tile_reduce(wp.add, c)
    hi = wp.tile_reduce(wp.max, t)
    wp.tile_atomic_add(counts, r)
    clipped[i] = hi[0]
    wp.tile_store(clipped, c, offset=i * TILE)
