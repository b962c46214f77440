import warp as wp

# Query objects as @wp.func parameters: a concrete kind, its erased parent
# (any BVH or mesh query), and a hash grid query of half precision points.


@wp.func
def count_bvh_hits(query: wp.BvhQuery, hits: wp.array[int]) -> int:
    n = int(0)
    bounds_nr = int(0)
    while wp.bvh_query_next(query, bounds_nr):
        hits[bounds_nr] = 1
        n += 1
    return n


@wp.func
def count_mesh_hits(query: wp.MeshQueryAABB, hits: wp.array[int]):
    face = int(0)
    while wp.mesh_query_aabb_next(query, face):
        hits[face] = 1


@wp.func
def nearest_half(query: wp.HashGridQuery[wp.float16], center: wp.vec3h, points: wp.array[wp.vec3h]) -> int:
    best = int(-1)
    best_d = wp.float16(1000.0)
    index = int(0)
    while wp.hash_grid_query_next(query, index):
        d = wp.length(points[index] - center)
        if d < best_d:
            best_d = d
            best = index
    return best


@wp.kernel
def erased_queries(bvh: wp.uint64, mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, hits: wp.array[int], counts: wp.array[int]):
    tid = wp.tid()
    counts[tid] = count_bvh_hits(wp.bvh_query_ray(bvh, lo, hi), hits) + count_bvh_hits(wp.bvh_query_aabb(bvh, lo, hi), hits)
    count_mesh_hits(wp.mesh_query_aabb(mesh, lo, hi), hits)


@wp.kernel
def half_grid(grid: wp.uint64, queries: wp.array[wp.vec3h], points: wp.array[wp.vec3h], radius: wp.float16, closest: wp.array[int]):
    tid = wp.tid()
    center = queries[tid]
    closest[tid] = nearest_half(wp.hash_grid_query(grid, center, radius), center, points)
