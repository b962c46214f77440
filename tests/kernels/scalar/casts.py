import warp as wp


@wp.kernel
def cast_mix(a: wp.array(dtype=int), b: wp.array(dtype=float), c: wp.array(dtype=wp.float64)):
    i = wp.tid()
    f = float(a[i]) * 0.5
    k = int(b[i] * 10.0)
    d = wp.float64(b[i])
    c[i] = d * wp.float64(2.0) + wp.float64(k)
    b[i] = wp.float32(a[i]) + f
