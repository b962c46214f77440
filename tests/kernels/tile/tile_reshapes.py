# Views that reshape a tile: `wp.tile_squeeze` (every singleton axis, or the
# ones named), `wp.tile_reshape` (one extent inferred from -1; the source must
# be contiguous), `wp.tile_broadcast` (stride 0 along new or singleton axes,
# its shape and strides as template arguments), and `wp.tile_assign` of one
# tile into another at an offset (zeros when omitted). The source of a view
# moves to shared memory; all four have adjoints.
import warp as wp


@wp.kernel
def squeeze_reshape_broadcast(
    x: wp.array3d(dtype=float),
    v: wp.array(dtype=float),
    y: wp.array(dtype=float),
    z: wp.array2d(dtype=float),
    w: wp.array2d(dtype=float),
):
    a = wp.tile_load(x, shape=(1, 4, 1))
    s = wp.tile_squeeze(a)
    s2 = wp.tile_squeeze(a, axis=(0,))
    s3 = wp.tile_squeeze(a, axis=(-1,))
    wp.tile_store(y, s)
    b = wp.tile_load(v, shape=8)
    r = wp.tile_reshape(b, shape=(2, -1))
    wp.tile_store(z, r)
    r3 = wp.tile_reshape(r, shape=(2, 2, 2))
    c = wp.tile_broadcast(s, shape=(3, 4))
    wp.tile_store(w, c)
    c2 = wp.tile_broadcast(s2, shape=(4, 5))
    wp.tile_store(w, c2 * 2.0)


@wp.kernel
def assign_at_offsets(x: wp.array2d(dtype=float), k: wp.array(dtype=int), out: wp.array2d(dtype=float)):
    i = wp.tid()
    src = wp.tile_load(x, shape=(2, 4))
    d = wp.tile_zeros(shape=(8, 4), dtype=float)
    wp.tile_assign(d, src, offset=(2, 0))
    wp.tile_assign(d, src)
    wp.tile_assign(d, src, offset=(k[i], 0))
    wp.tile_store(out, d)


@wp.kernel
def broadcast_row_of_view(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    a = wp.tile_load(x, shape=(4, 8))
    row = a[1, ::2]
    grid = wp.tile_broadcast(row, shape=(3, 4))
    wp.tile_store(out, grid + wp.tile_ones(shape=(3, 4), dtype=float))
