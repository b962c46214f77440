import warp as wp


@wp.kernel
def f64_consts(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    pi = wp.float64(3.141592653589793)
    e = wp.float64(2.718281828459045)
    tiny = wp.float64(1.0e-300)
    third = wp.float64(1.0) / wp.float64(3.0)
    out[i] = v * pi + e + tiny + third + wp.float64(0.1)
