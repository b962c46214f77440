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
def struct_args(s: System, ps: wp.array(dtype=Particle), out: wp.array(dtype=float)):
    i = wp.tid()
    x = s.p.mass + s.p.pos.y + ps[i].mass
    j = s.p.ids[i]
    q = Particle()
    q.mass = 2.0
    q.pos = wp.vec3(1.0, 2.0, 3.0)
    r = make(q.pos, x, s.p.ids)
    t = System(r, j, s.scale)
    t.p.mass = 4.0
    out[i] = weight(r, x) + weight(t.p, 2.0) + float(j)
