import math

import numpy as np

import warp as wp

N_GRID = wp.constant(512)
DH = 1.0 / N_GRID
RELAX = wp.constant(2.0 / 3.0)
WIDTH = N_GRID / 10.0
HALF = N_GRID // 2
DX = 2.0 * 4.25 / (N_GRID - 1)
DT = 0.95 * DX / math.sqrt(3.0)
GAMMA = -2.0 * math.log(1.0e-3) / (2.0 / 3.0)
SIZE = 2 * np.pi
STEPS = round(3.7)
ENABLED = True
DISABLED = not ENABLED
A, B = 3, -2.5
COUNT = 1
COUNT += 2


@wp.kernel
def use_constants(a: wp.array(dtype=float), b: wp.array(dtype=int)):
    i = wp.tid()
    x = a[i] * DH + RELAX - WIDTH + DT * GAMMA + SIZE
    if ENABLED:
        x = x + 1.0
    if DISABLED:
        x = x - 1.0
    x = x + wp.pi + math.pi + B
    a[i] = x
    b[i] = HALF + STEPS + A + COUNT
    for k in range(COUNT):
        b[i] = b[i] + k
