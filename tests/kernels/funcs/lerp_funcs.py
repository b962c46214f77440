import warp as wp


@wp.func
def lerp2(a: float, b: float, t: float) -> float:
    if t < 0.0:
        return a
    return a + (b - a) * t


@wp.func
def sq(x: float):
    return x * x


@wp.kernel
def k5(img: wp.array2d(dtype=float), out: wp.array(dtype=float, ndim=2), t: float):
    i, j = wp.tid()
    v = lerp2(img[i, j], 1.0, t)
    out[i, j] = sq(v)
