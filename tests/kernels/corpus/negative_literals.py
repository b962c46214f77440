import warp as wp


@wp.kernel
def odd_literals(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    nz = -0.0
    n = -1.5
    huge = 1.0e38
    sub = 1.0e-40
    odd = 16777217.0
    third = 1.0 / 3.0
    out[i] = v * nz + n + huge * sub + odd * 0.0 + third - -2.0 + (-v)
