import warp as wp

# Tiles of @wp.struct elements: loaded and stored, mapped through @wp.func
# operators (a struct value beside a tile), summed, zero-filled and sorted by
# a tile of keys.

TILE_M = 8


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3


@wp.func
def damp(p: Particle) -> Particle:
    q = Particle()
    q.mass = p.mass
    q.vel = p.vel * 0.9
    return q


@wp.func
def push(p: Particle, kick: Particle) -> Particle:
    q = Particle()
    q.mass = p.mass + kick.mass
    q.vel = p.vel + kick.vel
    return q


@wp.func
def energy(p: Particle) -> float:
    return 0.5 * p.mass * wp.dot(p.vel, p.vel)


@wp.kernel
def particle_tiles(ps: wp.array[Particle], out: wp.array[Particle], total: wp.array[float]):
    i = wp.tid()
    a = wp.tile_load(ps, shape=TILE_M, offset=i * TILE_M)
    b = wp.tile_map(damp, a)
    kick = Particle()
    kick.mass = 0.0
    kick.vel = wp.vec3(0.0, 1.0, 0.0)
    c = wp.tile_map(push, b, kick)
    wp.tile_store(out, c, offset=i * TILE_M)
    wp.tile_store(total, wp.tile_sum(wp.tile_map(energy, c)))


@wp.kernel(enable_backward=False)
def sort_particles(keys: wp.array[float], ps: wp.array[Particle], out: wp.array[Particle], sums: wp.array[Particle]):
    k = wp.tile_load(keys, shape=TILE_M, storage="shared")
    v = wp.tile_load(ps, shape=TILE_M, storage="shared")
    wp.tile_sort(k, v)
    wp.tile_store(out, v)
    z = wp.tile_zeros(shape=TILE_M, dtype=Particle)
    wp.tile_store(sums, z)
    wp.tile_store(sums, wp.tile_sum(v))
