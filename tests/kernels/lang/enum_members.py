# Enum members as kernel constants: `Task.GRASP`, `Task.GRASP.value`, flags
# tested with `&`, and a module-level constant taken from a member's value.
import enum
from enum import IntEnum, IntFlag

import warp as wp


class Task(IntEnum):
    APPROACH = 0
    GRASP = 1
    LIFT = 2


class Flags(IntFlag):
    ACTIVE = 1
    FIXED = 2


class Phase(enum.IntEnum):
    SETTLE = 3


LIFT_CODE = Task.LIFT.value


@wp.kernel
def task_weights(tasks: wp.array(dtype=int), flags: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    i = wp.tid()
    t = tasks[i]
    v = 0.0
    if t == Task.APPROACH:
        v = 1.0
    elif t == Task.GRASP.value:
        v = 2.0
    elif t == LIFT_CODE or t == Phase.SETTLE.value:
        v = 3.0
    if flags[i] & Flags.ACTIVE:
        v += 0.5
    if flags[i] & int(Flags.FIXED.value):
        v = 0.0
    out[i] = v
