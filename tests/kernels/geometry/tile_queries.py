import warp as wp


@wp.kernel
def tile_mesh_hits(mesh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    i, _j = wp.tid()
    query = wp.tile_mesh_query_aabb(mesh, lowers[i], uppers[i])
    while wp.tile_query_valid(query):
        hits = wp.tile_mesh_query_aabb_next(query)
        face = wp.untile(hits)
        if face >= 0:
            wp.atomic_add(counts, i, 1)


@wp.kernel
def tile_bvh_hits(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    i, _j = wp.tid()
    boxes = wp.tile_bvh_query_aabb(bvh, starts[i], dirs[i])
    while wp.tile_query_valid(boxes):
        idx = wp.untile(wp.tile_bvh_query_next(boxes))
        if idx >= 0:
            wp.atomic_add(counts, i, 1)
    rays = wp.tile_bvh_query_ray(bvh, starts[i], dirs[i])
    while wp.tile_query_valid(rays):
        t = wp.tile_bvh_query_next(rays)
        counts[i] += wp.untile(t)
