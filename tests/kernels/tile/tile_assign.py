import warp as wp

# Writing one element (or one component of a vector or matrix element) of a
# tile: the value first, then the indices (a runtime index wrapped once, a
# negative constant counted from the end); the tile moves to shared memory.


@wp.kernel
def write_elements(x: wp.array[float], y: wp.array[float]):
    _i, j = wp.tid()
    a = wp.tile_zeros(shape=(8,), dtype=float)
    a[j] = x[j]
    a[-1] = 2.0
    wp.tile_atomic_add(y, a, offset=(0,))


@wp.kernel
def write_2d(input: wp.array2d[float], output: wp.array2d[float]):
    i, j = wp.tid()
    t = wp.tile_zeros(shape=(4, 4), dtype=float)
    t[i, j] = input[i, j] * 2.0
    output[i, j] = t[i, j]


@wp.kernel
def write_components(x: wp.array[float], y: wp.array[wp.vec3], m: wp.array[wp.mat33]):
    i = wp.tid()
    a = wp.tile_zeros(shape=(8,), dtype=wp.vec3)
    a[i][1] = x[i]
    a[i, 2] = x[i]
    b = wp.tile_zeros(shape=(8,), dtype=wp.mat33)
    b[i][1] = wp.vec3(10.0, 20.0, 30.0)
    b[i, 0, 2] = x[i]
    wp.tile_atomic_add(y, a, offset=(0,))
    wp.tile_atomic_add(m, b, offset=(0,))
