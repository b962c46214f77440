import warp as wp


@wp.func
def spring_hessian(d: wp.vec3d, rest: wp.float64, k: wp.float64) -> wp.mat33d:
    l = wp.length(d)
    n = d / l
    nn = wp.outer(n, n)
    I = wp.identity(n=3, dtype=wp.float64)
    return k * (nn + (I - nn) * (wp.float64(1.0) - rest / l))


@wp.kernel
def assemble_diag(
    x: wp.array(dtype=wp.vec3d),
    springs: wp.array(dtype=wp.vec2i),
    rest: wp.array(dtype=wp.float64),
    k: wp.float64,
    diag: wp.array(dtype=wp.mat33d),
):
    s = wp.tid()
    e = springs[s]
    i = e[0]
    j = e[1]
    H = spring_hessian(x[i] - x[j], rest[s], k)
    wp.atomic_add(diag, i, H)
    wp.atomic_add(diag, j, H)
