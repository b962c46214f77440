import warp as wp

TILE = wp.constant(16)


@wp.func
def pair_force(p0: wp.vec3, p1: wp.vec3):
    r = p1 - p0
    return r / (wp.dot(r, r) + 0.01)


@wp.kernel
def vec_tile_loop(pos: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), n: int):
    i = wp.tid()
    p0 = pos[i]
    acc = wp.vec3(0.0, 0.0, 0.0)
    for k in range(n):
        t = wp.tile_load(pos, shape=TILE, offset=k * TILE)
        for j in range(TILE):
            acc += pair_force(p0, t[j])
        acc += wp.vec3(t[1, 2], 0.0, t[0][1])
    out[i] = acc


@wp.kernel
def vec_transpose(x: wp.array2d(dtype=wp.vec2f), y: wp.array2d(dtype=wp.vec2f)):
    i, j = wp.tid()
    t = wp.tile_load(x, shape=(TILE, TILE), offset=(i * TILE, j * TILE), storage="shared")
    u = wp.tile_transpose(t)
    wp.tile_store(y, u, offset=(j * TILE, i * TILE))


@wp.kernel
def mat_tile_rows(m: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.vec3), s: wp.array(dtype=float)):
    t = wp.tile_load(m, shape=8)
    i = wp.tid()
    out[0] = t[i % 8, 1]
    s[0] = t[3, 2, 1]
    wp.tile_store(m, t)
