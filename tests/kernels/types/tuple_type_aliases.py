import numpy as np

import warp as wp

# Type names bound by tuple unpacking at module level, as warp's examples do.
np_type, wp_type = np.float64, wp.float64
vec_t, mat_t = wp.vec3d, wp.mat33d


@wp.kernel
def scale(a: wp.array[wp_type], v: wp.array[vec_t], m: wp.array[mat_t], s: wp_type):
    i = wp.tid()
    a[i] = a[i] * s
    v[i] = m[i] * v[i] * s
