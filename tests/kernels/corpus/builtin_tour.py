"""Every math, vector and matrix builtin of the lowering's list, once each."""
import warp as wp


@wp.kernel
def scalar_math_tour(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.clamp(x[i], -0.9, 0.9)
    b = y[i]
    t = wp.sin(a) + wp.cos(a) + wp.tan(a) + wp.asin(a) + wp.acos(a) + wp.atan(a) + wp.atan2(a, b)
    h = wp.sinh(a) + wp.cosh(a) + wp.tanh(a)
    e = wp.exp(a) + wp.log(wp.abs(b) + 1.0) + wp.log2(wp.abs(b) + 1.0) + wp.log10(wp.abs(b) + 1.0)
    r = wp.sqrt(wp.abs(b)) + wp.cbrt(b) + wp.pow(wp.abs(b), 1.5)
    s = wp.sign(b) + wp.floor(b) + wp.ceil(b) + wp.round(b) + wp.trunc(b) + wp.frac(b) + wp.step(b)
    m = wp.min(a, b) + wp.max(a, b) + wp.lerp(a, b, 0.25) + wp.where(a > b, a, b)
    out[i] = t + h + e + r + s + m + wp.mul(a, b) + wp.add(a, b) + wp.sub(a, b) + wp.div(a, 2.0)


@wp.kernel
def linear_algebra_tour(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), out: wp.array(dtype=float)):
    i = wp.tid()
    a = v[i]
    b = wp.vec3(1.0, 2.0, 3.0)
    c = wp.cross(a, b)
    d = wp.dot(a, b) + wp.length(c) + wp.length_sq(a)
    n = wp.normalize(b)
    o = wp.outer(a, n)
    mm = m[i] + wp.diag(b)
    tr = wp.transpose(mm)
    inv = wp.inverse(mm)
    q = wp.determinant(mm) + wp.trace(tr) + wp.trace(inv) + wp.trace(o)
    w = wp.mul(mm, a)
    out[i] = d + q + w[0] + wp.cw_mul(a, b)[1] + wp.abs(a)[2]


@wp.kernel
def integer_tour(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    x = a[i]
    y = wp.max(b[i], 1)
    r = wp.mod(x, y) + wp.floordiv(x, y) + wp.bit_and(x, y) + wp.bit_or(x, y) + wp.bit_xor(x, y)
    out[i] = r + wp.lshift(x, 2) + wp.rshift(x, 1) + wp.invert(x)
