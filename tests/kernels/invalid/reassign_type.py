import warp as wp


@wp.kernel
def retype(a: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    x = 3
    a[i] = x
