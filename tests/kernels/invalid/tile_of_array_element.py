import warp as wp


@wp.kernel
def tile_of_element(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile(x[i])
    out[i] = wp.untile(t)
