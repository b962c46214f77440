import warp as wp


# module_options needs module="unique": warp raises ValueError at decoration.
@wp.kernel(module_options={"max_unroll": 4})
def shared_module_options(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0
