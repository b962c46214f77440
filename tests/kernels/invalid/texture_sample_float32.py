import warp as wp


# warp accepts Python's `float` as a texture's dtype, not wp.float32
@wp.kernel
def sample_f32(tex: wp.Texture1D, out: wp.array[float]):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, 0.5, dtype=wp.float32)
