import warp as wp


@wp.kernel
def sign_split(x: wp.array(dtype=float), pos_part: wp.array(dtype=float), neg_part: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    pos_part[i] = v if v > 0.0 else 0.0
    neg_part[i] = 0.0 if v > 0.0 else -v
