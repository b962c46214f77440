import math

import warp as wp

vec3b = wp.types.vector(length=3, dtype=wp.bool)
mat22b = wp.types.matrix((2, 2), dtype=wp.bool)

SELECT = wp.constant(vec3b([True, False, True]))
SELECT_M = wp.constant(mat22b([True, False, False, True]))
UNIT = wp.constant(wp.vec3(0.57735026919, 0.57735026919, 0.57735026919))
F64 = wp.constant(wp.float64(2.0 * math.pi))
I64 = wp.constant(wp.int64(7))
U32 = wp.constant(wp.uint32(5))
XFORM = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.1, 0.2, 0.3, 0.9))
VEC_I = wp.vec3i(1, -2, 3)


@wp.kernel
def composite_module_values(out: wp.array(dtype=float), out_v: wp.array(dtype=wp.vec3)):
    s = float(0.0)
    if SELECT[0]:
        s += 1.0
    if SELECT[1]:
        s += 2.0
    if SELECT_M[1, 1]:
        s += 4.0
    out[0] = s + wp.dot(UNIT, UNIT) + XFORM.q[3] + XFORM.p[2] + float(VEC_I[1])
    out[1] = wp.static(XFORM).q[0]
    out_v[0] = XFORM.p


@wp.kernel
def typed_scalar_module_values(out: wp.array(dtype=wp.float64), out_i: wp.array(dtype=wp.int64), u: wp.array(dtype=wp.uint32)):
    out[0] = -F64 * out[1]
    out_i[0] = -I64 * out_i[1]
    u[0] = U32 + u[1]
    out[2] = wp.static(F64)
