import warp as wp

TILE = wp.constant(16)


@wp.kernel
def f64_times_f32(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(out, t * 2.0, offset=i * TILE)
