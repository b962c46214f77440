import warp as wp


@wp.kernel
def uses_list(a: wp.array(dtype=float)):
    i = wp.tid()
    w = [1.0, 2.0]
    a[i] = a[i]
