import warp as wp


@wp.kernel
def pow_ops(x: wp.array(dtype=float), y: wp.array(dtype=float), k: wp.array(dtype=int)):
    i = wp.tid()
    a = x[i]
    b = a ** 3.0 + 2.0 ** a + a ** 0.5
    c = a // 0.25
    d = a % 1.0
    n = k[i]
    e = n // 3 + n % 3 - (-n) // 2
    m = wp.min(n, 10) + wp.max(n, -10) + wp.abs(n) + wp.sign(n)
    y[i] = b + c + d + float(e) + float(m)
