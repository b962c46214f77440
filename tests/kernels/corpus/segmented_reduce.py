import warp as wp


@wp.kernel
def segment_max_argmax(values: wp.array(dtype=float), segment_ids: wp.array(dtype=int), seg_max: wp.array(dtype=float), seg_count: wp.array(dtype=int), seg_sum: wp.array(dtype=float)):
    i = wp.tid()
    s = segment_ids[i]
    v = values[i]
    wp.atomic_max(seg_max, s, v)
    wp.atomic_add(seg_count, s, 1)
    old = wp.atomic_add(seg_sum, s, v)
    if old < 0.0:
        wp.atomic_sub(seg_count, s, 0)
