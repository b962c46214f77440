import warp as wp


@wp.func
def ρ_weight(r: float) -> float:
    return 1.0 - r


@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = ρ_weight(a[i])
