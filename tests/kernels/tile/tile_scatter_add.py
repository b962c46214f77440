# wp.tile_scatter_add: each thread adds a value into one element of a shared
# tile where its flag is set; one index per tile dimension (warp picks the
# overload by count), `atomic=False` as the template argument `<false>`, the
# value an array element loaded at the call; vector tiles too.
import warp as wp


@wp.kernel
def scatter_1d(inp: wp.array(dtype=float), out: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(8,), dtype=float)
    v = inp[lane] * 2.0
    wp.tile_scatter_add(t, 0, v, lane == 0)
    wp.tile_scatter_add(t, lane, inp[lane], True, atomic=False)
    wp.tile_scatter_add(t, lane % 8, value=v, has_value=lane < 4, atomic=True)
    wp.tile_store(out, t)


@wp.kernel
def scatter_2d_vectors(inp: wp.array(dtype=wp.vec3), out: wp.array2d(dtype=wp.vec3)):
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(4, 2), dtype=wp.vec3)
    wp.tile_scatter_add(t, lane / 2, lane % 2, inp[lane], lane < 8)
    wp.tile_store(out, t)
