from typing import Any

import warp as wp


@wp.func
def twice(x: Any):
    return x + x


@wp.func
def scaled_sum(a: Any, b: Any, s: float):
    return (a + b) * s


@wp.func
def first_of(arr: wp.array[Any], i: int):
    return arr[i]


@wp.func
def corner(grid: wp.array2d[Any]):
    return grid[0, 0]


@wp.kernel
def generic_scalars(a: wp.array(dtype=float), b: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = twice(a[i]) + scaled_sum(a[i], 1.0, 0.5)
    b[i] = twice(b[i])


@wp.kernel
def generic_vectors(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    # the same function, called with other types: one instance per signature
    v[i] = twice(v[i]) + scaled_sum(v[i], wp.vec3(1.0, 2.0, 3.0), 2.0)
    m[i] = twice(m[i])


@wp.kernel
def generic_arrays(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), g: wp.array2d(dtype=wp.float64), out: wp.array(dtype=float)):
    i = wp.tid()
    x = first_of(a, i)
    y = first_of(v, i)
    out[i] = x + y[1] + float(corner(g))


# Overloads of one name, concrete and generic: the concrete ones are tried
# first, then the generic ones in definition order.
@wp.func
def combine(a: float, b: float):
    return a * b


@wp.func
def combine(a: Any, b: Any):
    return a + b


@wp.func
def combine(a: Any, b: Any, c: Any):
    return a + b + c


@wp.func
def combine(a: int, b: int):
    return a - b


@wp.kernel
def generic_overloads(a: wp.array(dtype=float), b: wp.array(dtype=int), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = combine(a[i], 2.0) + combine(a[i], 1.0, 3.0)
    b[i] = combine(b[i], 7)
    v[i] = combine(v[i], v[i]) + combine(v[i], v[i], v[i])


# A generic function defined again with the same templates replaces the first.
@wp.func
def cube_or_square(x: Any):
    return x * x


@wp.func
def cube_or_square(x: Any):
    return x * x * x


@wp.kernel
def generic_redefined(a: wp.array(dtype=float), b: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = cube_or_square(a[i])
    b[i] = cube_or_square(b[i])
