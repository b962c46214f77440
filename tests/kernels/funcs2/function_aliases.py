import warp as wp


@wp.func
def double_it(a: float):
    return a * 2.0


@wp.func
def square_it(a: float):
    return a * a


TARGET = square_it


@wp.kernel
def call_through_aliases(out: wp.array(dtype=float)):
    f = double_it
    out[0] = f(3.0)
    out[1] = TARGET(out[0])
    g = wp.static(TARGET)
    out[2] = g(out[1])
