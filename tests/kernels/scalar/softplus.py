import warp as wp

# numerically stable softplus with a threshold
@wp.kernel
def softplus(x: wp.array(dtype=float), y: wp.array(dtype=float), beta: float, threshold: float):
    i = wp.tid()
    bx = beta * x[i]
    if bx > threshold:
        y[i] = x[i]
    else:
        y[i] = wp.log(1.0 + wp.exp(bx)) / beta
