import warp as wp


@wp.func
def double_it(x: float):
    return x * 2.0


@wp.func
def triple_it(x: float):
    return x * 3.0


@wp.func
def apply_unary(g: wp.Function, x: float):
    return g(x)


@wp.func
def apply_binary(g: wp.Function, x: float, y: float):
    return g(x, y)


@wp.func
def apply_rebound(g: wp.Function, x: float):
    f = g
    return f(x) + 1.0


@wp.func
def apply_nested(x: float):
    return apply_unary(triple_it, x)


TARGET = double_it
BUILTIN_TARGET = wp.sin
HANDLERS = {"double": double_it, "triple": triple_it}


@wp.kernel
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    f = triple_it
    s = wp.static(HANDLERS["double"])
    out[i] = (
        apply_unary(double_it, x)
        + apply_unary(triple_it, x)
        + apply_unary(TARGET, x)
        + apply_unary(f, x)
        + apply_unary(s, x)
        + apply_unary(wp.sqrt, x)
        + apply_unary(BUILTIN_TARGET, x)
        + apply_binary(wp.min, x, 2.0)
        + apply_rebound(double_it, x)
        + apply_nested(x)
    )
