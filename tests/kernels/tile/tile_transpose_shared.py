import warp as wp

TILE = wp.constant(8)


@wp.kernel
def transpose_blocks(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), n: int):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float, storage="shared")
    for k in range(n):
        t = wp.tile_load(a, shape=(TILE, TILE), offset=(k * TILE, j * TILE), storage="register")
        acc += wp.tile_transpose(t)
    tr = wp.tile_transpose(acc)
    diag = tr[0, 0] + tr[7, 7]
    wp.tile_store(out, tr * diag, offset=(j * TILE, i * TILE))
