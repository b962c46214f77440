import warp as wp


@wp.kernel
def quantize(x: wp.array(dtype=float), y: wp.array(dtype=float), step: float):
    i = wp.tid()
    q = wp.floor(x[i] / step)
    r = wp.ceil(x[i] / step)
    z = wp.round(x[i])
    f = wp.frac(x[i]) + wp.trunc(x[i])
    y[i] = wp.where(q > r, q, r) + z + f + wp.sign(x[i])
