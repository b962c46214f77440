import warp as wp


@wp.kernel
def resize_bilinear(src: wp.array2d(dtype=wp.vec3), dst: wp.array2d(dtype=wp.vec3), src_h: int, src_w: int, dst_h: int, dst_w: int):
    y, x = wp.tid()
    sy = (float(y) + 0.5) * float(src_h) / float(dst_h) - 0.5
    sx = (float(x) + 0.5) * float(src_w) / float(dst_w) - 0.5
    y0 = wp.clamp(int(wp.floor(sy)), 0, src_h - 1)
    x0 = wp.clamp(int(wp.floor(sx)), 0, src_w - 1)
    y1 = wp.min(y0 + 1, src_h - 1)
    x1 = wp.min(x0 + 1, src_w - 1)
    ty = wp.clamp(sy - float(y0), 0.0, 1.0)
    tx = wp.clamp(sx - float(x0), 0.0, 1.0)
    top = wp.lerp(src[y0, x0], src[y0, x1], tx)
    bot = wp.lerp(src[y1, x0], src[y1, x1], tx)
    dst[y, x] = wp.lerp(top, bot, ty)
