import warp as wp


@wp.func
def pair_fn(x: float, y: float):
    return x * 3.0 + y / 3.0, y * y


@wp.func_grad(pair_fn)
def pair_fn_grad(x: float, y: float, adj_ret0: float, adj_ret1: float):
    wp.adjoint[x] += adj_ret0 * 3.0
    wp.adjoint[y] += adj_ret0 / 3.0 + 2.0 * y * adj_ret1


@wp.kernel
def custom_grad_pair_kernel(xs: wp.array[float], ys: wp.array[float], out: wp.array[float]):
    i = wp.tid()
    a, b = pair_fn(xs[i], ys[i])
    out[i] = a + b
