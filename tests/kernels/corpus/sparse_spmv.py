import warp as wp


@wp.kernel
def csr_spmv(row_offsets: wp.array(dtype=int), cols: wp.array(dtype=int), vals: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float), alpha: float, beta: float):
    row = wp.tid()
    start = row_offsets[row]
    end = row_offsets[row + 1]
    s = float(0.0)
    for k in range(start, end):
        c = cols[k]
        s += vals[k] * x[c]
    y[row] = alpha * s + beta * y[row]


@wp.kernel
def bsr3_spmv(row_offsets: wp.array(dtype=int), cols: wp.array(dtype=int), blocks: wp.array(dtype=wp.mat33), x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    row = wp.tid()
    s = wp.vec3()
    k = row_offsets[row]
    end = row_offsets[row + 1]
    while k < end:
        c = cols[k]
        s += blocks[k] * x[c]
        k += 1
    y[row] = s
