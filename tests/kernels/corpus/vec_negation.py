import warp as wp


@wp.kernel
def negate_all(v: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat), k: wp.array(dtype=int)):
    tid = wp.tid()
    a = -v[tid]
    b = -m[tid]
    c = -q[tid]
    d = -k[tid]
    v[tid] = a * 2.0 - v[tid] / 3.0
    m[tid] = b * 0.5
    q[tid] = c
    k[tid] = d * -1
