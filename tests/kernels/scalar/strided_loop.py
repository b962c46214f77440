import warp as wp


@wp.kernel
def strided_sum(x: wp.array(dtype=float), out: wp.array(dtype=float), n: int, stride: int):
    i = wp.tid()
    s = float(0.0)
    for j in range(i, n, stride):
        s += x[j]
        if s > 1000.0:
            break
    for k in range(30, 0, -3):
        s = s - float(k) * 0.001
    out[i] = s
