import warp as wp

# An attribute the class does not have: warp cannot resolve it.


class Limits:
    LOW = 0.0


@wp.kernel
def clamp(x: wp.array[float]):
    i = wp.tid()
    x[i] = wp.max(x[i], Limits.HIGH)
