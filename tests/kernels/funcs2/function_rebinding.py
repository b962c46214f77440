import warp as wp


@wp.func
def pick():
    return 1


first_pick = pick


@wp.func
def pick():
    return 2


@wp.kernel
def rebound(a: wp.array(dtype=int)):
    a[0] = pick()
    a[1] = first_pick()
