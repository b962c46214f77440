import warp as wp

vec5 = wp.types.vector(length=5, dtype=float)
mat23 = wp.types.matrix(shape=(2, 3), dtype=wp.float32)


@wp.kernel
def typed_literals(result: wp.array[wp.float64], r2: wp.array[wp.float16]):
    v = wp.vec3d(3.141592653589793, 2.718281828459045, 1.414213562373095)
    result[0] = v[0]
    h = wp.vec3h(1, 2, 3)
    r2[0] = h[0]
    x = 2.5
    m = wp.mat22d(x, 1.0, 2.0, 3.0)
    q = wp.quath(1.0, 0.0, 0.0, 0.0)
    f = wp.vec3d(1.0)
    result[1] = m[0, 1] + f[2]


@wp.kernel
def transforms(ts: wp.array(dtype=wp.transform), out: wp.array(dtype=wp.vec3), td: wp.array[wp.transformd]):
    i = wp.tid()
    t = ts[i]
    p = t.p
    q = t.q
    t2 = wp.transform(p, q)
    t3 = wp.transform(p=p, q=q)
    t4 = wp.transformf()
    t2.p = wp.vec3(1.0, 2.0, 3.0)
    out[i] = t2.p + t3.p
    e = t[3]
    d = td[i]
    d2 = wp.transformd(wp.vec3d(1.0, 2.0, 3.0), wp.quatd(0.0, 0.0, 0.0, 1.0))
    c = wp.transform(1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)


@wp.kernel
def spatial_and_generic(sv: wp.array(dtype=wp.spatial_vector), sm: wp.array(dtype=wp.spatial_matrixd), v5: wp.array(dtype=vec5), m: wp.array(dtype=mat23)):
    i = wp.tid()
    a = wp.spatial_vector(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    b = sv[i] + a
    sv[i] = b
    z = wp.spatial_matrix()
    e = b[3]
    w = vec5(1.0, 2.0, 3.0, 4.0, 5.0)
    v5[i] = w * 2.0
    n = mat23(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    m[i] = n
