import warp as wp


@wp.kernel
def no_such_builtin(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sinus(a[i])
