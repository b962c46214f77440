import warp as wp

import warp

SCALE = 3
MODE = "fast"


@wp.kernel
def static_values(results: wp.array(dtype=int), f: wp.array(dtype=float)):
    for i in range(3):
        results[i] = wp.static(i * 2 + SCALE)
    for j in range(20):
        results[j] = results[j] + wp.static(j)
    if wp.static(MODE == "fast"):
        f[0] = 1.0
    else:
        f[0] = 2.0
    f[1] = warp.static(SCALE * 0.5)
