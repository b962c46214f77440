import warp as wp


@wp.kernel
def poly(x: wp.array(dtype=float), y: wp.array(dtype=float), c0: float, c1: float, c2: float, c3: float):
    i = wp.tid()
    v = x[i]
    y[i] = (c0
            + c1 * v
            + c2 * v * v
            + c3 * v * v * v)
