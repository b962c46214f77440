import warp as wp


@wp.func
def add_one(x: wp.ref[wp.float32]):
    x += wp.float32(1.0)


@wp.kernel
def backward_ref_kernel(arr: wp.array[wp.float32]):
    i = wp.tid()
    add_one(arr[i])
