import warp as wp

# Tiles of random draws: wp.tile_randi (int32) and wp.tile_randf (float32),
# with and without a [min, max) range (new constants after the output, a
# float one rounded to float32), in registers and in shared memory.


@wp.kernel
def rand_range(seed: int, x: wp.array2d[int], y: wp.array2d[float]):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    ti = wp.tile_randi(shape=(2, 2), rng=rng, min=-5, max=5)
    tf = wp.tile_randf(shape=(2, 2), rng=rng, min=-5.0, max=0.1)
    t1 = wp.tile_randf(8, rng, storage="shared")
    wp.tile_store(x, ti, offset=(i * 2, j * 2))
    wp.tile_store(y, tf, offset=(i * 2, j * 2))


@wp.kernel
def rand_default(seed: int, x: wp.array2d[int], y: wp.array2d[float]):
    i, j = wp.tid()
    rng = wp.rand_init(seed, i * 2 + j)
    ti = wp.tile_randi(shape=(2, 2), rng=rng)
    tf = wp.tile_randf(shape=(2, 2), rng=rng)
    wp.tile_store(x, ti, offset=(i * 2, j * 2))
    wp.tile_store(y, tf + tf, offset=(i * 2, j * 2))
