import warp as wp


@wp.func
def wind_force(a: wp.vec3, b: wp.vec3, c: wp.vec3, va: wp.vec3, vb: wp.vec3, vc: wp.vec3, wind: wp.vec3, drag: float, lift: float) -> wp.vec3:
    n = wp.cross(b - a, c - a)
    area = wp.length(n) * 0.5
    if area < 1.0e-10:
        return wp.vec3(0.0)
    n = wp.normalize(n)
    v = (va + vb + vc) / 3.0 - wind
    vn = wp.dot(v, n)
    vt = v - n * vn
    fd = n * (-drag * vn * wp.abs(vn) * area)
    fl = wp.vec3()
    vtl = wp.length(vt)
    if vtl > 1.0e-6:
        fl = vt * (-lift * vn * area / vtl)
    return (fd + fl) / 3.0


@wp.kernel
def aero(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), tris: wp.array(dtype=int, ndim=2), wind: wp.vec3, drag: float, lift: float, f: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    i = tris[t, 0]
    j = tris[t, 1]
    k = tris[t, 2]
    fw = wind_force(x[i], x[j], x[k], v[i], v[j], v[k], wind, drag, lift)
    wp.atomic_add(f, i, fw)
    wp.atomic_add(f, j, fw)
    wp.atomic_add(f, k, fw)
