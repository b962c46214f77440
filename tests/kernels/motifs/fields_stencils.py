import warp as wp

# Grid stencils: smoothing, blur, edges, diffusion, Laplacian. One thread per cell;
# every kernel reads the input field and writes its own cell of a separate output.


@wp.kernel
def smooth_1d(u: wp.array(dtype=float), weight: float, u_out: wp.array(dtype=float)):
    i = wp.tid()
    n = u.shape[0]
    left = u[wp.max(i - 1, 0)]
    right = u[wp.min(i + 1, n - 1)]
    u_out[i] = (1.0 - 2.0 * weight) * u[i] + weight * (left + right)


@wp.kernel
def box_blur_2d(img: wp.array2d(dtype=float), radius: int, out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    height = img.shape[0]
    width = img.shape[1]
    total = float(0.0)
    for di in range(-radius, radius + 1):
        for dj in range(-radius, radius + 1):
            y = wp.clamp(i + di, 0, height - 1)
            x = wp.clamp(j + dj, 0, width - 1)
            total += img[y, x]
    side = 2 * radius + 1
    out[i, j] = total / float(side * side)


@wp.func
def gaussian_weight(offset: int, sigma: float):
    d = float(offset)
    return wp.exp(-(d * d) / (2.0 * sigma * sigma))


@wp.kernel
def gaussian_blur_rows(img: wp.array2d(dtype=wp.vec3), sigma: float, radius: int, out: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    width = img.shape[1]
    color = wp.vec3()
    weight_sum = float(0.0)
    for k in range(-radius, radius + 1):
        w = gaussian_weight(k, sigma)
        color += img[i, wp.clamp(j + k, 0, width - 1)] * w
        weight_sum += w
    out[i, j] = color / weight_sum


@wp.kernel
def sobel_edges(img: wp.array2d(dtype=float), magnitude: wp.array2d(dtype=float), direction: wp.array2d(dtype=wp.vec2)):
    i, j = wp.tid()
    h = img.shape[0] - 1
    w = img.shape[1] - 1
    i0 = wp.max(i - 1, 0)
    i1 = wp.min(i + 1, h)
    j0 = wp.max(j - 1, 0)
    j1 = wp.min(j + 1, w)
    gx = (img[i0, j1] + 2.0 * img[i, j1] + img[i1, j1]) - (img[i0, j0] + 2.0 * img[i, j0] + img[i1, j0])
    gy = (img[i1, j0] + 2.0 * img[i1, j] + img[i1, j1]) - (img[i0, j0] + 2.0 * img[i0, j] + img[i0, j1])
    g = wp.vec2(gx, gy)
    mag = wp.length(g)
    magnitude[i, j] = mag
    direction[i, j] = g / (mag + 1.0e-8)


@wp.kernel
def diffuse_heat_2d(
    temp: wp.array2d(dtype=float),
    conductivity: wp.array2d(dtype=float),
    dt: float,
    inv_dx: float,
    temp_out: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    ny = temp.shape[0]
    nx = temp.shape[1]
    t = temp[i, j]
    lap = (
        temp[wp.max(i - 1, 0), j]
        + temp[wp.min(i + 1, ny - 1), j]
        + temp[i, wp.max(j - 1, 0)]
        + temp[i, wp.min(j + 1, nx - 1)]
        - 4.0 * t
    )
    temp_out[i, j] = t + dt * conductivity[i, j] * lap * inv_dx * inv_dx


@wp.kernel
def diffuse_3d(
    density: wp.array3d(dtype=wp.float64),
    kappa: wp.float64,
    dt: wp.float64,
    density_out: wp.array3d(dtype=wp.float64),
):
    i, j, k = wp.tid()
    nx = density.shape[0]
    ny = density.shape[1]
    nz = density.shape[2]
    c = density[i, j, k]
    s = density[wp.max(i - 1, 0), j, k] + density[wp.min(i + 1, nx - 1), j, k]
    s += density[i, wp.max(j - 1, 0), k] + density[i, wp.min(j + 1, ny - 1), k]
    s += density[i, j, wp.max(k - 1, 0)] + density[i, j, wp.min(k + 1, nz - 1)]
    density_out[i, j, k] = c + kappa * dt * (s - wp.float64(6.0) * c)


@wp.kernel
def laplacian_periodic(phi: wp.array2d(dtype=float), inv_h2: float, lap: wp.array2d(dtype=float)):
    i, j = wp.tid()
    ny = phi.shape[0]
    nx = phi.shape[1]
    up = phi[(i + 1) % ny, j]
    down = phi[(i + ny - 1) % ny, j]
    right = phi[i, (j + 1) % nx]
    left = phi[i, (j + nx - 1) % nx]
    lap[i, j] = (up + down + left + right - 4.0 * phi[i, j]) * inv_h2


@wp.kernel
def wave_step(
    u: wp.array2d(dtype=float),
    u_prev: wp.array2d(dtype=float),
    speed: float,
    dt: float,
    inv_dx: float,
    u_next: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    ny = u.shape[0]
    nx = u.shape[1]
    c = u[i, j]
    lap = u[wp.max(i - 1, 0), j] + u[wp.min(i + 1, ny - 1), j] + u[i, wp.max(j - 1, 0)] + u[i, wp.min(j + 1, nx - 1)] - 4.0 * c
    courant = speed * dt * inv_dx
    u_next[i, j] = 2.0 * c - u_prev[i, j] + courant * courant * lap
