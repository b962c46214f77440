import warp as wp


@wp.kernel
def k(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    hit = bool(False)
    for j in range(n):
        if a[j] > 0.0:
            hit = True
    if hit:
        a[i] = 1.0
