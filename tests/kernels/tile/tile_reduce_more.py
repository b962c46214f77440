import warp as wp

# wp.tile() of vectors, quaternions and matrices (spread over leading
# dimensions unless preserve_type=True) and untile() back; whole-tile
# reductions of vector tiles; reductions along an axis with each operator's
# identity (add, mul, min, max) or none (a @wp.func).


@wp.func
def partial_product(a: float, b: float) -> float:
    return a * b


@wp.kernel
def spread_values(v: wp.array[wp.vec3], m: wp.array[wp.mat22], out_v: wp.array[wp.vec3], out_m: wp.array[wp.mat22]):
    i = wp.tid()
    tv = wp.tile(v[i] * 1.0)
    tm = wp.tile(m[i] * 1.0)
    tq = wp.tile(wp.quat_identity())
    tp = wp.tile(v[i] * 2.0, preserve_type=True)
    out_v[i] = wp.untile(tv) + wp.untile(tp)
    out_m[i] = wp.untile(tm)
    s = wp.tile_reduce(wp.add, tp)
    out_v[i] = out_v[i] + s[0] + wp.vec3(wp.untile(tq)[3])


@wp.kernel
def reduce_along(x: wp.array2d[float], n: wp.array2d[int], out: wp.array[float], out_i: wp.array[int]):
    t = wp.tile_load(x, shape=(4, 8), storage="shared")
    c = wp.tile_load(n, shape=(4, 8))
    wp.tile_store(out, wp.tile_reduce(wp.mul, t, axis=1))
    wp.tile_store(out, wp.tile_reduce(wp.min, t, axis=1))
    wp.tile_store(out, wp.tile_reduce(wp.max, t, 1))
    wp.tile_store(out, wp.tile_reduce(partial_product, t, axis=1))
    wp.tile_store(out_i, wp.tile_reduce(wp.max, c, axis=1))
    wp.tile_store(out_i, wp.tile_reduce(wp.add, c, axis=1))
