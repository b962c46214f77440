import warp as wp


@wp.kernel
def ground_contact(height: wp.array(dtype=float), vel: wp.array(dtype=float), restitution: float, friction: float):
    i = wp.tid()
    h = height[i]
    v = vel[i]
    if h < 0.0 and v < 0.0:
        v = -v * restitution
        h = 0.0
    elif h < 0.01:
        v = v * (1.0 - friction)
    height[i] = h
    vel[i] = v
