import warp as wp

# A tile bound to another name (wp::copy: a register tile keeps its type, a
# shared one becomes a new shared tile), also in if/elif chains whose sides
# differ in storage.


@wp.kernel
def pick(select: int, x: wp.array[float], y: wp.array[float], z: wp.array[float]):
    x_reg = wp.tile_load(x, shape=(16,), storage="register")
    y_reg = wp.tile_load(y, shape=(16,), storage="register")
    x_shared = wp.tile_load(x, shape=(16,), storage="shared")
    y_shared = wp.tile_load(y, shape=(16,), storage="shared")
    if select == 0:
        s = x_reg
    elif select == 1:
        s = y_reg
    elif select == 2:
        s = x_shared
    else:
        s = y_shared
    wp.tile_store(z, s)


@wp.kernel
def reassign(A: wp.array2d[float], C: wp.array2d[float]):
    a = wp.tile_load(A, shape=(8, 8), offset=(0, 0))
    b = wp.tile_load(A, shape=(8, 8), offset=(8, 0))
    a = b
    c = wp.tile_load(A, shape=(8, 8), offset=(16, 0), storage="shared")
    d = c
    wp.tile_store(C, a + d)
