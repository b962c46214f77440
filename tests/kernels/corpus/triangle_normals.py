import warp as wp


@wp.func
def triangle_normal(a: wp.vec3, b: wp.vec3, c: wp.vec3) -> wp.vec3:
    n = wp.cross(b - a, c - a)
    return wp.normalize(n)


@wp.func
def triangle_area(a: wp.vec3, b: wp.vec3, c: wp.vec3) -> float:
    return 0.5 * wp.length(wp.cross(b - a, c - a))


@wp.kernel
def compute_vertex_normals(
    points: wp.array(dtype=wp.vec3),
    indices: wp.array(dtype=wp.int32, ndim=2),
    normals: wp.array(dtype=wp.vec3),
    areas: wp.array(dtype=float),
):
    tid = wp.tid()
    i = indices[tid, 0]
    j = indices[tid, 1]
    k = indices[tid, 2]
    a = points[i]
    b = points[j]
    c = points[k]
    n = triangle_normal(a, b, c)
    area = triangle_area(a, b, c)
    areas[tid] = area
    wn = n * area
    wp.atomic_add(normals, i, wn)
    wp.atomic_add(normals, j, wn)
    wp.atomic_add(normals, k, wn)


@wp.kernel
def normalize_normals(normals: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    n = normals[tid]
    l = wp.length(n)
    if l > 1.0e-8:
        normals[tid] = n / l
    else:
        normals[tid] = wp.vec3(0.0, 1.0, 0.0)
