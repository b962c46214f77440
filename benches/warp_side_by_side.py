"""pairpipe against warp-lang's own code generator, side by side, on the same kernels.

    python benches/warp_side_by_side.py --pairpipe ~/.cache/pairpipe-target/release/pairpipe [--config pipelines/cuda200mb.toml] [--sample 300] [--repeat 3]

1. Runs `pairpipe run CONFIG` once (the whole pipeline: synthesize, lower,
   verify, dedup, write Parquet) and takes a sample of the python_source
   values it wrote.
2. Prepares warp-lang 1.19.0 to generate the CUDA module for each sampled
   kernel (import the module, build its kernels, run the code generator: what
   the predecessors did per pair, without writing files). A few modules are
   generated first, untimed, so warp's one-time lazy set-up does not count
   against it.
3. Then `--repeat` rounds, each timing one whole pairpipe run (process start
   to exit) and right after it one pass of warp over the sample (fresh module
   names each pass). The two sides alternate so that both see the machine in
   the same state: the shared VMs this runs on drift by 15-30% over tens of
   seconds, and timing all of one side before the other turned that drift
   into the ratio.
4. Prints each round's ratio, then the best of the rounds on each side and
   the ratio of those, and the median of the rounds' ratios.

Token counts: the run counts tokens as CONFIG's `[tokens] tokenizer` says
(the shipped pipelines: o200k_base). `--tokens none` (or another tokenizer
name) runs CONFIG with that tokenizer instead; `--tokens both` times both
in every round, CONFIG's tokenizer and `none`, each against the same warp
pass, and prints the figures of each.

Needs warp-lang 1.19.0 (tests/python/requirements.txt); no GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def with_tokenizer(config: str, tokenizer: str, tmp: Path) -> str:
    """A copy of `config` whose `[tokens] tokenizer` is `tokenizer`."""
    lines = Path(config).read_text().splitlines()
    section, done = None, False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped
        elif section == "[tokens]" and stripped.split("=")[0].strip() == "tokenizer":
            lines[i] = f'tokenizer = "{tokenizer}"'
            done = True
    if not done:
        if "[tokens]" in (l.strip() for l in lines):
            at = [l.strip() for l in lines].index("[tokens]")
            lines.insert(at + 1, f'tokenizer = "{tokenizer}"')
        else:
            lines += ["", "[tokens]", f'tokenizer = "{tokenizer}"']
    path = tmp / f"config-{tokenizer.replace('/', '_')}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def config_tokenizer(config: str) -> str:
    """The tokenizer `config` names (o200k_base when it names none)."""
    import tomllib

    return tomllib.loads(Path(config).read_text()).get("tokens", {}).get("tokenizer", "o200k_base")


def run_pairpipe(binary: str, config: str, out: Path) -> tuple[int, float]:
    """One whole run: (rows written, wall seconds)."""
    t0 = time.perf_counter()
    subprocess.run(
        [binary, "run", config, "--output", str(out), "--quiet", "--fresh"],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    manifest = json.loads((out / "manifest.json").read_text())
    return manifest["counters"]["written"], wall


class WarpCodegen:
    """warp-lang generating CUDA modules for a fixed list of kernel sources."""

    def __init__(self, sources: list[str], tmp: Path, warmup: int = 5) -> None:
        os.environ.setdefault("WARP_CACHE_PATH", str(tmp / "warp-cache"))
        import warp as wp

        wp.config.quiet = True
        self.wp = wp
        self.paths = []
        for i, src in enumerate(sources):
            p = tmp / f"sbs_{i}.py"
            p.write_text(src)
            self.paths.append(p)
        self.passes = 0
        for i, p in enumerate(self.paths[:warmup]):
            self.generate(p, f"pairpipe_sbs_warmup_{i}")

    def generate(self, p: Path, name: str) -> None:
        spec = importlib.util.spec_from_file_location(name, p)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        wmod = self.wp.get_module(name)
        opts = wmod.resolve_options(self.wp.config) | {"output_arch": None}
        wmod._run_codegen(opts, False)
        # Nothing of the pass stays behind in warp's module registry: with
        # every pass's modules kept there, warp slowed from round to round
        # (85 -> 60 modules/s over 7 rounds), which flattered the later ratios.
        self.wp._src.context.user_modules.pop(name, None)
        del sys.modules[name]

    def timed_pass(self) -> float:
        """Seconds to generate every module once, under fresh module names."""
        r = self.passes
        self.passes += 1
        t0 = time.perf_counter()
        for i, p in enumerate(self.paths):
            self.generate(p, f"pairpipe_sbs_{r}_{i}")
        return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairpipe", default=os.environ.get("PAIRPIPE_BIN", "pairpipe"))
    ap.add_argument("--config", default="pipelines/cuda200mb.toml")
    ap.add_argument("--sample", type=int, default=300, help="kernels warp-lang generates code for")
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds (one run of each side per round)")
    ap.add_argument(
        "--tokens",
        default="config",
        help="config (as CONFIG says), none, o200k_base, cl100k_base, or both (CONFIG's and none, each round)",
    )
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = tmp / "run"
        named = config_tokenizer(a.config)
        if a.tokens == "config":
            modes = [(named, a.config)]
        elif a.tokens == "both":
            other = "none" if named != "none" else "o200k_base"
            modes = [(named, a.config), (other, with_tokenizer(a.config, other, tmp))]
        else:
            modes = [(a.tokens, with_tokenizer(a.config, a.tokens, tmp))]
        run_pairpipe(a.pairpipe, modes[0][1], out)
        import pyarrow.dataset as ds

        table = ds.dataset(out / "data", format="parquet").to_table(columns=["python_source"])
        step = max(1, table.num_rows // a.sample)
        sources = table.column("python_source").to_pylist()[::step][: a.sample]
        warp = WarpCodegen(sources, tmp)

        rounds = {name: [] for name, _ in modes}
        for r in range(a.repeat):
            for name, config in modes:
                rows, pp_s = run_pairpipe(a.pairpipe, config, out)
                warp_s = warp.timed_pass()
                pp_rate, warp_rate = rows / pp_s, len(sources) / warp_s
                rounds[name].append((pp_rate, warp_rate))
                print(
                    f"round {r + 1} (tokens {name}): pairpipe {pp_rate:.0f} rows/s ({rows} rows in {pp_s:.2f} s), "
                    f"warp-lang {warp_rate:.0f} modules/s ({len(sources)} in {warp_s:.2f} s): {pp_rate / warp_rate:.0f}x",
                    flush=True,
                )

        for name, rs in rounds.items():
            best_pp = max(pp for pp, _ in rs)
            best_warp = max(w for _, w in rs)
            median = statistics.median(pp / w for pp, w in rs)
            print(f"tokens {name}:")
            print(f"  pairpipe : {rows} rows, best {best_pp:.0f} rows/s (whole run, Parquet written; best of {a.repeat})")
            print(f"  warp-lang: {len(sources)} CUDA modules, best {best_warp:.0f} modules/s (codegen only; best of {a.repeat})")
            print(f"  ratio    : {best_pp / best_warp:.0f}x of the bests; {median:.0f}x median of the rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
