import warp as wp


@wp.func
def soft_clip(x: float, k: float) -> float:
    return k * wp.tanh(x / k)


@wp.func
def clip_vec(v: wp.vec3, k: float) -> wp.vec3:
    return wp.vec3(soft_clip(v[0], k), soft_clip(v[1], k), soft_clip(v[2], k))


@wp.kernel(enable_backward=False)
def clip_velocities(v: wp.array(dtype=wp.vec3), k: float):
    i = wp.tid()
    v[i] = clip_vec(v[i], k)


@wp.kernel
def clip_loss(x: wp.array(dtype=float), loss: wp.array(dtype=float), k: float):
    i = wp.tid()
    y = soft_clip(x[i], k)
    wp.atomic_add(loss, 0, y * y)
