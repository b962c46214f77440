import warp as wp


@wp.kernel
def vector_slices(arr_x: wp.array(dtype=wp.vec2), arr_y: wp.array(dtype=wp.transform), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    f = wp.vec3f(4.0, 5.0, 6.0)
    n = 3
    out[0] = f[0:n]
    r = f[::-1]
    t = f[1:]
    u = f[-2:]
    out[1] = wp.vec3(r[0], t[0], u[1])
    q = wp.quat(1.0, 2.0, 3.0, 4.0)
    out[2] = q[1:]
    y = arr_y[i]
    y[:2] = arr_x[i]
    y[1:-4] += arr_x[i][:2]
    y[3:1:-1] -= arr_x[i][0:]
    arr_y[i] = y


@wp.kernel
def static_lengths(v1: wp.vec2, out: wp.array(dtype=int)):
    v2 = wp.vec3()
    m = wp.identity(n=wp.static(len(v1) + len(v2) - 2), dtype=float)
    t = wp.transform_identity(wp.float32)
    k = 3
    out[0] = wp.static(len(t)) + wp.static(k + 1) + int(m[0, 0])
    q = wp.quat()
    out[1] = wp.static(len(q))

