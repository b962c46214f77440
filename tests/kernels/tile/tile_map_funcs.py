import warp as wp

# tile_map with @wp.func operators (their C++ name passed, and their adjoint),
# with one to four arguments, plain values beside tiles, and builtins of
# vector tiles; explicit tile_extract and tile_full.


@wp.func
def combine(a: float, b: float, c: int) -> float:
    if c > 0:
        return a * b
    return a + b


@wp.func
def twice(x: float) -> float:
    return 2.0 * x


@wp.func
def scaled(v: wp.vec3, s: float) -> wp.vec3:
    return v * s


@wp.func
def blend(a: float, b: float, w: float, bias: float) -> float:
    return a * w + b * (1.0 - w) + bias


@wp.kernel
def user_maps(x: wp.array[float], y: wp.array[float], n: wp.array[int], v: wp.array[wp.vec3], out: wp.array[float], out_v: wp.array[wp.vec3]):
    a = wp.tile_load(x, shape=16)
    b = wp.tile_load(y, shape=16)
    c = wp.tile_load(n, shape=16)
    d = wp.tile_map(combine, a, b, c)
    e = wp.tile_map(twice, d)
    f = wp.tile_map(wp.add, a, e)
    g = wp.tile_map(blend, a, b, f, 0.5)
    tv = wp.tile_load(v, shape=16)
    wp.tile_store(out_v, wp.tile_map(scaled, tv, 2.0))
    wp.tile_store(out_v, wp.tile_map(wp.normalize, tv))
    wp.tile_store(out, g)


@wp.kernel
def extract_and_fill(x: wp.array[float], y: wp.array2d[wp.vec3], out: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=16)
    u = wp.tile_load(y, shape=(2, 8))
    a = t[3]
    b = wp.tile_extract(t, 4)
    c = wp.tile_extract(u, 1, 2)
    d = wp.tile_extract(u, 1, 2, 0)
    e = wp.tile_full(16, 2.0)
    f = wp.tile_full(shape=(2, 8), value=wp.vec3(1.0), storage="shared")
    g = wp.tile_full(16, value=3, dtype=float)
    out[i] = a + b + c[0] + d + e[0] + g[1] + f[0, 0][1]
