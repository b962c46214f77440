import warp as wp


@wp.kernel
def vec_components(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i].x = b[i]
    a[i][1] = 2.0 * b[i]
    a[i].z += b[i]
    a[i][0] -= 1.0


@wp.kernel
def mat_rows_and_elements(m: wp.array(dtype=wp.mat22), v: wp.array(dtype=wp.vec2), b: wp.array(dtype=float)):
    i = wp.tid()
    m[i][0, 1] = b[i]
    m[i][1] = v[i]
    m[i][0][0] += b[i]
    m[i][1] += v[i]


@wp.kernel
def quat_components(q: wp.array(dtype=wp.quat), b: wp.array(dtype=float)):
    i = wp.tid()
    q[i].w = b[i]
    q[i][2] += b[i]
    q[i].x -= 0.5


@wp.kernel
def two_d_array_of_vectors(a: wp.array2d(dtype=wp.vec3), b: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j].y = b[i, j]
    a[i][j][2] += b[i, j]
