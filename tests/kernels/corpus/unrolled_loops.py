import warp as wp


@wp.kernel
def fir(src: wp.array(dtype=float), dst: wp.array(dtype=float), n: int):
    i = wp.tid()
    acc = float(0.0)
    for k in range(5):
        j = i + k - 2
        if j < 0 or j >= n:
            continue
        w = 1.0
        if k == 1 or k == 3:
            w = 4.0
        elif k == 2:
            w = 6.0
        acc += w * src[j]
    dst[i] = acc / 16.0


@wp.kernel
def strided(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for k in range(0, 8, 2):
        s += src[i * 8 + k]
    for k in range(7, 0, -2):
        s -= src[i * 8 + k]
    for k in range(10, 4, -1):
        if k == 6:
            break
        s += float(k)
    dst[i] = s
