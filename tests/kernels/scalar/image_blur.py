import warp as wp


@wp.kernel
def box_blur(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), width: int, height: int):
    x, y = wp.tid()
    total = float(0.0)
    count = int(0)
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            sx = wp.clamp(x + dx, 0, width - 1)
            sy = wp.clamp(y + dy, 0, height - 1)
            total += src[sx, sy]
            count += 1
    dst[x, y] = total / float(count)
