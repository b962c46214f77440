import warp as wp


@wp.func
def tet_volume(a: wp.vec3, b: wp.vec3, c: wp.vec3, d: wp.vec3) -> float:
    return wp.dot(wp.cross(b - a, c - a), d - a) / 6.0


@wp.kernel
def neo_hookean(
    x: wp.array(dtype=wp.vec3),
    tets: wp.array2d(dtype=int),
    Dm_inv: wp.array(dtype=wp.mat33),
    rest_volume: wp.array(dtype=float),
    mu: float,
    lam: float,
    f: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    i = tets[tid, 0]
    j = tets[tid, 1]
    k = tets[tid, 2]
    l = tets[tid, 3]
    x0 = x[i]
    x10 = x[j] - x0
    x20 = x[k] - x0
    x30 = x[l] - x0
    Ds = wp.mat33(x10[0], x20[0], x30[0], x10[1], x20[1], x30[1], x10[2], x20[2], x30[2])
    F = Ds * Dm_inv[tid]
    J = wp.determinant(F)
    if J <= 0.0:
        return
    FinvT = wp.transpose(wp.inverse(F))
    P = mu * (F - FinvT) + lam * wp.log(J) * FinvT
    H = P * wp.transpose(Dm_inv[tid]) * (-rest_volume[tid])
    f1 = wp.vec3(H[0, 0], H[1, 0], H[2, 0])
    f2 = wp.vec3(H[0, 1], H[1, 1], H[2, 1])
    f3 = wp.vec3(H[0, 2], H[1, 2], H[2, 2])
    f0 = -(f1 + f2 + f3)
    vol = tet_volume(x0, x[j], x[k], x[l])
    s = wp.where(vol > 0.0, 1.0, 0.0)
    wp.atomic_add(f, i, f0 * s)
    wp.atomic_add(f, j, f1 * s)
    wp.atomic_add(f, k, f2 * s)
    wp.atomic_add(f, l, f3 * s)
