"""Check synthesized kernels against warp-lang itself.

Imports every .py file of a directory as its own module with warp-lang and
runs warp's code generator for both targets (CPU and CUDA, forward and
backward). Any exception or warning is a failure, printed with the file name.
Also checks that each module defines exactly one kernel.

    python tests/python/check_synth_warp.py DIR [--limit N] [--jobs N]

Exit status 0 when every file passed, 1 otherwise. Files come from
`pairpipe synth --count N --seed S [--category C] --out DIR`, named
`{index:06}_{category}.py`.
"""

import argparse
import importlib.util
import os
import sys
import traceback
import warnings


def check(job):
    """Returns None if the file lowers cleanly for both targets, else a message."""
    n, path = job
    import warp as wp

    wp.config.quiet = True
    modname = f"pairpipe_synth_check_{n}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            spec = importlib.util.spec_from_file_location(modname, path)
            m = importlib.util.module_from_spec(spec)
            sys.modules[modname] = m
            spec.loader.exec_module(m)
            kernels = [v for v in vars(m).values() if isinstance(v, wp.Kernel)]
            if len(kernels) != 1:
                return f"{path}: expected one @wp.kernel, found {len(kernels)}"
            mod = wp.get_module(modname)
            opts = mod.resolve_options(wp.config) | {"output_arch": None}
            cpu = mod._run_codegen(opts, True)[0]
            cuda = mod._run_codegen(opts, False)[0]
            name = kernels[0].key
            for target, src in (("cpu", cpu), ("cuda", cuda)):
                for half in ("forward", "backward"):
                    if f"_{target}_kernel_{half}" not in src or name not in src:
                        return f"{path}: no {target} {half} function for {name}"
    except Exception as e:
        return f"{path}: " + "".join(traceback.format_exception_only(e)).strip()
    finally:
        sys.modules.pop(modname, None)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--limit", type=int, default=0, help="check at most N files (0 = all)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = ap.parse_args()

    files = sorted(
        os.path.join(args.dir, f) for f in os.listdir(args.dir) if f.endswith(".py")
    )
    if args.limit:
        files = files[: args.limit]
    if not files:
        print(f"no .py files in {args.dir}", file=sys.stderr)
        return 1
    jobs = list(enumerate(files))
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(check, jobs, chunksize=16)
    else:
        results = [check(j) for j in jobs]

    failures = [r for r in results if r is not None]
    for f in failures:
        print("FAIL", f)
    by_category = {}
    for path, r in zip(files, results):
        stem = os.path.splitext(os.path.basename(path))[0]
        head, _, rest = stem.partition("_")
        cat = rest if head.isdigit() and rest else stem
        ok, total = by_category.get(cat, (0, 0))
        by_category[cat] = (ok + (r is None), total + 1)
    for cat, (ok, total) in sorted(by_category.items()):
        print(f"{cat}: {ok}/{total} passed")
    print(f"total: {len(files) - len(failures)}/{len(files)} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
