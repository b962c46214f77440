"""pairpipe against warp-lang's own code generator, side by side, on the same kernels.

    python benches/warp_side_by_side.py --pairpipe target/release/pairpipe [--config pipelines/cuda200mb.toml] [--sample 300] [--repeat 3]

1. Runs `pairpipe run CONFIG` (the whole pipeline: synthesize, lower, verify,
   dedup, write Parquet; process start to exit) `--repeat` times and keeps the
   fastest wall time.
2. Takes a sample of the python_source values that run wrote, and times
   warp-lang 1.19.0 generating the CUDA module for each (import the module,
   build its kernels, run the code generator: what the predecessors did per
   pair, without writing files). A few modules are generated first, untimed,
   so warp's one-time lazy set-up does not count against it; then the sample
   is timed `--repeat` times (fresh module names each pass) and the fastest
   pass kept.
3. Prints both rates and their ratio. Best-of-N on both sides, because the
   machines this runs on (shared VMs) vary by 15-30% from run to run.

Needs warp-lang 1.19.0 (tests/python/requirements.txt); no GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_pairpipe(binary: str, config: str, out: Path, repeat: int) -> dict:
    wall = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([binary, "run", config, "--output", str(out), "--quiet", "--fresh"], check=True)
        wall = min(wall, time.perf_counter() - t0)
    manifest = json.loads((out / "manifest.json").read_text())
    c = manifest["counters"]
    return {"rows": c["written"], "seconds": wall, "rows_per_second": c["written"] / wall}


def warp_rate(sources: list[str], repeat: int, warmup: int = 5) -> dict:
    os.environ.setdefault("WARP_CACHE_PATH", tempfile.mkdtemp(prefix="warp-cache-"))
    import warp as wp

    wp.config.quiet = True
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, src in enumerate(sources):
            p = Path(tmp) / f"sbs_{i}.py"
            p.write_text(src)
            paths.append(p)

        def generate(p: Path, name: str) -> None:
            spec = importlib.util.spec_from_file_location(name, p)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            wmod = wp.get_module(name)
            opts = wmod.resolve_options(wp.config) | {"output_arch": None}
            wmod._run_codegen(opts, False)
            del sys.modules[name]

        for i, p in enumerate(paths[:warmup]):
            generate(p, f"pairpipe_sbs_warmup_{i}")
        best = float("inf")
        for r in range(repeat):
            t0 = time.perf_counter()
            for i, p in enumerate(paths):
                generate(p, f"pairpipe_sbs_{r}_{i}")
            best = min(best, time.perf_counter() - t0)
    return {"modules": len(sources), "seconds": best, "modules_per_second": len(sources) / best}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairpipe", default=os.environ.get("PAIRPIPE_BIN", "pairpipe"))
    ap.add_argument("--config", default="pipelines/cuda200mb.toml")
    ap.add_argument("--sample", type=int, default=300, help="kernels warp-lang generates code for")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per side; the fastest is kept")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        pp = run_pairpipe(a.pairpipe, a.config, out, a.repeat)
        import pyarrow.dataset as ds

        table = ds.dataset(out / "data", format="parquet").to_table(columns=["python_source"])
        step = max(1, table.num_rows // a.sample)
        sources = table.column("python_source").to_pylist()[::step][: a.sample]
    w = warp_rate(sources, a.repeat)
    ratio = pp["rows_per_second"] / w["modules_per_second"]
    print(f"pairpipe : {pp['rows']} rows in {pp['seconds']:.2f} s = {pp['rows_per_second']:.0f} rows/s (whole run, Parquet written; best of {a.repeat})")
    print(f"warp-lang: {w['modules']} CUDA modules in {w['seconds']:.2f} s = {w['modules_per_second']:.0f} modules/s (codegen only; best of {a.repeat})")
    print(f"ratio    : {ratio:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
