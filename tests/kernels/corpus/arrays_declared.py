import warp as wp


@wp.kernel
def copy_layers(
    src: wp.array(dtype=wp.vec3, ndim=1),
    grid: wp.array(dtype=float, ndim=3),
    img: wp.array2d(dtype=wp.vec3),
    out: wp.array(dtype=wp.float32, ndim=2),
    depth: int,
):
    i, j = wp.tid()
    acc = float(0.0)
    for z in range(depth):
        acc += grid[i, j, z]
    c = img[i, j]
    out[i, j] = acc + c[0] + src[i][1]
