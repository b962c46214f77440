import warp as wp


@wp.kernel
def block_matmul(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float), n: int):
    i, j = wp.tid()
    acc = float(0.0)
    kb = int(0)
    while kb < n:
        for kk in range(4):
            k = kb + kk
            if k >= n:
                break
            acc += A[i, k] * B[k, j]
        kb += 4
    C[i, j] = acc


@wp.kernel
def stencil_dyn_in_const(u: wp.array2d(dtype=float), out: wp.array2d(dtype=float), r: int, nx: int, ny: int):
    i, j = wp.tid()
    s = float(0.0)
    for axis in range(2):
        for d in range(-r, r + 1):
            if d == 0:
                continue
            ii = i
            jj = j
            if axis == 0:
                ii = wp.clamp(i + d, 0, nx - 1)
            else:
                jj = wp.clamp(j + d, 0, ny - 1)
            s += u[ii, jj]
    out[i, j] = s
