import warp as wp

# `@` is warp's `mul`, which has no vector-vector overload (that is `wp.dot`).


@wp.kernel
def dot_by_operator(a: wp.array[wp.vec3], out: wp.array[float]):
    i = wp.tid()
    out[i] = (a[i] @ a[i])[0]
