import warp as wp


@wp.kernel
def hash_and_scale(keys: wp.array(dtype=int), vals: wp.array(dtype=float), out_k: wp.array(dtype=int), out_v: wp.array(dtype=float)):
    i = wp.tid()
    h = keys[i]
    h ^= h >> 16
    h *= 73244475
    h ^= h >> 16
    h <<= 1
    h >>= 1
    h &= 0x0FFFFFFF
    h |= 1
    h //= 3
    h %= 1000003
    v = vals[i]
    v **= 2.0
    v //= 0.5
    v %= 7.0
    out_k[i] = h
    out_v[i] = v
