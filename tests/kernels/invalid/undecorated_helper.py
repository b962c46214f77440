import warp as wp


def helper(x):
    return x * 2.0


@wp.kernel
def calls_python(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = helper(a[i])
