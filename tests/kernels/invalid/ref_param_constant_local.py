import warp as wp


@wp.func
def takes_ref(x: wp.ref[wp.int32], value: wp.int32):
    x = value


@wp.kernel(enable_backward=False)
def constant_local_ref_kernel(out: wp.array[wp.int32]):
    x = 0
    takes_ref(x, wp.int32(2))
    out[0] = x
