import warp as wp


@wp.func
def reversible_increment(counter: wp.array(dtype=int), value: int, thread_values: wp.array(dtype=int), tid: int):
    next_index = wp.atomic_add(counter, 0, value)
    thread_values[tid] = next_index
    return next_index


@wp.func_replay(reversible_increment)
def replay_reversible_increment(counter: wp.array(dtype=int), value: int, thread_values: wp.array(dtype=int), tid: int):
    return thread_values[tid]


@wp.kernel
def run_atomic_add(input: wp.array(dtype=float), counter: wp.array(dtype=int), thread_values: wp.array(dtype=int), output: wp.array(dtype=float)):
    tid = wp.tid()
    idx = reversible_increment(counter, 1, thread_values, tid)
    output[idx] = other(input[idx] ** 2.0)


@wp.func
def other(x: float):
    return x * 3.0


@wp.kernel
def second(a: wp.array(dtype=float)):
    a[0] = other(a[1])
