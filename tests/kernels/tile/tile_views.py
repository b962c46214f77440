# Tile views (warp's `tile_view`): explicit `wp.tile_view(t, offset=..., shape=...)`,
# rows by fewer indices than dimensions (constant, negative, runtime, an array
# element), slices with steps and reversed axes, chained subscripts, and views of
# views and of a transposed tile, whose strides compose. The source tile moves
# to shared memory; a view owns nothing and has no adjoint.
import warp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)


@wp.kernel
def explicit_view(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    a = wp.tile_load(x, shape=(TILE_M, TILE_N))
    v = wp.tile_view(a, offset=(2, 0), shape=(4, TILE_N))
    wp.tile_store(y, v)


@wp.kernel
def explicit_row(x: wp.array2d(dtype=float), rows: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(TILE_M, TILE_N))
    r = wp.tile_view(a, offset=(rows[i],))
    s = wp.tile_view(a, offset=(3,))
    wp.tile_store(y, r + s)


@wp.kernel
def subscript_rows(x: wp.array2d(dtype=float), rows: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(x, shape=(TILE_M, TILE_N))
    first = a[0]
    last = a[-1]
    k = rows[i]
    mid = a[k]
    picked = a[rows[0]]
    wp.tile_store(y, first + last + mid + picked)


@wp.kernel
def slices(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), z: wp.array2d(dtype=float), w: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(TILE_M, TILE_N))
    s = a[2:6, ::-1]
    wp.tile_store(y, s)
    even = a[::2, 1:3]
    wp.tile_store(z, even)
    col = a[-3:, 2]
    wp.tile_store(w, col)


@wp.kernel
def chained(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(16,))
    wp.tile_store(y, t[::-1][::2])
    u = t[1:][::3][1:4]
    wp.tile_store(z, u)


@wp.kernel
def view_of_transpose(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), z: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(TILE_M, TILE_N), storage="shared")
    t = wp.tile_transpose(a)
    v = t[1:3, ::2]
    wp.tile_store(y, v)
    wp.tile_store(z, t[2])


@wp.kernel
def three_d(x: wp.array3d(dtype=float), y: wp.array2d(dtype=float), z: wp.array(dtype=float)):
    a = wp.tile_load(x, shape=(2, 4, 8))
    plane = a[1]
    wp.tile_store(y, plane)
    line = a[0, :, 3]
    wp.tile_store(z, line)
    e = a[1][2][5]
    z[0] = e
