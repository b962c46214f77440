import warp as wp


@wp.kernel
def transcendental(x: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.sin(v) * wp.cos(v) + wp.tan(v * 0.1)
    out[i, 1] = wp.asin(wp.clamp(v, -1.0, 1.0)) + wp.acos(wp.clamp(v * 0.5, -1.0, 1.0))
    out[i, 2] = wp.atan(v) + wp.atan2(v, 1.0 + v * v)
    out[i, 3] = wp.sinh(v * 0.1) + wp.cosh(v * 0.1) + wp.tanh(v)
    out[i, 4] = wp.exp(-v * v) + wp.log(1.0 + v * v) + wp.log2(2.0 + v * v) + wp.log10(10.0 + v * v)
    out[i, 5] = wp.sqrt(wp.abs(v)) + wp.cbrt(v) + wp.pow(wp.abs(v), 1.5) + v ** 2.0
    out[i, 6] = wp.sign(v) + wp.floor(v) + wp.ceil(v) + wp.round(v) + wp.trunc(v) + wp.frac(v)
    out[i, 7] = wp.step(v) + wp.lerp(0.0, 1.0, wp.clamp(v, 0.0, 1.0))
