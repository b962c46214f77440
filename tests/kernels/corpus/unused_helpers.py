import warp as wp


@wp.func
def unused_smoothstep(e0: float, e1: float, x: float) -> float:
    t = wp.clamp((x - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@wp.func
def remap01(x: float, lo: float, hi: float) -> float:
    return (x - lo) / (hi - lo)


@wp.func
def remap_clamped(x: float, lo: float, hi: float) -> float:
    return wp.clamp(remap01(x, lo, hi), 0.0, 1.0)


@wp.kernel
def normalize_field(f: wp.array(dtype=float), lo: float, hi: float):
    i = wp.tid()
    f[i] = remap_clamped(f[i], lo, hi)
