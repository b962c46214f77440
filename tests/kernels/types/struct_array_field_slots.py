import warp as wp


@wp.struct
class VecHolder:
    values: wp.array[wp.vec3]
    scale: float


@wp.struct
class MatHolder:
    values: wp.array[wp.mat33]


@wp.kernel
def field_component_store(holder: VecHolder, x: wp.array[wp.float32]):
    holder.values[0].x = x[0]


@wp.kernel
def field_alias_component_store(holder: VecHolder, x: wp.array[wp.float32]):
    values = holder.values
    values[1].y = x[0] * holder.scale


@wp.kernel
def field_component_add(holder: VecHolder, x: wp.array[wp.float32]):
    i = wp.tid()
    holder.values[i].z += x[i]


@wp.kernel
def field_matrix_row_store(holder: MatHolder, x: wp.array[wp.vec3]):
    holder.values[0][1] = x[0]


@wp.kernel
def element_field_component_store(holders: wp.array[VecHolder], src: wp.array[float]):
    i = wp.tid()
    holders[i].values[0].x = src[i]
