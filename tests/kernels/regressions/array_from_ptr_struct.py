import warp as wp


@wp.struct
class Triple:
    a: wp.float32
    b: wp.float32
    c: wp.float32


@wp.kernel
def from_ptr_struct(arr_orig: wp.array[Triple], shape_x: int):
    arr = wp.array(ptr=arr_orig.ptr, shape=(2,), dtype=Triple)
    arr[0].a = 1.0
    arr[1].c = 6.0
    flat = wp.array(ptr=arr_orig.ptr, shape=(shape_x,), dtype=wp.float32)
    flat[0] = arr[1].c + arr[0].a
