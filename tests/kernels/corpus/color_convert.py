import warp as wp


@wp.func
def srgb_to_linear(c: float) -> float:
    if c <= 0.04045:
        return c / 12.92
    return wp.pow((c + 0.055) / 1.055, 2.4)


@wp.func
def luminance(c: wp.vec3) -> float:
    return wp.dot(c, wp.vec3(0.2126, 0.7152, 0.0722))


@wp.kernel
def rgba_to_gray(src: wp.array2d(dtype=wp.vec4), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    c = src[i, j]
    lin = wp.vec3(srgb_to_linear(c[0]), srgb_to_linear(c[1]), srgb_to_linear(c.z))
    dst[i, j] = luminance(lin) * c.w


@wp.kernel
def rgb_to_hsv(src: wp.array(dtype=wp.vec3), dst: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    c = src[tid]
    r = c.x
    g = c.y
    b = c.z
    cmax = wp.max(r, wp.max(g, b))
    cmin = wp.min(r, wp.min(g, b))
    delta = cmax - cmin
    h = float(0.0)
    if delta > 0.0:
        if cmax == r:
            h = 60.0 * ((g - b) / delta % 6.0)
        elif cmax == g:
            h = 60.0 * ((b - r) / delta + 2.0)
        else:
            h = 60.0 * ((r - g) / delta + 4.0)
    s = 0.0
    if cmax > 0.0:
        s = delta / cmax
    dst[tid] = wp.vec3(h, s, cmax)
