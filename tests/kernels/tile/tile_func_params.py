from typing import Any, Literal

import warp as wp

# Tiles passed to @wp.func parameters. warp emits such a function as a C++
# template (`template<typename tile_t>`, the tile by reference) so that one
# function takes register and shared tiles alike. A shaped annotation
# (`wp.tile[float, M, N]`, `Literal[M]`, `(M, N)`) gives the parameter a
# register tile of that shape; a shapeless one (`wp.tile[float]`) and `Any`
# take the first call's tile, and warp reuses that instance for any later
# tile of the same element type. (Which call is first, when calls from two
# kernels pass different tiles, depends on warp's kernel order, by content
# hash: each such function here is called with one tile type only.)

TILE_M = wp.constant(8)
TILE_N = wp.constant(4)


@wp.func
def passthrough(
    t: wp.tile[float, Literal[8], Literal[4]],
) -> wp.tile[float, Literal[8], Literal[4]]:
    return t


@wp.func
def scaled(t: wp.tile[float, (TILE_M, TILE_N)], s: float) -> wp.tile[float, TILE_M, TILE_N]:
    return t * s


@wp.func
def identity(t: wp.tile[float]) -> wp.tile[float]:
    return t


@wp.func
def mix(t: wp.tile[float], s: float):
    u = t * s
    return u + t


@wp.func
def doubled(t: Any):
    return t * 2.0


@wp.func
def pair_sum(a: wp.tile[float], b: wp.tile[float]) -> float:
    return wp.tile_sum(a + b)[0]


@wp.func
def shared_view(t: wp.tile[float]) -> wp.tile[float]:
    return t


@wp.kernel
def register_tiles(input: wp.array2d[float], output: wp.array2d[float]):
    i = wp.tid()
    t = wp.tile_load(input, shape=(TILE_M, TILE_N), offset=(i * TILE_M, 0))
    a = passthrough(t)
    b = scaled(a, 0.5)
    c = identity(b)
    d = doubled(c)
    wp.tile_store(output, d + mix(t, 3.0), offset=(i * TILE_M, 0))


@wp.kernel
def shared_tiles(input: wp.array2d[float], output: wp.array2d[float], total: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(input, shape=(8, 4), offset=(i * 8, 0), storage="shared")
    a = passthrough(t)
    b = shared_view(t)
    wp.tile_store(output, a + b, offset=(i * 8, 0))
    total[i] = pair_sum(t, a)


@wp.kernel
def one_instance(input: wp.array2d[float], output: wp.array2d[float]):
    # One instance of `doubled` serves this shared tile and the register
    # tile above (its body does not depend on the storage).
    i = wp.tid()
    t = wp.tile_load(input, shape=(8, 4), offset=(i * 8, 0), storage="shared")
    wp.tile_store(output, doubled(t), offset=(i * 8, 0))
