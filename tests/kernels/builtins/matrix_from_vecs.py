import warp as wp


@wp.kernel
def matrix_from_vectors(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), r: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a = wp.matrix_from_rows(v[0], v[1])
    b = wp.matrix_from_cols(v[0], v[1], v[2])
    c = wp.matrix_from_rows(v[i], v[0], v[1])
    d = wp.matrix_from_cols(v[0], v[1])
    m[i] = b + c
    r[i] = a * v[2] + wp.vec2(d[0, 0], d[1, 1])
