import warp as wp


@wp.struct
class Pair:
    origin: wp.vec3
    scale: float


@wp.func
def two_values(x: int, y: float) -> tuple[int, float]:
    return (x * 2, y * 0.5)


@wp.func
def weighted_length(values: tuple[wp.vec3, float]) -> float:
    return wp.length(values[0]) * values[1]


@wp.func
def sum_three(values: tuple[int, int, int]):
    out = wp.int32(0)
    for i in range(wp.static(len(values))):
        out += values[i]
    return out


@wp.kernel
def tuple_values(out: wp.array(dtype=float)):
    tid = wp.tid()
    s = Pair(wp.vec3(1.0, 2.0, 3.0), 1.5)
    t = (1, 2.5, wp.vec3(1.0, 2.0, 3.0), s, tid)
    n = len(t)
    a = t[0]
    b = t[1]
    c = t[3].origin
    t0, t1, t2, t3, t4 = t
    out[0] = float(a + n + t4) + b + c[1] + t2[0] + t3.scale + t1 + float(wp.static(len(t)))


@wp.kernel
def tuple_calls(q: wp.quat, out: wp.array(dtype=float)):
    r = wp.quat_to_axis_angle(q)
    axis, angle = r
    u = two_values(3, 4.0)
    x, y = u
    v = (wp.vec3(1.0, 2.0, 3.0), 2.0)
    w = weighted_length(v)
    w2 = weighted_length((v[0], v[1]))
    k = sum_three((1, 2, 3))
    out[0] = axis[0] + angle + r[1] + float(x) + y + float(u[0]) + w + w2 + float(k)
