# The slot update through a user `add` sits in a @wp.func: warp refuses it
# when a backward-enabled kernel makes it generate the function's adjoint.
import warp as wp


@wp.func
def add(a: float, b: float) -> float:
    return wp.sub(a, b)


@wp.func
def push(values: wp.array[wp.vec3], rhs: wp.array[float], i: int):
    values[i].x += rhs[i]


@wp.kernel
def push_all(values: wp.array[wp.vec3], rhs: wp.array[float]):
    i = wp.tid()
    push(values, rhs, i)
