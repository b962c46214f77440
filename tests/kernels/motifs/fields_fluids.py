import warp as wp

# Grid fluids and images: advection, bilinear sampling, divergence, pressure, projection,
# vorticity, thresholding and tone mapping.


@wp.func
def sample_bilinear(f: wp.array2d(dtype=float), x: float, y: float):
    ny = f.shape[0]
    nx = f.shape[1]
    px = wp.clamp(x, 0.0, float(nx - 1))
    py = wp.clamp(y, 0.0, float(ny - 1))
    x0 = wp.min(int(px), nx - 2)
    y0 = wp.min(int(py), ny - 2)
    tx = px - float(x0)
    ty = py - float(y0)
    a = wp.lerp(f[y0, x0], f[y0, x0 + 1], tx)
    b = wp.lerp(f[y0 + 1, x0], f[y0 + 1, x0 + 1], tx)
    return wp.lerp(a, b, ty)


@wp.kernel
def advect_semi_lagrangian(
    field: wp.array2d(dtype=float),
    vel: wp.array2d(dtype=wp.vec2),
    dt: float,
    inv_dx: float,
    field_out: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    v = vel[i, j]
    x = float(j) - v[0] * dt * inv_dx
    y = float(i) - v[1] * dt * inv_dx
    field_out[i, j] = sample_bilinear(field, x, y)


@wp.func
def sample_vel(vel: wp.array2d(dtype=wp.vec2), x: float, y: float):
    ny = vel.shape[0]
    nx = vel.shape[1]
    px = wp.clamp(x, 0.0, float(nx - 1))
    py = wp.clamp(y, 0.0, float(ny - 1))
    x0 = wp.min(int(px), nx - 2)
    y0 = wp.min(int(py), ny - 2)
    tx = px - float(x0)
    ty = py - float(y0)
    a = wp.lerp(vel[y0, x0], vel[y0, x0 + 1], tx)
    b = wp.lerp(vel[y0 + 1, x0], vel[y0 + 1, x0 + 1], tx)
    return wp.lerp(a, b, ty)


@wp.kernel
def advect_velocity_rk2(vel: wp.array2d(dtype=wp.vec2), dt: float, inv_dx: float, vel_out: wp.array2d(dtype=wp.vec2)):
    i, j = wp.tid()
    p = wp.vec2(float(j), float(i))
    v0 = vel[i, j]
    mid = p - v0 * (0.5 * dt * inv_dx)
    v1 = sample_vel(vel, mid[0], mid[1])
    back = p - v1 * (dt * inv_dx)
    vel_out[i, j] = sample_vel(vel, back[0], back[1])


@wp.kernel
def divergence_2d(vel: wp.array2d(dtype=wp.vec2), inv_dx: float, div: wp.array2d(dtype=float)):
    i, j = wp.tid()
    ny = vel.shape[0]
    nx = vel.shape[1]
    du = vel[i, wp.min(j + 1, nx - 1)][0] - vel[i, wp.max(j - 1, 0)][0]
    dv = vel[wp.min(i + 1, ny - 1), j][1] - vel[wp.max(i - 1, 0), j][1]
    div[i, j] = 0.5 * (du + dv) * inv_dx


@wp.kernel
def pressure_jacobi(
    pressure: wp.array2d(dtype=float),
    div: wp.array2d(dtype=float),
    dx: float,
    pressure_out: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    ny = pressure.shape[0]
    nx = pressure.shape[1]
    s = pressure[wp.max(i - 1, 0), j] + pressure[wp.min(i + 1, ny - 1), j]
    s += pressure[i, wp.max(j - 1, 0)] + pressure[i, wp.min(j + 1, nx - 1)]
    pressure_out[i, j] = 0.25 * (s - div[i, j] * dx * dx)


@wp.kernel
def subtract_pressure_gradient(
    vel: wp.array2d(dtype=wp.vec2),
    pressure: wp.array2d(dtype=float),
    inv_dx: float,
    vel_out: wp.array2d(dtype=wp.vec2),
):
    i, j = wp.tid()
    ny = pressure.shape[0]
    nx = pressure.shape[1]
    gx = pressure[i, wp.min(j + 1, nx - 1)] - pressure[i, wp.max(j - 1, 0)]
    gy = pressure[wp.min(i + 1, ny - 1), j] - pressure[wp.max(i - 1, 0), j]
    vel_out[i, j] = vel[i, j] - wp.vec2(gx, gy) * (0.5 * inv_dx)


@wp.kernel
def gradient_3d(phi: wp.array3d(dtype=float), inv_dx: float, grad: wp.array3d(dtype=wp.vec3)):
    i, j, k = wp.tid()
    nx = phi.shape[0] - 1
    ny = phi.shape[1] - 1
    nz = phi.shape[2] - 1
    gx = phi[wp.min(i + 1, nx), j, k] - phi[wp.max(i - 1, 0), j, k]
    gy = phi[i, wp.min(j + 1, ny), k] - phi[i, wp.max(j - 1, 0), k]
    gz = phi[i, j, wp.min(k + 1, nz)] - phi[i, j, wp.max(k - 1, 0)]
    grad[i, j, k] = wp.vec3(gx, gy, gz) * (0.5 * inv_dx)


@wp.kernel
def vorticity_2d(vel: wp.array2d(dtype=wp.vec2), inv_dx: float, curl: wp.array2d(dtype=float)):
    i, j = wp.tid()
    ny = vel.shape[0]
    nx = vel.shape[1]
    dvdx = vel[i, wp.min(j + 1, nx - 1)][1] - vel[i, wp.max(j - 1, 0)][1]
    dudy = vel[wp.min(i + 1, ny - 1), j][0] - vel[wp.max(i - 1, 0), j][0]
    curl[i, j] = 0.5 * (dvdx - dudy) * inv_dx


@wp.kernel
def threshold_image(img: wp.array2d(dtype=float), level: float, softness: float, mask: wp.array2d(dtype=float)):
    i, j = wp.tid()
    mask[i, j] = wp.smoothstep(level - softness, level + softness, img[i, j])


@wp.func
def luminance(c: wp.vec3):
    return wp.dot(c, wp.vec3(0.2126, 0.7152, 0.0722))


@wp.kernel
def tone_map_reinhard(hdr: wp.array2d(dtype=wp.vec3), exposure: float, gamma: float, ldr: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    c = hdr[i, j] * exposure
    lum = luminance(c)
    scale = 1.0 / (1.0 + lum)
    mapped = c * scale
    inv_gamma = 1.0 / gamma
    ldr[i, j] = wp.vec3(
        wp.pow(mapped[0], inv_gamma),
        wp.pow(mapped[1], inv_gamma),
        wp.pow(mapped[2], inv_gamma),
    )


@wp.kernel
def image_histogram(img: wp.array2d(dtype=float), num_bins: int, hist: wp.array(dtype=int)):
    i, j = wp.tid()
    v = wp.clamp(img[i, j], 0.0, 1.0)
    b = wp.min(int(v * float(num_bins)), num_bins - 1)
    wp.atomic_add(hist, b, 1)
