import warp as wp


@wp.kernel
def leaky_relu(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32), slope: wp.float32):
    tid = wp.tid()
    v = x[tid]
    if v < 0.0:
        v = v * slope
    out[tid] = v
