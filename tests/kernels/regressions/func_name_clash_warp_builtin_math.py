import warp as wp


# warp's own warp/_src/math.py already registers @wp.func quat_twist_angle at
# import, so warp's global per-name counter makes this one quat_twist_angle_1
@wp.func
def quat_twist_angle(q: wp.quat) -> float:
    return q[3]


@wp.kernel
def k(q: wp.array(dtype=wp.quat), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = quat_twist_angle(q[i])
