import warp as wp


@wp.kernel
def math_misc(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat), ids: wp.array(dtype=int), sorted_vals: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    r = wp.rint(x) + wp.degrees(x) + wp.radians(x) + wp.erf(x) + wp.erfc(x)
    nan = wp.isnan(v[i]) or wp.isinf(m[i]) or wp.isfinite(q[i])
    if nan:
        r = r + 1.0
    mi = wp.argmin(v[i])
    ma = wp.argmax(v[i])
    inv = wp.inverse_approx(m[i])
    qr = wp.quat_rpy(x, 0.5 * x, 0.25)
    qm = wp.quat_from_matrix(m[i])
    mq = wp.quat_to_matrix(q[i])
    qs = wp.quat_slerp(q[i], qr, 0.5)
    lb = wp.lower_bound(sorted_vals, x)
    lb2 = wp.lower_bound(sorted_vals, 0, 4, x)
    d = wp.closest_point_edge_edge(v[i], v[0], v[1], v[2], 1.0e-6)
    t = wp.intersect_tri_tri(v[0], v[1], v[2], v[3], v[4], v[5])
    ids[i] = int(mi) + int(ma) + lb + lb2 + t + wp.block_dim()
    a[i] = r + inv[0, 0] + qm[0] + mq[1, 1] + qs[3] + d[0] + wp.inf * 0.0
