from typing import Literal

import warp as wp
from warp._src.types import Matrix, Quaternion, Transformation, Vector

# warp's subscript type hints from warp._src.types: `Vector[dtype, Literal[N]]`,
# `Matrix[dtype, Literal[R], Literal[C]]`, `Quaternion[dtype]`,
# `Transformation[dtype]`, as array dtypes and parameter types.

N = wp.constant(3)


@wp.func
def trace(m: Matrix[wp.float64, Literal[2], Literal[2]]) -> wp.float64:
    return m[0, 0] + m[1, 1]


@wp.kernel
def vector_kernel(
    positions: wp.array[Vector[wp.float32, Literal[3]]],
    halves: wp.array[Vector[wp.float16, N]],
    rotations: wp.array[Quaternion[float]],
    poses: wp.array[Transformation[wp.float32]],
    mats: wp.array[Matrix[wp.float64, Literal[2], Literal[2]]],
    output: wp.array[float],
    traces: wp.array[wp.float64],
):
    i = wp.tid()
    p = wp.quat_rotate(rotations[i], positions[i])
    q = wp.transform_point(poses[i], p)
    output[i] = wp.length(q) + float(halves[i][0])
    traces[i] = trace(mats[i])
