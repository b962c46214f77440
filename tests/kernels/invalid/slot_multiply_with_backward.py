import warp as wp


@wp.kernel
def k(src: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0].x *= src[0]
