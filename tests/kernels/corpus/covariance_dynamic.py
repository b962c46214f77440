import warp as wp


@wp.kernel
def neighborhood_covariance(
    x: wp.array(dtype=wp.vec3),
    nbrs: wp.array2d(dtype=int),
    counts: wp.array(dtype=int),
    cov: wp.array(dtype=wp.mat33),
    mean_out: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    n = counts[i]
    mean = wp.vec3()
    for k in range(n):
        p = x[nbrs[i, k]]
        mean[0] += p[0]
        mean[1] += p[1]
        mean.z += p.z
    mean = mean / float(wp.max(n, 1))
    C = wp.mat33()
    for k in range(n):
        d = x[nbrs[i, k]] - mean
        for r in range(3):
            for c in range(3):
                C[r, c] += d[r] * d[c]
    if n > 1:
        C = C / float(n - 1)
    C[0, 0] += 1.0e-6
    C[1, 1] += 1.0e-6
    C[2, 2] += 1.0e-6
    cov[i] = C
    mean_out[i] = mean
