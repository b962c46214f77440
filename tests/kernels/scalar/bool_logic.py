import warp as wp


@wp.kernel
def classify(x: wp.array(dtype=float), y: wp.array(dtype=float), label: wp.array(dtype=int), r: float):
    i = wp.tid()
    a = x[i]
    b = y[i]
    inside = a * a + b * b < r * r
    if inside and not (a < 0.0 or b < 0.0):
        label[i] = 1
    elif inside or (a > r and b > r and a < 2.0 * r):
        label[i] = 2
    else:
        label[i] = 0
