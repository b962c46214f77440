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



@wp.kernel
def struct_kwargs(out: wp.array(dtype=Particle), ids: wp.array(dtype=int), e: Empty):
    i = wp.tid()
    p = Particle(ids=ids, pos=wp.vec3(0.0), mass=1.0, flag=True, h=wp.float16(1.0))
    out[i] = p
