import warp as wp


@wp.kernel
def py_builtins(x: wp.array(dtype=float), k: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i]
    b = abs(a) + min(a, 1.0) + max(a, -1.0) + round(a)
    n = abs(k[i]) + min(k[i], 3) + max(k[i], 0)
    out[i] = b + float(n) + pow(a, 2.0)
