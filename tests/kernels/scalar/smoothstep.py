import warp as wp


@wp.kernel
def smoothstep_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float), edge0: float, edge1: float):
    i = wp.tid()
    t = wp.clamp((x[i] - edge0) / (edge1 - edge0), 0.0, 1.0)
    y[i] = t * t * (3.0 - 2.0 * t)
