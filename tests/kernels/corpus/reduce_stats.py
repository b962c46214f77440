import warp as wp


@wp.kernel
def reduce_stats(
    values: wp.array(dtype=float),
    sum_out: wp.array(dtype=float),
    min_out: wp.array(dtype=float),
    max_out: wp.array(dtype=float),
    count_out: wp.array(dtype=int),
    threshold: float,
):
    tid = wp.tid()
    v = values[tid]
    wp.atomic_add(sum_out, 0, v)
    wp.atomic_add(sum_out, 1, v * v)
    wp.atomic_min(min_out, 0, v)
    wp.atomic_max(max_out, 0, v)
    if v > threshold:
        wp.atomic_add(count_out, 0, 1)


@wp.kernel
def reduce_bounds(points: wp.array(dtype=wp.vec3), lower: wp.array(dtype=wp.vec3), upper: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    p = points[tid]
    wp.atomic_min(lower, 0, p)
    wp.atomic_max(upper, 0, p)
