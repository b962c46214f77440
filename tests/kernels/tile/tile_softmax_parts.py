import warp as wp

N = wp.constant(128)


@wp.kernel
def softmax_denominator(x: wp.array(dtype=float), out: wp.array(dtype=float), denom: wp.array(dtype=float)):
    row = wp.tid()
    t = wp.tile_load(x, shape=N, offset=row * N)
    m = wp.tile_max(t)
    shifted = t - m[0] * wp.tile_ones(shape=N, dtype=float)
    e = wp.tile_map(wp.exp, shifted)
    total = wp.tile_sum(e)
    wp.tile_store(out, e, offset=row * N)
    denom[row] = total[0]
