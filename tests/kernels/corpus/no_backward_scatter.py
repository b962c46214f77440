import warp as wp


@wp.kernel(enable_backward=False)
def scatter_counts(keys: wp.array(dtype=int), counts: wp.array(dtype=int), num_bins: int):
    tid = wp.tid()
    k = keys[tid]
    if k < 0 or k >= num_bins:
        return
    wp.atomic_add(counts, k, 1)


@wp.kernel(enable_backward=False)
def exclusive_scan_serial(counts: wp.array(dtype=int), offsets: wp.array(dtype=int), n: int):
    total = int(0)
    for i in range(n):
        offsets[i] = total
        total += counts[i]
    offsets[n] = total
