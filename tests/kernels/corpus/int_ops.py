import warp as wp


@wp.kernel
def int_ops(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32), shift: int):
    i = wp.tid()
    x = a[i]
    y = b[i]
    if y == 0:
        out[i] = 0
        return
    q = x // y
    r = x % y
    m = (x & 0xFF) | (y << shift)
    n = (x ^ y) >> 2
    out[i] = q + r + m - n + (~x & 7)


@wp.kernel
def morton2d(coords: wp.array(dtype=wp.vec2i), codes: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    c = coords[i]
    x = wp.uint32(c[0])
    y = wp.uint32(c[1])
    x = (x | (x << wp.uint32(8))) & wp.uint32(0x00FF00FF)
    x = (x | (x << wp.uint32(4))) & wp.uint32(0x0F0F0F0F)
    x = (x | (x << wp.uint32(2))) & wp.uint32(0x33333333)
    x = (x | (x << wp.uint32(1))) & wp.uint32(0x55555555)
    y = (y | (y << wp.uint32(8))) & wp.uint32(0x00FF00FF)
    y = (y | (y << wp.uint32(4))) & wp.uint32(0x0F0F0F0F)
    y = (y | (y << wp.uint32(2))) & wp.uint32(0x33333333)
    y = (y | (y << wp.uint32(1))) & wp.uint32(0x55555555)
    codes[i] = x | (y << wp.uint32(1))
