import warp as wp


@wp.kernel
def mirror_points(x: wp.array(dtype=wp.vec3), axis: int, offset: wp.vec3, out: wp.array(dtype=wp.vec3), mid: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    m = p
    m[axis] = -m[axis]
    offset[1] = 0.0
    m = m + offset
    mid[i] = (p + m) * 0.5
    out[i] = m
