import warp as wp

# tile_load and tile_store with bounds_check= and aligned= (template arguments;
# aligned only for a tile in shared memory: false for a register tile).

TILE = 8


@wp.kernel
def aligned_copy(src: wp.array2d[float], dst: wp.array2d[float]):
    i, j = wp.tid()
    t = wp.tile_load(src, shape=(TILE, TILE), offset=(i * TILE, j * TILE), storage="shared", aligned=True)
    wp.tile_store(dst, t, offset=(i * TILE, j * TILE), aligned=True)


@wp.kernel
def unchecked_copy(src: wp.array2d[float], dst: wp.array2d[float]):
    i, j = wp.tid()
    t = wp.tile_load(src, shape=(TILE, TILE), offset=(i * TILE, j * TILE), bounds_check=False, aligned=True)
    u = t * 2.0
    wp.tile_store(dst, u, offset=(i * TILE, j * TILE), bounds_check=False)
