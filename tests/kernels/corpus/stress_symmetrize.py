import warp as wp


@wp.kernel
def symmetrize_and_clamp(S: wp.array(dtype=wp.mat33), limit: float, out: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    A = S[i]
    for r in range(3):
        for c in range(r + 1, 3):
            avg = 0.5 * (A[r][c] + A[c][r])
            A[r][c] = avg
            A[c][r] = avg
    for d in range(3):
        if A[d][d] > limit:
            A[d][d] = limit
    out[i] = A
