import warp as wp


@wp.kernel
def k(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] *= s
