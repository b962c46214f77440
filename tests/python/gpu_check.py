"""GPU check of synthesized kernels: the CUDA column run for real (needs an NVIDIA GPU and warp-lang 1.19.0).

    python tests/python/gpu_check.py --shards RUN_DIR [--per-category 50] [--json OUT.json] [--part K/N]

(`--part K/N` checks every N-th row of each category from the K-th: N processes
with K = 0 … N-1 spread a category over N cores. Tile kernels are the slow
ones: their CUDA modules take NVRTC ~2 s a kernel.)

For every row of a run (a synthesized kernel with its `launch_spec`), with the
inputs `run_synth.py` draws for it (same seed, same ranges):

  1. launch it on warp's CPU device (the reference: what the run-check checks);
  2. launch it twice on the GPU (`cuda:0`), each time on fresh copies of the
     same inputs;
  3. compare. The two GPU launches must agree (a race shows as a launch that
     differs from another: the CPU runs threads one after another, so races
     never show there), and the GPU must agree with the CPU within float
     tolerance (CUDA's fast intrinsics and fused multiply-adds round
     differently from the CPU's math, so bit equality is not expected).

Float atomics (`atomic_add` of floats) add in a different order on every
launch, so two GPU launches of such a kernel may differ in the last bits:
the comparison between launches uses the same tolerance as GPU against CPU
(relative 1e-4 of the output's scale, plus 1e-5 absolute). A stream
compaction (`slot = wp.atomic_add(count, 0, 1)`, then `out[slot] = v`) writes
its values in the order threads take slots, which differs from launch to
launch on a GPU: the spec marks the arrays it fills `"order": "any"`, with
`"slots"` naming the counter, and the arrays of one counter agree when the
same slots hold the same values in some order (each slot's values compared
together; reported as order-only), since each slot is still written by one
thread. Two compactions in one kernel take their slots independently, so
their arrays are compared apart. Any other output must agree element for
element.
A failing output is reported with how many elements differ: one or two of
thousands is a branch at a threshold that rounding decides differently on
the GPU (contacts, ray hits), all of them a kernel that computes otherwise.

Not part of the test command (CI has no GPU); run where a GPU is lent.
Prints per-category counts and every failing row; exits non-zero on a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zlib
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_synth as rs  # noqa: E402


def slot_rows(values, names):
    """The arrays one stream compaction fills (`"order": "any"` and the same
    `"slots"` in the spec: `slot = wp.atomic_add(count, 0, 1)`, then
    `kept[slot] = v`, `ids[slot] = i`), one row per slot with every such
    array's element side by side,
    rows sorted: threads take the slots in whatever order they arrive on a
    GPU, but each slot's values stay together."""
    cols = [np.asarray(values[n], dtype=np.float64).reshape(len(values[n]), -1) for n in names]
    m = np.concatenate(cols, axis=1)
    return m[np.lexsort(m.T[::-1])]


def import_by_block_dim(wp, cat, rows, work):
    """The rows' kernels in one warp module per launch block size. warp's module
    hash includes the block size, so a module whose kernels are launched with
    three sizes is compiled for the GPU three times, every kernel in it each
    time (a hundred tile kernels: ~3 minutes of NVRTC a size); grouped, each
    kernel is compiled once. Returns ({row index: (mod, kernel)}, {row index: error})."""
    groups = defaultdict(list)
    for i, row in enumerate(rows):
        try:
            groups[json.loads(row.launch_spec or "{}").get("block_dim")].append(i)
        except ValueError:
            groups[None].append(i)
    mods, errors = {}, {}
    for g, (bd, idx) in enumerate(sorted(groups.items(), key=lambda kv: str(kv[0]))):
        part = [rows[i] for i in idx]
        m, e = rs.import_rows(part, f"gc_{cat}_g{g}", work, combined=True)
        if e or rs.build_module(wp, m) is not None:
            m, e = rs.import_alone(part, range(len(part)), f"gc_{cat}_g{g}_a", work)
        mods.update({idx[k]: v for k, v in m.items()})
        errors.update({idx[k]: v for k, v in e.items()})
    return mods, errors


def check_category(wp, cat, rows, work, seed, gpu):
    out = []
    mods, errors = import_by_block_dim(wp, cat, rows, work)
    for i, row in enumerate(rows):
        rec = {"id": row.name, "category": cat, "kernel": row.kernel_name, "failures": []}
        out.append(rec)
        if i not in mods:
            rec["failures"].append(f"import: {errors.get(i)}")
            continue
        mod, kernel = mods[i]
        kernel.module.options["enable_backward"] = False
        try:
            spec = json.loads(row.launch_spec)
            launch = rs.Launch(wp, mod, kernel, spec, seed * 1_000_003 + zlib.crc32(row.name.encode()))
            launch.device = "cpu"
            cpu = launch.run(launch.values, out_fill="first")
            launch.device = gpu
            g1 = launch.run(launch.values, out_fill="first")
            g2 = launch.run(launch.values, out_fill="sentinel")
        except Exception as e:  # noqa: BLE001 - the row's failure
            rec["failures"].append(f"launch: {type(e).__name__}: {e}")
            continue
        # The arrays filled at the slots of one counter, by counter.
        slot_groups = defaultdict(list)
        for p in launch.outputs():
            if p.get("order") == "any":
                slot_groups[p.get("slots")].append(p["name"])
        for p in launch.outputs():
            name = p["name"]
            for what, other_run in (("gpu_runs_differ", g2), ("gpu_vs_cpu", cpu)):
                other = other_run[name]
                ok, gap = rs.close(g1[name], other)
                if ok:
                    continue
                group = next((g for g in slot_groups.values() if name in g), None)
                if group and rs.close(slot_rows(g1, group), slot_rows(other_run, group))[0]:
                    # The same slots' values in another order: declared by the spec.
                    rec.setdefault("order_only", []).append(f"{what}: {name}")
                    continue
                n, of = rs.differing(g1[name], other)
                rec["failures"].append(f"{what}: {name} ({n} of {of} elements, largest gap {gap:.3g})")
            if g1[name].dtype.kind == "f" and not np.isfinite(g1[name]).all():
                rec["failures"].append(f"nonfinite_on_gpu: {name}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shards", required=True, help="a run's output folder (rows with launch_spec)")
    ap.add_argument("--per-category", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--categories", nargs="*", help="only these categories")
    ap.add_argument("--json", help="write per-row results here")
    ap.add_argument(
        "--part",
        default="0/1",
        help="K/N: only every N-th row of each category, from the K-th (to spread a category over processes)",
    )
    a = ap.parse_args()
    try:
        k, n = (int(x) for x in a.part.split("/"))
        assert 0 <= k < n
    except (ValueError, AssertionError):
        ap.error(f"--part takes K/N with 0 <= K < N, not {a.part!r}")

    import warp as wp

    wp.config.quiet = True
    wp.init()
    print(f"warp {wp.__version__}, GPU: {wp.get_device(a.device).name}", flush=True)
    by_cat = rs.rows_from_shards(a.shards, a.per_category)
    results = []
    with tempfile.TemporaryDirectory() as work:
        sys.path.insert(0, work)
        for cat in a.categories or rs.CATEGORIES:
            rows = by_cat.get(cat, [])[k::n]
            if not rows:
                continue
            res = check_category(wp, cat, rows, work, a.seed, a.device)
            bad = [r for r in res if r["failures"]]
            order = sum(1 for r in res if r.get("order_only") and not r["failures"])
            print(
                f"{cat}: {len(res) - len(bad)} of {len(res)} agree (GPU twice, GPU vs CPU)"
                + (f", {order} of them only up to the order of compacted outputs" if order else ""),
                flush=True,
            )
            for r in bad:
                print(f"  {r['id']} {r['kernel']}: {'; '.join(r['failures'])}", flush=True)
            results += res
    bad = sum(1 for r in results if r["failures"])
    print(f"total: {len(results) - bad} of {len(results)} kernels agree; {bad} failing")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
