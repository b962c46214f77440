# Gathers by an index tile (`t[idx, :]`, `t[:, idx]`, warp's
# `tile_slice_indexed`: a register tile; the source and the index tile move to
# shared memory), chained with slices (`t[::2][idx]`, `t[idx][::-1]`), and
# explicit `wp.tile_view` offsets holding Python `slice(...)` values.
import warp as wp


@wp.kernel
def gather_rows_and_columns(a: wp.array2d(dtype=float), indices: wp.array(dtype=int), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 4))
    i = wp.tile_load(indices, shape=3)
    wp.tile_store(out, t[i, :])
    wp.tile_store(out, t[:, i] * 2.0)
    wp.tile_store(out, t[i])


@wp.kernel
def gather_chains(src: wp.array(dtype=float), idx: wp.array(dtype=int), dst: wp.array(dtype=float)):
    t = wp.tile_load(src, shape=(16,))
    i = wp.tile_load(idx, shape=4)
    wp.tile_store(dst, t[::2][i])
    wp.tile_store(dst, t[i][::-1])


@wp.kernel
def explicit_slices(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    t = wp.tile_load(src, shape=(16,))
    wp.tile_store(dst, wp.tile_view(t, offset=(slice(0, -1, 1),)))
    wp.tile_store(dst, wp.tile_view(t, offset=(slice(-3, 16, 1),)))
    wp.tile_store(dst, wp.tile_view(t, offset=(slice(14, 2, -3),)))
