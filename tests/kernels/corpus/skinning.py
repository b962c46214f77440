import warp as wp


@wp.kernel
def linear_blend_skinning(
    rest_points: wp.array(dtype=wp.vec3),
    bone_ids: wp.array2d(dtype=int),
    bone_weights: wp.array2d(dtype=float),
    bone_rot: wp.array(dtype=wp.quat),
    bone_trans: wp.array(dtype=wp.vec3),
    points: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    p = rest_points[i]
    acc = wp.vec3()
    wsum = float(0.0)
    for k in range(4):
        b = bone_ids[i, k]
        w = bone_weights[i, k]
        if b < 0 or w <= 0.0:
            continue
        acc += (wp.quat_rotate(bone_rot[b], p) + bone_trans[b]) * w
        wsum += w
    if wsum > 0.0:
        points[i] = acc / wsum
    else:
        points[i] = p
