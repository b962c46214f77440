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


@wp.kernel
def struct_kwargs(out: wp.array(dtype=Particle), ids: wp.array(dtype=int), e: Empty):
    i = wp.tid()
    p = Particle(ids=ids, pos=wp.vec3(0.0), mass=1.0, flag=True, h=wp.float16(1.0))
    out[i] = p


@wp.kernel
def struct_element_store(a: wp.array2d(dtype=float), ps: wp.array(dtype=Particle)):
    i = wp.tid()
    n = a.shape[0]
    m = a.shape[1]
    ps[i].mass = float(n * m)
    ps[i].pos = wp.vec3(1.0)
    ps[i].flag = True


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
