import warp as wp


@wp.func
def rgb_to_yuv(c: wp.vec3) -> wp.vec3:
    M = wp.mat33(0.299, 0.587, 0.114, -0.14713, -0.28886, 0.436, 0.615, -0.51499, -0.10001)
    return M * c


@wp.func
def yuv_to_rgb(c: wp.vec3) -> wp.vec3:
    M = wp.mat33(1.0, 0.0, 1.13983, 1.0, -0.39465, -0.58060, 1.0, 2.03211, 0.0)
    return M * c


@wp.kernel
def adjust_saturation(img: wp.array2d(dtype=wp.vec4), sat: float, brightness: float):
    i, j = wp.tid()
    px = img[i, j]
    yuv = rgb_to_yuv(wp.vec3(px.x, px.y, px.z))
    yuv = wp.vec3(yuv[0] * brightness, yuv[1] * sat, yuv[2] * sat)
    rgb = yuv_to_rgb(yuv)
    rgb = wp.vec3(wp.clamp(rgb[0], 0.0, 1.0), wp.clamp(rgb[1], 0.0, 1.0), wp.clamp(rgb[2], 0.0, 1.0))
    img[i, j] = wp.vec4(rgb[0], rgb[1], rgb[2], px.w)
