import warp as wp


@wp.kernel
def logic(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), flags: wp.array(dtype=int), n: int):
    i = wp.tid()
    x = a[i]
    y = b[i]
    z = c[i]
    f = int(0)
    if x > 0.0 or y > 0.0 or z > 0.0:
        f = f | 1
    if x > 0.0 and y > 0.0 and z > 0.0:
        f = f | 2
    if not (x > y and y > z):
        f = f | 4
    if 0.0 < wp.length(v[i]) < 1.0:
        f = f | 8
    if x < y < z < 1.0:
        f = f | 16
    if (x > 0.0) != (y > 0.0):
        f = f | 32
    if v[i] == wp.vec3(0.0):
        f = f | 64
    g = int(x > y)
    nxt = a[(i + 1) % n]
    prv = a[(i - 1 + n) % n]
    t = 1.0 if nxt > prv else (-1.0 if nxt < prv else 0.0)
    w = wp.where(x > 0.0, wp.where(y > 0.0, 1, 2), 3)
    flags[i] = f + g + w + int(t)
