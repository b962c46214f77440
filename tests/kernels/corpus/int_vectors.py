import warp as wp


@wp.kernel
def cell_index(points: wp.array(dtype=wp.vec3), cell_size: float, dims: wp.vec3i, cells: wp.array(dtype=int), coords: wp.array(dtype=wp.vec3i)):
    tid = wp.tid()
    p = points[tid] / cell_size
    c = wp.vec3i(int(wp.floor(p[0])), int(wp.floor(p[1])), int(wp.floor(p[2])))
    c = wp.vec3i(wp.clamp(c[0], 0, dims[0] - 1), wp.clamp(c[1], 0, dims[1] - 1), wp.clamp(c[2], 0, dims[2] - 1))
    o = c + wp.vec3i(1, 1, 1)
    o = o - wp.vec3i(1)
    coords[tid] = o * 2
    cells[tid] = (c[2] * dims[1] + c[1]) * dims[0] + c[0]
