import warp as wp


@wp.kernel
def mask_active(x: wp.array(dtype=wp.vec3), active: wp.array(dtype=bool), lo: float, hi: float, n_active: wp.array(dtype=int)):
    tid = wp.tid()
    p = x[tid]
    ok = lo < p[0] < hi and lo < p[1] < hi and lo < p[2] < hi
    was = active[tid]
    now = ok and not was
    active[tid] = ok
    if now or (was and ok):
        wp.atomic_add(n_active, 0, 1)
    if ok == False:
        wp.atomic_sub(n_active, 1, 1)
