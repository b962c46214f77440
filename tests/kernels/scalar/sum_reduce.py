import warp as wp


@wp.kernel
def sum_squares(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    wp.atomic_add(total, 0, v * v)
