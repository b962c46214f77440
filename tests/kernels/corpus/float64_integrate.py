import warp as wp


@wp.kernel
def integrate_f64(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    m: wp.array(dtype=wp.float64),
    g: wp.vec3d,
    dt: wp.float64,
):
    tid = wp.tid()
    inv_m = wp.float64(1.0) / m[tid]
    a = g * inv_m * m[tid]
    v1 = v[tid] + a * dt
    damping = wp.float64(0.999)
    v1 = v1 * damping
    x[tid] = x[tid] + v1 * dt
    v[tid] = v1


@wp.kernel
def kinetic_energy_f64(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.float64), e: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    vv = v[tid]
    ke = wp.float64(0.5) * m[tid] * wp.dot(vv, vv)
    wp.atomic_add(e, 0, ke)
