import warp as wp


@wp.kernel
def select_ops(
    a: wp.array(dtype=float),
    b: wp.array(dtype=float),
    va: wp.array(dtype=wp.vec3),
    vb: wp.array(dtype=wp.vec3),
    out: wp.array(dtype=float),
    vout: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    x = a[tid]
    y = b[tid]
    m = x if x > y else y
    s = wp.where(x < 0.0, -x, x)
    v = va[tid] if wp.length(va[tid]) > wp.length(vb[tid]) else vb[tid]
    w = wp.where(x > 0.0, va[tid], vb[tid])
    flag = x > 0.0 and y > 0.0
    k = 1 if flag else 0
    out[tid] = m + s + float(k)
    vout[tid] = v + w
