import warp as wp

# A slice that selects nothing would make a tile with a zero-length axis.


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(16,))
    wp.tile_store(y, a[4:4])
