import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = x[idx[i]]
