import warp as wp


@wp.kernel
def expect_and_print(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    wp.expect_eq(a[i], 1.0)
    wp.expect_neq(v[i], wp.vec3(1.0, 2.0, 3.0))
    wp.expect_eq(m[i], wp.mat22(1.0, 2.0, 3.0, 4.0))
    wp.expect_eq(i, 3)
    wp.expect_near(a[i], 2.0, 0.1)
    wp.expect_near(a[i], 2.0)
    wp.expect_near(v[i], wp.vec3(0.0), 0.5)
    wp.print(a[i])
    wp.print(v[i] * 2.0)
    print(i)
    wp.printf("hello %d %f\n", i, a[i])
    wp.printf("tab\tquote' backslash\\ done\n")
    b = wp.pi * a[i] + wp.HALF_PI - wp.e
    c = wp.tau * b + wp.PI
    a[i] = b * c
