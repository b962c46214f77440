import warp as wp


@wp.func
def fa(x: float) -> float:
    return x + 3.0


@wp.func
def fb(x: float) -> float:
    return x * 2.0


@wp.kernel
def ka(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = fa(a[i])


@wp.kernel
def kb(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = fb(a[i]) - 1.0
