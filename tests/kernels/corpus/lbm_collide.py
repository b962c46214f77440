import warp as wp


@wp.func
def d2q9_dir(k: int) -> wp.vec2:
    v = wp.vec2(0.0, 0.0)
    if k == 1:
        v = wp.vec2(1.0, 0.0)
    elif k == 2:
        v = wp.vec2(0.0, 1.0)
    elif k == 3:
        v = wp.vec2(-1.0, 0.0)
    elif k == 4:
        v = wp.vec2(0.0, -1.0)
    elif k == 5:
        v = wp.vec2(1.0, 1.0)
    elif k == 6:
        v = wp.vec2(-1.0, 1.0)
    elif k == 7:
        v = wp.vec2(-1.0, -1.0)
    elif k == 8:
        v = wp.vec2(1.0, -1.0)
    return v


@wp.func
def d2q9_weight(k: int) -> float:
    if k == 0:
        return 4.0 / 9.0
    if k <= 4:
        return 1.0 / 9.0
    return 1.0 / 36.0


@wp.kernel
def bgk_collide(f: wp.array3d(dtype=float), omega: float):
    i, j = wp.tid()
    rho = float(0.0)
    u = wp.vec2()
    for k in range(9):
        fk = f[i, j, k]
        rho += fk
        u += d2q9_dir(k) * fk
    u = u / rho
    usq = wp.dot(u, u)
    for k in range(9):
        cu = wp.dot(d2q9_dir(k), u)
        feq = d2q9_weight(k) * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)
        f[i, j, k] = f[i, j, k] + omega * (feq - f[i, j, k])
