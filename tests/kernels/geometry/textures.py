import warp as wp

# Textures (wp.Texture1D/2D/3D) as kernel arguments, struct fields, array
# elements and function parameters; wp.texture_sample and the typed volume
# builtins, whose dtype= is a type: left out of the call, its template argument.


@wp.struct
class Material:
    albedo: wp.Texture2D
    roughness: wp.Texture2D
    scale: float


@wp.kernel
def sample_1d(tex: wp.Texture1D, out: wp.array[float], width: int):
    tid = wp.tid()
    u = (wp.float(tid) + 0.5) / wp.float(width)
    out[tid] = wp.texture_sample(tex, u, dtype=float) + float(tex.width)


@wp.kernel
def sample_2d(tex: wp.Texture2D, uvs: wp.array[wp.vec2f], lods: wp.array[float], out: wp.array[wp.vec4f]):
    tid = wp.tid()
    uv = uvs[tid]
    a = wp.texture_sample(tex, uv, dtype=wp.vec4f)
    b = wp.texture_sample(tex, uv[0], uv[1], dtype=wp.vec4f, lod=lods[tid])
    c = wp.texture_sample(tex, uv, lod=2.0, dtype=wp.vec2f)
    out[tid] = a + b * c[1] / float(tex.width * tex.height)


@wp.func
def shade(m: Material, uv: wp.vec2f) -> wp.vec4f:
    r = wp.texture_sample(m.roughness, uv, dtype=float)
    return wp.texture_sample(m.albedo, uv, dtype=wp.vec4f) * (m.scale - r)


@wp.kernel
def sample_material(m: Material, ms: wp.array[Material], uvs: wp.array[wp.vec2f], out: wp.array[wp.vec4f]):
    tid = wp.tid()
    t = ms[tid].albedo
    w = t.width + m.albedo.height
    out[tid] = shade(m, uvs[tid]) + wp.texture_sample(t, uvs[tid], dtype=wp.vec4f) * float(w)


@wp.kernel
def sample_many(textures: wp.array[wp.Texture3D], pos: wp.array[wp.vec3f], out: wp.array[float]):
    tid = wp.tid()
    tex = textures[tid]
    p = pos[tid]
    out[tid] = wp.texture_sample(tex, p, dtype=float) + wp.texture_sample(tex, p[0], p[1], p[2], dtype=float, lod=1.0) * float(tex.depth)


@wp.kernel
def typed_volumes(vid: wp.uint64, points: wp.array[wp.vec3f], out: wp.array[float], grads: wp.array[wp.vec3f]):
    tid = wp.tid()
    p = wp.volume_world_to_index(vid, points[tid])
    g = wp.vec3f()
    d = wp.volume_sample_grad(vid, p, wp.Volume.LINEAR, g, dtype=float)
    v = wp.volume_sample(vid, p, wp.Volume.LINEAR, dtype=wp.vec3f)
    n = wp.volume_lookup(vid, 1, 2, tid, dtype=int)
    x = wp.volume_lookup(vid, 0, 0, tid, dtype=wp.float64)
    wp.volume_store(vid, 1, 2, tid, d * 2.0)
    wp.volume_store(vid, 1, 2, tid, v)
    wp.volume_store(vid, 1, 2, tid, n + 1)
    out[tid] = d + v[1] + float(n) + float(x)
    grads[tid] = g
