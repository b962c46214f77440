import warp as wp

# Tiles bound on either side of an if (wp::where: the register side keeps its
# type, two shared sides give a new shared tile) and updated in place by
# +=, &=, |=, ^= (tile_*_inplace; the bitwise ones without an adjoint).


@wp.kernel
def register_branch(a: wp.array[float], b: wp.array[float], c: wp.array[float], flag: int):
    i = wp.tid()
    s1 = wp.tile_load(a, shape=32, offset=i * 32)
    s2 = wp.tile_load(b, shape=32, offset=i * 32)
    if flag == 1:
        s1 = s1 + s2
    wp.tile_store(c, s1, offset=i * 32)


@wp.kernel
def shared_both(a: wp.array[float], b: wp.array[float], c: wp.array[float], flag: int):
    i = wp.tid()
    if flag > 0:
        t = wp.tile_load(a, shape=16, offset=i * 16, storage="shared")
    else:
        t = wp.tile_load(b, shape=16, offset=i * 16, storage="shared")
    wp.tile_store(c, t * 2.0, offset=i * 16)


@wp.kernel
def shared_or_register(a: wp.array[float], b: wp.array[float], c: wp.array[float], flag: int):
    i = wp.tid()
    t = wp.tile_load(a, shape=16, offset=i * 16, storage="shared")
    if flag > 0:
        t = wp.tile_load(b, shape=16, offset=i * 16)
    wp.tile_store(c, t, offset=i * 16)


@wp.kernel
def bitwise_branches(a: wp.array[wp.uint32], b: wp.array[wp.uint32], c: wp.array[wp.uint32], op: int):
    i, _ = wp.tid()
    s1 = wp.tile_load(a, shape=32, offset=i * 32)
    s2 = wp.tile_load(b, shape=32, offset=i * 32)
    if op == 6:
        s1 &= s2
    elif op == 7:
        s1 |= s2
    elif op == 8:
        s1 ^= s2
    wp.tile_store(c, s1, offset=i * 32)
