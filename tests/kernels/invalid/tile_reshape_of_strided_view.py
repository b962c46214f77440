import warp as wp

# A reshape aliases the source with dense strides: a strided view cannot be reshaped in place.


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    a = wp.tile_load(x, shape=(16,))
    wp.tile_store(y, wp.tile_reshape(a[::2], shape=(2, 4)))
