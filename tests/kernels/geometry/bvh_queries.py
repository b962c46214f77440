import warp as wp


@wp.kernel
def bvh_boxes(bvh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3), hits: wp.array(dtype=int)):
    tid = wp.tid()
    query = wp.bvh_query_aabb(bvh, lowers[tid], uppers[tid])
    index = int(0)
    n = int(0)
    while wp.bvh_query_next(query, index):
        n += 1
    root = wp.bvh_get_group_root(bvh, 1)
    query2 = wp.bvh_query_aabb(bvh, lowers[tid], uppers[tid], root)
    while wp.bvh_query_next(query2, index, 2.0):
        hits[index] = 1
    hits[tid] += n


@wp.kernel
def bvh_shapes(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), radius: float, hits: wp.array(dtype=int)):
    tid = wp.tid()
    ray = wp.bvh_query_ray(bvh, starts[tid], dirs[tid])
    sphere = wp.bvh_query_sphere(bvh, starts[tid], radius)
    capsule = wp.bvh_query_capsule(bvh, starts[tid], dirs[tid], radius)
    i = int(0)
    while wp.bvh_query_next(ray, i):
        hits[i] += 1
    while wp.bvh_query_next(sphere, i):
        hits[i] += 2
    while wp.bvh_query_next(capsule, i, radius):
        hits[i] += 3
