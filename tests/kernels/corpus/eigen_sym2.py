import warp as wp


@wp.func
def eig_sym22(A: wp.mat22) -> wp.vec2:
    a = A[0, 0]
    b = A[0, 1]
    d = A[1, 1]
    tr = a + d
    det = a * d - b * b
    disc = wp.sqrt(wp.max(tr * tr * 0.25 - det, 0.0))
    return wp.vec2(tr * 0.5 + disc, tr * 0.5 - disc)


@wp.kernel
def principal_stress(S: wp.array(dtype=wp.mat22), eig: wp.array(dtype=wp.vec2), von_mises: wp.array(dtype=float)):
    i = wp.tid()
    s = S[i]
    sym = (s + wp.transpose(s)) * 0.5
    e = eig_sym22(sym)
    eig[i] = e
    von_mises[i] = wp.sqrt(e[0] * e[0] - e[0] * e[1] + e[1] * e[1])
