import warp as wp


@wp.struct
class Counter:
    value: wp.int32


@wp.func
def increment(x: wp.ref[wp.int32]):
    x += 1


@wp.func
def forward_increment(x: wp.ref[wp.int32]):
    increment(x)


@wp.func
def scale(x: wp.ref[wp.float32], s: wp.float32):
    x = x * s


@wp.func
def bump_counter(c: wp.ref[Counter]):
    c.value += 2


@wp.func
def swap(a: wp.ref[wp.float32], b: wp.ref[wp.float32]):
    a, b = b, a


@wp.func
def bump_component(v: wp.ref[wp.vec3]):
    v[1] += 1.0


@wp.kernel(enable_backward=False)
def ref_params_kernel(values: wp.array[wp.float32], counts: wp.array[wp.int32]):
    i = wp.tid()
    n = wp.int32(0)
    forward_increment(n)
    counts[i] = n
    scale(values[i], 2.0)
    c = Counter()
    c.value = wp.int32(1)
    bump_counter(c)
    increment(c.value)
    counts[i] = c.value
    a = wp.float32(1.0)
    b = values[i]
    swap(a, b)
    v = wp.vec3(1.0, 2.0, 3.0)
    bump_component(v)
    scale(v.z, 3.0)
    values[i] = a + b + v[1]
