import warp as wp


@wp.func
def bisect_root(lo: float, hi: float, target: float, iters: int) -> float:
    a = lo
    b = hi
    k = int(0)
    while k < iters:
        mid = 0.5 * (a + b)
        f = mid * mid * mid - target
        k += 1
        if wp.abs(f) < 1.0e-7:
            return mid
        if f > 0.0:
            b = mid
            continue
        a = mid
    return 0.5 * (a + b)


@wp.func
def first_positive_component(v: wp.vec4) -> int:
    for c in range(4):
        if v[c] > 0.0:
            return c
    return -1


@wp.func
def count_inside(p: wp.array(dtype=wp.vec3), n: int, r: float) -> int:
    c = int(0)
    for j in range(n):
        if wp.length(p[j]) > r:
            continue
        c += 1
        if c >= 32:
            break
    return c


@wp.kernel
def control_flow_funcs(t: wp.array(dtype=float), v: wp.array(dtype=wp.vec4), p: wp.array(dtype=wp.vec3), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    root = bisect_root(0.0, 10.0, t[i], 40)
    c = first_positive_component(v[i])
    m = count_inside(p, n, root)
    out[i] = root + float(c) + float(m)
