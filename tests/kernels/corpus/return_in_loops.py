import warp as wp


@wp.func
def find_first(a: wp.array(dtype=float), start: int, end: int, threshold: float) -> int:
    for i in range(start, end):
        if a[i] > threshold:
            return i
    return -1


@wp.func
def ray_sphere(o: wp.vec3, d: wp.vec3, c: wp.vec3, r: float) -> float:
    m = o - c
    b = wp.dot(m, d)
    cc = wp.dot(m, m) - r * r
    if cc > 0.0 and b > 0.0:
        return -1.0
    disc = b * b - cc
    if disc < 0.0:
        return -1.0
    t = -b - wp.sqrt(disc)
    return wp.max(t, 0.0)


@wp.kernel
def first_hits(a: wp.array(dtype=float), seg: int, threshold: float, out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = find_first(a, i * seg, (i + 1) * seg, threshold)


@wp.kernel
def trace_spheres(origins: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), centers: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float), num: int, t_out: wp.array(dtype=float), id_out: wp.array(dtype=int)):
    i = wp.tid()
    o = origins[i]
    d = wp.normalize(dirs[i])
    best = float(1.0e30)
    best_id = int(-1)
    for s in range(num):
        t = ray_sphere(o, d, centers[s], radii[s])
        if t < 0.0:
            continue
        if t < best:
            best = t
            best_id = s
    if best_id < 0:
        t_out[i] = -1.0
        id_out[i] = -1
        return
    t_out[i] = best
    id_out[i] = best_id
