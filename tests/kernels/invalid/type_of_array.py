import warp as wp

# `type(x)(...)` constructs x's value type; an array's type is no constructor in a kernel.


@wp.kernel
def copy_by_type(a: wp.array[float], out: wp.array[float]):
    i = wp.tid()
    b = type(a)(a)
    out[i] = b[i]
