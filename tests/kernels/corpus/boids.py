import warp as wp


@wp.kernel
def boids_step(
    pos: wp.array(dtype=wp.vec2),
    vel: wp.array(dtype=wp.vec2),
    new_vel: wp.array(dtype=wp.vec2),
    n: int,
    r_sep: float,
    r_align: float,
    r_coh: float,
    max_speed: float,
):
    i = wp.tid()
    p = pos[i]
    v = vel[i]
    sep = wp.vec2()
    ali = wp.vec2()
    coh = wp.vec2()
    n_ali = int(0)
    n_coh = int(0)
    for j in range(n):
        if j == i:
            continue
        d = pos[j] - p
        dist = wp.length(d)
        if dist < r_sep and dist > 0.0:
            sep -= d / (dist * dist)
        if dist < r_align:
            ali += vel[j]
            n_ali += 1
        if dist < r_coh:
            coh += pos[j]
            n_coh += 1
    if n_ali > 0:
        ali = ali / float(n_ali) - v
    if n_coh > 0:
        coh = coh / float(n_coh) - p
    v = v + sep * 1.5 + ali * 0.125 + coh * 0.01
    s = wp.length(v)
    if s > max_speed:
        v = v * (max_speed / s)
    new_vel[i] = v
