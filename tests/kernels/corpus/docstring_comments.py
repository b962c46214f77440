import warp as wp


@wp.func
def cubic_kernel(q: float) -> float:
    """Cubic spline smoothing kernel (unnormalised)."""
    if q < 1.0:
        return 1.0 - 1.5 * q * q + 0.75 * q * q * q  # inner part
    elif q < 2.0:
        t = 2.0 - q
        return 0.25 * t * t * t
    return 0.0


@wp.kernel
def smooth_field(
    x: wp.array(dtype=wp.vec3),  # positions
    f: wp.array(dtype=float),
    out: wp.array(dtype=float),
    h: float,
    n: int,
):
    """Naive O(n^2) kernel smoothing of a scalar field."""
    i = wp.tid()
    acc = float(0.0)  # accumulated value
    wsum = float(0.0)
    # loop over all particles
    for j in range(n):
        q = wp.length(x[i] - x[j]) / h  # normalised distance
        w = cubic_kernel(q)
        acc += w * f[j]
        wsum += w
    if wsum > 0.0:
        out[i] = acc / wsum
    else:
        pass
