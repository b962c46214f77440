import warp as wp


@wp.kernel(enable_backward=False)
def fill(out: wp.array(dtype=float), value: float):
    i = wp.tid()
    out[i] = value
