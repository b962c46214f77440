import warp as wp

# `tuple[T, ...]` parameters: a tuple of any length; warp builds one instance
# of the function per tuple type it is called with, as for `Any`.


@wp.func
def loop_variadic_ellipsis_user_func(values: tuple[int, ...]):
    out = wp.int32(0)
    for i in range(wp.static(len(values))):
        out += values[i]

    return out


@wp.func
def first_of(values: tuple[float, ...]) -> float:
    return values[0]


@wp.kernel
def variadic_tuples(x: wp.array[float]):
    t1 = (1,)
    res = loop_variadic_ellipsis_user_func(t1)
    wp.expect_eq(res, 1)

    t2 = (2, 3)
    res = loop_variadic_ellipsis_user_func(t2)
    wp.expect_eq(res, 5)

    x[0] = first_of((x[1], x[2], 3.0))
