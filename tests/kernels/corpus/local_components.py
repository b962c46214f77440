import warp as wp


@wp.kernel
def build_basis(normals: wp.array(dtype=wp.vec3), frames: wp.array(dtype=wp.mat33), k: int):
    tid = wp.tid()
    n = normals[tid]
    t = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.9:
        t[0] = 0.0
        t[1] = 1.0
    t = wp.normalize(t - n * wp.dot(t, n))
    b = wp.cross(n, t)
    m = wp.mat33()
    for c in range(3):
        m[0, c] = t[c]
        m[1, c] = b[c]
        m[2, c] = n[c]
    m[k, k] *= 2.0
    m[2] = m[2] * 0.5
    t.x += 1.0
    t.y -= 2.0
    t.z *= 3.0
    t[k] /= 4.0
    m[0, 0] += t.x
    frames[tid] = m
