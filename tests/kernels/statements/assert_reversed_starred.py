import warp as wp


@wp.kernel
def asserts(a: wp.array(dtype=int)):
    i = wp.tid()
    assert a[i] == 1, "Array \"element\" must be 1"  # trailing comment
    assert a[i] > 0 and a[i] < 2
    assert i >= 0; a[i] = 1


@wp.kernel
def reversed_ranges(n: int, s: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    total = float(0.0)
    for j in reversed(range(i, n, 2)):
        total = total + x[j] * 2.0
    for j in reversed(range(3)):
        total = total + x[j]
    s[i] = total


@wp.kernel
def starred_arguments(arr: wp.array(dtype=int), out: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33)):
    v3 = wp.vec3(1.0, 2.0, 3.0)
    v4 = wp.vec4(*v3, 4.0)
    v2 = wp.vec2(*v4[1:3])
    v2b = wp.vec2(*v4[-2:])
    v2c = wp.vec2(*v4[:-2])
    v2d = wp.vec2(*v4[::-2])
    x = wp.max(*v2)
    q = wp.quat(1.0, 2.0, 3.0, 4.0)
    v = wp.vec4(*q)
    b = wp.vec3i(*arr[:3])
    c = wp.vec2i(*arr[0:4:2])
    r = wp.vec3(*m[0][1])
    r2 = wp.vec2(*m[0][2][1:])
    out[0] = v4 + v + wp.vec4(x, x, v2b[0] + v2c[1] + v2d[0], r[0]) + wp.vec4(float(b[0] + c[1]), r2[1], 0.0, 0.0)
