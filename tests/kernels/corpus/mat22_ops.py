import warp as wp


@wp.func
def rot2(theta: float) -> wp.mat22:
    c = wp.cos(theta)
    s = wp.sin(theta)
    return wp.mat22(c, -s, s, c)


@wp.kernel
def strain2d(
    X: wp.array(dtype=wp.vec2),
    tris: wp.array(dtype=wp.vec3i),
    Dm_inv: wp.array(dtype=wp.mat22),
    theta: float,
    strain: wp.array(dtype=wp.mat22),
):
    tid = wp.tid()
    t = tris[tid]
    R = rot2(theta)
    a = R * X[t[0]]
    b = R * X[t[1]]
    c = R * X[t[2]]
    Ds = wp.mat22(b[0] - a[0], c[0] - a[0], b[1] - a[1], c[1] - a[1])
    F = Ds * Dm_inv[tid]
    E = 0.5 * (wp.transpose(F) * F - wp.identity(n=2, dtype=float))
    strain[tid] = E + wp.inverse(F) * 0.0 + wp.diag(wp.vec2(wp.determinant(F), 0.0)) * 0.0
