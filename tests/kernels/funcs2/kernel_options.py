import warp as wp


@wp.func
def scale(x: float, s: float):
    return x * s


@wp.kernel(enable_backward=False)
def no_backward(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = scale(a[i], s)


@wp.kernel(grid_stride=False)
def lean(a: wp.array(dtype=float)):
    i = wp.tid()
    if i > 10:
        return
    a[i] = a[i] + 1.0


@wp.kernel(launch_bounds=(128, 2), grid_stride=True)
def bounded(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = scale(a[i], 2.0)


@wp.kernel(launch_bounds=64)
def bounded_int(a: wp.array(dtype=float)):
    a[wp.tid()] = 0.0


@wp.kernel(name="custom_named_kernel", enable_backward=False)
def named(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0
