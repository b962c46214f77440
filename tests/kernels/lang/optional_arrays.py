# An array as a condition is warp's null check: optional inputs of a kernel.
import warp as wp


@wp.kernel
def optional_offsets(
    offsets: wp.array(dtype=float),
    weights: wp.array(dtype=float),
    out: wp.array(dtype=float),
):
    i = wp.tid()
    base = float(0.0)
    if offsets:
        base = offsets[i]
    scale = wp.where(weights, 2.0, 1.0)
    if not weights:
        scale = scale * 0.5
    out[i] = base * scale


@wp.kernel
def optional_points(points: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    p = out[i]
    out[i] = wp.where(points, p * wp.float64(0.5), p)
