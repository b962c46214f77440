import warp as wp

TILE = wp.constant(32)


@wp.kernel
def elementwise(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=TILE, offset=i * TILE)
    tb = wp.tile_load(b, shape=TILE, offset=i * TILE)
    s = wp.tile_map(wp.sin, ta)
    c = wp.tile_map(wp.cos, tb)
    m = wp.tile_map(wp.max, s, c)
    h = wp.tile_map(wp.mul, m, ta)
    n = -h
    wp.tile_store(out, n / 3.0, offset=i * TILE)
