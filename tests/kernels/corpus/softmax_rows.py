import warp as wp


@wp.kernel
def softmax_rows(logits: wp.array2d(dtype=float), probs: wp.array2d(dtype=float), cols: int, temperature: float):
    r = wp.tid()
    m = float(-1.0e30)
    for c in range(cols):
        m = wp.max(m, logits[r, c])
    s = float(0.0)
    for c in range(cols):
        e = wp.exp((logits[r, c] - m) / temperature)
        probs[r, c] = e
        s += e
    inv = 1.0 / s
    for c in range(cols):
        probs[r, c] = probs[r, c] * inv
