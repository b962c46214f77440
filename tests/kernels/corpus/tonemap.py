import warp as wp


@wp.func
def aces(x: wp.vec3) -> wp.vec3:
    a = 2.51
    b = 0.03
    c = 2.43
    d = 0.59
    e = 0.14
    num = wp.cw_mul(x, x * a + wp.vec3(b))
    den = wp.cw_mul(x, x * c + wp.vec3(d)) + wp.vec3(e)
    r = wp.cw_div(num, den)
    return wp.vec3(wp.clamp(r[0], 0.0, 1.0), wp.clamp(r[1], 0.0, 1.0), wp.clamp(r[2], 0.0, 1.0))


@wp.kernel
def tonemap(hdr: wp.array2d(dtype=wp.vec4), ldr: wp.array2d(dtype=wp.vec4), exposure: float, gamma: float):
    i, j = wp.tid()
    c = hdr[i, j]
    rgb = wp.vec3(c[0], c[1], c[2]) * exposure
    m = aces(rgb)
    inv_g = 1.0 / gamma
    ldr[i, j] = wp.vec4(wp.pow(m[0], inv_g), wp.pow(m[1], inv_g), wp.pow(m[2], inv_g), c[3])
