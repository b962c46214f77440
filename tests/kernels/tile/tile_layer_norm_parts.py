import warp as wp

D = wp.constant(64)


@wp.kernel
def layer_stats(x: wp.array(dtype=float), mean: wp.array(dtype=float), var: wp.array(dtype=float), y: wp.array(dtype=float)):
    row = wp.tid()
    t = wp.tile_load(x, shape=D, offset=row * D)
    s = wp.tile_sum(t)
    mu = s[0] / 64.0
    centered = t - wp.tile_ones(shape=D, dtype=float) * mu
    sq = wp.tile_sum(centered * centered)
    v = sq[0] / 64.0
    mean[row] = mu
    var[row] = v
    inv = 1.0 / wp.sqrt(v + 1.0e-5)
    wp.tile_store(y, centered * inv, offset=row * D)
