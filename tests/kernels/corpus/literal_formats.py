import warp as wp


@wp.kernel
def physical_constants(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    eps = 1e-7
    big = 1.0e20
    tiny = 2.5e-30
    third = 0.3333333333333333
    g = 9.81
    c = 299792458.0
    h = 6.62607015e-34
    r = 0.1 + 0.2
    out[i] = v * eps + big * tiny + third * g + c * h + r - 1.5e3 + 100000000.0 + 123456789.123
