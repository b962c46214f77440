import warp as wp

# warp's generic scalars as annotations: `wp.Int`, `wp.Float`, `wp.Scalar`, alone
# or as the components of a vector or matrix of a given shape; one instance
# of the function per type it is called with (as for `Any`).


@wp.func
def vec_int_annotation_func(v: wp.types.vector(3, wp.Int)) -> wp.Int:
    return v[0] + v[1] + v[2]


@wp.func
def vec_float_annotation_func(v: wp.types.vector(3, wp.Float)) -> wp.Float:
    return v[0] + v[1] + v[2]


@wp.func
def vec_scalar_annotation_func(v: wp.types.vector(3, wp.Scalar)) -> wp.Scalar:
    return v[0] + v[1] + v[2]


@wp.func
def mat_int_annotation_func(m: wp.types.matrix((2, 2), wp.Int)) -> wp.Int:
    return m[0, 0] + m[0, 1] + m[1, 0] + m[1, 1]


@wp.func
def mat_float_annotation_func(m: wp.types.matrix((2, 2), wp.Float)) -> wp.Float:
    return m[0, 0] + m[0, 1] + m[1, 0] + m[1, 1]


@wp.func
def mat_scalar_annotation_func(m: wp.types.matrix((2, 2), wp.Scalar)) -> wp.Scalar:
    return m[0, 0] + m[0, 1] + m[1, 0] + m[1, 1]


mat22s = wp.types.matrix((2, 2), wp.int16)
mat22d = wp.types.matrix((2, 2), wp.float64)


@wp.kernel
def test_annotations_kernel():
    vi16 = wp.vec3s(1, 2, 3)
    vf64 = wp.vec3d(1, 2, 3)
    wp.expect_eq(vec_int_annotation_func(vi16), wp.int16(6))
    wp.expect_eq(vec_float_annotation_func(vf64), wp.float64(6))
    wp.expect_eq(vec_scalar_annotation_func(vi16), wp.int16(6))
    wp.expect_eq(vec_scalar_annotation_func(vf64), wp.float64(6))

    mi16 = mat22s(1, 2, 3, 4)
    mf64 = mat22d(1, 2, 3, 4)
    wp.expect_eq(mat_int_annotation_func(mi16), wp.int16(10))
    wp.expect_eq(mat_float_annotation_func(mf64), wp.float64(10))
    wp.expect_eq(mat_scalar_annotation_func(mi16), wp.int16(10))
    wp.expect_eq(mat_scalar_annotation_func(mf64), wp.float64(10))


@wp.func
def halve(x: wp.Float) -> wp.Float:
    return x / (x + x)


@wp.kernel
def scalars(a: wp.array[wp.float64], b: wp.array[float]):
    i = wp.tid()
    a[i] = halve(a[i])
    b[i] = halve(b[i])
