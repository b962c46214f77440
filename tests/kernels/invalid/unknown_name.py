import warp as wp


@wp.kernel
def uses_undefined(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + offset
