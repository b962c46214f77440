import warp as wp

# Tile products and quotients with vector and matrix elements (the composite
# side gives the result's element type; a product takes the tile first), and
# bitwise operators on integer tiles.

TILE_M = 8


@wp.kernel
def products(vecs: wp.array[wp.vec3], scalars: wp.array[float], mats: wp.array[wp.mat22], out: wp.array[wp.vec3], out_m: wp.array[wp.mat22]):
    a = wp.tile_load(vecs, shape=TILE_M)
    s = wp.tile_load(scalars, shape=TILE_M)
    b = a * 2.0
    c = 3.0 * a
    d = a / 2.0
    e = 1.0 / a
    f = s * a
    g = a / s
    h = s * wp.vec3(1.0, 2.0, 3.0)
    m = wp.tile_load(mats, shape=TILE_M)
    i = m * 2.0
    j = wp.mat22(1.0, 2.0, 3.0, 4.0) * s
    k = wp.mat22(1.0, 0.0, 0.0, 1.0) / s
    wp.tile_store(out, b + c + d + e + f + g + h)
    wp.tile_store(out_m, i + j + k)


@wp.kernel(enable_backward=False)
def bitwise(a: wp.array[wp.uint32], b: wp.array[wp.uint32], v: wp.array[wp.vec3ui], out: wp.array[wp.uint32], out_v: wp.array[wp.vec3ui]):
    ta = wp.tile_load(a, shape=32)
    tb = wp.tile_load(b, shape=32)
    tv = wp.tile_load(v, shape=32)
    wp.tile_store(out, (ta & tb) | (ta ^ tb))
    wp.tile_store(out_v, tv & tv)
