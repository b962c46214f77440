import warp as wp

# A component of a vector or matrix tile element by a negative or runtime index
# (t[i][-1], t[i][k]): passed as written, while the tile index itself is resolved.


@wp.kernel
def negative_row_read(inp: wp.array[wp.mat33], out: wp.array[wp.vec3], k: int):
    i = wp.tid()
    t = wp.tile_load(inp, shape=(32,))
    out[i] = t[i][-1] + t[i][k] + t[i, -2]


@wp.kernel
def negative_row_write(out: wp.array[wp.mat33]):
    i = wp.tid()
    t = wp.tile_zeros(dtype=wp.mat33, shape=(32,))
    t[i][-1] = wp.vec3(10.0, 20.0, 30.0)
    wp.tile_atomic_add(out, t, offset=(0,))


@wp.kernel
def negative_component(inp: wp.array[wp.vec3], out: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(inp, shape=(16,))
    out[i] = t[i][-1] - t[-1][0]
