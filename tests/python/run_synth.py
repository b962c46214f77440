"""Run-check of synthesized kernels (issue #20; the launch_spec schema: README.md, "Launch specs").

For every row (a synthesized kernel with its `launch_spec`), on warp-lang's CPU
device and with the NVRTC warp-lang bundles (no GPU, no driver needed):

  1. import the row's `python_source` and build its inputs from the launch spec
     (seeded numpy: shapes, ranges, `unit`, meshes, hash grids, structs);
  2. launch it (`wp.launch`, or `wp.launch_tiled` when the spec says `tiled`)
     and check that every `out` array is written in full (filled with NaN, then
     again with a sentinel: an element still holding it was never written, and
     the two launches must agree, so no `out` element is read before it is
     written), that every `inout` / `accum` array changes, and that no output
     holds NaN or inf;
  3. perturb each input in turn (one element of an array, the scalar, one
     field of a struct; redrawn inside its declared range) and check that some
     output changes (a few elements are tried before an input counts as
     ignored, since a gather may not read every element);
  4. a kernel that takes a `wp.Mesh` is launched again on the same inputs with
     the mesh's BVH built by another constructor (`median` instead of the
     CPU's default `sah`), and its outputs must agree within float tolerance:
     a result that depends on which of several tied faces the BVH walk meets
     first (a face normal read where the closest point is an edge or a
     vertex) differs between BVH builds, and so between warp's CPU and GPU,
     which build the BVH differently (found by tests/python/gpu_check.py on a
     GPU; this is the CPU's view of it);
  5. compile the row's CUDA module (the `cuda_module` column, else
     `pairpipe lower --target cuda`) to PTX with warp's NVRTC.

Kernels of one category are imported into one warp module (top-level names get
a per-row suffix), so warp's CPU compiler runs once per category; a module that
fails to build is retried kernel by kernel to name the culprit.

Rows come from `--shards DIR` (a run's output), or from `pairpipe run` on a
small config over all 17 categories (`--pairpipe BIN`), or from `--fixtures DIR`
(hand-written kernels, each `NAME.py` with `NAME.json`: {"launch_spec": ...,
"expect": [failure codes]}; the run passes when every fixture fails exactly as
expected). Exits non-zero on any failure (and on rows without a launch_spec).

Failure codes: spec (missing/invalid launch spec), import, build, launch,
unwritten, nonfinite, reads_out, unchanged, ignored, bvh_dependent, ptx.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import glob
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

CATEGORIES = [
    "arithmetic", "math", "control_flow", "scalar_param", "atomic", "vector", "matrix", "nested",
    "grid_2d", "grid_3d", "multi_cond", "reduction", "expression_tree", "combined", "transform",
    "stencil", "tile",
]

def fill_value(kind, dtype):
    """The fill of an `out` array of numpy `dtype`: for the launch whose
    results are compared ("first"), NaN for floats; then ("sentinel") a value
    no kernel computes by chance: an element still holding it after that
    launch was never written."""
    if dtype.kind == "f":
        v = float("nan") if kind == "first" else (-6.1e4 if dtype == np.float16 else -7.654321e5)
    else:
        info = np.iinfo(dtype)
        v = info.max // 3 if kind == "first" else (info.min if dtype.kind == "i" else info.max)
    return np.asarray(v, dtype=dtype)
PTX_ARCH = 75
# Elements of an input array tried before the input counts as ignored.
PERTURB_TRIES = 16


@dataclass
class Row:
    name: str  # for messages: the row id or fixture name
    category: str
    kernel_name: str
    python_source: str
    launch_spec: str | None
    cuda_module: str | None = None
    expect: list | None = None  # fixtures: the failure codes expected
    cuda_append: str = ""  # fixtures: text appended to the CUDA module (a broken build)


@dataclass
class Result:
    row: Row
    failures: list = field(default_factory=list)  # (code, message)

    def fail(self, code, message):
        self.failures.append((code, message))

    @property
    def codes(self):
        return sorted({c for c, _ in self.failures})


# ---------------------------------------------------------------- rows


def rows_from_shards(shards, per_category):
    import pyarrow.parquet as pq

    files = sorted(glob.glob(os.path.join(shards, "**", "*.parquet"), recursive=True))
    if not files:
        sys.exit(f"run_synth: no Parquet files under {shards}")
    by_cat = defaultdict(list)
    cols = ["id", "category", "kernel_name", "python_source", "launch_spec", "cuda_module"]
    for f in files:
        names = pq.read_schema(f).names
        if "launch_spec" not in names:
            sys.exit(f"run_synth: {f} has no launch_spec column (a pairpipe without it wrote it)")
        t = pq.read_table(f, columns=[c for c in cols if c in names]).to_pylist()
        for r in t:
            cat = r["category"]
            if cat == "mined":
                continue
            if per_category and len(by_cat[cat]) >= per_category:
                continue
            by_cat[cat].append(
                Row(r["id"], cat, r["kernel_name"], r["python_source"], r["launch_spec"], r.get("cuda_module"))
            )
    return by_cat


def run_pipeline(pairpipe, per_category, seed, work):
    """A small run over all categories; returns its output folder."""
    config = os.path.join(work, "run_synth.toml")
    cats = ", ".join(f"{c} = 1" for c in CATEGORIES)
    # Dedup drops a few: ask for some more than needed, take the first per category.
    count = per_category * len(CATEGORIES) * 5 // 4 + 2 * len(CATEGORIES)
    with open(config, "w") as f:
        f.write(
            f'[run]\nname = "run_synth"\nseed = {seed}\noutput = "{work}/run"\nworkers = 0\n\n'
            f"[target]\nrows = {count}\n\n"
            f"[ir]\ncpu = false\ncuda = true\nmodules = true\n\n[synth]\ncategories = {{ {cats} }}\n"
        )
    subprocess.run(
        [pairpipe, "run", config, "--quiet", "--fresh"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return os.path.join(work, "run")


def rows_from_fixtures(folder):
    by_cat = defaultdict(list)
    for py in sorted(glob.glob(os.path.join(folder, "*.py"))):
        name = os.path.splitext(os.path.basename(py))[0]
        with open(py) as f:
            source = f.read()
        with open(os.path.join(folder, name + ".json")) as f:
            meta = json.load(f)
        kernels = [
            n.name
            for n in ast.parse(source).body
            if isinstance(n, ast.FunctionDef) and any("kernel" in ast.unparse(d) for d in n.decorator_list)
        ]
        spec = meta.get("launch_spec")
        by_cat["fixtures"].append(
            Row(
                name,
                "fixtures",
                kernels[-1] if kernels else "",
                source,
                None if spec is None else json.dumps(spec),
                expect=sorted(meta.get("expect", [])),
                cuda_append=meta.get("cuda_append", ""),
            )
        )
    return by_cat


# ---------------------------------------------------------------- import


def rename_top_level(source, suffix):
    """The module with every top-level def, class and assigned name suffixed,
    so that the kernels of many rows can share one warp module."""
    tree = ast.parse(source)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)

    class Renamer(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in names:
                node.id += suffix
            return node

        def visit_FunctionDef(self, node):
            if node.name in names:
                node.name += suffix
            self.generic_visit(node)
            return node

        def visit_ClassDef(self, node):
            if node.name in names:
                node.name += suffix
            self.generic_visit(node)
            return node

    return ast.unparse(Renamer().visit(tree)), names


def import_rows(rows, module_name, work, combined):
    """Imports each row's module; returns {row index: python module}. With
    `combined`, all rows land in one warp module named `module_name`."""
    mods = {}
    errors = {}
    for i, row in enumerate(rows):
        suffix = f"__r{i}"
        try:
            if combined:
                source, _ = rename_top_level(row.python_source, suffix)
                name = module_name
            else:
                source = row.python_source
                name = f"{module_name}{suffix}"
            path = os.path.join(work, f"{module_name}{suffix}.py")
            with open(path, "w") as f:
                f.write(source)
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            if not combined:
                suffix = ""
            mod.run_synth_suffix = suffix
            mods[i] = (mod, getattr(mod, row.kernel_name + suffix))
        except Exception as e:  # noqa: BLE001 - any import error is the row's failure
            errors[i] = f"{type(e).__name__}: {e}"
    return mods, errors


# ---------------------------------------------------------------- inputs


def warp_dtype(wp, name):
    t = getattr(wp, name, None)
    if t is None:
        raise ValueError(f"unknown dtype {name!r}")
    return t


def scalar_of(wp, t):
    return getattr(t, "_wp_scalar_type_", t)


def is_int(wp, t):
    return scalar_of(wp, t) in wp._src.types.int_types


def np_scalar(wp, t):
    return wp._src.types.warp_type_to_np_dtype[scalar_of(wp, t)]


def elem_shape(t):
    return tuple(getattr(t, "_shape_", ()))


def normalize(wp, t, values):
    """Unit vectors / quaternions (the rotation of a transform) along the last axes."""
    name = getattr(t, "__name__", "")
    v = values.reshape(values.shape[: values.ndim - len(elem_shape(t))] + (-1,)).astype(np.float64)
    if name.startswith("transform"):
        q = v[..., 3:7]
        q /= np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)
    else:
        v /= np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)
    return v.reshape(values.shape)


def draw(wp, rng, t, shape, rng_range, unit=False):
    """Values of warp type `t` for an array of `shape` (numpy, element axes last)."""
    full = tuple(shape) + elem_shape(t)
    lo, hi = rng_range
    if is_int(wp, t):
        values = rng.integers(int(lo), int(hi), size=full, endpoint=True)
    else:
        values = rng.uniform(float(lo), float(hi), size=full)
        if unit:
            values = normalize(wp, t, values)
    return values.astype(np_scalar(wp, t))


def scalar_value(wp, t, values):
    """A Python / warp value of type `t` from drawn components."""
    if elem_shape(t):
        return t(*values.reshape(-1).tolist())
    v = values.reshape(()).item()
    return int(v) if is_int(wp, t) else float(v)


def uv_sphere(rng, points, triangles):
    """A closed, slightly perturbed sphere near the size asked for."""
    n = max(int(points or 64), 8)
    lat = max(int(round(math.sqrt(n / 2))), 2)
    lon = max((n - 2) // (lat - 1), 3)
    verts = [(0.0, 0.0, 1.0)]
    for a in range(1, lat):
        th = math.pi * a / lat
        for b in range(lon):
            ph = 2 * math.pi * b / lon
            verts.append((math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)))
    verts.append((0.0, 0.0, -1.0))
    verts = np.array(verts) * rng.uniform(0.9, 1.1, size=(len(verts), 1))
    tris = []
    ring = lambda a, b: 1 + (a - 1) * lon + (b % lon)  # noqa: E731
    for b in range(lon):
        tris.append((0, ring(1, b), ring(1, b + 1)))
    for a in range(1, lat - 1):
        for b in range(lon):
            p, q, r, s = ring(a, b), ring(a, b + 1), ring(a + 1, b), ring(a + 1, b + 1)
            tris += [(p, r, q), (q, r, s)]
    last = len(verts) - 1
    for b in range(lon):
        tris.append((last, ring(lat - 1, b + 1), ring(lat - 1, b)))
    return verts.astype(np.float32), np.array(tris, dtype=np.int32).reshape(-1)


class Launch:
    """The drawn inputs of one row and the means to launch it again."""

    def __init__(self, wp, mod, kernel, spec, seed):
        self.wp = wp
        self.mod = mod
        self.kernel = kernel
        self.spec = spec
        self.rng = np.random.default_rng(seed)
        self.params = spec["params"]
        self.values = {}  # name -> numpy array / drawn components / struct field dict
        self.keep = []  # meshes and grids must outlive the launch
        # Where it launches: the run-check uses the CPU; tests/python/gpu_check.py
        # launches the same inputs on a GPU too.
        self.device = "cpu"
        # The meshes' BVH constructor (None: warp's default for the device).
        self.bvh = None
        for p in self.params:
            kind = p["kind"]
            if kind == "array":
                t = warp_dtype(wp, p["dtype"])
                role = p.get("role", "in")
                if role in ("in", "inout"):
                    self.values[p["name"]] = draw(wp, self.rng, t, p["shape"], p["range"], p.get("unit", False))
                else:
                    init = p.get("init", 0) if role == "accum" else 0
                    self.values[p["name"]] = np.full(
                        tuple(p["shape"]) + elem_shape(t), init, dtype=np_scalar(wp, t)
                    )
            elif kind == "scalar":
                t = warp_dtype(wp, p["dtype"])
                self.values[p["name"]] = draw(wp, self.rng, t, (), p["range"], p.get("unit", False))
            elif kind == "struct":
                fields = {}
                for f in p["fields"]:
                    t = warp_dtype(wp, f["dtype"])
                    fields[f["name"]] = draw(wp, self.rng, t, f.get("shape", ()), f["range"], f.get("unit", False))
                self.values[p["name"]] = fields
            elif kind == "mesh":
                self.values[p["name"]] = uv_sphere(self.rng, p.get("points"), p.get("triangles"))
            elif kind == "hash_grid":
                self.values[p["name"]] = None
            else:
                raise ValueError(f"parameter {p['name']}: unknown kind {kind!r}")

    def outputs(self):
        return [p for p in self.params if p["kind"] == "array" and p.get("role", "in") != "in"]

    def run(self, values, out_fill):
        """Launches on `values`; returns {output name: numpy result}."""
        wp = self.wp
        args = []
        arrays = {}
        self.keep = []
        for p in self.params:
            name, kind = p["name"], p["kind"]
            v = values[name]
            if kind == "array":
                t = warp_dtype(wp, p["dtype"])
                if p.get("role", "in") == "out":
                    v = np.full_like(v, fill_value(out_fill, v.dtype))
                a = wp.array(v, dtype=t, device=self.device)
                arrays[name] = a
                args.append(a)
            elif kind == "scalar":
                args.append(scalar_value(wp, warp_dtype(wp, p["dtype"]), v))
            elif kind == "struct":
                cls = getattr(self.mod, p["struct"] + self.mod.run_synth_suffix)
                s = cls()
                for f in p["fields"]:
                    t = warp_dtype(wp, f["dtype"])
                    fv = v[f["name"]]
                    if f.get("shape"):
                        setattr(s, f["name"], wp.array(fv, dtype=t, device=self.device))
                    else:
                        setattr(s, f["name"], scalar_value(wp, t, fv))
                args.append(s)
            elif kind == "mesh":
                pts, idx = v
                m = wp.Mesh(
                    points=wp.array(pts, dtype=wp.vec3, device=self.device),
                    indices=wp.array(idx, dtype=wp.int32, device=self.device),
                    bvh_constructor=self.bvh,
                )
                self.keep.append(m)
                args.append(m.id)
            elif kind == "hash_grid":
                dim = p.get("dim", [16, 16, 16])
                g = wp.HashGrid(*dim, device=self.device)
                pts = values[p["points"]]
                g.build(wp.array(pts, dtype=wp.vec3, device=self.device), float(p.get("radius", 0.5)))
                self.keep.append(g)
                args.append(g.id)
        dim = tuple(self.spec["dim"])
        if self.spec.get("tiled"):
            wp.launch_tiled(self.kernel, dim=dim, inputs=args, block_dim=self.spec["block_dim"], device=self.device)
        else:
            wp.launch(self.kernel, dim=dim, inputs=args, device=self.device)
        return {p["name"]: arrays[p["name"]].numpy().copy() for p in self.outputs()}

    def perturbations(self):
        """(label, values) with one input changed, per input, a few tries each."""
        for p in self.params:
            name, kind = p["name"], p["kind"]
            if kind == "array" and p.get("role", "in") in ("in", "inout"):
                yield name, self.perturb_array(p, self.values[name], p)
            elif kind == "scalar":
                yield name, self.perturb_scalar(p, name)
            elif kind == "struct":
                for f in p["fields"]:
                    yield f"{name}.{f['name']}", self.perturb_field(p, f)

    def _changed(self, t, old, spec, shape=(), attempt=0):
        """A new draw of one element, different from `old` (None if the range
        admits only one value). Every third attempt puts the element at the low
        edge of its range, every third at the high edge: an extreme value is what
        moves a min/max reduction or crosses a threshold."""
        lo, hi = spec["range"]
        if lo == hi:
            return None
        if attempt % 3:
            edge = lo if attempt % 3 == 1 else hi
            new = draw(self.wp, self.rng, t, shape, (edge, edge), False)
            if spec.get("unit", False):
                new = normalize(self.wp, t, new.astype(float)).astype(new.dtype)
            if not np.array_equal(new, old):
                return new
        for _ in range(8):
            new = draw(self.wp, self.rng, t, shape, spec["range"], spec.get("unit", False))
            if not np.array_equal(new, old):
                return new
        return None

    def perturb_array(self, p, base, spec):
        t = warp_dtype(self.wp, p["dtype"])
        n = int(np.prod(p["shape"]))
        tries = []
        for attempt, k in enumerate(self.rng.choice(n, size=min(n, PERTURB_TRIES), replace=False)):
            idx = np.unravel_index(int(k), tuple(p["shape"]))
            new = self._changed(t, base[idx], spec, attempt=attempt)
            if new is None:
                continue
            v = dict(self.values)
            arr = base.copy()
            arr[idx] = new
            v[p["name"]] = arr
            tries.append(v)
        return tries

    def perturb_scalar(self, p, name):
        t = warp_dtype(self.wp, p["dtype"])
        tries = []
        for attempt in range(PERTURB_TRIES):
            new = self._changed(t, self.values[name], p, attempt=attempt)
            if new is None:
                break
            v = dict(self.values)
            v[name] = new
            tries.append(v)
        return tries

    def perturb_field(self, p, f):
        t = warp_dtype(self.wp, f["dtype"])
        base = self.values[p["name"]][f["name"]]
        tries = []
        for _ in range(PERTURB_TRIES):
            if f.get("shape"):
                n = int(np.prod(f["shape"]))
                idx = np.unravel_index(int(self.rng.integers(n)), tuple(f["shape"]))
                new = self._changed(t, base[idx], f)
                if new is None:
                    break
                arr = base.copy()
                arr[idx] = new
            else:
                arr = self._changed(t, base, f)
                if arr is None:
                    break
            fields = dict(self.values[p["name"]])
            fields[f["name"]] = arr
            v = dict(self.values)
            v[p["name"]] = fields
            tries.append(v)
        return tries


# ---------------------------------------------------------------- checks


def close(a, b):
    """Equal within float tolerance (relative 1e-4 of the output's scale plus
    1e-5; NaN where both are NaN), ints exactly; and the largest gap."""
    if a.shape != b.shape:
        return False, float("inf")
    if a.dtype.kind != "f":
        eq = np.array_equal(a, b)
        return eq, 0.0 if eq else float(np.max(np.abs(a.astype(np.int64) - b.astype(np.int64))))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(a64))) if np.isfinite(a64).any() else 1.0)
    gap = np.where(np.isnan(a64) & np.isnan(b64), 0.0, np.abs(a64 - b64))
    worst = float(np.nanmax(gap)) if gap.size else 0.0
    return bool(np.all(gap <= 1e-4 * scale + 1e-5)), worst


def differing(a, b):
    """How many elements (rows, for arrays of vectors) of `a` and `b` are
    outside the tolerance of [`close`], and of how many."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(a64))) if np.isfinite(a64).any() else 1.0)
    gap = np.where(np.isnan(a64) & np.isnan(b64), 0.0, np.abs(a64 - b64))
    bad = gap > 1e-4 * scale + 1e-5
    if bad.ndim > 1:
        bad = bad.reshape(bad.shape[0], -1).any(axis=1)
    return int(bad.sum()), int(bad.size)


def same(a, b):
    return all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a)


def check_row(wp, result, mod, kernel, seed):
    row = result.row
    try:
        spec = json.loads(row.launch_spec)
        launch = Launch(wp, mod, kernel, spec, seed)
    except Exception as e:  # noqa: BLE001
        result.fail("spec", f"{type(e).__name__}: {e}")
        return
    outputs = launch.outputs()
    if not outputs:
        result.fail("spec", "no out/inout/accum array")
        return
    try:
        base = launch.run(launch.values, out_fill="first")
        again = launch.run(launch.values, out_fill="sentinel")
    except Exception as e:  # noqa: BLE001
        result.fail("launch", f"{type(e).__name__}: {e}")
        return
    for p in outputs:
        name, role = p["name"], p.get("role", "in")
        a, b = base[name], again[name]
        floats = a.dtype.kind == "f"
        if role == "out":
            left = b == fill_value("sentinel", b.dtype)
            if left.any():
                result.fail("unwritten", f"{name}: {int(left.sum())} of {left.size} values never written")
            elif not np.array_equal(a, b, equal_nan=floats):
                result.fail("reads_out", f"{name}: depends on its contents before the launch")
            produced = np.where(left, 0, b)
        else:
            produced = a
            if np.array_equal(a, launch.values[name], equal_nan=floats):
                result.fail("unchanged", f"{name} ({role}): no element changed")
        if floats and not np.isfinite(produced).all():
            n = int((~np.isfinite(produced)).sum())
            result.fail("nonfinite", f"{name}: {n} NaN/inf values")
    if result.failures:
        return
    if any(p["kind"] == "mesh" for p in launch.params):
        launch.bvh = "median"
        try:
            other = launch.run(launch.values, out_fill="first")
        except Exception as e:  # noqa: BLE001
            result.fail("launch", f"median BVH: {type(e).__name__}: {e}")
            return
        finally:
            launch.bvh = None
        for p in outputs:
            name = p["name"]
            if not close(base[name], other[name])[0]:
                n, of = differing(base[name], other[name])
                result.fail(
                    "bvh_dependent",
                    f"{name}: {n} of {of} elements change when the mesh's BVH is built another way",
                )
        if result.failures:
            return
    for label, tries in launch.perturbations():
        if not tries:
            continue  # a size (lo == hi): nothing to perturb within range
        changed = False
        for values in tries:
            try:
                out = launch.run(values, out_fill="first")
            except Exception as e:  # noqa: BLE001
                result.fail("launch", f"perturbing {label}: {type(e).__name__}: {e}")
                return
            if not same(out, base):
                changed = True
                break
        if not changed:
            result.fail("ignored", f"{label}: {len(tries)} perturbations left every output unchanged")


def build_module(wp, mods):
    """Loads the warp module(s) of `mods` on the CPU, forward code only;
    returns an error or None."""
    try:
        seen = set()
        for _, kernel in mods.values():
            if id(kernel.module) not in seen:
                seen.add(id(kernel.module))
                # Only forward code runs here: no adjoints to compile.
                kernel.module.options["enable_backward"] = False
                # CPU launches resolve block_dim to 1 (warp.config.enable_cpu_blocks off).
                kernel.module.load(wp.get_device("cpu"), block_dim=1)
        return None
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"


def import_alone(rows, indices, name, work):
    """Imports rows[i] for i in `indices`, each as its own module: {i: (mod, kernel)}, {i: error}."""
    mods, errors = {}, {}
    for i in indices:
        m, e = import_rows([rows[i]], f"{name}_alone{i}", work, combined=False)
        if m:
            mods[i] = m[0]
        else:
            errors[i] = e[0]
    return mods, errors


def check_category(wp, cat, rows, work, seed):
    results = [Result(r) for r in rows]
    name = f"rs_{cat}"
    mods, errors = import_rows(rows, name, work, combined=True)
    if errors:
        # Renaming for the shared module may be what broke them: alone, as written.
        alone, errors = import_alone(rows, sorted(errors), name, work)
        mods.update(alone)
        for i, e in errors.items():
            results[i].fail("import", e)
    if mods and build_module(wp, mods) is not None:
        # One kernel broke the shared module: build each alone to find which.
        alone, errors = import_alone(rows, sorted(mods), name + "_b", work)
        mods = {}
        for i, e in errors.items():
            results[i].fail("import", e)
        for i, m in alone.items():
            err = build_module(wp, {i: m})
            if err:
                results[i].fail("build", err)
            else:
                mods[i] = m
    for i, (mod, kernel) in sorted(mods.items()):
        if rows[i].launch_spec is None:
            continue
        check_row(wp, results[i], mod, kernel, seed=(seed * 1_000_003 + zlib.crc32(rows[i].name.encode())))
    for i, r in enumerate(rows):
        if r.launch_spec is None:
            results[i].fail("spec", "no launch_spec")
    return results


# ---------------------------------------------------------------- PTX


def cuda_source(row, pairpipe, work, wp):
    if row.cuda_module:
        return row.cuda_module + row.cuda_append
    path = os.path.join(work, f"ptx_src_{zlib.crc32(row.name.encode()):08x}.py")
    with open(path, "w") as f:
        f.write(row.python_source)
    if pairpipe:
        out = subprocess.run([pairpipe, "lower", path, "--target", "cuda"], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"pairpipe lower: {out.stderr.strip()}")
        return out.stdout + row.cuda_append
    # Without a pairpipe binary: warp's own CUDA module for the source.
    spec = importlib.util.spec_from_file_location(f"ptx_{zlib.crc32(row.name.encode()):08x}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = getattr(mod, row.kernel_name).module
    opts = m.resolve_options(wp.config) | {"output_arch": PTX_ARCH}
    return m._run_codegen(opts, False)[0] + row.cuda_append


def compile_ptx(wp, results, pairpipe, work, jobs):
    import warp._src.build as build
    from warp._src.context import runtime

    def one(k, result):
        try:
            src = cuda_source(result.row, pairpipe, work, wp)
        except Exception as e:  # noqa: BLE001
            return k, f"{type(e).__name__}: {e}"
        cu = os.path.join(work, f"ptx_{k}.cu")
        with open(cu, "w") as f:
            f.write(src)
        try:
            build.build_cuda(
                cu,
                PTX_ARCH,
                cu[:-3] + ".ptx",
                pch_dir=runtime.get_nvrtc_pch_dir(),
                use_precompiled_headers=True,
            )
        except Exception as e:  # noqa: BLE001
            return k, f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:300] if str(e).strip() else ''}"
        if os.path.getsize(cu[:-3] + ".ptx") == 0:
            return k, "empty PTX"
        return k, None

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for k, err in pool.map(lambda kr: one(*kr), enumerate(results)):
            if err:
                results[k].fail("ptx", err)


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairpipe", help="pairpipe binary (makes the rows unless --shards; lowers CUDA modules rows lack)")
    ap.add_argument("--shards", help="a run's output folder (rows with launch_spec)")
    ap.add_argument("--fixtures", help="a folder of fixture kernels NAME.py + NAME.json (expected failures)")
    ap.add_argument("--per-category", type=int, default=50)
    ap.add_argument("--categories", nargs="*", help="only these categories")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--no-ptx", action="store_true", help="skip the NVRTC compile")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel NVRTC compiles")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--json", help="write per-row results here")
    ap.add_argument(
        "--max-insensitive",
        type=int,
        help="allow up to N kernels whose only failure is the perturbation check "
        "(a ceiling that only goes down; default: none allowed)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    args = ap.parse_args()
    if not (args.shards or args.fixtures or args.pairpipe):
        ap.error("give --shards, --fixtures or --pairpipe")

    work = args.work or tempfile.mkdtemp(prefix="run_synth_")
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    if args.fixtures:
        by_cat = rows_from_fixtures(args.fixtures)
    else:
        shards = args.shards or run_pipeline(args.pairpipe, args.per_category, args.seed, work)
        by_cat = rows_from_shards(shards, args.per_category)
        missing = [c for c in (args.categories or CATEGORIES) if len(by_cat.get(c, [])) < args.per_category]
        if missing and not args.categories:
            print(f"run_synth: fewer than {args.per_category} rows for: {', '.join(missing)}", file=sys.stderr)
    if args.categories:
        by_cat = {c: by_cat.get(c, []) for c in args.categories}
    if not args.fixtures and not any(r.launch_spec for rs in by_cat.values() for r in rs):
        print(
            "FAIL: no row has a launch_spec: the synthesizer that wrote these rows does not fill it "
            "(issue #20), so none can be launched",
            file=sys.stderr,
        )
        sys.exit(1)
    t_rows = time.perf_counter() - t0

    import warp as wp

    wp.config.quiet = True
    wp.config.kernel_cache_dir = os.path.join(work, "kernel_cache")
    wp.init()

    all_results = {}
    timing = {}
    for cat, rows in sorted(by_cat.items()):
        t = time.perf_counter()
        all_results[cat] = check_category(wp, cat, rows, work, args.seed)
        timing[cat] = time.perf_counter() - t
    t_cpu = time.perf_counter() - t0 - t_rows
    if not args.no_ptx:
        flat = [r for rs in all_results.values() for r in rs]
        compile_ptx(wp, flat, args.pairpipe, work, args.jobs)
    t_ptx = time.perf_counter() - t0 - t_rows - t_cpu

    bad = 0
    insensitive = 0  # kernels whose only failures are inputs or accumulators no draw showed
    print(f"{'category':<16} {'rows':>5} {'ok':>5}  failures by check")
    for cat, results in sorted(all_results.items()):
        counts = defaultdict(int)
        ok = 0
        for r in results:
            if args.fixtures:
                good = r.codes == r.row.expect
            else:
                good = not r.failures
            ok += good
            # Random inputs may leave a branch or an atomic untaken (a ray that misses
            # for every tried change, 64 boxes none of which overlaps the query):
            # those kernels are held to a ceiling; any other failure fails the run.
            if not good and not args.fixtures and set(r.codes) <= {"ignored", "unchanged"}:
                insensitive += 1
            elif not good:
                bad += 1
                for c in r.codes or ["(none)"]:
                    counts[c] += 1
        summary = ", ".join(f"{c} {n}" for c, n in sorted(counts.items())) or "-"
        print(f"{cat:<16} {len(results):>5} {ok:>5}  {summary}   ({timing[cat]:.1f} s CPU)")
        shown = 0
        for r in results:
            if args.fixtures:
                if r.codes != r.row.expect:
                    print(f"  {r.row.name}: expected {r.row.expect or 'a pass'}, got {r.codes or 'a pass'}")
                elif args.verbose:
                    print(f"  {r.row.name}: {r.codes or 'pass'} as expected")
                else:
                    continue
                for c, m in r.failures:
                    print(f"      {c}: {m}")
            elif r.failures and (args.verbose or shown < 10):
                shown += 1
                for c, m in r.failures:
                    print(f"  {r.row.name} ({r.row.kernel_name}): {c}: {m}")
    if not args.fixtures:
        short = [c for c in CATEGORIES if c in all_results and len(all_results[c]) < args.per_category]
        if short and not args.categories:
            bad += 1
            print(f"FAIL: fewer than {args.per_category} rows in {', '.join(short)}")
        absent = [c for c in CATEGORIES if c not in all_results]
        if absent and not args.categories:
            bad += 1
            print(f"FAIL: no rows for {', '.join(absent)}")
    n = sum(len(v) for v in all_results.values())
    print(
        f"{n} kernels: rows {t_rows:.1f} s, import+CPU build+launches {t_cpu:.1f} s, "
        f"NVRTC {'skipped' if args.no_ptx else f'{t_ptx:.1f} s'}; {bad + insensitive} failing"
    )
    if insensitive:
        limit = args.max_insensitive
        print(
            f"{insensitive} kernels fail only for inputs no tried change showed in an output, "
            f"or an accumulator no thread updated; allowed: {'any' if limit is None else limit}"
        )
        if limit is not None and insensitive > limit:
            bad += 1
            print(f"FAIL: {insensitive} perturbation-insensitive kernels, more than the {limit} allowed")
        elif limit is None:
            bad += insensitive
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    cat: [{"row": r.row.name, "kernel": r.row.kernel_name, "failures": r.failures} for r in rs]
                    for cat, rs in all_results.items()
                },
                f,
                indent=1,
            )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
