# Assignments through tile views: `t[a:b, :] = src`, `t[i] = row` (fewer
# indices than dimensions), a reversed slice as the target, and an element
# assignment beside them. Each is a `tile_view` of the destination and a
# `tile_assign` of the source at the view's origin; the destination moves to
# shared memory.
import warp as wp


@wp.kernel
def rows_and_slices(x: wp.array2d(dtype=float), r: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_zeros(shape=(8, 4), dtype=float)
    src = wp.tile_load(x, shape=(2, 4))
    t[2:4, :] = src
    row = wp.tile_load(r, shape=4)
    t[0] = row
    t[-1] = row * 2.0
    t[5, ::-1] = row
    t[6, 1] = 3.0
    wp.tile_store(out, t)


@wp.kernel
def column_block(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(4, 8), storage="shared")
    block = wp.tile_ones(shape=(4, 2), dtype=float)
    t[:, 3:5] = block
    wp.tile_store(out, t)
