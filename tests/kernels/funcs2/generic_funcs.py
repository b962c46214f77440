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
