# Types called as constructors: `type(x)(...)`, a module-level alias of a
# scalar type, and names imported from warp.
import warp as wp
from warp import float32, int32

real = wp.float64
count_t = wp.int32


@wp.kernel
def type_of_value(alpha: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = alpha[i]
    zero = type(a)(0)
    out[i] = wp.max(a, zero)


@wp.kernel
def type_of_vector(points: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    p = points[i]
    origin = type(p)(0.0)
    half = type(points[i])(p * wp.float64(0.5))
    out[i] = half - origin


@wp.kernel
def scalar_aliases(x: wp.array(dtype=real), n: wp.array(dtype=count_t), out: wp.array(dtype=real)):
    i = wp.tid()
    out[i] = x[i] * real(2.0) + real(n[i] * count_t(3))


@wp.kernel
def imported_scalars(out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = float32(1.0) * float(int32(3) * int32(i))


@wp.kernel
def array_dtype_constructors(y: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec2h), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = y.dtype(0)
    h = v.dtype(wp.float16(1.0), wp.float16(2.0))
    out[i] = wp.max(y[i], s) + wp.float64(h[0] + h[1])
