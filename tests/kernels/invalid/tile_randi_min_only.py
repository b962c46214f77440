import warp as wp


@wp.kernel
def min_without_max(seed: int, x: wp.array2d[int]):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    t = wp.tile_randi(shape=(2, 2), rng=rng, min=-5)
    wp.tile_store(x, t, offset=(i * 2, j * 2))
