import warp as wp


@wp.func
def wrap_index(i: int, n: int) -> int:
    r = i % n
    if r < 0:
        r = r + n
    return r


@wp.func
def smooth(a: float, b: float, c: float):
    return 0.25 * a + 0.5 * b + 0.25 * c


@wp.kernel(enable_backward=False)
def ring_smooth(src: wp.array(dtype=float), dst: wp.array(dtype=float), n: int):
    i = wp.tid()
    l = wrap_index(i - 1, n)
    r = wrap_index(i + 1, n)
    dst[i] = smooth(src[l], src[i], src[r])
