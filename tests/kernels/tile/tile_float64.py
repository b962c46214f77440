import warp as wp

BLOCK = wp.constant(8)


@wp.kernel
def scale_f64(a: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64), s: wp.float64):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(BLOCK, BLOCK), offset=(i * BLOCK, j * BLOCK))
    z = wp.tile_zeros(shape=(BLOCK, BLOCK), dtype=wp.float64)
    u = s * t + z
    v = wp.tile_map(wp.sqrt, wp.tile_map(wp.abs, u))
    wp.tile_store(out, v, offset=(i * BLOCK, j * BLOCK))
    lo = wp.tile_min(v)
    out[i, j] = lo[0] * wp.float64(0.5)
