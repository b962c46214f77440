import warp as wp


@wp.kernel
def sample_volume(volume: wp.uint64, points: wp.array(dtype=wp.vec3), values: wp.array(dtype=float), normals: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    p = wp.volume_world_to_index(volume, points[tid])
    grad = wp.vec3()
    d = wp.volume_sample_grad_f(volume, p, wp.Volume.LINEAR, grad)
    s = wp.volume_sample_f(volume, p, wp.Volume.CLOSEST)
    v = wp.volume_sample_v(volume, p, wp.Volume.LINEAR)
    values[tid] = d + s + v[1]
    normals[tid] = wp.volume_index_to_world_dir(volume, grad) + wp.volume_index_to_world(volume, p) + wp.volume_world_to_index_dir(volume, v)


@wp.kernel
def lookup_volume(volume: wp.uint64, out: wp.array(dtype=float), ids: wp.array(dtype=int)):
    i, j, k = wp.tid()
    f = wp.volume_lookup_f(volume, i, j, k)
    v = wp.volume_lookup_v(volume, i, j, k)
    n = wp.volume_lookup_i(volume, i, j, k)
    idx = wp.volume_lookup_index(volume, i, j, k)
    wp.volume_store_f(volume, i, j, k, f * 2.0)
    wp.volume_store_v(volume, i, j, k, v)
    wp.volume_store_i(volume, i, j, k, n + 1)
    out[idx] = f + float(wp.volume_sample_i(volume, wp.vec3(1.0)))
    ids[idx] = wp.volume_voxel_count(volume)


@wp.kernel
def volume_double(volume: wp.uint64, points: wp.array(dtype=wp.vec3d)):
    tid = wp.tid()
    points[tid] = wp.volume_index_to_world(volume, wp.volume_world_to_index(volume, points[tid]))
