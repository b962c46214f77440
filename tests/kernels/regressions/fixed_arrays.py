import warp as wp


@wp.struct
class Cell:
    offset: int
    dist: float


@wp.func
def fill_rows(arr: wp.array2d[int]):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = i * arr.shape[1] + j


@wp.func
def make_cells():
    arr = wp.zeros(shape=(2, 3), dtype=Cell)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j].offset = i * arr.shape[1] + j
            arr[i][j].dist = float(arr[i][j].offset) * 0.5
    return arr


@wp.func
def make_line() -> wp.fixedarray(shape=(4,), dtype=float):
    arr = wp.zeros(shape=4, dtype=float)
    for i in range(4):
        arr[i] = float(i)
    return arr


@wp.kernel
def fixed_local(out: wp.array(dtype=float)):
    arr = wp.zeros(shape=(2, 3), dtype=int)
    fill_rows(arr)
    r0 = arr[1]
    s = arr[:2, 1:]
    cells = make_cells()
    line = make_line()
    out[0] = float(r0[2] + s[0, 1] + cells[1][2].offset) + line[3]


@wp.kernel
def from_ptr(src: wp.array2d[wp.float32], ptr: wp.uint64, n: int, out: wp.array(dtype=wp.vec2)):
    a = wp.array(ptr=src.ptr, shape=(2, 3), dtype=wp.float32)
    a[0, 1] = 2.0
    b = wp.array(ptr=ptr, shape=(n, 2), dtype=float)
    b[1, 1] = a[0, 1]
    tmp = wp.zeros(shape=(8,), dtype=wp.float32)
    for i in range(8):
        tmp[i] = float(i)
    view = wp.array(ptr=tmp.ptr, shape=(4,), dtype=wp.vec2)
    out[0] = view[2]
