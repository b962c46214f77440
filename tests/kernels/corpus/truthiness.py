import warp as wp


@wp.kernel
def count_down(n: wp.array(dtype=int), flags: wp.array(dtype=int), x: wp.array(dtype=float)):
    i = wp.tid()
    k = n[i]
    steps = int(0)
    while k:
        k = k - 1
        steps += 1
        if steps > 64:
            break
    f = flags[i]
    if f:
        x[i] = float(steps)
    if not f:
        x[i] = -float(steps)
    if x[i]:
        x[i] += 1.0
