import warp as wp


@wp.func
def horner(x: float, c0: float, c1: float, c2: float, c3: float) -> float:
    return ((c3 * x + c2) * x + c1) * x + c0


@wp.func
def power_sum(x: float, n: int) -> float:
    s = float(0.0)
    p = float(1.0)
    for _k in range(n):
        s = s + p
        p = p * x
    return s


@wp.kernel
def eval_series(x: wp.array(dtype=float), y: wp.array(dtype=float), n: int):
    i = wp.tid()
    y[i] = horner(x[i], 1.0, 0.5, 0.25, 0.125) + power_sum(x[i], n)
