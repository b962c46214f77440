import warp as wp

wp.config.max_unroll = 4
wp.set_module_options({"enable_backward": False, "block_dim": 128})


@wp.kernel
def unroll_limit(a: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for k in range(4):
        s = s + a[i]
    for k in range(5):
        s = s * a[i]
    a[i] = s


@wp.kernel(enable_backward=True)
def backward_again(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * a[i]
