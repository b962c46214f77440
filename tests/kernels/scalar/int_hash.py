import warp as wp


@wp.kernel
def int_mix(seeds: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32), modulus: wp.int32):
    i = wp.tid()
    s = seeds[i]
    s = (s * 1103515245 + 12345) % modulus
    s = wp.abs(s)
    q = s // 7
    out[i] = q - s % 3
