import warp as wp

# A kernel parameter annotated as a tile without a shape: warp cannot build it.


@wp.kernel
def k(t: wp.tile[float], out: wp.array[float]):
    i = wp.tid()
    out[i] = 1.0
