import warp as wp

LENGTH = wp.constant(4)
vec3h = wp.types.vector(length=3, dtype=wp.float16)


@wp.kernel
def vector_forms(out: wp.array(dtype=float)):
    a = wp.vec3(1.0, 2.0, 3.0)
    b = wp.types.vector(a, dtype=wp.float16)
    c = wp.types.vector(a)
    d = wp.types.vector(a, length=3)
    e = wp.types.vector(1.0, length=2)
    f = wp.types.vector(1.0, 2.0, 3.0, dtype=float)
    g = wp.types.vector(length=2, dtype=wp.float16)
    h = wp.types.vector(0.0, 1.0, dtype=wp.float64)
    v = wp.types.vector(length=(LENGTH), dtype=float)
    for i in range(LENGTH):
        v[i] = float(i)
    out[0] = c[0] + d[1] + e[1] + f[2] + v[3] + float(b[0]) + float(g[1]) + float(h[1])


@wp.kernel
def matrix_quat_transform_forms(out: wp.array(dtype=float)):
    m = wp.types.matrix(1.0, 2.0, 3.0, 4.0, shape=(2, 2))
    z = wp.types.matrix(shape=(3, 3), dtype=float)
    f = wp.types.matrix(2.0, shape=(2, 3))
    c = wp.types.matrix(m)
    q = wp.types.quaternion(1.0, 2.0, 3.0, 4.0, dtype=wp.float32)
    q0 = wp.types.quaternion(dtype=wp.float64)
    p = wp.vec3(1.0, 2.0, 3.0)
    q2 = wp.types.quaternion(p, 1.0)
    t = wp.transformation(p, q)
    t2 = wp.types.transformation(t)
    t3 = wp.transform(p=p)
    t4 = wp.transformation(1.5)
    out[0] = m[0, 1] + z[1, 1] + f[1, 2] + c[1, 0] + q[2] + float(q0[3]) + q2[1] + t[3] + t2[4] + t3[6] + t4[0]


@wp.kernel
def bare_warp_names(out: wp.array(dtype=wp.vec3)):
    v = vec3(1.0, 2.0, 3.0)
    m = mat33(1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0)
    h = vec3h(wp.float16(1.0))
    out[0] = m * v + vec3(float(h[0]))


@wp.kernel
def warp_constants_as_arguments(out: wp.array(dtype=wp.float64)):
    v = wp.vec3d(wp.PI, wp.E, wp.tau)
    s = wp.sin(wp.pi)
    out[0] = v[0] + wp.float64(s)
