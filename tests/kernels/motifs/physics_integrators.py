import warp as wp

# Particle integrators, damping, gravity and rigid-body integration: one thread per body.


@wp.kernel
def integrate_semi_implicit_euler(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    f: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    gravity: wp.vec3,
    dt: float,
    x_new: wp.array(dtype=wp.vec3),
    v_new: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    w = inv_mass[tid]
    accel = f[tid] * w + gravity
    vel = v[tid] + accel * dt
    x_new[tid] = x[tid] + vel * dt
    v_new[tid] = vel


@wp.kernel
def integrate_explicit_euler(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    f: wp.array(dtype=wp.vec3),
    mass: wp.array(dtype=float),
    dt: float,
):
    tid = wp.tid()
    vel = v[tid]
    accel = f[tid] / mass[tid]
    x[tid] = x[tid] + vel * dt
    v[tid] = vel + accel * dt


@wp.kernel
def integrate_verlet(
    pos: wp.array(dtype=wp.vec3),
    pos_prev: wp.array(dtype=wp.vec3),
    accel: wp.array(dtype=wp.vec3),
    dt: float,
    pos_next: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = pos[tid]
    displacement = p - pos_prev[tid]
    pos_next[tid] = p + displacement + accel[tid] * (dt * dt)


@wp.kernel
def apply_damping(v: wp.array(dtype=wp.vec3), damping: float, dt: float):
    tid = wp.tid()
    decay = wp.exp(-damping * dt)
    v[tid] = v[tid] * decay


@wp.kernel
def apply_drag_and_gravity(
    v: wp.array(dtype=wp.vec3d),
    inv_mass: wp.array(dtype=wp.float64),
    drag: wp.float64,
    gravity: wp.vec3d,
    dt: wp.float64,
):
    tid = wp.tid()
    vel = v[tid]
    speed = wp.length(vel)
    drag_force = -drag * speed * vel
    v[tid] = vel + (drag_force * inv_mass[tid] + gravity) * dt


@wp.func
def quat_integrate(q: wp.quat, omega: wp.vec3, dt: float):
    dq = wp.quat(omega, 0.0) * q * (0.5 * dt)
    return wp.normalize(q + dq)


@wp.kernel
def integrate_rigid_bodies(
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_f: wp.array(dtype=wp.spatial_vector),
    inv_mass: wp.array(dtype=float),
    inv_inertia: wp.array(dtype=wp.mat33),
    gravity: wp.vec3,
    dt: float,
    body_q_new: wp.array(dtype=wp.transform),
    body_qd_new: wp.array(dtype=wp.spatial_vector),
):
    tid = wp.tid()
    tf = body_q[tid]
    pos = wp.transform_get_translation(tf)
    rot = wp.transform_get_rotation(tf)
    qd = body_qd[tid]
    w = wp.spatial_top(qd)
    v = wp.spatial_bottom(qd)
    wrench = body_f[tid]
    torque = wp.spatial_top(wrench)
    force = wp.spatial_bottom(wrench)
    # angular update in the body frame
    w_body = wp.quat_rotate_inv(rot, w)
    t_body = wp.quat_rotate_inv(rot, torque)
    w_body = w_body + inv_inertia[tid] * t_body * dt
    w_new = wp.quat_rotate(rot, w_body)
    v_new = v + (force * inv_mass[tid] + gravity) * dt
    pos_new = pos + v_new * dt
    rot_new = quat_integrate(rot, w_new, dt)
    body_q_new[tid] = wp.transform(pos_new, rot_new)
    body_qd_new[tid] = wp.spatial_vector(w_new, v_new)


@wp.kernel
def integrate_angular_velocity(
    rot: wp.array(dtype=wp.quat),
    omega: wp.array(dtype=wp.vec3),
    dt: float,
    rot_out: wp.array(dtype=wp.quat),
):
    tid = wp.tid()
    rot_out[tid] = quat_integrate(rot[tid], omega[tid], dt)


@wp.kernel
def kinetic_energy(
    v: wp.array(dtype=wp.vec3),
    mass: wp.array(dtype=float),
    energy: wp.array(dtype=float),
):
    tid = wp.tid()
    vel = v[tid]
    wp.atomic_add(energy, 0, 0.5 * mass[tid] * wp.dot(vel, vel))
