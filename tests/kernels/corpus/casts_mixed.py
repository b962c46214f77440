import warp as wp


@wp.kernel
def cast_everything(
    fi: wp.array(dtype=float),
    di: wp.array(dtype=wp.float64),
    ii: wp.array(dtype=int),
    ui: wp.array(dtype=wp.uint32),
    vd: wp.array(dtype=wp.vec3d),
    out_f: wp.array(dtype=float),
    out_v: wp.array(dtype=wp.vec3),
):
    t = wp.tid()
    a = fi[t]
    b = di[t]
    c = ii[t]
    d = ui[t]
    e = wp.float32(b) + float(c) + float(d) + wp.float32(wp.int32(d))
    g = wp.float64(a) * b + wp.float64(c)
    h = int(b) + int(a) + wp.int32(d)
    u = wp.uint32(c) + d + wp.uint32(h)
    flag = a > 0.0
    out_f[t] = e + float(g) + float(h) + float(u) + float(int(flag))
    out_v[t] = wp.vec3(vd[t]) + wp.vec3(float(vd[t][0]))
