import warp as wp


@wp.kernel
def project_to_pixels(
    points: wp.array(dtype=wp.vec3),
    view: wp.mat44,
    fx: float,
    fy: float,
    cx: float,
    cy: float,
    width: int,
    height: int,
    uv: wp.array(dtype=wp.vec2),
    visible: wp.array(dtype=int),
):
    i = wp.tid()
    p = points[i]
    pc = view * wp.vec4(p[0], p[1], p[2], 1.0)
    z = pc[2]
    if z <= 1.0e-4:
        visible[i] = 0
        uv[i] = wp.vec2(-1.0, -1.0)
        return
    u = fx * pc[0] / z + cx
    v = fy * pc[1] / z + cy
    inside = u >= 0.0 and v >= 0.0 and u < float(width) and v < float(height)
    visible[i] = 1 if inside else 0
    uv[i] = wp.vec2(u, v)
