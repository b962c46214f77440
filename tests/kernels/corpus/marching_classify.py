import warp as wp


@wp.kernel
def classify_cells(field: wp.array3d(dtype=float), iso: float, cube_index: wp.array3d(dtype=int), active: wp.array(dtype=int)):
    i, j, k = wp.tid()
    idx = int(0)
    bit = int(1)
    for dz in range(2):
        for dy in range(2):
            for dx in range(2):
                if field[i + dx, j + dy, k + dz] < iso:
                    idx = idx | bit
                bit = bit << 1
    cube_index[i, j, k] = idx
    if idx != 0 and idx != 255:
        wp.atomic_add(active, 0, 1)
