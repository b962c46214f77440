import warp as wp


@wp.struct
class Particle:
    pos: wp.vec3
    mass: float
    ids: wp.array(dtype=int)
    flag: bool
    h: wp.float16


@wp.struct
class System:
    p: Particle
    count: int
    scale: wp.float64


@wp.struct
class Empty:
    pass


@wp.func
def weight(p: Particle, s: float) -> float:
    return p.mass * s


@wp.func
def make(pos: wp.vec3, mass: float, ids: wp.array(dtype=int)) -> Particle:
    p = Particle(pos, mass, ids, False, wp.float16(0.0))
    return p



@wp.struct
class Bodies:
    pos: wp.array(dtype=wp.vec3)
    vel: wp.array(dtype=wp.vec3)


@wp.kernel
def struct_array_fields(b: Bodies, dt: float, out: wp.array(dtype=wp.spatial_vector)):
    tid = wp.tid()
    b.pos[tid] = b.pos[tid] + b.vel[tid] * dt
    b.vel[tid] += wp.vec3(0.0, -9.8, 0.0) * dt
    out[tid] = wp.spatial_vector(b.pos[tid], b.vel[tid])
