import warp as wp

# The source of a view assignment must have the view's shape exactly.


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_zeros(shape=(8,), dtype=float)
    src = wp.tile_load(x, shape=3)
    t[2:4] = src
    wp.tile_store(y, t)
