import warp as wp


@wp.kernel
def cross_of_vec2(a: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = wp.cross(a[i], a[i])
