import warp as wp

# Assigning through an index tile (a scatter) is warp's error: duplicates would be ambiguous.


@wp.kernel
def k(x: wp.array2d(dtype=float), idx: wp.array(dtype=int), y: wp.array2d(dtype=float)):
    t = wp.tile_zeros(shape=(4, 4), dtype=float)
    i = wp.tile_load(idx, shape=2)
    src = wp.tile_load(x, shape=(2, 4))
    t[i, :] = src
    wp.tile_store(y, t)
