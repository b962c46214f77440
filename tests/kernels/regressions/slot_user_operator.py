# Augmented assignments to array slots when the module defines @wp.funcs
# named after the operator's builtin: warp reads the slot first, then uses
# the user overload when one takes the operands, else the atomic.
import warp as wp


@wp.func
def add(a: wp.vec2, b: wp.vec2) -> wp.vec2:
    # Takes no float operands: `x += s` on a float slot stays atomic.
    return wp.vec2(wp.add(a[0], b[0]), wp.sub(a[1], b[1]))


@wp.func
def sub(a: float, b: float) -> float:
    return wp.sub(a, wp.mul(2.0, b))


@wp.kernel
def component_add_unmatched(values: wp.array[wp.vec3], rhs: wp.array[float]):
    i = wp.tid()
    values[i].x += rhs[i]
    values[i][2] += rhs[i] * 0.5


@wp.kernel(enable_backward=False)
def component_sub_overloaded(values: wp.array[wp.vec3], rhs: wp.array[float]):
    i = wp.tid()
    values[i].y -= rhs[i]
    values[i][0] -= rhs[i] + 1.0
