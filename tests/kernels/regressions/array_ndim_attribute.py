import warp as wp


@wp.kernel
def ndim_of_views(arr: wp.array3d[int], idx: wp.indexedarray2d(dtype=float), out: wp.array[int]):
    sub = arr[:2]
    wp.expect_eq(sub.ndim, 3)
    row = arr[0]
    out[0] = row.ndim + arr.ndim
    out[1] = wp.max(idx.ndim, out[0])
