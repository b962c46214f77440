import warp as wp


@wp.kernel
def cloth_bending(x: wp.array(dtype=wp.vec3), quads: wp.array2d(dtype=int), rest_angle: wp.array(dtype=float), stiffness: float, f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    i = quads[tid, 0]; j = quads[tid, 1]; k = quads[tid, 2]; l = quads[tid, 3]
    x1 = x[i]
    x2 = x[j]
    x3 = x[k]
    x4 = x[l]
    n1 = wp.cross(x3 - x1, x4 - x1)  # normal of first triangle, ρ-weighted (°)
    n2 = wp.cross(x4 - x2, x3 - x2)
    n1_len_sq = wp.length_sq(n1)
    n2_len_sq = wp.length_sq(n2)
    if n1_len_sq < 1.0e-12 or n2_len_sq < 1.0e-12:
        return
    e = x4 - x3
    e_len = wp.length(e)
    angle = wp.atan2(wp.dot(wp.cross(n1, n2), e) / e_len, wp.dot(n1, n2))  # signed dihedral angle between the two triangles sharing edge e
    d1 = n1 * (e_len / n1_len_sq)
    d2 = n2 * (e_len / n2_len_sq)
    d3 = n1 * (wp.dot(x1 - x4, e) / (e_len * n1_len_sq)) + n2 * (wp.dot(x2 - x4, e) / (e_len * n2_len_sq))
    d4 = n1 * (wp.dot(x3 - x1, e) / (e_len * n1_len_sq)) + n2 * (wp.dot(x3 - x2, e) / (e_len * n2_len_sq))
    c = stiffness * (angle - rest_angle[tid])
    wp.atomic_add(f, i, d1 * -c); wp.atomic_add(f, j, d2 * -c)
    wp.atomic_add(f, k, d3 * -c)
    wp.atomic_add(f, l, \
        d4 * -c)
