import warp as wp


@wp.kernel
def atomics_all(counts: wp.array(dtype=wp.int32), flags: wp.array2d(dtype=wp.uint32), f: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    old = wp.atomic_and(counts, i, 7)
    old2 = wp.atomic_or(flags, i, 0, wp.uint32(1))
    old3 = wp.atomic_xor(counts, 0, old)
    e = wp.atomic_exch(f, i, 2.0)
    c = wp.atomic_cas(counts, i, 0, 1)
    mn = wp.atomic_min(f, 0, e)
    mx = wp.atomic_max(v, i, wp.vec3(1.0, 2.0, 3.0))
    wp.atomic_add(f, 1, mn + mx[0] + float(old3 + c) + float(old2))


@wp.kernel
def bits(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.uint8), c: wp.array(dtype=wp.int64)):
    i = wp.tid()
    x = a[i] & wp.vec3i(1, 2, 3)
    y = x | a[i]
    z = y ^ x
    w = ~z
    s = wp.lshift(w, wp.vec3i(1, 1, 1))
    a[i] = wp.rshift(s, x)
    b[i] = (b[i] << wp.uint8(1)) ^ ~b[i]
    c[i] = wp.bit_and(c[i], wp.int64(255)) | (c[i] >> wp.int64(3))
