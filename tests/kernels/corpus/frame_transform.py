import warp as wp


@wp.kernel
def world_to_local(
    points: wp.array(dtype=wp.vec3),
    body_pos: wp.vec3,
    body_rot: wp.quat,
    scale: wp.vec3,
    out: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = points[tid]
    local = wp.quat_rotate_inv(body_rot, p - body_pos)
    local = wp.cw_div(local, scale)
    out[tid] = local


@wp.kernel
def local_to_world(
    points: wp.array(dtype=wp.vec3),
    body_pos: wp.vec3,
    body_rot: wp.quat,
    scale: wp.vec3,
    out: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = wp.cw_mul(points[tid], scale)
    out[tid] = wp.quat_rotate(body_rot, p) + body_pos
