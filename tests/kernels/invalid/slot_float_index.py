import warp as wp


@wp.kernel
def k(dst: wp.array(dtype=wp.vec3)):
    dst[0.0].x = 1.0
