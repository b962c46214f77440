"""Loads a dataset written by pairpipe's sink with pyarrow, pandas, polars and
Hugging Face `datasets` (offline), and checks it against manifest.json and
schemas/columns.json, including the chars/lines size columns against Python's
own len() and str.splitlines().

The data comes from the Rust test `python_readers_load_the_dataset` in
tests/schema.rs, which runs this file as `python check_sink_load.py OUT`.
Under pytest, set PAIRPIPE_SINK_OUT to a dataset directory (else skipped).
"""

import json
import os
import sys
from pathlib import Path

COLUMNS = Path(__file__).resolve().parents[2] / "schemas" / "columns.json"
SPLITS = ["train", "validation", "test"]


def check(out: Path) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    import datasets
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = json.loads(COLUMNS.read_text())["columns"]
    manifest = json.loads((out / "manifest.json").read_text())
    rows = {s: sum(x["rows"] for x in manifest["shards"] if x["split"] == s) for s in SPLITS}
    rows = {s: n for s, n in rows.items() if n}
    total = sum(rows.values())
    assert total > 0

    types = {"string": pa.string(), "uint64": pa.uint64(), "int32": pa.int32(),
             "int64": pa.int64(), "list<string>": pa.list_(pa.string())}
    want_schema = [(c["name"], types[c["type"]], c["nullable"]) for c in spec]
    for shard in manifest["shards"]:
        table = pq.read_table(out / shard["path"])
        got = [(f.name, f.type, f.nullable) for f in table.schema]
        assert got == want_schema, (shard["path"], got)
        assert table.num_rows == shard["rows"]
        assert (out / shard["path"]).stat().st_size == shard["bytes"]
        col = lambda name: table.column(name).to_pylist()
        texts = ["python_source"] + [c["name"] for c in spec if c["name"].endswith(("_forward", "_backward", "_module"))]
        for name in texts:
            prefix = "python" if name == "python_source" else name
            for text, n_chars, n_lines in zip(col(name), col(prefix + "_chars"), col(prefix + "_lines")):
                if text is None:
                    assert n_chars is None and n_lines is None, name
                else:
                    assert n_chars == len(text), (name, n_chars, len(text))
                    assert n_lines == len(text.splitlines()), (name, n_lines, text)
        assert set(col("split")) == {shard["split"]}

    assert len(pd.read_parquet(out / "data")) == total
    lf = pl.scan_parquet(str(out / "data" / "*.parquet"))
    counts = dict(lf.group_by("split").len().collect().iter_rows())
    assert counts == rows, counts

    for ds in (datasets.load_dataset(str(out)),
               datasets.load_dataset("parquet", data_dir=str(out / "data"))):
        assert {s: ds[s].num_rows for s in ds} == rows, ds
        assert list(ds["train"].features) == [c["name"] for c in spec]
        assert ds["train"][0]["split"] == "train"
    print(f"ok: {total} rows in {len(manifest['shards'])} shards, splits {rows}")


def test_sink_load():
    out = os.environ.get("PAIRPIPE_SINK_OUT")
    if not out:
        import pytest
        pytest.skip("set PAIRPIPE_SINK_OUT to a dataset written by pairpipe (the Rust test does)")
    check(Path(out))


if __name__ == "__main__":
    check(Path(sys.argv[1]))
