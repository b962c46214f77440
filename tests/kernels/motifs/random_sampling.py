import warp as wp

# Random sampling: per-thread generators seeded from a seed and the thread id, uniform and
# normal draws, geometric samplers, Monte Carlo estimates, noise fields, random walks.


@wp.kernel
def jitter_positions(x: wp.array(dtype=wp.vec3), seed: int, amplitude: float, x_out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    offset = wp.vec3(wp.randf(state, -1.0, 1.0), wp.randf(state, -1.0, 1.0), wp.randf(state, -1.0, 1.0))
    x_out[tid] = x[tid] + offset * amplitude


@wp.kernel
def add_gaussian_noise(signal: wp.array(dtype=float), seed: int, sigma: float, noisy: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    noisy[tid] = signal[tid] + sigma * wp.randn(state)


@wp.kernel
def sample_sphere_directions(seed: int, offset: int, radius: float, centers: wp.array(dtype=wp.vec3), points: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid + offset)
    points[tid] = centers[tid] + wp.sample_unit_sphere_surface(state) * radius


@wp.func
def orthonormal_basis(n: wp.vec3):
    up = wp.where(wp.abs(n[2]) < 0.9, wp.vec3(0.0, 0.0, 1.0), wp.vec3(1.0, 0.0, 0.0))
    t = wp.normalize(wp.cross(up, n))
    b = wp.cross(n, t)
    return wp.matrix_from_cols(t, b, n)


@wp.kernel
def sample_cosine_hemisphere(
    normals: wp.array(dtype=wp.vec3),
    seed: int,
    dirs: wp.array(dtype=wp.vec3),
    pdf: wp.array(dtype=float),
):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    n = wp.normalize(normals[tid])
    disk = wp.sample_unit_disk(state)
    z = wp.sqrt(wp.max(1.0 - disk[0] * disk[0] - disk[1] * disk[1], 0.0))
    local = wp.vec3(disk[0], disk[1], z)
    dirs[tid] = orthonormal_basis(n) * local
    pdf[tid] = z / wp.pi


@wp.kernel
def estimate_pi(seed: int, samples_per_thread: int, inside: wp.array(dtype=int)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    count = int(0)
    for s in range(samples_per_thread):
        p = wp.vec2(wp.randf(state), wp.randf(state))
        if wp.length_sq(p) <= 1.0:
            count += 1
    wp.atomic_add(inside, 0, count)


@wp.kernel
def monte_carlo_integrate(
    seed: int,
    samples_per_thread: int,
    lower: float,
    upper: float,
    freq: float,
    integral: wp.array(dtype=wp.float64),
):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    total = float(0.0)
    for s in range(samples_per_thread):
        x = wp.randf(state, lower, upper)
        total += wp.sin(freq * x) * wp.exp(-x * x)
    width = upper - lower
    wp.atomic_add(integral, 0, wp.float64(total * width / float(samples_per_thread)))


@wp.kernel
def noise_field_2d(seed: int, frequency: float, octaves: int, field: wp.array2d(dtype=float)):
    i, j = wp.tid()
    state = wp.rand_init(seed)
    p = wp.vec2(float(i), float(j)) * frequency
    amp = float(1.0)
    value = float(0.0)
    for o in range(octaves):
        value += amp * wp.noise(state, p)
        p = p * 2.0
        amp = amp * 0.5
    field[i, j] = value


@wp.kernel
def periodic_noise_3d(seed: int, scale: float, period: int, field: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    state = wp.rand_init(seed)
    p = wp.vec3(float(i), float(j), float(k)) * scale
    field[i, j, k] = wp.pnoise(state, p, period, period, period)


@wp.kernel
def curl_noise_advect(
    x: wp.array(dtype=wp.vec3),
    seed: int,
    frequency: float,
    time: float,
    dt: float,
    x_out: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = x[tid]
    vel = wp.curlnoise(state, wp.vec4(p[0] * frequency, p[1] * frequency, p[2] * frequency, time))
    x_out[tid] = p + vel * dt


@wp.kernel
def random_walk(
    start: wp.array(dtype=wp.vec3),
    seed: int,
    num_steps: int,
    step_size: float,
    end: wp.array(dtype=wp.vec3),
    travelled: wp.array(dtype=float),
):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    p = start[tid]
    for s in range(num_steps):
        p = p + wp.sample_unit_sphere_surface(state) * step_size
    end[tid] = p
    travelled[tid] = wp.length(p - start[tid])


@wp.kernel
def random_neighbor_gossip(
    values: wp.array(dtype=float),
    seed: int,
    mix: float,
    values_out: wp.array(dtype=float),
):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    n = values.shape[0]
    j = wp.randi(state, 0, n)
    values_out[tid] = wp.lerp(values[tid], values[j], mix)


@wp.kernel
def sample_triangle_surface(
    vertices: wp.array(dtype=wp.vec3),
    tri_indices: wp.array(dtype=wp.vec3i),
    seed: int,
    samples: wp.array(dtype=wp.vec3),
):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    t = tri_indices[tid]
    uv = wp.sample_triangle(state)
    a = vertices[t[0]]
    b = vertices[t[1]]
    c = vertices[t[2]]
    samples[tid] = a * (1.0 - uv[0] - uv[1]) + b * uv[0] + c * uv[1]


@wp.kernel
def poisson_emission(rate: wp.array(dtype=float), seed: int, dt: float, emitted: wp.array(dtype=wp.uint32), total: wp.array(dtype=int)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    k = wp.poisson(state, rate[tid] * dt)
    emitted[tid] = k
    wp.atomic_add(total, 0, int(k))


@wp.kernel
def dropout_mask(x: wp.array2d(dtype=float), seed: int, keep_prob: float, y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    state = wp.rand_init(seed, i * x.shape[1] + j)
    keep = wp.randf(state) < keep_prob
    y[i, j] = wp.where(keep, x[i, j] / keep_prob, 0.0)


@wp.kernel
def sample_cube_volume(seed: int, lower: wp.vec3, extent: wp.vec3, density: wp.array3d(dtype=float), total: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    u = wp.sample_unit_cube(state) * 0.5 + wp.vec3(0.5)
    p = lower + wp.cw_mul(u, extent)
    nx = density.shape[0]
    ny = density.shape[1]
    nz = density.shape[2]
    ci = wp.clamp(int(u[0] * float(nx)), 0, nx - 1)
    cj = wp.clamp(int(u[1] * float(ny)), 0, ny - 1)
    ck = wp.clamp(int(u[2] * float(nz)), 0, nz - 1)
    wp.atomic_add(total, 0, density[ci, cj, ck] * wp.length(p))
