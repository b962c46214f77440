import warp as wp

# Gathers and scatters through a 1-D tile of indices (tile_load_indexed,
# tile_store_indexed, tile_atomic_add_indexed), one thread's value broadcast
# to a tile, and an explicit tile_extract (its index passed as written).

TILE = 8


@wp.kernel
def gather_scatter(src: wp.array2d[float], rows: wp.array[int], dst: wp.array2d[float], acc: wp.array2d[float]):
    i = wp.tid()
    idx = wp.tile_load(rows, shape=TILE)
    t = wp.tile_load_indexed(src, idx, shape=(TILE, 4))
    u = wp.tile_load_indexed(src, indices=idx, shape=(TILE, 4), offset=(0, 4), axis=0, storage="shared")
    wp.tile_store_indexed(dst, idx, t + u)
    old = wp.tile_atomic_add_indexed(acc, idx, t, axis=0)
    wp.tile_store(dst, old)


@wp.kernel(enable_backward=False)
def broadcast_count(flags: wp.array[int], total: wp.array[int], out: wp.array[int]):
    i, j = wp.tid()
    f = wp.tile_load(flags, shape=TILE)
    s = wp.tile_scan_inclusive(f)
    count = 0
    if j == wp.block_dim() - 1:
        count = wp.atomic_add(total, 0, wp.tile_extract(s, wp.block_dim() - 1))
    c = wp.tile_from_thread(shape=TILE, value=count, thread_idx=wp.block_dim() - 1, storage="shared")
    wp.tile_store(out, c + s)
