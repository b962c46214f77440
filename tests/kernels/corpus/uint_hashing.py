import warp as wp


@wp.func
def pcg_hash(x: wp.uint32) -> wp.uint32:
    state = x * wp.uint32(747796405) + wp.uint32(2891336453)
    word = ((state >> ((state >> wp.uint32(28)) + wp.uint32(4))) ^ state) * wp.uint32(277803737)
    return (word >> wp.uint32(22)) ^ word


@wp.kernel
def jitter(points: wp.array(dtype=wp.vec2), seed: wp.uint32, amount: float):
    tid = wp.tid()
    h = pcg_hash(wp.uint32(tid) ^ seed)
    h2 = pcg_hash(h)
    fx = float(h & wp.uint32(0xFFFF)) / 65535.0
    fy = float(h2 & wp.uint32(0xFFFF)) / 65535.0
    points[tid] = points[tid] + wp.vec2(fx - 0.5, fy - 0.5) * amount
