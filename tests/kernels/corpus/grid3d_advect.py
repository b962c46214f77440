import warp as wp


@wp.func
def lookup(f: wp.array3d(dtype=float), i: int, j: int, k: int, n: int) -> float:
    ii = wp.clamp(i, 0, n - 1)
    jj = wp.clamp(j, 0, n - 1)
    kk = wp.clamp(k, 0, n - 1)
    return f[ii, jj, kk]


@wp.func
def trilinear(f: wp.array3d(dtype=float), p: wp.vec3, n: int) -> float:
    i = int(wp.floor(p[0]))
    j = int(wp.floor(p[1]))
    k = int(wp.floor(p[2]))
    tx = p[0] - float(i)
    ty = p[1] - float(j)
    tz = p[2] - float(k)
    c00 = wp.lerp(lookup(f, i, j, k, n), lookup(f, i + 1, j, k, n), tx)
    c10 = wp.lerp(lookup(f, i, j + 1, k, n), lookup(f, i + 1, j + 1, k, n), tx)
    c01 = wp.lerp(lookup(f, i, j, k + 1, n), lookup(f, i + 1, j, k + 1, n), tx)
    c11 = wp.lerp(lookup(f, i, j + 1, k + 1, n), lookup(f, i + 1, j + 1, k + 1, n), tx)
    c0 = wp.lerp(c00, c10, ty)
    c1 = wp.lerp(c01, c11, ty)
    return wp.lerp(c0, c1, tz)


@wp.kernel
def advect(
    src: wp.array3d(dtype=float),
    dst: wp.array3d(dtype=float),
    vel: wp.array(dtype=wp.vec3, ndim=3),
    n: int,
    dt: float,
):
    i, j, k = wp.tid()
    p = wp.vec3(float(i), float(j), float(k))
    p = p - vel[i, j, k] * dt
    dst[i, j, k] = trilinear(src, p, n)
