import warp as wp


@wp.func
def point_inertia(p: wp.vec3, m: float) -> wp.mat33:
    I = wp.identity(n=3, dtype=float) * wp.dot(p, p) - wp.outer(p, p)
    return I * m


@wp.kernel
def accumulate_inertia(
    points: wp.array(dtype=wp.vec3),
    masses: wp.array(dtype=float),
    com: wp.vec3,
    inertia: wp.array(dtype=wp.mat33),
):
    tid = wp.tid()
    r = points[tid] - com
    wp.atomic_add(inertia, 0, point_inertia(r, masses[tid]))


@wp.kernel
def angular_velocity(
    L: wp.array(dtype=wp.vec3),
    inertia: wp.array(dtype=wp.mat33),
    rot: wp.array(dtype=wp.quat),
    omega: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    q = rot[tid]
    c0 = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    c1 = wp.quat_rotate(q, wp.vec3(0.0, 1.0, 0.0))
    c2 = wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))
    R = wp.mat33(
        c0[0], c1[0], c2[0],
        c0[1], c1[1], c2[1],
        c0[2], c1[2], c2[2],
    )
    Iw = R * inertia[tid] * wp.transpose(R)
    omega[tid] = wp.inverse(Iw) * L[tid]
