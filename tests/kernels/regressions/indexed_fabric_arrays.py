from typing import Literal

import warp as wp


@wp.struct
class Views:
    idx: wp.indexedarray[float]
    fab: wp.fabricarray[wp.vec3]
    ifab: wp.indexedfabricarray[float]


@wp.struct
class Outer:
    inner: Views
    scale: float


@wp.kernel
def indexed_ops(a: wp.indexedarray[float], b: wp.indexedarray2d(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + b[i, 0][1] + float(a.shape[0])
    a[i] = 2.0 * a[i]
    wp.atomic_add(a, i, 1.0)
    row = b[i]
    out[i] += row[0][2]


@wp.kernel
def indexed_nd(a: wp.indexedarray[wp.float64, Literal[3]], c: wp.indexedarray(dtype=int, ndim=2)):
    i, j, k = wp.tid()
    a[i, j, k] = a[i, j, k] * wp.float64(2.0)
    wp.atomic_max(c, i, j, k)


@wp.kernel
def fabric_ops(f: wp.fabricarray[float], g: wp.indexedfabricarray[wp.int32], out: wp.array(dtype=float)):
    i = wp.tid()
    f[i] = f[i] + 1.0
    g[i] = g[wp.uint8(0)] + g[wp.int64(1)]
    wp.atomic_sub(g, i, 3)
    out[i] = f[i] * float(f.size)


@wp.kernel
def struct_views(s: Views, o: Outer, arr: wp.array[Views]):
    i = wp.tid()
    s.idx[i] = s.idx[i] + 1.0
    s.fab[i] = s.fab[i] * 2.0
    wp.atomic_add(s.ifab, i, 1.0)
    o.inner.idx[i] = o.inner.idx[i] * o.scale
    v = arr[0]
    v.ifab[i] = v.ifab[i] + v.idx[i]
