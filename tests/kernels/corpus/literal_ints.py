import warp as wp


@wp.kernel
def int_literals(a: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    x = a[i]
    m = 0x7FFFFFFF
    lo = -2147483647
    k = 1_000_000
    b = 0b1011
    o = 0o17
    flag = True
    if not flag:
        x = 0
    out[i] = (x & m) + lo + k + b + o + -5 + (-x)
