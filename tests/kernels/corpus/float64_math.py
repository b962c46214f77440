import warp as wp


@wp.func
def gauss64(x: wp.float64, mu: wp.float64, s: wp.float64) -> wp.float64:
    d = (x - mu) / s
    return wp.exp(wp.float64(-0.5) * d * d) / (s * wp.sqrt(wp.float64(2.0) * wp.float64(3.141592653589793)))


@wp.kernel
def eval_gauss(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), mu: wp.float64, s: wp.float64):
    i = wp.tid()
    xi = x[i]
    y[i] = gauss64(xi, mu, s) + wp.log(wp.float64(1.0) + wp.abs(xi)) - wp.floor(xi) * wp.float64(0.0)
    if xi < wp.float64(0.0):
        y[i] = wp.max(y[i], wp.float64(0.0))


@wp.kernel
def mat_f64(A: wp.array(dtype=wp.mat33d), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    m = A[i]
    det = wp.determinant(m)
    out[i] = wp.transpose(m) * b[i] / det
