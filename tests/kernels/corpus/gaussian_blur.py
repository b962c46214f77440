import warp as wp


@wp.kernel
def gaussian_h(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), radius: int, sigma: float, width: int):
    y, x = wp.tid()
    total = float(0.0)
    wsum = float(0.0)
    inv2s2 = 1.0 / (2.0 * sigma * sigma)
    for k in range(-radius, radius + 1):
        xx = wp.clamp(x + k, 0, width - 1)
        fk = float(k)
        g = wp.exp(-fk * fk * inv2s2)
        total += g * src[y, xx]
        wsum += g
    dst[y, x] = total / wsum


@wp.kernel
def gaussian3x3(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), width: int, height: int):
    y, x = wp.tid()
    acc = float(0.0)
    for dy in range(3):
        for dx in range(3):
            wy = 2.0 - wp.abs(float(dy - 1))
            wx = 2.0 - wp.abs(float(dx - 1))
            sx = wp.clamp(x + dx - 1, 0, width - 1)
            sy = wp.clamp(y + dy - 1, 0, height - 1)
            acc += wx * wy * src[sy, sx]
    dst[y, x] = acc / 16.0
