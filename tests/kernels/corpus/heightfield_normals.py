import warp as wp


@wp.kernel
def heightfield_normals(h: wp.array2d(dtype=float), normals: wp.array2d(dtype=wp.vec3), nx: int, nz: int, dx: float):
    i, k = wp.tid()
    il = wp.max(i - 1, 0)
    ir = wp.min(i + 1, nx - 1)
    kd = wp.max(k - 1, 0)
    ku = wp.min(k + 1, nz - 1)
    dhdx = (h[ir, k] - h[il, k]) / (float(ir - il) * dx)
    dhdz = (h[i, ku] - h[i, kd]) / (float(ku - kd) * dx)
    normals[i, k] = wp.normalize(wp.vec3(-dhdx, 1.0, -dhdz))
