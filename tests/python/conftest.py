"""Shared fixtures for the loader and notebook tests.

Where the shards come from, in order:
  * env PAIRPIPE_OUT: an existing run's output folder (OUT/data, OUT/manifest.json);
  * env PAIRPIPE_SYNTHETIC=1: a small run written here with pyarrow, following
    CONTRACT.md, for working on the loaders without the pipeline;
  * otherwise: `pairpipe run pipelines/smoke.toml --count 2000 --output TMP`
    with the binary at env PAIRPIPE_BIN (default $CARGO_TARGET_DIR/release/pairpipe).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPLITS = ("train", "validation", "test")
TEXT_PREFIXES = {
    "python_source": "python",
    "cpu_forward": "cpu_forward",
    "cpu_backward": "cpu_backward",
    "cuda_forward": "cuda_forward",
    "cuda_backward": "cuda_backward",
    "cpu_module": "cpu_module",
    "cuda_module": "cuda_module",
}
SMOKE_COUNT = 2000

# No hub to reach, and no writes to ~/.cache/huggingface: set before `datasets`
# is imported anywhere (it reads both at import time). Kernels started by the
# notebook test inherit them.
_HF_CACHE = tempfile.mkdtemp(prefix="pairpipe-hf-cache-")
# datasets fills it with ~0.5 GB of Arrow caches per session: gone at exit.
atexit.register(shutil.rmtree, _HF_CACHE, ignore_errors=True)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_DATASETS_CACHE"] = _HF_CACHE


def pairpipe_bin() -> Path:
    if "PAIRPIPE_BIN" in os.environ:
        return Path(os.environ["PAIRPIPE_BIN"])
    target = os.environ.get("CARGO_TARGET_DIR", str(ROOT / "target"))
    return Path(target) / "release" / "pairpipe"


@pytest.fixture(scope="session")
def hf_cache(tmp_path_factory) -> Path:
    """A fresh datasets cache for one test session."""
    return tmp_path_factory.mktemp("hf-cache")


@pytest.fixture(scope="session")
def out_dir(tmp_path_factory) -> Path:
    """The output folder of one pairpipe run (see the module docstring)."""
    if os.environ.get("PAIRPIPE_OUT"):
        out = Path(os.environ["PAIRPIPE_OUT"]).resolve()
        if not (out / "manifest.json").is_file():
            pytest.fail(f"PAIRPIPE_OUT={out} has no manifest.json")
        return out
    out = tmp_path_factory.mktemp("run") / "smoke"
    if os.environ.get("PAIRPIPE_SYNTHETIC") == "1":
        write_synthetic_run(out, rows=SMOKE_COUNT)
        return out
    binary = pairpipe_bin()
    if not binary.is_file():
        pytest.fail(
            f"no pairpipe binary at {binary}: build it (cargo build --release), "
            "or set PAIRPIPE_BIN, PAIRPIPE_OUT or PAIRPIPE_SYNTHETIC=1"
        )
    cmd = [str(binary), "run", "pipelines/smoke.toml", "--count", str(SMOKE_COUNT), "--output", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return out


@pytest.fixture(scope="session")
def manifest(out_dir) -> dict:
    return json.loads((out_dir / "manifest.json").read_text())


# --- schemas/columns.json -------------------------------------------------


def arrow_type(name: str):
    """pyarrow type for a type name as written in schemas/columns.json."""
    import pyarrow as pa

    name = name.strip().lower().replace(" ", "")
    for prefix in ("list<", "large_list<"):
        if name.startswith(prefix) and name.endswith(">"):
            inner = name[len(prefix) : -1]
            inner = inner.split(":", 1)[-1]  # "list<item: string>"
            return pa.list_(arrow_type(inner))
    simple = {
        "string": pa.string(),
        "utf8": pa.string(),
        "str": pa.string(),
        "large_string": pa.large_string(),
        "large_utf8": pa.large_string(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "uint32": pa.uint32(),
        "uint64": pa.uint64(),
        "bool": pa.bool_(),
        "boolean": pa.bool_(),
    }
    if name not in simple:
        raise ValueError(f"unknown column type {name!r} in schemas/columns.json")
    return simple[name]


def load_columns_json(path: Path | None = None) -> dict[str, tuple]:
    """{column: (pyarrow type, nullable)} from schemas/columns.json, in file order.

    Accepts a list of {name, type, nullable} objects, or an object holding one
    under "columns", or an object mapping name -> type (string or object).
    """
    path = path or ROOT / "schemas" / "columns.json"
    doc = json.loads(path.read_text())
    if isinstance(doc, dict) and "columns" in doc:
        doc = doc["columns"]
    if isinstance(doc, dict):
        doc = [
            {"name": k, **(v if isinstance(v, dict) else {"type": v})} for k, v in doc.items()
        ]
    out = {}
    for c in doc:
        ty = c.get("type") or c.get("dtype") or c.get("arrow_type")
        out[c["name"]] = (arrow_type(ty), bool(c.get("nullable", False)))
    return out


# --- a synthetic run, following CONTRACT.md ---------------------------------


def synthetic_schema():
    """Columns for a synthetic run: schemas/columns.json when the checkout has
    it, else the list in CONTRACT.md."""
    import pyarrow as pa

    path = ROOT / "schemas" / "columns.json"
    if path.is_file():
        return pa.schema([pa.field(n, t, null) for n, (t, null) in load_columns_json(path).items()])
    fields = [
        pa.field("id", pa.string(), False),
        pa.field("index", pa.uint64(), False),
        pa.field("split", pa.string(), False),
        pa.field("category", pa.string(), False),
        pa.field("kernel_name", pa.string(), False),
        pa.field("python_source", pa.string(), False),
    ]
    fields += [pa.field(c, pa.string(), True) for c in list(TEXT_PREFIXES)[1:]]
    fields += [
        pa.field("dedup_key", pa.uint64(), False),
        pa.field("builtins", pa.list_(pa.string()), False),
        pa.field("dtypes", pa.list_(pa.string()), False),
    ]
    for column, prefix in TEXT_PREFIXES.items():
        nullable = column != "python_source"
        fields += [
            pa.field(f"{prefix}_chars", pa.int32(), nullable),
            pa.field(f"{prefix}_lines", pa.int32(), nullable),
        ]
    fields.append(pa.field("text_bytes", pa.int64(), False))
    return pa.schema(fields)


def count_lines(s: str) -> int:
    """Lines as the `*_lines` columns count them (schemas/columns.json): Python's splitlines."""
    return len(s.splitlines())


def write_synthetic_run(
    out: Path,
    rows: int = 200,
    cpu: bool = False,
    cuda: bool = True,
    seed: int = 7,
    straddle: bool = False,
) -> Path:
    """Writes OUT/data/{split}-00000.parquet, manifest.json and README.md.

    `straddle` puts one dedup_key in two splits (a broken run, for tests that
    must catch it).
    """
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    categories = ["arithmetic", "math", "control_flow", "atomic", "scalar_param"]
    schema = synthetic_schema()
    by_split: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for i in range(rows):
        cat = categories[i % len(categories)]
        name = f"{cat}_{i}"
        body = "".join(f"    x{j} = a[tid] * {j}.0\n" for j in range(rng.randint(1, 8)))
        py = (
            "import warp as wp\n\n\n@wp.kernel\n"
            f"def {name}(a: wp.array(dtype=wp.float32)):\n    tid = wp.tid()\n{body}"
        )
        key = rng.getrandbits(64)
        u = (key % 1000) / 1000
        split = "validation" if u < 0.1 else "test" if u < 0.2 else "train"
        ir = lambda kind: (  # noqa: E731
            f"void {name}_{kind}(...)\n{{\n" + "    var_0 = x;\n" * rng.randint(5, 40) + "}\n"
        )
        row = {
            "id": f"{seed:x}-{i:08d}",
            "index": i,
            "split": split,
            "category": cat,
            "kernel_name": name,
            "python_source": py,
            "cpu_forward": ir("cpu_kernel_forward") if cpu else None,
            "cpu_backward": ir("cpu_kernel_backward") if cpu else None,
            "cuda_forward": ir("cuda_kernel_forward") if cuda else None,
            "cuda_backward": ir("cuda_kernel_backward") if cuda else None,
            "cpu_module": None,
            "cuda_module": None,
            "dedup_key": key,
            "key_exact": rng.getrandbits(64),
            "key_renamed": key,
            "key_shape": key,
            "builtins": ["tid", "mul"],
            "dtypes": ["float32"],
            "launch_dims": 1,
            "launch_spec": '{"dim": [64], "tiled": false, "params": []}',
            "motifs": ["map"],
            "features": ["loops"] if i % 3 == 0 else [],
            "origin": "synthetic",
        }
        text = 0
        for column, prefix in TEXT_PREFIXES.items():
            s = row[column]
            row[f"{prefix}_chars"] = None if s is None else len(s)
            row[f"{prefix}_lines"] = None if s is None else count_lines(s)
            text += 0 if s is None else len(s.encode())
        row["text_bytes"] = text
        by_split[split].append(row)
    if straddle:
        twin = dict(by_split["train"][0], id="twin", split="test")
        by_split["test"].append(twin)

    (out / "data").mkdir(parents=True, exist_ok=True)
    shards = []
    for split, split_rows in by_split.items():
        if not split_rows:
            continue
        rel = f"data/{split}-00000.parquet"
        table = pa.Table.from_pylist(split_rows, schema=schema)
        pq.write_table(table, out / rel, compression="zstd", row_group_size=256)
        shards.append({"path": rel, "split": split, "rows": len(split_rows), "bytes": (out / rel).stat().st_size, "xxh3": "0" * 16})
    written = sum(len(r) for r in by_split.values())
    config = {
        "run": {"name": "smoke", "seed": seed},
        "ir": {"cpu": cpu, "cuda": cuda, "modules": False},
    }
    manifest = {
        "pairpipe_version": "synthetic",
        "warp_version": "1.19.0",
        "name": "smoke",
        "seed": seed,
        "config": config,
        "config_toml": "",
        "counters": {
            "generated": written + 10,
            "written": written,
            "duplicates": 7,
            "rejected": {"lower_error": 3},
            "rows_per_split": {s: len(r) for s, r in by_split.items()},
            "seconds": 0.5,
            "rows_per_second": written / 0.5,
        },
        "shards": shards,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    files = "\n".join(
        f"  - split: {s}\n    path: data/{s}-*.parquet" for s in SPLITS if by_split[s]
    )
    (out / "README.md").write_text(
        f"---\nconfigs:\n- config_name: default\n  data_files:\n{files}\n---\n\n# smoke (synthetic)\n"
    )
    return out
