import warp as wp


@wp.kernel
def keyword_arguments(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x = wp.pow(x=a[i], y=2.0)
    y = wp.pow(a[i], y=3.0)
    z = wp.pow(y=4.0, x=a[i])
    wp.expect_near(x, y, tolerance=0.5)
    wp.expect_near(v[i], v[0], tolerance=1e-3)
    a[i] = x + y + z


@wp.kernel
def wide_casts_of_literals(out: wp.array(dtype=wp.int64), u: wp.array(dtype=wp.uint64)):
    i = wp.tid()
    a = wp.int64(2.0)
    b = wp.uint64(3.5)
    c = wp.int64(7)
    out[i] = a + c + wp.int64(wp.int8(2.0))
    u[i] = b
