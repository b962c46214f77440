import warp as wp


@wp.func
def closest_on_segment(p: wp.vec3, a: wp.vec3, b: wp.vec3) -> wp.vec3:
    ab = b - a
    denom = wp.dot(ab, ab)
    if denom == 0.0:
        return a
    t = wp.clamp(wp.dot(p - a, ab) / denom, 0.0, 1.0)
    return a + ab * t


@wp.kernel
def capsule_contacts(
    particles: wp.array(dtype=wp.vec3),
    seg_a: wp.vec3,
    seg_b: wp.vec3,
    radius: float,
    particle_radius: float,
    normals: wp.array(dtype=wp.vec3),
    depths: wp.array(dtype=float),
):
    i = wp.tid()
    p = particles[i]
    c = closest_on_segment(p, seg_a, seg_b)
    d = p - c
    dist = wp.length(d)
    pen = radius + particle_radius - dist
    if pen <= 0.0:
        depths[i] = 0.0
        normals[i] = wp.vec3(0.0)
        return
    n = wp.vec3(0.0, 1.0, 0.0)
    if dist > 1.0e-8:
        n = d / dist
    normals[i] = n
    depths[i] = pen
