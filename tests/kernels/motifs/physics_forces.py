import warp as wp

# Springs, constraints, contacts, neighbourhood forces and N-body.

TILE_BODIES = wp.constant(32)
SOFTENING = wp.constant(0.01)


@wp.kernel
def eval_springs(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    spring_indices: wp.array(dtype=int),
    rest_length: wp.array(dtype=float),
    ke: float,
    kd: float,
    f: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    i = spring_indices[tid * 2 + 0]
    j = spring_indices[tid * 2 + 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    length = wp.length(xij) + 1.0e-6
    dir = xij / length
    stretch = length - rest_length[tid]
    damp = wp.dot(dir, vij)
    fs = dir * (ke * stretch + kd * damp)
    wp.atomic_sub(f, i, fs)
    wp.atomic_add(f, j, fs)


@wp.kernel
def solve_distance_constraints(
    pos: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    edge_i: wp.array(dtype=int),
    edge_j: wp.array(dtype=int),
    rest: wp.array(dtype=float),
    compliance: float,
    dt: float,
    delta: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    i = edge_i[tid]
    j = edge_j[tid]
    wi = inv_mass[i]
    wj = inv_mass[j]
    d = pos[i] - pos[j]
    dist = wp.length(d) + 1.0e-6
    n = d / dist
    alpha = compliance / (dt * dt)
    lam = (dist - rest[tid]) / (wi + wj + alpha)
    wp.atomic_add(delta, i, -wi * lam * n)
    wp.atomic_add(delta, j, wj * lam * n)


@wp.kernel
def solve_bending_constraints(
    pos: wp.array(dtype=wp.vec3),
    inv_mass: wp.array(dtype=float),
    triples: wp.array(dtype=wp.vec3i),
    stiffness: float,
    delta: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    t = triples[tid]
    a = pos[t[0]]
    b = pos[t[1]]
    c = pos[t[2]]
    w0 = inv_mass[t[0]]
    w1 = inv_mass[t[1]]
    w2 = inv_mass[t[2]]
    # pull the middle vertex towards the midpoint of its neighbours
    mid = (a + c) * 0.5
    err = b - mid
    w = 0.25 * w0 + w1 + 0.25 * w2
    corr = err * (stiffness / w)
    wp.atomic_add(delta, t[0], corr * (0.5 * w0))
    wp.atomic_sub(delta, t[1], corr * w1)
    wp.atomic_add(delta, t[2], corr * (0.5 * w2))


@wp.kernel
def apply_deltas(pos: wp.array(dtype=wp.vec3), delta: wp.array(dtype=wp.vec3), relaxation: float, pos_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    pos_out[tid] = pos[tid] + delta[tid] * relaxation


@wp.kernel
def collide_ground_plane(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    plane_normal: wp.vec3,
    plane_offset: float,
    radius: float,
    restitution: float,
    friction: float,
):
    tid = wp.tid()
    p = x[tid]
    vel = v[tid]
    depth = wp.dot(p, plane_normal) - plane_offset - radius
    if depth < 0.0:
        vn = wp.dot(vel, plane_normal)
        vt = vel - plane_normal * vn
        if vn < 0.0:
            vel = vt * (1.0 - friction) - plane_normal * (vn * restitution)
        p = p - plane_normal * depth
    x[tid] = p
    v[tid] = vel


@wp.struct
class Sphere:
    center: wp.vec3
    radius: float


@wp.func
def push_out_of_sphere(p: wp.vec3, s: Sphere, margin: float):
    d = p - s.center
    dist = wp.length(d)
    r = s.radius + margin
    if dist < r:
        return s.center + d * (r / wp.max(dist, 1.0e-6))
    return p


@wp.kernel
def collide_spheres(
    x: wp.array(dtype=wp.vec3),
    obstacles: wp.array(dtype=Sphere),
    num_obstacles: int,
    radius: float,
    x_out: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    p = x[tid]
    for k in range(num_obstacles):
        p = push_out_of_sphere(p, obstacles[k], radius)
    x_out[tid] = p


@wp.kernel
def collide_box(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    box_lower: wp.vec3,
    box_upper: wp.vec3,
    restitution: float,
):
    tid = wp.tid()
    p = x[tid]
    vel = v[tid]
    for axis in range(3):
        if p[axis] < box_lower[axis]:
            p[axis] = box_lower[axis]
            vel[axis] = wp.abs(vel[axis]) * restitution
        elif p[axis] > box_upper[axis]:
            p[axis] = box_upper[axis]
            vel[axis] = -wp.abs(vel[axis]) * restitution
    x[tid] = p
    v[tid] = vel


@wp.func
def contact_force(dx: wp.vec3, dv: wp.vec3, radius: float, ke: float, kd: float):
    dist = wp.length(dx)
    penetration = 2.0 * radius - dist
    n = dx / wp.max(dist, 1.0e-6)
    vn = wp.dot(n, dv)
    return n * (ke * penetration - kd * wp.min(vn, 0.0))


@wp.kernel
def particle_contacts_hash_grid(
    grid: wp.uint64,
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    radius: float,
    ke: float,
    kd: float,
    f: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    xi = x[i]
    vi = v[i]
    force = wp.vec3(0.0)
    for j in wp.hash_grid_query(grid, xi, 2.0 * radius):
        if j != i:
            dx = xi - x[j]
            if wp.length(dx) < 2.0 * radius:
                force += contact_force(dx, vi - v[j], radius, ke, kd)
    f[i] = force


@wp.kernel
def neighbor_list_forces(
    x: wp.array(dtype=wp.vec3),
    neighbors: wp.array2d(dtype=int),
    neighbor_count: wp.array(dtype=int),
    k: float,
    rest: float,
    f: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    xi = x[tid]
    force = wp.vec3()
    for n in range(neighbor_count[tid]):
        j = neighbors[tid, n]
        d = x[j] - xi
        dist = wp.length(d) + 1.0e-6
        force += d * (k * (dist - rest) / dist)
    f[tid] = force


@wp.func
def poly6(r2: float, h: float):
    h2 = h * h
    diff = wp.max(h2 - r2, 0.0)
    return 315.0 / (64.0 * wp.pi * wp.pow(h, 9.0)) * diff * diff * diff


@wp.kernel
def sph_density(
    grid: wp.uint64,
    x: wp.array(dtype=wp.vec3),
    mass: float,
    smoothing: float,
    rho: wp.array(dtype=float),
):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    xi = x[i]
    density = float(0.0)
    for j in wp.hash_grid_query(grid, xi, smoothing):
        r2 = wp.length_sq(x[j] - xi)
        density += mass * poly6(r2, smoothing)
    rho[i] = density


@wp.func
def gravity_accel(p0: wp.vec3, p1: wp.vec3, m1: float):
    r = p1 - p0
    dist_sq = wp.length_sq(r) + SOFTENING
    inv_dist = 1.0 / wp.sqrt(dist_sq)
    return r * (m1 * inv_dist * inv_dist * inv_dist)


@wp.kernel
def nbody_tiled(
    pos: wp.array(dtype=wp.vec3),
    mass: wp.array(dtype=float),
    vel: wp.array(dtype=wp.vec3),
    num_bodies: int,
    dt: float,
    vel_out: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    p0 = pos[i]
    accel = wp.vec3(0.0)
    for t in range(num_bodies // TILE_BODIES):
        body_tile = wp.tile_load(pos, shape=TILE_BODIES, offset=t * TILE_BODIES)
        mass_tile = wp.tile_load(mass, shape=TILE_BODIES, offset=t * TILE_BODIES)
        for k in range(TILE_BODIES):
            accel += gravity_accel(p0, body_tile[k], mass_tile[k])
    vel_out[i] = vel[i] + accel * dt


@wp.kernel
def nbody_direct(pos: wp.array(dtype=wp.vec3d), mass: wp.array(dtype=wp.float64), accel: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    p0 = pos[i]
    a = wp.vec3d()
    for j in range(pos.shape[0]):
        r = pos[j] - p0
        d2 = wp.length_sq(r) + wp.float64(0.01)
        a += r * (mass[j] / (d2 * wp.sqrt(d2)))
    accel[i] = a
