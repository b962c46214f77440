import warp as wp


@wp.kernel
def mixed(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    a[i] = a[i] * n
