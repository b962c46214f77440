import warp as wp


@wp.kernel
def masked_scale(x: wp.array(dtype=float), mask: wp.array(dtype=int), scale: float, n: int):
    i = wp.tid()
    if i >= n:
        return
    if mask[i] == 0:
        return
    x[i] = x[i] * scale
