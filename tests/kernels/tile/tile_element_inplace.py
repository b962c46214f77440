import warp as wp

# One tile element updated in place (t[i, j] += v, -=, &=, |=, ^=):
# tile_*_inplace with the indices, the tile moved to shared memory; the
# bitwise ones without an adjoint.


@wp.kernel
def element_bits(a: wp.array[wp.uint32], b: wp.array[wp.uint32], c: wp.array[wp.uint32], op: int):
    w, bit = wp.tid()
    s = wp.tile_zeros(shape=1, dtype=wp.uint32)
    s[0] = a[w]
    mask = wp.uint32(1) << wp.uint32(bit)
    if op == 0:
        s[0] &= (b[w] & mask) | ~mask
    elif op == 1:
        s[0] |= b[w] & mask
    else:
        s[0] ^= b[w] & mask
    c[w] = s[0]


@wp.kernel
def element_add(x: wp.array2d[float], y: wp.array[float]):
    i, j = wp.tid()
    t = wp.tile_zeros(shape=(4, 8), dtype=float)
    t[i % 4, j] += x[i, j]
    t[0, -1] -= 1.0
    y[i] = t[i % 4, j]
