import warp as wp


@wp.kernel
def back_substitute(U: wp.array2d(dtype=float), b: wp.array2d(dtype=float), x: wp.array2d(dtype=float), n: int):
    s = wp.tid()
    for i in range(n - 1, -1, -1):
        acc = b[s, i]
        for j in range(i + 1, n):
            acc -= U[i, j] * x[s, j]
        x[s, i] = acc / U[i, i]


@wp.kernel
def suffix_sum(a: wp.array2d(dtype=int), out: wp.array2d(dtype=int), n: int):
    r = wp.tid()
    acc = int(0)
    for i in range(n - 1, -1, -1):
        acc += a[r, i]
        out[r, i] = acc
