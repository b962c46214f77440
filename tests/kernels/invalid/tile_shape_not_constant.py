import warp as wp


@wp.kernel
def dynamic_shape(a: wp.array(dtype=float), out: wp.array(dtype=float), n: int):
    i = wp.tid()
    t = wp.tile_load(a, shape=n, offset=i * n)
    wp.tile_store(out, t, offset=i * n)
