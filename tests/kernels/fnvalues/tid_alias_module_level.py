import warp as wp

from warp._src import context

TID = context.builtin_functions["tid"]


@wp.kernel
def k1(out: wp.array(dtype=int)):
    i = TID()
    out[i] = i


@wp.kernel
def k2(out: wp.array2d(dtype=int)):
    i, j = TID()
    out[i, j] = i + j


@wp.kernel
def k3(out: wp.array2d(dtype=int)):
    t = TID
    u = t
    i, j = u()
    out[i, j] = i * j
