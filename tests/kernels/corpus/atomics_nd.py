import warp as wp


@wp.kernel
def rasterize_points(
    pts: wp.array(dtype=wp.vec3),
    colors: wp.array(dtype=wp.vec4),
    img: wp.array2d(dtype=wp.vec4),
    depth: wp.array2d(dtype=float),
    count: wp.array3d(dtype=int),
    width: int,
    height: int,
):
    tid = wp.tid()
    p = pts[tid]
    x = int(p[0] * float(width))
    y = int(p[1] * float(height))
    if x < 0 or x >= width or y < 0 or y >= height:
        return
    wp.atomic_add(img, y, x, colors[tid])
    wp.atomic_min(depth, y, x, p[2])
    wp.atomic_add(count, y, x, 0, 1)
    wp.atomic_max(count, y, x, 1, tid)
    img[y, x] += wp.vec4(0.0, 0.0, 0.0, 1.0)
    count[y, x, 2] -= 1
