import warp as wp


@wp.func
def solve_cubic(a: float, b: float, c: float, d: float, x0: float, tol: float, max_iter: int) -> float:
    x = x0
    it = int(0)
    while it < max_iter:
        f = ((a * x + b) * x + c) * x + d
        df = (3.0 * a * x + 2.0 * b) * x + c
        if wp.abs(df) < 1.0e-12:
            break
        dx = f / df
        x = x - dx
        if wp.abs(dx) < tol:
            break
        it += 1
    return x


@wp.kernel
def roots(coeffs: wp.array(dtype=wp.vec4), out: wp.array(dtype=float), tol: float):
    tid = wp.tid()
    c = coeffs[tid]
    out[tid] = solve_cubic(c[0], c[1], c[2], c[3], 0.0, tol, 50)
