import warp as wp


@wp.func
def square(x: float):
    return x * x


@wp.kernel(enable_backward=False)
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.grad(square)(a[i])
    g = wp.grad(square)
    out[i] += g(2.0)
