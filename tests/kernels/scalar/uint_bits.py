import warp as wp


@wp.kernel
def bit_ops(a: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32), shift: wp.int32):
    i = wp.tid()
    v = a[i]
    out[i] = ((v << shift) ^ (v >> 1)) & 255 | (~v & 15)
