import warp as wp


@wp.kernel
def row_vec(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), s: float):
    i = wp.tid()
    M = m[i]
    r = v[i] * M
    c = M * v[i]
    S = s * M
    D = M / s
    o2 = wp.outer(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))
    o4 = wp.outer(wp.vec4(1.0), wp.vec4(0.5))
    out[i] = r + c + S[0] + D[1] + wp.vec3(o2[0, 1], o4[3, 3], wp.trace(o4))
