import warp as wp


@wp.kernel
def pick(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.select(x[i] > 0.0, 1.0, 2.0)
