import warp as wp


@wp.kernel
def copy_first_tile(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    t = wp.tile_load(src, shape=(4, 4))
    wp.tile_store(dst, t)
    u = wp.tile_load(src, (4, 4), (4, 4))
    wp.tile_store(dst, u + t, (4, 4))
