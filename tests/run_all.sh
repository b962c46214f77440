#!/usr/bin/env bash
# Every test of pairpipe, with everything it needs set up first:
#   1. the Python environment (warp-lang 1.19.0 as the oracle, pandas, pyarrow,
#      polars, datasets, nbclient, pytest) in a venv outside the repository;
#   2. the Rust unit and integration tests (release profile, the same build as
#      the binary), including the 100k-source lowering fuzz test and its
#      mutations of warp-lang's own tests and examples;
#   3. differential parity against warp-lang: the hand-written corpus, the
#      module-level kernels of warp-lang's own tests and examples (at least
#      the floor in tests/realworld_floor.txt warp-exact, and of the tests in
#      its test folders, floor in tests/realworld_folders_floor.txt), the kernels warp
#      rejects, 500 synthesized kernels per category, and the IR columns of a
#      real run;
#   3b. the run-check of synthesized kernels (tests/python/run_synth.py): its
#      fixtures now; 50 kernels per category launched on warp's CPU and
#      compiled to PTX once the synthesizer fills launch_spec (see the step below);
#   4. the Python loader tests (pandas, pyarrow, polars, DuckDB, datasets), the
#      notebook, executed headless, and the token counts' exactness against
#      tiktoken and Hugging Face tokenizers (tests/python/test_tokens.py).
# Usage: bash tests/run_all.sh
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/pairpipe-target}"
VENV="${PAIRPIPE_VENV:-$HOME/.cache/pairpipe-venv}"
SYNTH_PER_CATEGORY="${PAIRPIPE_SYNTH_PER_CATEGORY:-500}"

step() { printf '\n==> %s\n' "$*"; }

step "Python environment in $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/python/requirements.txt
PY="$VENV/bin/python"
# warp-lang's installed package: its own tests and examples are real Warp code
# nobody here wrote (the real-world parity step, the fuzz test's mutations and
# the real-world lowering bench read them).
PAIRPIPE_WARP_DIR="$("$PY" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("warp").origin))')"
export PAIRPIPE_WARP_DIR

step "Rust build and tests (release)"
cargo build --release --locked
cargo test --release --locked
# The criterion benches build and run each measurement once (no timing), so
# an API change cannot leave them broken.
cargo bench --locked --bench stages -- --test
BIN="$CARGO_TARGET_DIR/release/pairpipe"
export PAIRPIPE_BIN="$BIN"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# pytest and the parity driver run from a neutral directory (warp must not
# see a local module shadowing the standard library).
ROOT="$PWD"

step "Parity with warp-lang: hand-written kernels"
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_parity.py" --pairpipe "$BIN" \
    "$ROOT/tests/kernels/scalar" "$ROOT/tests/kernels/funcs" "$ROOT/tests/kernels/vector" \
    "$ROOT/tests/kernels/corpus" "$ROOT/tests/kernels/regressions" "$ROOT/tests/kernels/tile" \
    "$ROOT/tests/kernels/builtins" "$ROOT/tests/kernels/funcs2" "$ROOT/tests/kernels/statements" \
    "$ROOT/tests/kernels/types" "$ROOT/tests/kernels/lang" "$ROOT/tests/kernels/geometry" \
    "$ROOT/tests/kernels/refs" "$ROOT/tests/kernels/fnvalues" "$ROOT/tests/kernels/motifs")

step "Parity with warp-lang: warp-lang's own tests and examples (floor in tests/realworld_floor.txt)"
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_realworld.py" --pairpipe "$BIN" --floor "$ROOT/tests/realworld_floor.txt")

step "Parity with warp-lang: the tests in warp-lang's test folders (tile, geometry, cuda, ...; floor in tests/realworld_folders_floor.txt)"
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_realworld.py" --pairpipe "$BIN" --corpus test-folders --floor "$ROOT/tests/realworld_folders_floor.txt")

step "Mining: warp-lang's own tests/ and examples/ as a corpus (rows = kernels lowered, every row warp-exact)"
(cd "$WORK" && "$PY" "$ROOT/tests/python/check_mined.py" --pairpipe "$BIN" --work "$WORK/mined")

step "Parity with warp-lang: kernels both must reject"
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_parity.py" --pairpipe "$BIN" --expect-reject "$ROOT/tests/kernels/invalid")

step "Parity with warp-lang: $SYNTH_PER_CATEGORY synthesized kernels per category"
for category in arithmetic math control_flow scalar_param atomic vector matrix nested grid_2d grid_3d multi_cond reduction expression_tree combined transform stencil tile; do
    "$BIN" synth --count "$SYNTH_PER_CATEGORY" --seed 7 --category "$category" --out "$WORK/synth/$category" >/dev/null
done
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_parity.py" --pairpipe "$BIN" "$WORK/synth")

step "Parity with warp-lang: IR columns of a pipeline run"
"$BIN" run pipelines/smoke.toml --count 300 --output "$WORK/run" 2>/dev/null
(cd "$WORK" && "$PY" "$ROOT/tests/python/warp_parity.py" --shards "$WORK/run")

step "Run-check: hand-written fixtures (each broken kernel flagged as expected, the good ones pass)"
(cd "$WORK" && "$PY" "$ROOT/tests/python/run_synth.py" --pairpipe "$BIN" \
    --fixtures "$ROOT/tests/python/fixtures/run_check" --work "$WORK/run_check_fixtures")

step "Run-check: 50 synthesized kernels per category, launched on warp's CPU, CUDA modules to PTX by NVRTC"
# Kernels whose only failure is an input that no tried perturbation showed in an
# output (mostly rays that miss for every tried change) are held to a ceiling.
(cd "$WORK" && "$PY" "$ROOT/tests/python/run_synth.py" --pairpipe "$BIN" --per-category 50 \
    --max-insensitive "$(cat "$ROOT/tests/run_check_ceiling.txt")" --work "$WORK/run_check")

step "Python loader, notebook and token-count tests"
(cd "$WORK" && "$PY" -m pytest -q -p no:cacheprovider "$ROOT/tests/python")
