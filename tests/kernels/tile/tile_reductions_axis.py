import warp as wp

# Reductions along an axis (the input moves to shared memory, the axis is a
# template argument of the call and its adjoint), index of the extreme
# element, and prefix scans.


@wp.kernel
def sums_along(a: wp.array3d[float], rows: wp.array2d[float], cols: wp.array2d[float], flat: wp.array[float]):
    t = wp.tile_load(a, shape=(2, 4, 8))
    wp.tile_store(rows, wp.tile_sum(t, axis=0))
    wp.tile_store(cols, wp.tile_sum(t, axis=2))
    v = wp.tile_load(flat, shape=8)
    wp.tile_store(flat, wp.tile_sum(v, axis=0))


@wp.kernel
def vector_sums(a: wp.array2d[wp.vec3], out: wp.array[wp.vec3]):
    t = wp.tile_load(a, shape=(4, 8))
    wp.tile_store(out, wp.tile_sum(t, 1))


@wp.kernel(enable_backward=False)
def scans_and_extremes(x: wp.array[float], n: wp.array[int], out: wp.array[float], out_i: wp.array[int]):
    t = wp.tile_load(x, shape=16)
    c = wp.tile_load(n, shape=16)
    wp.tile_store(out, wp.tile_scan_inclusive(t))
    wp.tile_store(out, wp.tile_scan_exclusive(t))
    wp.tile_store(out, wp.tile_scan_max_inclusive(t))
    wp.tile_store(out_i, wp.tile_scan_min_inclusive(c))
    wp.tile_store(out_i, wp.tile_argmax(t))
    wp.tile_store(out_i, wp.tile_argmin(c))
