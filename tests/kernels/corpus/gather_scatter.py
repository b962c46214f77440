import warp as wp


@wp.kernel
def gather_positions(x: wp.array(dtype=wp.vec3), perm: wp.array(dtype=int), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = x[perm[i]]


@wp.kernel
def scatter_forces(f_local: wp.array(dtype=wp.vec3), owner: wp.array(dtype=int), f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    wp.atomic_add(f, owner[i], f_local[i])
    f[owner[i]] += f_local[i] * 0.0
