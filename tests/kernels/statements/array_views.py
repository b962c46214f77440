import warp as wp


@wp.kernel
def row_views(a: wp.array2d(dtype=float), b: wp.array3d(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    row = a[i]
    out[i] = row[0] + a[i][1]
    plane = b[i]
    line = plane[1]
    line[0].x = 2.0
    r2 = b[i, 1]
    r2[1][2] += out[i]
    r3 = r2
    r3[0].y = 1.0


@wp.kernel
def slices(x: wp.array(dtype=float), y: wp.array2d(dtype=float), z: wp.array3d(dtype=float)):
    i = wp.tid()
    y_slice = y[0:1, :]
    y_slice[0, i] = 2.0 * x[i]
    s = x[:3]
    s2 = x[3::-1]
    s3 = y[:2, 1]
    s4 = z[i, 1:, ::2]
    s[0] = s2[1] + s3[0] + s4[0, 0]


@wp.kernel
def shapes_and_len(a: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    i = wp.tid()
    n = a.shape[0]
    if i < a.shape[1]:
        out[i] = n + len(a) + len(a[i])


@wp.kernel
def composite_len(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
    i = wp.tid()
    v = a[i]
    m = wp.mat22()
    q = wp.quat()
    out[i] = len(v) + len(m) + len(a[i]) + len(q)


@wp.kernel
def rebind_view_of_other_rank(arr: wp.array2d(dtype=int), out: wp.array(dtype=int)):
    sub = arr[:2]
    out[0] = sub[1, 0]
    sub = arr[:2, 1]
    out[1] = sub[0]
