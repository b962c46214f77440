import warp as wp


@wp.kernel
def unroll_limits(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for k in range(16):
        s += a[i, k]
    for k in range(17):
        s += a[i, k]
    for k in range(0, 32, 2):
        s -= a[i, k]
    for k in range(0, 34, 2):
        s -= a[i, k]
    for k in range(100):
        if k > 3:
            break
        s += 1.0
    for k in range(0):
        s += 1.0
    for k in range(5, 2):
        s += 2.0
    out[i] = s
