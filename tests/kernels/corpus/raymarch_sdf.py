import warp as wp


@wp.func
def sdf_sphere(p: wp.vec3, r: float) -> float:
    return wp.length(p) - r


@wp.func
def sdf_box(p: wp.vec3, b: wp.vec3) -> float:
    q = wp.vec3(wp.abs(p[0]), wp.abs(p[1]), wp.abs(p[2])) - b
    outside = wp.length(wp.max(q, wp.vec3(0.0)))
    inside = wp.min(wp.max(q[0], wp.max(q[1], q[2])), 0.0)
    return outside + inside


@wp.func
def scene(p: wp.vec3) -> float:
    d1 = sdf_sphere(p - wp.vec3(0.0, 1.0, 0.0), 1.0)
    d2 = sdf_box(p, wp.vec3(2.0, 0.1, 2.0))
    return wp.min(d1, d2)


@wp.func
def scene_normal(p: wp.vec3) -> wp.vec3:
    e = 1.0e-3
    dx = scene(p + wp.vec3(e, 0.0, 0.0)) - scene(p - wp.vec3(e, 0.0, 0.0))
    dy = scene(p + wp.vec3(0.0, e, 0.0)) - scene(p - wp.vec3(0.0, e, 0.0))
    dz = scene(p + wp.vec3(0.0, 0.0, e)) - scene(p - wp.vec3(0.0, 0.0, e))
    return wp.normalize(wp.vec3(dx, dy, dz))


@wp.kernel
def render(cam_pos: wp.vec3, width: int, height: int, light: wp.vec3, pixels: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    x = tid % width
    y = tid // width
    sx = 2.0 * float(x) / float(width) - 1.0
    sy = 2.0 * float(y) / float(height) - 1.0
    ro = cam_pos
    rd = wp.normalize(wp.vec3(sx, sy, -2.0))
    t = float(0.0)
    hit = bool(False)
    for _step in range(128):
        p = ro + rd * t
        d = scene(p)
        if d < 1.0e-4:
            hit = True
            break
        t += d
        if t > 100.0:
            break
    color = wp.vec3(0.1, 0.1, 0.2)
    if hit:
        n = scene_normal(ro + rd * t)
        diffuse = wp.max(wp.dot(n, wp.normalize(light)), 0.0)
        color = wp.vec3(0.8, 0.7, 0.6) * diffuse + wp.vec3(0.05)
    pixels[tid] = color
