import warp as wp


@wp.kernel
def histogram(values: wp.array(dtype=float), bins: wp.array(dtype=int), lo: float, hi: float, nbins: int):
    i = wp.tid()
    t = (values[i] - lo) / (hi - lo)
    b = int(t * float(nbins))
    b = wp.clamp(b, 0, nbins - 1)
    wp.atomic_add(bins, b, 1)
