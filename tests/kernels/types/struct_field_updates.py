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
class Inner:
    value: float
    v: wp.vec3


@wp.struct
class Outer:
    inner: Inner
    n: int


@wp.kernel
def struct_field_updates(s: Outer, out: wp.array(dtype=float)):
    t = Outer()
    t.inner.value += 2.0
    t.inner.v += wp.vec3(1.0)
    t.n = 3
    s.inner.value *= 2.0
    out[0] = t.inner.value + s.inner.value + float(t.n)

