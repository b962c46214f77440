import warp as wp

# Query objects merged by an if/else: one kind stays that kind; two kinds
# become their erased parent (wp::where), whose iteration dispatches on the
# kind stored at run time (bvh_query_next_dynamic, mesh_query_next_dynamic).


@wp.kernel
def ray_or_aabb(
    bvh_id: wp.uint64,
    use_ray: bool,
    lower: wp.vec3,
    upper: wp.vec3,
    start: wp.vec3,
    dir: wp.vec3,
    hits: wp.array[int],
):
    if use_ray:
        query = wp.bvh_query_ray(bvh_id, start, dir)
    else:
        query = wp.bvh_query_aabb(bvh_id, lower, upper)
    n = int(0)
    while wp.bvh_query_next(query, n):
        hits[n] = 1


@wp.kernel
def ray_or_ray(bvh_id: wp.uint64, flip: bool, start: wp.vec3, dir: wp.vec3, hits: wp.array[int]):
    if flip:
        query = wp.bvh_query_ray(bvh_id, start, -dir)
    else:
        query = wp.bvh_query_ray(bvh_id, start, dir)
    n = int(0)
    while wp.bvh_query_next(query, n):
        hits[n] = 1


@wp.kernel
def mesh_sphere_or_aabb(mesh: wp.uint64, use_sphere: bool, c: wp.vec3, r: float, lo: wp.vec3, hi: wp.vec3, hits: wp.array[int]):
    if use_sphere:
        q = wp.mesh_query_sphere(mesh, c, r)
    else:
        q = wp.mesh_query_aabb(mesh, lo, hi)
    face = int(0)
    while wp.mesh_query_next(q, face):
        wp.atomic_add(hits, face, 1)
