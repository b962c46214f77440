import warp as wp

ROW = wp.constant(32)


@wp.kernel
def row_sums(a: wp.array2d(dtype=float), sums: wp.array(dtype=float), maxima: wp.array(dtype=float)):
    i = wp.tid()
    row = wp.tile_load(a, shape=(1, ROW), offset=(i, 0))
    s = wp.tile_sum(row)
    m = wp.tile_max(row)
    wp.tile_store(sums, s, offset=i)
    maxima[i] = m[0]
