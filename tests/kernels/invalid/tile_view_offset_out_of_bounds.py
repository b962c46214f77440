import warp as wp

# An explicit tile_view() offset is a raw coordinate: a constant outside the
# source axis is warp's error (only subscripts wrap negative indices).


@wp.kernel
def k(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(8, 4))
    wp.tile_store(y, wp.tile_view(a, offset=(8,)))
