# Transform composition and scaling (`mul` of two transforms, of a scalar and a transform).
import warp as wp


@wp.kernel
def transform_compose(
    a: wp.array(dtype=wp.transform),
    b: wp.array(dtype=wp.transform),
    s: float,
    out: wp.array(dtype=wp.transform),
):
    i = wp.tid()
    x = a[i] * b[i]
    out[i] = x * s + 2.0 * x
