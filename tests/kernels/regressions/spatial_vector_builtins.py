import warp as wp


@wp.kernel
def spatial_parts(
    twists: wp.array(dtype=wp.spatial_vector),
    wrenches: wp.array(dtype=wp.spatial_vector),
    rot: wp.array(dtype=wp.mat33),
    power: wp.array(dtype=float),
    parts: wp.array(dtype=wp.vec3),
    crossed: wp.array(dtype=wp.spatial_vector),
    adjoints: wp.array(dtype=wp.spatial_matrix),
):
    tid = wp.tid()
    t = twists[tid]
    f = wrenches[tid]
    power[tid] = wp.spatial_dot(t, f)
    parts[tid] = wp.spatial_top(t) + wp.spatial_bottom(f)
    crossed[tid] = wp.spatial_cross(t, f) + wp.spatial_cross_dual(t, f)
    r = rot[tid]
    adjoints[tid] = wp.spatial_adjoint(r, wp.skew(wp.spatial_bottom(t)) * r)


@wp.kernel
def spatial_parts_f64(twists: wp.array(dtype=wp.spatial_vectord), out: wp.array(dtype=wp.vec3d)):
    tid = wp.tid()
    t = twists[tid]
    out[tid] = wp.cross(wp.spatial_top(t), wp.spatial_bottom(t)) * wp.spatial_dot(t, t)
