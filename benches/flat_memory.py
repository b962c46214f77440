"""Peak memory of a run against a longer run of the same config: is memory flat?

    python benches/flat_memory.py --pairpipe ~/.cache/pairpipe-target/release/pairpipe [--config pipelines/cuda200mb.toml] [--long 2GiB] [--rounds 5]

Issue 5 asks that a 2 GiB run peak within 10% of the 200 MiB main job: memory
bounded by the channels, not by the run. This script writes a copy of CONFIG
whose `text_bytes` target is `--long`, then runs the two configs alternately
`--rounds` times (the shared VMs this runs on drift over tens of seconds, and
alternating keeps the drift out of the comparison) and prints each run's peak
RSS (the kernel's maximum resident set size of the child, as `/usr/bin/time`
reports it) and wall time, the mean of each side and the ratio of the means.

Needs only Python 3.9+ on Linux; pairpipe built in release mode.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = re.compile(r'^(\s*text_bytes\s*=\s*)"[^"]*"', re.MULTILINE)


def long_config(config: Path, size: str, into: Path) -> Path:
    """A copy of `config` whose text_bytes target is `size`."""
    text = config.read_text()
    if not TARGET.search(text):
        sys.exit(f"{config} has no `text_bytes` target to scale")
    out = into / f"long-{config.name}"
    out.write_text(TARGET.sub(lambda m: f'{m.group(1)}"{size}"', text, count=1))
    return out


def run(binary: str, config: Path, out: Path) -> tuple[float, float]:
    """One whole run: (peak RSS in MB, wall seconds)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [binary, "run", str(config), "--output", str(out), "--quiet", "--fresh"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"pairpipe run {config} failed with status {child.returncode}")
    return usage.ru_maxrss / 1024, wall  # ru_maxrss is in KiB on Linux


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairpipe", default=os.environ.get("PAIRPIPE_BIN", "pairpipe"))
    ap.add_argument("--config", type=Path, default=Path("pipelines/cuda200mb.toml"))
    ap.add_argument("--long", default="2GiB", help="text_bytes target of the longer run")
    ap.add_argument("--rounds", type=int, default=5, help="alternated rounds (one run of each per round)")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        long = long_config(a.config, a.long, tmp)
        peaks: dict[str, list[float]] = {"short": [], "long": []}
        for r in range(a.rounds):
            line = []
            for side, config in (("short", a.config), ("long", long)):
                rss, wall = run(a.pairpipe, config, tmp / "out")
                peaks[side].append(rss)
                line.append(f"{side} {rss:.1f} MB in {wall:.2f} s")
            print(f"round {r + 1}: " + ", ".join(line), flush=True)

    short, long_ = statistics.mean(peaks["short"]), statistics.mean(peaks["long"])
    print(f"{a.config.name}: peak RSS mean {short:.1f} MB (range {min(peaks['short']):.1f}-{max(peaks['short']):.1f})")
    print(f"text_bytes = {a.long}: peak RSS mean {long_:.1f} MB (range {min(peaks['long']):.1f}-{max(peaks['long']):.1f})")
    print(f"ratio: {long_ / short:.3f} ({(long_ / short - 1) * 100:+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
