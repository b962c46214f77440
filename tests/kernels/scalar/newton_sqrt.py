import warp as wp


@wp.kernel
def newton_sqrt(x: wp.array(dtype=float), out: wp.array(dtype=float), tol: float):
    i = wp.tid()
    a = x[i]
    g = a * 0.5 + 0.5
    it = int(0)
    while wp.abs(g * g - a) > tol and it < 50:
        g = 0.5 * (g + a / g)
        it += 1
    out[i] = g
