import warp as wp

# tile_scatter_add takes one index per tile dimension: a 2-D tile needs two.


@wp.kernel
def k(inp: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(4, 2), dtype=float)
    wp.tile_scatter_add(t, lane, inp[lane], True, True)
    wp.tile_store(out, t)
