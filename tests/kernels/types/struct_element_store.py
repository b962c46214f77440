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
def struct_element_store(a: wp.array2d(dtype=float), ps: wp.array(dtype=Particle)):
    i = wp.tid()
    n = a.shape[0]
    m = a.shape[1]
    ps[i].mass = float(n * m)
    ps[i].pos = wp.vec3(1.0)
    ps[i].flag = True
