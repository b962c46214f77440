import warp as wp


@wp.kernel
def dense_ops(n: int, A: wp.array(dtype=float), L: wp.array(dtype=float), b: wp.array(dtype=float), x: wp.array(dtype=float), C: wp.array(dtype=float)):
    wp.dense_gemm(n, n, n, 0, 1, A, L, C)
    wp.dense_chol(n, A, 0.01, L)
    wp.dense_subs(n, L, b, x)
    wp.dense_solve(n, A, L, b, x)


@wp.kernel
def transformations(ps: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.transform), outd: wp.array(dtype=wp.transformd)):
    tid = wp.tid()
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), 0.5)
    t = wp.transformation(ps[tid], q)
    t2 = wp.transformation(ps[tid], q, dtype=wp.float32)
    t3 = wp.transformation(p=ps[tid], q=q)
    out[tid] = wp.transform_multiply(t, wp.transform_multiply(t2, t3))
    outd[tid] = wp.transformation(wp.vec3d(1.0, 2.0, 3.0), wp.quatd(0.0, 0.0, 0.0, 1.0), dtype=wp.float64)


@wp.kernel
def bit_casts(bits: wp.array(dtype=wp.int32), out: wp.array(dtype=float), h: wp.array(dtype=wp.vec2h)):
    tid = wp.tid()
    f = wp.cast(bits[tid], wp.float32)
    i = wp.cast(f, dtype=wp.int32)
    g = wp.cast(h[tid], wp.float32)
    out[tid] = f + float(i) + g
