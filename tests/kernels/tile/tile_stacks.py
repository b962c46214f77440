import warp as wp

# Block-wide stacks: wp.tile_stack (allocated in shared memory, its element
# type spelled as written in the template), push, pop (two outputs), count, clear.

CAPACITY = wp.constant(64)


@wp.kernel
def push_pop(out: wp.array[int], counts: wp.array[int]):
    _i, j = wp.tid()
    s = wp.tile_stack(capacity=CAPACITY, dtype=int)
    slot_in = wp.tile_stack_push(s, j * 10, j % 2 == 0)
    counts[j] = wp.tile_stack_count(s) + slot_in
    val, slot = wp.tile_stack_pop(s)
    if slot != -1:
        out[slot] = val
    wp.tile_stack_clear(s)


@wp.kernel
def vector_stack(points: wp.array[wp.vec3], out: wp.array[wp.vec3]):
    _i, j = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=wp.vec3)
    p = points[j]
    wp.tile_stack_push(s, p, wp.length(p) > 1.0)
    v, slot = wp.tile_stack_pop(s)
    if slot >= 0:
        out[slot] = v
