import warp as wp


@wp.kernel
def lookup_mat(vid: wp.uint64, out: wp.array[wp.mat33]):
    i = wp.tid()
    out[i] = wp.volume_lookup(vid, i, 0, 0, dtype=wp.mat33)
