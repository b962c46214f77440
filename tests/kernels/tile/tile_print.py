import warp as wp

# wp.print of a register tile and of a shared one (wp::print, wp::adj_print).


@wp.kernel
def print_tiles(x: wp.array[wp.int32]):
    tile = wp.tile_load(x, shape=(8,), storage="register")
    wp.print(tile)
    shared_tile = wp.tile_ones(shape=(4, 3), dtype=float, storage="shared")
    wp.print(shared_tile)
