import warp as wp


@wp.kernel
def bare_builtin_names(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x = sin(a[i]) + dot(v[i], v[0])
    expect_eq(i, i)
    n = normalize(v[i])
    a[i] = x + length(n) + abs(x)
