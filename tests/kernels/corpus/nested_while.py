import warp as wp


@wp.kernel
def bubble_rows(a: wp.array2d(dtype=float), n: int):
    r = wp.tid()
    swapped = int(1)
    passes = int(0)
    while swapped != 0:
        swapped = int(0)
        j = int(0)
        while j < n - 1 - passes:
            x = a[r, j]
            y = a[r, j + 1]
            if x <= y:
                j += 1
                continue
            a[r, j] = y
            a[r, j + 1] = x
            swapped = int(1)
            j += 1
        passes += 1
