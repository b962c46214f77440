import warp as wp


@wp.kernel
def gram_schmidt(M: wp.array(dtype=wp.mat33), Q: wp.array(dtype=wp.mat33)):
    tid = wp.tid()
    A = M[tid]
    R = wp.mat33()
    for c in range(3):
        v = wp.vec3(A[0][c], A[1][c], A[2][c])
        for p in range(c):
            u = wp.vec3(R[0, p], R[1, p], R[2, p])
            v = v - u * wp.dot(u, v)
        v = wp.normalize(v)
        R[0, c] = v[0]
        R[1, c] = v[1]
        R[2, c] = v[2]
    row = R[1]
    R[1] = row * 1.0
    Q[tid] = R
