import warp as wp


@wp.kernel
def quat_to_euler_kernel(q_in: wp.array(dtype=wp.quat), rpy: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = q_in[i]
    x = q.x
    y = q.y
    z = q.z
    w = q.w
    sinr = 2.0 * (w * x + y * z)
    cosr = 1.0 - 2.0 * (x * x + y * y)
    roll = wp.atan2(sinr, cosr)
    sinp = 2.0 * (w * y - z * x)
    pitch = wp.asin(wp.clamp(sinp, -1.0, 1.0))
    siny = 2.0 * (w * z + x * y)
    cosy = 1.0 - 2.0 * (y * y + z * z)
    yaw = wp.atan2(siny, cosy)
    q[3] = -q[3]
    q.x = 0.0
    rpy[i] = wp.vec3(roll, pitch, yaw) + wp.vec3(q.w, q[0], 0.0) * 0.0
