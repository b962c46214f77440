import warp as wp


@wp.kernel
def k4(a: wp.array(dtype=float), n: int):
    i = wp.tid()
    s = float(0.0)
    for j in range(n):
        s = s + a[j]
        if s > 10.0:
            break
    for k in range(3):
        s = s * 2.0
    for m in range(1, 40, 2):
        s += float(m)
    c = int(0)
    while c < n:
        c = c + 1
        if c == 5:
            continue
        s = s - 1.0
    a[i] = s
