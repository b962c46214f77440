import warp as wp

# A 64-bit scalar made from a literal: warp assigns the literal as Python holds
# it (`wp.float64(6)` is `6`, `wp.int64(2.0)` is `2.0`, infinities by name).


@wp.kernel
def k(a: wp.array[wp.float64], b: wp.array[wp.float32], c: wp.array[wp.int16]):
    a[0] = wp.float64(6)
    a[1] = wp.float64(6.5)
    b[0] = wp.float32(3)
    c[0] = wp.int16(6)
    wp.expect_eq(a[2], wp.float64(10))


@wp.kernel
def wide(a: wp.array[wp.float64], b: wp.array[wp.int64], c: wp.array[wp.uint64]):
    a[0] = wp.float64(-3)
    a[1] = wp.float64(wp.inf)
    a[2] = wp.float64(-wp.inf)
    b[0] = wp.int64(2.0)
    b[1] = wp.int64(-7)
    c[0] = wp.uint64(9)
