import warp as wp


@wp.func_native(
    "x = y * 2.0f;",
    adj_snippet="""
    adj_y += 2.0f * adj_x;
    adj_x = 0.0f;
    """,
)
def store_double(x: wp.ref[wp.float32], y: wp.float32): ...


@wp.func_native("return a + 2.0f;", adj_snippet="adj_a += adj_ret;")
def add_two(a: float) -> float: ...


@wp.func_native("*(float*)ptr = *(float*)ptr + 1.0f;")
def increment_via_ptr(ptr: wp.uint64): ...


@wp.kernel
def native_ref_kernel(x: wp.array[wp.float32], dst: wp.array2d[wp.float32], out: wp.array[wp.float32]):
    i = wp.tid()
    tmp = wp.float32(0.0)
    store_double(tmp, x[i])
    row = dst[i]
    store_double(row[0], x[i])
    v = wp.vec3(0.0, 0.0, 0.0)
    store_double(v.y, add_two(x[i]))
    out[i] = tmp + v.y + row[0]


@wp.kernel(enable_backward=False)
def address_of_kernel(arr: wp.array[wp.float32]):
    i = wp.tid()
    increment_via_ptr(wp.address_of(arr[i]))
    v = wp.vec3(1.0, 2.0, 3.0)
    increment_via_ptr(wp.address_of(v.y))
    arr[i] = v.y
