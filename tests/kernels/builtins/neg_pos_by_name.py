import warp as wp

# wp.neg and wp.pos called by name, and wp.neg as the operator of tile_map on a
# tile of a matrix type of its own.

mat5 = wp.types.matrix(shape=(5, 5), dtype=float)


@wp.kernel
def neg_calls(x: wp.array[float], v: wp.array[wp.vec3], y: wp.array[float]):
    i = wp.tid()
    y[i] = wp.neg(x[i]) + wp.pos(x[i]) + wp.neg(v[i])[0]


@wp.kernel
def tile_map_neg(input: wp.array[mat5], output: wp.array[mat5]):
    i = wp.tid()
    a = wp.tile_load(input, shape=16, offset=i * 16)
    b = wp.tile_map(wp.neg, a)
    wp.tile_store(output, b, offset=i * 16)
