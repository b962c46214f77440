import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def no_backward(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel(enable_backward=True)
def own_option_wins(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0
