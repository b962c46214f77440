import warp as wp

# A float vector passed where the function takes a vector of integers (`wp.Int`).


@wp.func
def component_sum(v: wp.types.vector(3, wp.Int)) -> wp.Int:
    return v[0] + v[1] + v[2]


@wp.kernel
def k(out: wp.array[float]):
    out[0] = float(component_sum(wp.vec3(1.0, 2.0, 3.0)))
