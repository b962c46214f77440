import warp as wp


@wp.func
def cholesky33(A: wp.mat33) -> wp.mat33:
    L = wp.mat33()
    for j in range(3):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        d = wp.sqrt(wp.max(s, 1.0e-12))
        L[j, j] = d
        for i in range(j + 1, 3):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
    return L


@wp.kernel
def factor_blocks(A: wp.array(dtype=wp.mat33), L: wp.array(dtype=wp.mat33), err: wp.array(dtype=float)):
    i = wp.tid()
    l = cholesky33(A[i])
    L[i] = l
    R = l * wp.transpose(l) - A[i]
    e = float(0.0)
    for r in range(3):
        for c in range(3):
            e += R[r, c] * R[r, c]
    err[i] = wp.sqrt(e)
