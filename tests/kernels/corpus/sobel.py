import warp as wp


@wp.func
def sample(img: wp.array2d(dtype=float), x: int, y: int, w: int, h: int) -> float:
    xx = wp.clamp(x, 0, w - 1)
    yy = wp.clamp(y, 0, h - 1)
    return img[yy, xx]


@wp.kernel
def sobel(img: wp.array2d(dtype=float), mag: wp.array2d(dtype=float), angle: wp.array2d(dtype=float), w: int, h: int):
    y, x = wp.tid()
    gx = float(0.0)
    gy = float(0.0)
    for k in range(3):
        dy = k - 1
        wgt = 1.0
        if dy == 0:
            wgt = 2.0
        gx += wgt * (sample(img, x + 1, y + dy, w, h) - sample(img, x - 1, y + dy, w, h))
    for k in range(3):
        dx = k - 1
        wgt = 2.0 if dx == 0 else 1.0
        gy += wgt * (sample(img, x + dx, y + 1, w, h) - sample(img, x + dx, y - 1, w, h))
    mag[y, x] = wp.sqrt(gx * gx + gy * gy)
    angle[y, x] = wp.atan2(gy, gx)
