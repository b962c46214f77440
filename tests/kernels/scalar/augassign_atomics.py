import warp as wp


@wp.kernel
def scatter_add(src: wp.array(dtype=float), idx: wp.array(dtype=int), dst: wp.array(dtype=float), w: float):
    i = wp.tid()
    j = idx[i]
    acc = src[i]
    acc *= w
    acc += 1.0
    acc -= src[i] * 0.5
    acc /= 2.0
    dst[j] += acc
    dst[j] -= 0.25
