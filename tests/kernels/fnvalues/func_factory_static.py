import warp as wp


def make_plain():
    @wp.func
    def f():
        return 17

    return f


def make_cond(flag):
    if flag:

        @wp.func
        def g(x: float):
            return x + 1.0

    else:

        @wp.func
        def g(x: float):
            return x * 2.0

    return g


def make_closure(value: int, scale=2.0):
    offset = value * 3

    @wp.func
    def h(x: float):
        return x * scale + float(value + offset)

    return h


plain_1 = make_plain()
plain_2 = make_plain()
cond_1 = make_cond(True)
cond_2 = make_cond(False)
closure_1 = make_closure(4)
closure_2 = make_closure(5, 0.5)


@wp.kernel
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    out[i] = float(plain_1() + plain_2()) + cond_1(x) + cond_2(x) + closure_1(x) + closure_2(x)
