import warp as wp

# Broadcasting aligns axes from the right: an extent of 4 cannot become 3.


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    a = wp.tile_load(x, shape=(4,))
    wp.tile_store(y, wp.tile_broadcast(a, shape=(2, 3)))
