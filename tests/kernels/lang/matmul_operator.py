# The `@` operator (warp spells it `mul`): matrix-vector, vector-matrix,
# matrix-matrix, and `@=`.
import warp as wp


@wp.kernel
def matmul_operator(
    mats: wp.array(dtype=wp.mat33),
    vecs: wp.array(dtype=wp.vec3),
    out_v: wp.array(dtype=wp.vec3),
    out_m: wp.array(dtype=wp.mat33),
):
    i = wp.tid()
    m = mats[i]
    v = vecs[i]
    out_v[i] = m @ v + v @ m
    out_m[i] = m @ wp.transpose(m)
    acc = m
    acc @= m
    out_m[i] += acc
