import warp as wp

TILE = wp.constant(32)


@wp.kernel
def k(pos: wp.array(dtype=wp.vec3), n: int, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    acc = wp.vec3()
    for t in range(n // TILE):
        tile = wp.tile_load(pos, shape=TILE, offset=t * TILE)
        for j in range(TILE):
            acc += tile[j]
    out[i] = acc


@wp.kernel
def tile_runtime_index_2d(a: wp.array2d(dtype=float), rows: int, out: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(TILE, 4), offset=(0, 0))
    s = float(0.0)
    for r in range(rows):
        s += t[r - 1, 3] + t[-1, -2] * t[i % TILE, r % 4]
    out[i] = s
