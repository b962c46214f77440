"""Real-world parity: pairpipe's lowering on warp-lang's own tests and examples.

Takes every `warp/tests/test_*.py` and `warp/examples/**/*.py` of the installed
warp-lang that warp can import and that defines module-level, non-generic
kernels, and compares each such kernel's four functions (CPU and CUDA, forward
and backward) between `pairpipe lower FILE --keep-going` and warp's own module
for that kernel (warp's per-process function counter reset per file, the 8-hex
kernel hash normalized). Prints per-file counts, the total, and why the other
kernels differ (pairpipe's error, grouped; or "output differs").

`--corpus test-folders` takes instead the tests in the folders below
`warp/tests/` (tile, geometry, cuda, deterministic, fem, interop, matrix),
which the yardstick's glob does not reach: more of warp as people write it.

    python tests/python/warp_realworld.py --pairpipe BIN [--floor tests/realworld_floor.txt]
    python tests/python/warp_realworld.py --pairpipe BIN --corpus test-folders [--floor tests/realworld_folders_floor.txt]
    python tests/python/warp_realworld.py --pairpipe BIN --only test_struct -v   # diffs of one file

With --floor, exits 1 when the number of equal kernels is below the number in
that file. warp is the oracle only: nothing it prints is stored in the repo.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import functools
import importlib.util
import io
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import contextlib
from pathlib import Path

os.environ.setdefault("WARP_CACHE_PATH", tempfile.mkdtemp(prefix="warp-cache-"))

KINDS = [(t, k) for t in ("cpu", "cuda") for k in ("forward", "backward")]


def warp_root() -> Path:
    spec = importlib.util.find_spec("warp")
    return Path(spec.origin).parent


# Which of warp's files: the yardstick of issue #19 (the top-level tests and
# every example), or the tests in the folders below `tests/` (tile, geometry,
# cuda, deterministic, fem, interop, matrix), kept apart so that each set has
# its own floor.
CORPORA = ("yardstick", "test-folders")


def candidate_files(root: Path, corpus: str = "yardstick") -> list[Path]:
    if corpus == "yardstick":
        files = sorted((root / "tests").glob("test_*.py")) + sorted((root / "examples").rglob("*.py"))
    else:
        files = [f for f in sorted((root / "tests").rglob("test_*.py")) if f.parent != root / "tests"]
    out = []
    for f in files:
        try:
            text = f.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        # a module-level kernel starts a line with the decorator
        if re.search(r"^@wp\.kernel", text, re.M) or re.search(r"^@warp\.kernel", text, re.M):
            out.append(f)
    return out


def extract_function(module: str, fragment: str) -> str | None:
    """The function whose signature line contains `fragment`: from its first line to the first `}` line."""
    lines = module.split("\n")
    for i, line in enumerate(lines):
        if fragment in line and line.rstrip().endswith("("):
            start = i - 1 if i > 0 and lines[i - 1].startswith("template <") else i
            for j in range(i, len(lines)):
                if lines[j] == "}":
                    return "\n".join(lines[start : j + 1])
    return None


def kernel_function(module: str, name: str, target: str, kind: str) -> str | None:
    """Kernel `name`'s forward or backward function in a module that may hold several kernels,
    hash normalized; None when the module has none."""
    # not a kernel whose name ends with this one (`shape_kernel_3d` for `kernel_3d`)
    m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"_[0-9a-f]{8}_" + target + "_kernel_" + kind + r"\(", module)
    if not m:
        return None
    line_start = module.rfind("\n", 0, m.start()) + 1
    f = extract_function(module, module[line_start : module.find("\n", m.start())].strip())
    return None if f is None else normalize(f, name)


def normalize(text: str, name: str) -> str:
    return re.sub(re.escape(name) + r"_[0-9a-f]{8}(?![0-9a-f])", name + "_HASH", text)


_BASE_COUNTS: dict | None = None


def _init_worker() -> None:
    global _BASE_COUNTS
    import warp as wp

    wp.config.quiet = True
    from warp._src import context

    _BASE_COUNTS = dict(context.function_key_counts)


_counter = 0


def warp_side(path: Path) -> tuple[dict[str, dict[str, str | None]] | None, str | None]:
    """For each module-level non-generic kernel of `path`: its four functions as warp generates them
    (None where warp emits none), keyed by kernel name. (None, reason) when warp cannot import the file."""
    global _counter
    import warp as wp
    from warp._src import context

    _counter += 1
    name = f"pairpipe_realworld_{_counter}"
    context.function_key_counts.clear()
    context.function_key_counts.update(_BASE_COUNTS or {})
    saved_config = {k: getattr(wp.config, k) for k in dir(wp.config) if not k.startswith("_")}
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                spec.loader.exec_module(module)
            except BaseException as e:  # noqa: BLE001 - any import failure excludes the file
                return None, f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            kernels = {}
            for value in list(vars(module).values()):
                if isinstance(value, context.Kernel) and value.func.__module__ == name:
                    if "<locals>" in value.func.__qualname__ or value.is_generic:
                        continue
                    kernels[value.key] = value
            out: dict[str, dict[str, str | None]] = {}
            sources: dict[tuple[int, str], str] = {}
            for key, k in kernels.items():
                m = k.module
                try:
                    for target in ("cpu", "cuda"):
                        if (id(m), target) not in sources:
                            opts = m.resolve_options(wp.config) | {"output_arch": None}
                            sources[(id(m), target)] = m._run_codegen(opts, target == "cpu")[0]
                except BaseException as e:  # noqa: BLE001 - warp cannot build it: not counted
                    out[key] = {"warp_error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}
                    continue
                funcs = {}
                for target, kind in KINDS:
                    funcs[f"{target}_{kind}"] = kernel_function(sources[(id(m), target)], key, target, kind)
                out[key] = funcs
            return out, None
    finally:
        sys.modules.pop(name, None)
        for k, v in saved_config.items():
            try:
                setattr(wp.config, k, v)
            except Exception:  # noqa: BLE001
                pass


def pairpipe_side(binary: str, path: Path, names: list[str]) -> tuple[dict[str, dict[str, str | None]], dict[str, str]]:
    """pairpipe's four functions per kernel, and its error line for the kernels it could not lower."""
    funcs: dict[str, dict[str, str | None]] = {n: {} for n in names}
    errors: dict[str, str] = {}
    for target in ("cpu", "cuda"):
        try:
            res = subprocess.run(
                [binary, "lower", str(path), "--target", target, "--keep-going"],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            for n in names:
                errors.setdefault(n, "timeout")
            continue
        if res.returncode not in (0, 2):
            for n in names:
                errors.setdefault(n, f"exit {res.returncode}: {res.stderr.strip()[-200:]}")
            continue
        file_error = None
        for line in res.stderr.splitlines():
            # `FILE:LINE:COL: message` — with --keep-going the message names the kernel
            m = re.match(r"^.*?:(\d+):(\d+): (?:kernel '(\w+)': )?(.*)$", line)
            if not m:
                continue
            if m.group(3):
                errors.setdefault(m.group(3), m.group(4))
            else:
                file_error = file_error or m.group(4)
        for n in names:
            if file_error and n not in errors and f" {n}_" not in res.stdout:
                errors[n] = file_error
            for kind in ("forward", "backward"):
                funcs[n][f"{target}_{kind}"] = kernel_function(res.stdout, n, target, kind)
    return funcs, errors


def check_file(binary: str, path: Path, want_diffs: bool) -> dict:
    ref, reason = warp_side(path)
    if ref is None:
        return {"file": str(path), "excluded": reason}
    result = {"file": str(path), "kernels": {}}
    names = [n for n, f in ref.items() if "warp_error" not in f]
    got, errors = pairpipe_side(binary, path, names) if names else ({}, {})
    for n, want in ref.items():
        if "warp_error" in want:
            result["kernels"][n] = {"status": "warp_error", "reason": want["warp_error"]}
            continue
        if n in errors and not any(got.get(n, {}).values()):
            result["kernels"][n] = {"status": "error", "reason": errors[n]}
            continue
        bad = [c for c in want if want[c] != got.get(n, {}).get(c)]
        if not bad:
            result["kernels"][n] = {"status": "equal"}
        else:
            entry = {"status": "differs", "reason": "output differs: " + ", ".join(bad)}
            if want_diffs:
                c = bad[0]
                a = (want[c] or "<none>").splitlines()
                b = (got.get(n, {}).get(c) or "<none>").splitlines()
                entry["diff"] = "\n".join(list(difflib.unified_diff(a, b, "warp", "pairpipe", lineterm="", n=2))[:60])
            result["kernels"][n] = entry
    return result


def reason_group(reason: str) -> str:
    """A short bucket for a failure reason: the message with names and numbers blanked."""
    r = re.sub(r"'[^']*'", "'…'", reason)
    r = re.sub(r"\b\d+\b", "N", r)
    return r[:110]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairpipe", default=os.environ.get("PAIRPIPE_BIN", "pairpipe"))
    ap.add_argument(
        "--corpus",
        choices=CORPORA,
        default="yardstick",
        help="yardstick: tests/test_*.py and examples/**/*.py; test-folders: tests/*/**/test_*.py",
    )
    ap.add_argument("--floor", help="file holding the least number of equal kernels")
    ap.add_argument("--only", action="append", default=[], help="substring of the files to check")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write every kernel's result here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print a diff per differing kernel")
    ap.add_argument("--reasons", type=int, default=40, help="how many reason groups to print")
    a = ap.parse_args()

    files = candidate_files(warp_root(), a.corpus)
    if a.only:
        files = [f for f in files if any(s in str(f) for s in a.only)]
    # Each file is checked in a fresh child forked from this process after
    # warp is imported, so no file sees state another file left in warp
    # (module options, config, registries) whatever the scheduling.
    _init_worker()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(processes=a.jobs, maxtasksperchild=1) as pool:
        results = pool.map(functools.partial(check_file, a.pairpipe, want_diffs=a.verbose), files, chunksize=1)

    total = equal = 0
    excluded = []
    reasons: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    warp_errors = 0
    root = warp_root()
    for r in results:
        rel = os.path.relpath(r["file"], root)
        if "excluded" in r:
            excluded.append((rel, r["excluded"]))
            continue
        ks = r["kernels"]
        counted = {n: k for n, k in ks.items() if k["status"] != "warp_error"}
        warp_errors += len(ks) - len(counted)
        if not counted:
            continue
        e = sum(1 for k in counted.values() if k["status"] == "equal")
        total += len(counted)
        equal += e
        print(f"{e:4d} / {len(counted):4d}  {rel}")
        for n, k in counted.items():
            if k["status"] != "equal":
                g = reason_group(k["reason"])
                reasons[g] += 1
                examples.setdefault(g, f"{rel} {n}: {k['reason'][:200]}")
                if a.verbose and "diff" in k:
                    print(f"  --- {n}: {k['reason']}\n" + "\n".join("    " + x for x in k["diff"].splitlines()))
    print(f"\nfiles excluded (warp cannot import them): {len(excluded)}")
    for rel, why in excluded:
        print(f"  {rel}: {why}")
    if warp_errors:
        print(f"kernels warp itself cannot build (not counted): {warp_errors}")
    print(f"\nwhy the other kernels are not equal ({total - equal}):")
    for g, c in reasons.most_common(a.reasons):
        print(f"{c:5d}  {g}\n       e.g. {examples[g]}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    print(f"\nreal-world kernels warp-exact: {equal} of {total}")
    if a.floor:
        floor = int(Path(a.floor).read_text().split()[0])
        print(f"floor: {floor}")
        if equal < floor:
            print(f"FAIL: {equal} equal kernels, below the floor of {floor}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
