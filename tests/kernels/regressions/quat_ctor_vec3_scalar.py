import warp as wp


@wp.kernel
def k(w: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    q[i] = wp.quat(w[i], 0.0)
