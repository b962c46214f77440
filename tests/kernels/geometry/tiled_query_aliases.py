import warp as wp

# The block-wide queries under warp's deprecated names (mesh_query_aabb_tiled,
# bvh_query_aabb_tiled, bvh_query_ray_tiled and their _next_tiled): the same
# calls as tile_mesh_query_aabb, tile_bvh_query_aabb, ...


@wp.kernel
def tiled_mesh_hits(mesh: wp.uint64, lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    i, _j = wp.tid()
    query = wp.mesh_query_aabb_tiled(mesh, lowers[i], uppers[i])
    while wp.tile_query_valid(query):
        hits = wp.mesh_query_aabb_next_tiled(query)
        face = wp.untile(hits)
        if face >= 0:
            wp.atomic_add(counts, i, 1)


@wp.kernel
def tiled_bvh_hits(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    i, _j = wp.tid()
    boxes = wp.bvh_query_aabb_tiled(bvh, starts[i], dirs[i])
    while wp.tile_query_valid(boxes):
        idx = wp.untile(wp.bvh_query_next_tiled(boxes))
        if idx >= 0:
            wp.atomic_add(counts, i, 1)
    rays = wp.bvh_query_ray_tiled(bvh, starts[i], dirs[i])
    while wp.tile_query_valid(rays):
        t = wp.bvh_query_next_tiled(rays)
        counts[i] += wp.untile(t)
