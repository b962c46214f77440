import warp as wp

# Ray and primitive intersection, bounding boxes, closest points, barycentrics and normals.


@wp.func
def ray_sphere(origin: wp.vec3, dir: wp.vec3, center: wp.vec3, radius: float, t_max: float):
    oc = origin - center
    b = wp.dot(oc, dir)
    c = wp.dot(oc, oc) - radius * radius
    disc = b * b - c
    t = t_max
    if disc > 0.0:
        root = -b - wp.sqrt(disc)
        if root > 0.0 and root < t_max:
            t = root
    return t


@wp.kernel
def intersect_ray_spheres(
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    centers: wp.array(dtype=wp.vec3),
    radii: wp.array(dtype=float),
    t_max: float,
    hit_t: wp.array(dtype=float),
    hit_id: wp.array(dtype=int),
):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    closest = t_max
    closest_id = int(-1)
    for s in range(centers.shape[0]):
        t = ray_sphere(o, d, centers[s], radii[s], closest)
        if t < closest:
            closest = t
            closest_id = s
    hit_t[tid] = closest
    hit_id[tid] = closest_id


@wp.kernel
def intersect_ray_plane(
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    plane_normal: wp.vec3,
    plane_d: float,
    hit_points: wp.array(dtype=wp.vec3),
    hit_mask: wp.array(dtype=int),
):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    denom = wp.dot(plane_normal, d)
    hit = int(0)
    p = o
    if wp.abs(denom) > 1.0e-6:
        t = (plane_d - wp.dot(plane_normal, o)) / denom
        if t >= 0.0:
            p = o + d * t
            hit = 1
    hit_points[tid] = p
    hit_mask[tid] = hit


@wp.func
def moller_trumbore(o: wp.vec3, d: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    # returns (t, u, v); t < 0 means no hit
    e1 = b - a
    e2 = c - a
    pvec = wp.cross(d, e2)
    det = wp.dot(e1, pvec)
    result = wp.vec3(-1.0, 0.0, 0.0)
    if wp.abs(det) > 1.0e-8:
        inv_det = 1.0 / det
        tvec = o - a
        u = wp.dot(tvec, pvec) * inv_det
        qvec = wp.cross(tvec, e1)
        v = wp.dot(d, qvec) * inv_det
        if u >= 0.0 and v >= 0.0 and u + v <= 1.0:
            result = wp.vec3(wp.dot(e2, qvec) * inv_det, u, v)
    return result


@wp.kernel
def intersect_ray_triangles(
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    vertices: wp.array(dtype=wp.vec3),
    tri_indices: wp.array2d(dtype=int),
    num_tris: int,
    hit_t: wp.array(dtype=float),
    hit_uv: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    best = float(1.0e10)
    uv = wp.vec2()
    for f in range(num_tris):
        r = moller_trumbore(o, d, vertices[tri_indices[f, 0]], vertices[tri_indices[f, 1]], vertices[tri_indices[f, 2]])
        if r[0] > 0.0 and r[0] < best:
            best = r[0]
            uv = wp.vec2(r[1], r[2])
    hit_t[tid] = best
    hit_uv[tid] = uv


@wp.func
def ray_aabb_slab(o: wp.vec3, inv_d: wp.vec3, lower: wp.vec3, upper: wp.vec3):
    t0 = wp.cw_mul(lower - o, inv_d)
    t1 = wp.cw_mul(upper - o, inv_d)
    tmin = wp.min(t0, t1)
    tmax = wp.max(t0, t1)
    t_enter = wp.max(wp.max(tmin[0], tmin[1]), tmin[2])
    t_exit = wp.min(wp.min(tmax[0], tmax[1]), tmax[2])
    return wp.vec2(t_enter, t_exit)


@wp.kernel
def intersect_ray_boxes(
    origins: wp.array(dtype=wp.vec3),
    dirs: wp.array(dtype=wp.vec3),
    box_lower: wp.array(dtype=wp.vec3),
    box_upper: wp.array(dtype=wp.vec3),
    hit_count: wp.array(dtype=int),
    entry_t: wp.array(dtype=float),
):
    tid = wp.tid()
    o = origins[tid]
    d = dirs[tid]
    inv_d = wp.vec3(
        1.0 / wp.where(wp.abs(d[0]) > 1.0e-9, d[0], 1.0e-9),
        1.0 / wp.where(wp.abs(d[1]) > 1.0e-9, d[1], 1.0e-9),
        1.0 / wp.where(wp.abs(d[2]) > 1.0e-9, d[2], 1.0e-9),
    )
    count = int(0)
    first = float(1.0e10)
    for b in range(box_lower.shape[0]):
        span = ray_aabb_slab(o, inv_d, box_lower[b], box_upper[b])
        if span[0] <= span[1] and span[1] >= 0.0:
            count += 1
            first = wp.min(first, wp.max(span[0], 0.0))
    hit_count[tid] = count
    entry_t[tid] = first


@wp.kernel
def aabb_overlap_pairs(
    lower: wp.array(dtype=wp.vec3),
    upper: wp.array(dtype=wp.vec3),
    query_lower: wp.vec3,
    query_upper: wp.vec3,
    overlap_count: wp.array(dtype=int),
    overlap_ids: wp.array(dtype=int),
):
    tid = wp.tid()
    lo = lower[tid]
    hi = upper[tid]
    separated = lo[0] > query_upper[0] or hi[0] < query_lower[0]
    separated = separated or lo[1] > query_upper[1] or hi[1] < query_lower[1]
    separated = separated or lo[2] > query_upper[2] or hi[2] < query_lower[2]
    if not separated:
        slot = wp.atomic_add(overlap_count, 0, 1)
        overlap_ids[slot] = tid


@wp.kernel
def compute_aabbs(
    vertices: wp.array(dtype=wp.vec3),
    tri_indices: wp.array(dtype=wp.vec3i),
    margin: float,
    lower: wp.array(dtype=wp.vec3),
    upper: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    t = tri_indices[tid]
    a = vertices[t[0]]
    b = vertices[t[1]]
    c = vertices[t[2]]
    pad = wp.vec3(margin)
    lower[tid] = wp.min(wp.min(a, b), c) - pad
    upper[tid] = wp.max(wp.max(a, b), c) + pad


@wp.func
def closest_point_on_triangle(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    # returns the barycentric coordinates of the closest point (Ericson, section 5.1.5)
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = wp.dot(ab, ap)
    d2 = wp.dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return wp.vec3(1.0, 0.0, 0.0)
    bp = p - b
    d3 = wp.dot(ab, bp)
    d4 = wp.dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return wp.vec3(0.0, 1.0, 0.0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return wp.vec3(1.0 - v, v, 0.0)
    cp = p - c
    d5 = wp.dot(ab, cp)
    d6 = wp.dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return wp.vec3(0.0, 0.0, 1.0)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return wp.vec3(1.0 - w, 0.0, w)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return wp.vec3(0.0, 1.0 - w, w)
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return wp.vec3(1.0 - v - w, v, w)


@wp.kernel
def point_triangle_distance(
    points: wp.array(dtype=wp.vec3),
    tri_a: wp.array(dtype=wp.vec3),
    tri_b: wp.array(dtype=wp.vec3),
    tri_c: wp.array(dtype=wp.vec3),
    dist: wp.array(dtype=float),
    bary: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = points[tid]
    a = tri_a[tid]
    b = tri_b[tid]
    c = tri_c[tid]
    w = closest_point_on_triangle(p, a, b, c)
    q = a * w[0] + b * w[1] + c * w[2]
    dist[tid] = wp.length(p - q)
    bary[tid] = w


@wp.kernel
def interpolate_barycentric(
    tri_indices: wp.array(dtype=wp.vec3i),
    vertex_colors: wp.array(dtype=wp.vec3),
    face_ids: wp.array(dtype=int),
    bary_uv: wp.array(dtype=wp.vec2),
    colors: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    t = tri_indices[face_ids[tid]]
    uv = bary_uv[tid]
    u = wp.clamp(uv[0], 0.0, 1.0)
    v = wp.clamp(uv[1], 0.0, 1.0 - u)
    colors[tid] = vertex_colors[t[0]] * (1.0 - u - v) + vertex_colors[t[1]] * u + vertex_colors[t[2]] * v


@wp.kernel
def accumulate_vertex_normals(
    vertices: wp.array(dtype=wp.vec3),
    tri_indices: wp.array(dtype=wp.vec3i),
    normals: wp.array(dtype=wp.vec3),
    area: wp.array(dtype=float),
):
    tid = wp.tid()
    t = tri_indices[tid]
    a = vertices[t[0]]
    b = vertices[t[1]]
    c = vertices[t[2]]
    n = wp.cross(b - a, c - a)
    wp.atomic_add(normals, t[0], n)
    wp.atomic_add(normals, t[1], n)
    wp.atomic_add(normals, t[2], n)
    wp.atomic_add(area, 0, 0.5 * wp.length(n))


@wp.kernel
def segment_closest_points(
    p0: wp.array(dtype=wp.vec3),
    p1: wp.array(dtype=wp.vec3),
    center: wp.vec3,
    capsule_radius: float,
    signed_dist: wp.array(dtype=float),
):
    tid = wp.tid()
    a = p0[tid]
    ab = p1[tid] - a
    len_sq = wp.dot(ab, ab) + 1.0e-8
    s = wp.clamp(wp.dot(center - a, ab) / len_sq, 0.0, 1.0)
    closest = a + ab * s
    signed_dist[tid] = wp.length(center - closest) - capsule_radius
