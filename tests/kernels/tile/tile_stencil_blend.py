import warp as wp

TX = wp.constant(8)
TY = wp.constant(4)


@wp.kernel
def blend(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array2d(dtype=float), w: float):
    i, j = wp.tid()
    ta = wp.tile_load(a, shape=(TX, TY), offset=(i * TX, j * TY))
    tb = wp.tile_load(b, shape=(TX, TY), offset=(i * TX, j * TY))
    mix = ta * w + tb * (1.0 - w)
    corner = mix[0, 0]
    center = mix[4, 2]
    d = wp.tile_map(wp.sub, mix, ta)
    wp.tile_store(out, d, offset=(i * TX, j * TY))
    out[i, j] = corner + center
