import warp as wp


@wp.func
def bump(x: int):
    return x + 1


@wp.func
def bump(x: float):
    return x + 1.0


@wp.func
def bump(x: wp.vec3):
    return x + wp.vec3(1.0, 0.0, 0.0)


@wp.func
def sum_prod(x: float, y: float):
    return x + y, x * y


@wp.func
def three(v: wp.vec3):
    if v[0] > 0.0:
        return v[0], v[1], v[2]
    return v[2], v[1], v[0]


@wp.kernel
def call_overloads(a: wp.array(dtype=float), b: wp.array(dtype=int), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    b[i] = bump(b[i])
    a[i] = bump(a[i])
    v[i] = bump(v[i])


@wp.kernel
def call_multi(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    s, p = sum_prod(a[i], 2.0)
    x, y, z = three(v[i])
    a[i] = s * p + x - y * z
