import warp as wp


@wp.kernel
def mutate_const(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    s = 0.0
    for j in range(n):
        s = s + a[j]
    a[i] = s
