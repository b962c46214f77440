import warp as wp


@wp.kernel
def returns(a: wp.array(dtype=float)):
    i = wp.tid()
    return a[i]
