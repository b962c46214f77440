import warp as wp


@wp.kernel
def row_prefix_sum(data: wp.array2d(dtype=float), out: wp.array2d(dtype=float), ncols: int):
    row = wp.tid()
    acc = float(0.0)
    for c in range(ncols):
        acc = acc + data[row, c]
        out[row, c] = acc
