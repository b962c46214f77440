import warp as wp


@wp.kernel
def track_extrema(x: wp.array(dtype=float), lo: wp.array(dtype=float), hi: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_min(lo, 0, x[i])
    wp.atomic_max(hi, 0, x[i])
