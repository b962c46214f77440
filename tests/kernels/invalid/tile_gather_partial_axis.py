import warp as wp

# A gather takes every element of the other axes: a partial slice beside an index tile is an error.


@wp.kernel
def k(x: wp.array2d(dtype=float), idx: wp.array(dtype=int), y: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(4, 4))
    i = wp.tile_load(idx, shape=2)
    wp.tile_store(y, t[i, 1:3])
