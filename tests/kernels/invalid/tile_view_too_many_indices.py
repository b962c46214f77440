import warp as wp

# A tile_view() offset with more entries than the tile has dimensions.


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(16,))
    wp.tile_store(y, wp.tile_view(a, offset=(1, 2)))
