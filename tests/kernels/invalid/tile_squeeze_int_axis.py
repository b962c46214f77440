import warp as wp

# tile_squeeze() takes its axes as a tuple; a lone int matches no overload.


@wp.kernel
def k(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(1, 4))
    wp.tile_store(y, wp.tile_squeeze(a, axis=0))
