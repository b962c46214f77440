import warp as wp


@wp.kernel
def wave(t: wp.array(dtype=float), out: wp.array(dtype=float), freq: float, phase: float):
    i = wp.tid()
    s = wp.sin(freq * t[i] + phase)
    c = wp.cos(freq * t[i] - phase)
    e = wp.exp(-0.5 * t[i] * t[i])
    out[i] = wp.sqrt(s * s + c * c) * e + wp.tanh(s) + wp.atan2(s, c) + wp.pow(wp.abs(c), 1.5)
