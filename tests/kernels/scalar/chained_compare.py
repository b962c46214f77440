import warp as wp


@wp.kernel
def band_pass(x: wp.array(dtype=float), y: wp.array(dtype=float), lo: float, hi: float):
    i = wp.tid()
    v = x[i]
    if lo <= v < hi:
        y[i] = v
    else:
        y[i] = 0.0
