import warp as wp


@wp.kernel
def p2g_apic(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    C: wp.array(dtype=wp.mat33),
    mass: float,
    inv_dx: float,
    dx: float,
    grid_m: wp.array3d(dtype=float),
    grid_mv: wp.array3d(dtype=wp.vec3),
):
    p = wp.tid()
    xp = x[p] * inv_dx
    base_x = int(xp[0] - 0.5)
    base_y = int(xp[1] - 0.5)
    base_z = int(xp[2] - 0.5)
    fx = xp - wp.vec3(float(base_x), float(base_y), float(base_z))
    w0 = wp.vec3(0.5) * 0.0
    wa = wp.vec3(1.5) - fx
    wb = fx - wp.vec3(1.0)
    wc = fx - wp.vec3(0.5)
    w0 = wp.cw_mul(wa, wa) * 0.5
    w1 = wp.vec3(0.75) - wp.cw_mul(wb, wb)
    w2 = wp.cw_mul(wc, wc) * 0.5
    affine = C[p] * mass
    for i in range(3):
        for j in range(3):
            for k in range(3):
                wx = w0[0]
                if i == 1:
                    wx = w1[0]
                elif i == 2:
                    wx = w2[0]
                wy = w0[1]
                if j == 1:
                    wy = w1[1]
                elif j == 2:
                    wy = w2[1]
                wz = w0[2]
                if k == 1:
                    wz = w1[2]
                elif k == 2:
                    wz = w2[2]
                weight = wx * wy * wz
                dpos = (wp.vec3(float(i), float(j), float(k)) - fx) * dx
                mv = (v[p] * mass + affine * dpos) * weight
                wp.atomic_add(grid_m, base_x + i, base_y + j, base_z + k, weight * mass)
                wp.atomic_add(grid_mv, base_x + i, base_y + j, base_z + k, mv)
