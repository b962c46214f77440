import warp as wp


@wp.kernel
def compact_active(
    flags: wp.array(dtype=int),
    values: wp.array(dtype=wp.vec3),
    counter: wp.array(dtype=int),
    out: wp.array(dtype=wp.vec3),
    out_ids: wp.array(dtype=int),
    capacity: int,
):
    tid = wp.tid()
    if flags[tid] == 0:
        return
    slot = wp.atomic_add(counter, 0, 1)
    if slot < capacity:
        out[slot] = values[tid]
        out_ids[slot] = tid
