import warp as wp

# tile_arange (its length worked out from constant arguments in the element
# type's precision), tile_empty, and tile_zeros / tile_ones of vectors and
# matrices or of the default dtype.

TILE_M = wp.constant(8)


@wp.kernel
def ranges(out: wp.array[float], outi: wp.array[int]):
    i = wp.tid()
    a = wp.tile_arange(TILE_M, dtype=float)
    b = wp.tile_arange(0, 10, 3, dtype=int)
    c = wp.tile_arange(0.0, 0.3, 0.1, dtype=float)
    d = wp.tile_arange(5)
    e = wp.tile_arange(2, 12, dtype=int, storage="shared")
    wp.tile_store(out, a)
    wp.tile_store(outi, b)
    wp.tile_store(out, c)
    wp.tile_store(out, d)
    wp.tile_store(outi, e)


@wp.kernel
def wide_ranges(out: wp.array[wp.int64], outf: wp.array[wp.float64]):
    a = wp.tile_arange(0, 9007199254740993, 9007199254740992, dtype=wp.int64)
    b = wp.tile_arange(10, 0, -3, dtype=int)
    e = wp.tile_arange(1, 4, dtype=wp.float64)
    f = wp.tile_arange(0.5, 2.25, 0.25, dtype=wp.float64)
    wp.tile_store(out, a)
    wp.tile_store(outf, e)
    wp.tile_store(outf, f)


@wp.kernel
def empties(out: wp.array[wp.vec3], outm: wp.array2d[wp.mat33], outf: wp.array[float]):
    i = wp.tid()
    a = wp.tile_zeros(shape=(8,), dtype=wp.vec3)
    b = wp.tile_ones(shape=(2, 4), dtype=wp.mat33, storage="shared")
    c = wp.tile_empty(shape=8, dtype=float)
    d = wp.tile_empty(shape=(8,), dtype=wp.vec3, storage="shared")
    e = wp.tile_zeros(8)
    f = wp.tile_empty(shape=(2, 4), dtype=wp.mat33)
    wp.tile_store(out, a)
    wp.tile_store(outm, b)
    wp.tile_store(outf, c)
    wp.tile_store(out, d)
    wp.tile_store(outf, e + wp.tile_arange(8, dtype=float))
    wp.tile_store(outm, f)


BIG_START = wp.constant(wp.int64(18014398509481984))
BIG_STOP = wp.constant(wp.int64(18014401730707455))
BIG_STEP = wp.constant(wp.int64(2147483648))


@wp.kernel
def spelled_ranges(out: wp.array[wp.int32], outf: wp.array[float]):
    # integral float bounds for an integer type, wide integers rounded
    # straight to float32, and a call over several lines
    t = wp.tile_arange(0.0, 10.0, dtype=wp.int32)
    u = wp.tile_arange(
        BIG_START,
        BIG_STOP,
        BIG_STEP,
        dtype=wp.float32,
    )
    wp.tile_store(out, t)
    wp.tile_store(outf, u)
