import warp as wp

# A concrete vector or matrix type called with keywords that repeat its own
# arguments (shape=, length=, a warp dtype=): evaluated after the positional
# arguments and dropped.

mat32d = wp.types.matrix(shape=(3, 2), dtype=wp.float64)


@wp.kernel
def k(out: wp.array[wp.float64]):
    c = mat32d()
    d = mat32d(c, shape=(3, 2))
    e = wp.mat22(wp.mat22(), shape=(2, 2), dtype=wp.float32)
    v = wp.vec3d(wp.vec3d(), length=3, dtype=wp.float64)
    out[0] = d[1, 1] + wp.float64(e[0, 0]) + v[2]
