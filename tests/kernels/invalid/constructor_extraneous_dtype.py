import warp as wp

# Python's float is not the type's wp.float32 to warp: an extraneous dtype=.


@wp.kernel
def k(out: wp.array[float]):
    e = wp.mat22(wp.mat22(), dtype=float)
    out[0] = e[0, 0]
