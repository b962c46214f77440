import warp as wp


@wp.kernel
def k(a: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.vec3(a[i])
