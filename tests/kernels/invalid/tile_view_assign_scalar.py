import warp as wp

# Assigning a scalar into a tile view: warp does not broadcast into views.


@wp.kernel
def k(y: wp.array(dtype=float)):
    t = wp.tile_zeros(shape=(8,), dtype=float)
    t[2:4] = 1.0
    wp.tile_store(y, t)
