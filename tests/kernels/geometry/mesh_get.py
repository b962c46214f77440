import warp as wp

# wp.mesh_get(id): the mesh's arrays read through its fields.


@wp.kernel
def centroids(mesh_id: wp.uint64, out: wp.array[wp.vec3]):
    tid = wp.tid()
    mesh = wp.mesh_get(mesh_id)
    i = mesh.indices[tid * 3 + 0]
    j = mesh.indices[tid * 3 + 1]
    k = mesh.indices[tid * 3 + 2]
    out[tid] = (mesh.points[i] + mesh.points[j] + mesh.points[k]) / 3.0


@wp.kernel(enable_backward=False)
def advect(mesh_id: wp.uint64, dt: float):
    tid = wp.tid()
    mesh = wp.mesh_get(mesh_id)
    mesh.points[tid] = mesh.points[tid] + mesh.velocities[tid] * dt
