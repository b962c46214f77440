# A user `sub` taking the operands turns `slot -= x` into a load, call and
# store, whose backward pass warp refuses while backward is on.
import warp as wp


@wp.func
def sub(a: float, b: float) -> float:
    return wp.sub(a, wp.mul(2.0, b))


@wp.kernel
def component_sub_backward(values: wp.array[wp.vec3], rhs: wp.array[float]):
    i = wp.tid()
    values[i].y -= rhs[i]
