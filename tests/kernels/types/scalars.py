import warp as wp


@wp.kernel
def scalar_types(
    h: wp.handle,
    u: wp.uint64,
    b: wp.bfloat16,
    a: wp.array(dtype=wp.bfloat16),
    o: wp.array(dtype=wp.uint64),
    f16: wp.array[wp.float16],
    f64: wp.array[wp.float64],
):
    i = wp.tid()
    a[i] = a[i] * b
    o[i] = h + u
    x = wp.bfloat16(2.0)
    y = wp.uint32(3)
    z = wp.vec3ui(wp.uint32(1), y, y)
    w = wp.vec3ui(1, 2, 3)
    f16[i] = f16[i] + wp.float16(1.5)
    f64[i] = f64[i] * wp.float64(0.1)
    k = wp.int8(3)
    s = wp.vec2s(wp.int16(1), wp.int16(2))
