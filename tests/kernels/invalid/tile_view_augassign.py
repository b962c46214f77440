import warp as wp

# A compound assignment to a row of a 2-D tile (a view): warp refuses it.


@wp.kernel
def row_update(x: wp.array2d[float]):
    i = wp.tid()
    t = wp.tile_zeros(shape=(4, 8), dtype=float)
    t[i % 4] += wp.tile_ones(shape=8, dtype=float)
    wp.tile_store(x, t)
