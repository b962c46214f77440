import warp as wp


@wp.kernel
def clamp_two_args(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.clamp(a[i], 0.0)
