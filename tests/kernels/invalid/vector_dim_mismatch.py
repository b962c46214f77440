import warp as wp


@wp.kernel
def add_vec2_vec3(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a[i] = a[i] + b[i]
