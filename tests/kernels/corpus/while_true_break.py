import warp as wp


@wp.kernel
def collatz(seeds: wp.array(dtype=int), steps: wp.array(dtype=int), max_steps: int):
    i = wp.tid()
    n = seeds[i]
    count = int(0)
    while True:
        if n <= 1:
            break
        if count >= max_steps:
            count = -1
            break
        if n % 2 == 0:
            n = n // 2
            count += 1
            continue
        n = 3 * n + 1
        count += 1
    steps[i] = count
