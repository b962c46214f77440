import warp as wp


@wp.func
def scale(x: float, s: float) -> float:
    return x * s


@wp.kernel
def call_with_one(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = scale(a[i])
