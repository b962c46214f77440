import warp as wp


@wp.func
def double_it(x: float):
    return x * 2.0


@wp.func
def scaled(x: float, scale: float = 2.0, offset: int = 3):
    return x * scale + float(offset)


@wp.func
def apply_default(x: float, g: wp.Function = double_it):
    return g(x)


@wp.func
def apply_builtin_default(g: wp.Function = wp.cos, x: float = 0.5):
    return g(x)


@wp.kernel
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    y = scaled(x)
    y += scaled(x, 4.0)
    y += scaled(x, offset=7)
    y += scaled(scale=0.5, x=x)
    y += apply_default(x)
    y += apply_builtin_default()
    y += apply_builtin_default(x=x, g=wp.sin)
    out[i] = y
