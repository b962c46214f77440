import warp as wp


@wp.kernel
def random_values(seed: int, out: wp.array(dtype=float), pts: wp.array(dtype=wp.vec3), cdf: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    x = wp.randf(s)
    y = wp.randf(s, -1.0, 1.0)
    n = wp.randi(s, 0, 10)
    z = wp.randn(s)
    u = wp.randu(s)
    p = wp.sample_unit_sphere(s) + wp.sample_unit_cube(s)
    q = wp.sample_unit_disk(s)
    k = wp.sample_cdf(s, cdf)
    m = wp.poisson(s, 3.0)
    t = wp.rand_init(seed)
    out[i] = x + y + z + float(n) + q[0] + float(k) + float(m) + float(u % wp.uint32(3)) + wp.randf(t)
    pts[i] = p


@wp.kernel
def noise_values(seed: int, out: wp.array(dtype=float), vel: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    s = wp.rand_init(seed, i)
    f = float(i) * 0.1
    a = wp.noise(s, f)
    b = wp.noise(s, wp.vec2(f, 2.0 * f))
    c = wp.pnoise(s, wp.vec3(f, f, f), 2, 3, 4)
    d = wp.pnoise(s, f, 4)
    v = wp.curlnoise(s, wp.vec3(f, 1.0, 2.0))
    w = wp.curlnoise(s, wp.vec2(f, 1.0), wp.uint32(2), 2.0, 0.5)
    out[i] = a + b + c + d + w[0]
    vel[i] = v
