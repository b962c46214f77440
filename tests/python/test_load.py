"""The shards load as users will load them, and hold what the manifest and the
column schema (schemas/columns.json) say: pandas, pyarrow, polars, DuckDB and Hugging
Face `datasets` both from the data folder and from the dataset card."""

from __future__ import annotations

from collections import Counter

import pytest

import subprocess

from conftest import ROOT, SPLITS, TEXT_PREFIXES, count_lines, load_columns_json, pairpipe_bin, write_synthetic_run


@pytest.fixture(scope="session")
def columns():
    path = ROOT / "schemas" / "columns.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the tests check the shards against it")
    return load_columns_json(path)


@pytest.fixture(scope="session")
def expected_schema(columns):
    import pyarrow as pa

    return pa.schema([pa.field(n, t, nullable) for n, (t, nullable) in columns.items()])


@pytest.fixture(scope="session")
def rows_per_split(manifest) -> dict[str, int]:
    return {s: n for s, n in manifest["counters"]["rows_per_split"].items() if n > 0}


@pytest.fixture(scope="session")
def table(out_dir):
    """Every shard, read once with pyarrow, for the content checks."""
    import pyarrow.dataset as ds

    return ds.dataset(out_dir / "data", format="parquet").to_table()


def split_counts(values) -> dict[str, int]:
    return dict(Counter(values))


# --- checks shared by the real run and the broken-run test ------------------


def straddling_keys(table) -> list[int]:
    """dedup_keys that occur in more than one split."""
    splits_of: dict[int, set] = {}
    for key, split in zip(table["dedup_key"].to_pylist(), table["split"].to_pylist()):
        splits_of.setdefault(key, set()).add(split)
    return [k for k, s in splits_of.items() if len(s) > 1]


def duplicate_ids(table) -> list[str]:
    return [i for i, n in Counter(table["id"].to_pylist()).items() if n > 1]


# --- layout and manifest ----------------------------------------------------


def test_layout_and_manifest_shards(out_dir, manifest):
    assert (out_dir / "README.md").is_file()
    on_disk = sorted(p.name for p in (out_dir / "data").glob("*.parquet"))
    listed = sorted(s["path"].removeprefix("data/") for s in manifest["shards"])
    assert on_disk == listed
    for shard in manifest["shards"]:
        name = shard["path"].removeprefix("data/")
        assert name.startswith(shard["split"] + "-"), name
        assert (out_dir / shard["path"]).stat().st_size == shard["bytes"]
    assert not list((out_dir / "data").glob(".*")), "temporary shard files left behind"


def test_splits_present(manifest, rows_per_split):
    assert set(rows_per_split) <= set(SPLITS)
    assert "train" in rows_per_split
    written = manifest["counters"]["written"]
    assert sum(rows_per_split.values()) == written
    # With a few percent held out, a run of a thousand rows has every split.
    fractions = manifest.get("config", {}).get("splits", {"validation": 0.05, "test": 0.05})
    if written >= 1000:
        for split in ("validation", "test"):
            if fractions.get(split, 0) > 0:
                assert split in rows_per_split, f"no {split} rows in {written}"


# --- the loaders ------------------------------------------------------------


def test_pandas(out_dir, rows_per_split, expected_schema):
    import numpy as np
    import pandas as pd

    df = pd.read_parquet(out_dir / "data")
    assert list(df.columns) == expected_schema.names
    assert split_counts(df["split"]) == rows_per_split
    assert df["dedup_key"].dtype == np.uint64
    assert df["text_bytes"].dtype == np.int64
    assert df["python_chars"].dtype == np.int32

    exact = pd.read_parquet(out_dir / "data", dtype_backend="pyarrow")
    got = {c: exact[c].dtype for c in exact.columns}
    want = {f.name: pd.ArrowDtype(f.type) for f in expected_schema}
    assert got == want


def test_pyarrow_dataset(out_dir, rows_per_split, expected_schema, table):
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    dataset = ds.dataset(out_dir / "data", format="parquet")
    assert dataset.schema.names == expected_schema.names
    for field in expected_schema:
        assert dataset.schema.field(field.name).type == field.type, field.name
        if not field.nullable:
            assert table[field.name].null_count == 0, f"nulls in {field.name}"
    for split, n in rows_per_split.items():
        assert dataset.count_rows(filter=pc.field("split") == split) == n


def test_polars(out_dir, rows_per_split, expected_schema):
    import polars as pl

    lf = pl.scan_parquet(out_dir / "data" / "*.parquet")
    want = pl.DataFrame(expected_schema.empty_table()).schema
    assert lf.collect_schema() == want
    counts = lf.group_by("split").len().collect()
    assert dict(zip(counts["split"], counts["len"])) == rows_per_split


def check_hf(dsd, rows_per_split, expected_schema):
    assert set(dsd) == set(rows_per_split)
    for split, n in rows_per_split.items():
        d = dsd[split]
        assert d.num_rows == n, split
        assert d.column_names == expected_schema.names
        got = {f.name: f.type for f in d.features.arrow_schema}
        assert got == {f.name: f.type for f in expected_schema}, split
        assert set(d["split"]) == {split}


def test_hf_parquet_data_dir(out_dir, rows_per_split, expected_schema, hf_cache):
    from datasets import load_dataset

    dsd = load_dataset("parquet", data_dir=str(out_dir / "data"), cache_dir=str(hf_cache / "dir"))
    check_hf(dsd, rows_per_split, expected_schema)


def test_hf_dataset_card(out_dir, rows_per_split, expected_schema, hf_cache):
    from datasets import load_dataset

    dsd = load_dataset(str(out_dir), cache_dir=str(hf_cache / "card"))
    check_hf(dsd, rows_per_split, expected_schema)


# --- content ----------------------------------------------------------------


def test_ids_unique(table):
    assert duplicate_ids(table) == []


def test_no_dedup_key_in_two_splits(table):
    assert straddling_keys(table) == []


def test_python_source_is_a_warp_module(table):
    bad = [s[:60] for s in table["python_source"].to_pylist() if not s.startswith("import warp as wp")]
    assert bad == []


def test_synthesized_rows_have_no_provenance(table):
    """origin is "synthetic" and every source_* column null in a synthesized run."""
    if "origin" not in table.column_names:
        pytest.skip("shards from before the provenance columns")
    assert set(table["origin"].to_pylist()) == {"synthetic"}
    for c in ("source_repo", "source_path", "source_line", "source_license", "source_file_xxh3"):
        assert table[c].null_count == table.num_rows, c


FEATURES = ["structs", "funcs", "loops", "atomics", "tiles", "random", "geometry"]


def test_features_motifs_and_launch_spec(table):
    """`features` lists known names in column order, agrees with the builtins
    the row lists (an atomic/tile/random builtin shows its feature), and the
    run holds loops somewhere; `motifs` is a list of names; `launch_spec`, where
    present, is JSON with a launch dim and one object per parameter."""
    import json

    if "features" not in table.column_names:
        pytest.skip("shards from before the features column")
    seen = set()
    for features, builtins, motifs, spec in zip(
        table["features"].to_pylist(),
        table["builtins"].to_pylist(),
        table["motifs"].to_pylist(),
        table["launch_spec"].to_pylist(),
    ):
        assert features == [f for f in FEATURES if f in features], features
        seen.update(features)
        for prefix, feature in (("atomic_", "atomics"), ("tile", "tiles"), ("rand", "random")):
            if any(b.startswith(prefix) for b in builtins):
                assert feature in features, (builtins, features)
        assert all(isinstance(m, str) and m for m in motifs), motifs
        if spec is not None:
            spec = json.loads(spec)
            assert 1 <= len(spec["dim"]) <= 4 and isinstance(spec["params"], list), spec
    assert "loops" in seen, "no row with a loop in the whole run"


def test_duckdb_reads_the_shards(out_dir, table):
    """DuckDB's read_parquet sees every row, the list columns as lists (unnest
    counts the same features pyarrow does) and the launch spec as text."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    shards = str(out_dir / "data" / "*.parquet")
    ((rows,),) = con.sql(f"select count(*) from read_parquet('{shards}')").fetchall()
    assert rows == table.num_rows
    types = dict(con.sql(f"select column_name, column_type from (describe select * from read_parquet('{shards}'))").fetchall())
    assert types["features"] == types["motifs"] == types["builtins"] == "VARCHAR[]"
    assert types["launch_spec"] == "VARCHAR"
    counted = dict(
        con.sql(f"select f, count(*) from (select unnest(features) as f from read_parquet('{shards}')) group by f").fetchall()
    )
    want = Counter(f for fs in table["features"].to_pylist() for f in fs)
    assert counted == dict(want)


def test_a_mined_run_loads_with_its_provenance(tmp_path):
    """A corpus run (the repository's hand-written kernels, a LICENSE beside them) loads in
    pandas, polars and datasets with its provenance columns filled, and its card lists the license."""
    import shutil

    import datasets
    import pandas as pd
    import polars as pl

    binary = pairpipe_bin()
    if not binary.is_file():
        pytest.skip(f"no pairpipe binary at {binary}")
    corpus = tmp_path / "corpus" / "kernels"
    shutil.copytree(ROOT / "tests" / "kernels" / "corpus", corpus)
    (corpus / "LICENSE").write_text(
        "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n"
    )
    out = tmp_path / "mined"
    config = tmp_path / "mined.toml"
    config.write_text(
        f'[run]\nname = "mined"\noutput = "{out}"\n\n[source]\nkind = "files"\npaths = ["{tmp_path / "corpus"}"]\n'
    )
    done = subprocess.run([str(binary), "run", str(config), "--quiet"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    df = pd.read_parquet(out / "data")
    assert len(df) > 0
    assert set(df["origin"]) == {"mined"} and set(df["category"]) == {"mined"}
    assert set(df["source_repo"]) == {"kernels"}
    assert set(df["source_license"]) == {"MIT"}
    assert df["source_line"].min() >= 1 and df["source_path"].str.endswith(".py").all()
    assert pl.scan_parquet(str(out / "data" / "*.parquet")).select(pl.len()).collect().item() == len(df)
    ds = datasets.load_dataset(str(out))
    assert sum(ds[s].num_rows for s in ds) == len(df)
    card = (out / "README.md").read_text()
    assert "| MIT |" in card and "- mined" in card
    # Mined rows: no launch spec nor motifs, but the lowering's features.
    assert df["launch_spec"].isna().all() and all(len(m) == 0 for m in df["motifs"])
    features = {f for fs in df["features"] for f in fs}
    assert {"funcs", "loops"} <= features, features


def test_ir_columns_follow_the_config(manifest, table):
    ir = manifest["config"]["ir"]
    on = {
        "cpu_forward": ir["cpu"],
        "cpu_backward": ir["cpu"],
        "cuda_forward": ir["cuda"],
        "cuda_backward": ir["cuda"],
        "cpu_module": ir["cpu"] and ir.get("modules", False),
        "cuda_module": ir["cuda"] and ir.get("modules", False),
    }
    for column, filled in on.items():
        nulls = table[column].null_count
        assert nulls == (0 if filled else table.num_rows), f"{column}: {nulls} nulls"


def test_size_columns_describe_the_text(table):
    """The report trusts the size columns instead of reading text: they must be
    right. chars = Unicode scalar values, lines = len(str.splitlines())."""
    text_bytes = [0] * table.num_rows
    for column, prefix in TEXT_PREFIXES.items():
        texts = table[column].to_pylist()
        chars = table[f"{prefix}_chars"].to_pylist()
        lines = table[f"{prefix}_lines"].to_pylist()
        for i, s in enumerate(texts):
            if s is None:
                assert chars[i] is None and lines[i] is None, (column, i)
                continue
            assert chars[i] == len(s), (column, i)
            assert lines[i] == count_lines(s), (column, i)
            text_bytes[i] += len(s.encode())
    assert table["text_bytes"].to_pylist() == text_bytes


def test_checks_catch_a_broken_run(tmp_path):
    """The split and id checks above are not vacuous."""
    import pyarrow.dataset as ds

    out = write_synthetic_run(tmp_path / "broken", rows=50, straddle=True)
    broken = ds.dataset(out / "data", format="parquet").to_table()
    assert len(straddling_keys(broken)) == 1
    assert duplicate_ids(broken) == []
    dup = broken.set_column(0, "id", [["same"] * broken.num_rows])
    assert duplicate_ids(dup) == ["same"]
