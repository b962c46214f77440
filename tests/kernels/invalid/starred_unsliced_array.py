import warp as wp


@wp.kernel
def k(arr: wp.array(dtype=float), out: wp.array(dtype=wp.vec3)):
    out[0] = wp.vec3(*arr)
