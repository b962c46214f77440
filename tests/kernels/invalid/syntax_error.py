import warp as wp


@wp.kernel
def broken(a: wp.array(dtype=float)):
    i = wp.tid(
    a[i] = 1.0
