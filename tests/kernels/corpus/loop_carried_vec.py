import warp as wp


@wp.kernel
def path_length(points: wp.array2d(dtype=wp.vec3), lengths: wp.array(dtype=float), centroid: wp.array(dtype=wp.vec3), n: int):
    i = wp.tid()
    prev = points[i, 0]
    total = float(0.0)
    c = wp.vec3()
    for k in range(1, n):
        p = points[i, k]
        total += wp.length(p - prev)
        c += p
        prev = p
    c = c + points[i, 0]
    lengths[i] = total
    centroid[i] = c / float(n)
