import warp as wp


@wp.kernel
def too_many_indices(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i, i] = 1.0
