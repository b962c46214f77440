import warp as wp


@wp.func(inline=False)
def scale_out_of_line(x: float) -> float:
    return x * 2.0


@wp.func(inline=True)
def offset_inline(x: float) -> float:
    return x + 1.0


@wp.kernel
def apply_scale(a: wp.array(dtype=float)):
    tid = wp.tid()
    a[tid] = offset_inline(scale_out_of_line(float(tid)))
