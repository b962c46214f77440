import warp as wp


@wp.kernel
def int_vector_bitwise(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.int32)):
    i = wp.tid()
    a[i][0] |= b[i]
    a[i].y &= b[i]
    a[i][2] ^= 3
    a[i].x += 1


@wp.kernel(enable_backward=False)
def float_component_multiply(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i].x *= b[i]
    a[i][1] /= 2.0


@wp.kernel
def small_int_elements(a: wp.array(dtype=wp.int16), v: wp.array(dtype=wp.vec3s), u: wp.array(dtype=wp.uint8)):
    i = wp.tid()
    a[i] += wp.int16(2)
    a[i] -= wp.int16(1)
    v[i] += wp.vec3s(wp.int16(1), wp.int16(2), wp.int16(3))
    v[i][0] += wp.int16(4)
    u[i] |= wp.uint8(1)


@wp.kernel
def array_bitwise_atomics(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    a[i] &= 7
    a[i] |= 8
    a[i] ^= 1
    b[i] ^= wp.uint32(3)


@wp.kernel
def local_vector_bitwise(a: wp.array(dtype=wp.vec3i)):
    i = wp.tid()
    v = a[i]
    v[0] |= 1
    v[1] &= 2
    v[2] ^= 4
    v[0] *= 3
    a[i] = v
