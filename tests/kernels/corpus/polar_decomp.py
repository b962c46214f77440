import warp as wp


@wp.func
def polar_rotation(F: wp.mat33, iters: int) -> wp.mat33:
    R = F
    for _ in range(iters):
        Rit = wp.transpose(wp.inverse(R))
        R = (R + Rit) * 0.5
    return R


@wp.kernel
def corotated_stress(F: wp.array(dtype=wp.mat33), P: wp.array(dtype=wp.mat33), mu: float, lam: float):
    tid = wp.tid()
    f = F[tid]
    R = polar_rotation(f, 8)
    J = wp.determinant(f)
    I = wp.identity(n=3, dtype=float)
    FinvT = wp.transpose(wp.inverse(f))
    P[tid] = 2.0 * mu * (f - R) + lam * (J - 1.0) * J * FinvT + I * 0.0
