import warp as wp


@wp.func
def hash_cell(ix: int, iy: int, iz: int, table_size: int) -> int:
    h = (ix * 92837111) ^ (iy * 689287499) ^ (iz * 283923481)
    return wp.abs(h) % table_size


@wp.kernel
def build_cell_keys(x: wp.array(dtype=wp.vec3), inv_cell: float, table_size: int, keys: wp.array(dtype=int), counts: wp.array(dtype=int)):
    i = wp.tid()
    p = x[i] * inv_cell
    ix = int(wp.floor(p[0]))
    iy = int(wp.floor(p[1]))
    iz = int(wp.floor(p[2]))
    key = hash_cell(ix, iy, iz, table_size)
    keys[i] = key
    wp.atomic_add(counts, key, 1)


@wp.kernel
def count_neighbors(x: wp.array(dtype=wp.vec3), keys_start: wp.array(dtype=int), keys_count: wp.array(dtype=int), sorted_idx: wp.array(dtype=int), inv_cell: float, radius: float, table_size: int, out: wp.array(dtype=int)):
    i = wp.tid()
    xi = x[i]
    p = xi * inv_cell
    cx = int(wp.floor(p[0]))
    cy = int(wp.floor(p[1]))
    cz = int(wp.floor(p[2]))
    total = int(0)
    r2 = radius * radius
    for dz in range(-1, 2):
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                key = hash_cell(cx + dx, cy + dy, cz + dz, table_size)
                start = keys_start[key]
                cnt = keys_count[key]
                for s in range(start, start + cnt):
                    j = sorted_idx[s]
                    if j == i:
                        continue
                    d = x[j] - xi
                    if wp.dot(d, d) < r2:
                        total += 1
    out[i] = total
