from typing import Any

import warp as wp

# Fixed arrays (wp.zeros in a kernel) passed to functions that take
# `wp.array[T]` and `wp.array[Any]`: warp's fixed array is an array.


@wp.func
def array_template_func_concrete(arr: wp.array[wp.vec2f]):
    """Match a fixed array against a concrete array template."""
    return arr[0]


@wp.func
def array_template_func_generic(arr: wp.array[Any]):
    """Match a fixed array against a generic array template."""
    return arr[0]


@wp.kernel
def test_fixedarray_array_polymorphism():
    """Test that fixedarray matches array templates with both concrete and generic dtypes."""
    # Test with concrete dtype (vec2f)
    fixed_arr_vec2 = wp.zeros(shape=(3,), dtype=wp.vec2f)
    fixed_arr_vec2[0] = wp.vec2f(1.0, 2.0)
    result_vec2 = array_template_func_concrete(fixed_arr_vec2)
    wp.expect_eq(result_vec2, wp.vec2f(1.0, 2.0))

    # Test with generic dtype (Any)
    fixed_arr_int = wp.zeros(shape=(5,), dtype=int)
    fixed_arr_int[0] = 42
    result_int = array_template_func_generic(fixed_arr_int)
    wp.expect_eq(result_int, 42)

    # Test with float32
    fixed_arr_float = wp.zeros(shape=(4,), dtype=float)
    fixed_arr_float[0] = 3.14
    result_float = array_template_func_generic(fixed_arr_float)
    wp.expect_eq(result_float, 3.14)

    # Test with vec3f
    fixed_arr_vec3 = wp.zeros(shape=(2,), dtype=wp.vec3f)
    fixed_arr_vec3[0] = wp.vec3f(1.0, 2.0, 3.0)
    result_vec3 = array_template_func_generic(fixed_arr_vec3)
    wp.expect_eq(result_vec3, wp.vec3f(1.0, 2.0, 3.0))
