import warp as wp


@wp.func
def aabb_overlap(lo_a: wp.vec3, hi_a: wp.vec3, lo_b: wp.vec3, hi_b: wp.vec3) -> bool:
    if hi_a[0] < lo_b[0] or hi_b[0] < lo_a[0]:
        return False
    if hi_a[1] < lo_b[1] or hi_b[1] < lo_a[1]:
        return False
    if hi_a[2] < lo_b[2] or hi_b[2] < lo_a[2]:
        return False
    return True


@wp.kernel
def broadphase_pairs(
    lower: wp.array(dtype=wp.vec3),
    upper: wp.array(dtype=wp.vec3),
    n: int,
    pair_count: wp.array(dtype=int),
    pairs: wp.array(dtype=wp.vec2i),
    max_pairs: int,
):
    i = wp.tid()
    for j in range(i + 1, n):
        if not aabb_overlap(lower[i], upper[i], lower[j], upper[j]):
            continue
        slot = wp.atomic_add(pair_count, 0, 1)
        if slot >= max_pairs:
            return
        pairs[slot] = wp.vec2i(i, j)
