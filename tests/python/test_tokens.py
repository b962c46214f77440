"""Token counts are exact: the `*_tokens` columns pairpipe writes equal the
reference implementations' counts in Python, on real runs of several
categories.

* o200k_base and cl100k_base: tiktoken's own `Encoding` (its Rust BPE, its
  pattern and special tokens from `tiktoken_ext.openai_public`), built from
  the ranks pairpipe compiles in (`pairpipe tokens-ranks`, nothing is
  downloaded); the ranks file must also have the sha256 tiktoken expects of
  OpenAI's published file, so they are OpenAI's ranks byte for byte.
* a Hugging Face tokenizer.json: a small byte-level BPE trained here with the
  `tokenizers` package, counted with `encode(text, add_special_tokens=False)`.

Counts are tiktoken's `encode_ordinary` (no special tokens), per column; and
`pair_tokens` is their sum over the columns the run fills.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, pairpipe_bin

TEXT_COLUMNS = [
    "python_source",
    "cpu_forward",
    "cpu_backward",
    "cuda_forward",
    "cuda_backward",
    "cpu_module",
    "cuda_module",
]
MIN_ROWS = 1000


def run_pairpipe(*args: str, cwd: Path = ROOT) -> None:
    binary = pairpipe_bin()
    if not binary.is_file():
        pytest.fail(f"no pairpipe binary at {binary}")
    done = subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"pairpipe {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}")


def smoke_config(tmp: Path, name: str, tokens: str, extra: str = "", cpu: bool = True, modules: bool = False) -> Path:
    """pipelines/smoke.toml with another [tokens] table (and [ir], and `extra`)."""
    text = (ROOT / "pipelines" / "smoke.toml").read_text()
    head, _, _ = text.partition("[tokens]")
    head = head.replace("modules = true", f"modules = {str(modules).lower()}")
    head = head.replace("cpu = true", f"cpu = {str(cpu).lower()}")
    path = tmp / f"{name}.toml"
    path.write_text(head + f"[tokens]\ntokenizer = {json.dumps(tokens)}\n" + extra)
    return path


def read_run(out: Path):
    import pyarrow.dataset as ds

    return ds.dataset(out / "data", format="parquet").to_table()


def reference_tiktoken(name: str, tmp: Path):
    """tiktoken's Encoding for `name` over the ranks pairpipe holds."""
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    ranks_file = tmp / f"{name}.tiktoken"
    run_pairpipe("tokens-ranks", name, str(ranks_file))
    real_load = tiktoken.load.load_tiktoken_bpe

    def load(_url: str, expected_hash: str | None = None):
        # tiktoken checks the file's sha256 against OpenAI's published one.
        return real_load(str(ranks_file), expected_hash=expected_hash)

    saved = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = load
    try:
        params = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = saved
    return tiktoken.Encoding(**params)


def check_counts(table, count_batch, min_rows: int) -> dict[str, int]:
    """Every filled text column's `*_tokens` equals `count_batch(texts)`;
    `pair_tokens` is their sum. Returns the rows checked per column."""
    assert table.num_rows >= min_rows, f"only {table.num_rows} rows"
    categories = set(table["category"].to_pylist())
    assert len(categories) >= 5, f"only categories {categories}"
    pair = [0] * table.num_rows
    checked = {}
    for column in TEXT_COLUMNS:
        texts = table[column].to_pylist()
        counts = table[f"{column}_tokens"].to_pylist()
        filled = [i for i, t in enumerate(texts) if t is not None]
        for i, (t, c) in enumerate(zip(texts, counts)):
            assert (t is None) == (c is None), f"{column} row {i}: text and count disagree on null"
        if not filled:
            continue
        want = count_batch([texts[i] for i in filled])
        got = [counts[i] for i in filled]
        bad = [(i, g, w) for i, g, w in zip(filled, got, want) if g != w]
        assert not bad, f"{column}: {len(bad)} rows differ, first (row, pairpipe, reference): {bad[:5]}"
        for i, w in zip(filled, want):
            pair[i] += w
        checked[column] = len(filled)
    assert table["pair_tokens"].to_pylist() == pair
    return checked


@pytest.fixture(scope="module")
def o200k(tmp_path_factory):
    return reference_tiktoken("o200k_base", tmp_path_factory.mktemp("o200k"))


def test_o200k_counts_equal_tiktoken(out_dir, manifest, o200k):
    """The smoke run (every category, both targets, whole modules) under the
    default tokenizer."""
    assert manifest["tokenizer"] == "o200k_base"
    table = read_run(out_dir)
    checked = check_counts(table, lambda ts: [len(x) for x in o200k.encode_ordinary_batch(ts, num_threads=2)], MIN_ROWS)
    assert checked["cuda_backward"] >= MIN_ROWS and checked["cpu_module"] >= MIN_ROWS, checked


def test_cl100k_counts_equal_tiktoken(tmp_path):
    enc = reference_tiktoken("cl100k_base", tmp_path)
    config = smoke_config(tmp_path, "cl100k", "cl100k_base", cpu=False)
    out = tmp_path / "out"
    run_pairpipe("run", str(config), "--count", str(MIN_ROWS), "--output", str(out))
    assert json.loads((out / "manifest.json").read_text())["tokenizer"] == "cl100k_base"
    table = read_run(out)
    checked = check_counts(table, lambda ts: [len(x) for x in enc.encode_ordinary_batch(ts, num_threads=2)], MIN_ROWS)
    assert set(checked) == {"python_source", "cuda_forward", "cuda_backward"}
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(next((out / "data").glob("*.parquet"))).metadata.metadata
    assert meta[b"pairpipe_tokenizer"] == b"cl100k_base"
    assert "tokenizer `cl100k_base`" in (out / "README.md").read_text()


def train_tokenizer_json(path: Path, corpus: list[str]) -> None:
    """A small byte-level BPE (as GPT-2 / Llama-3 style tokenizers are), with a
    BOS post-processor that counts must leave out."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tok.save(str(path))


def test_tokenizer_json_counts_equal_tokenizers(out_dir, tmp_path):
    from tokenizers import Tokenizer

    smoke = read_run(out_dir)
    corpus = smoke["python_source"].to_pylist()[:200] + smoke["cuda_forward"].to_pylist()[:50]
    tok_path = tmp_path / "tiny" / "tokenizer.json"
    tok_path.parent.mkdir()
    train_tokenizer_json(tok_path, corpus)
    tok = Tokenizer.from_file(str(tok_path))
    config = smoke_config(tmp_path, "hf", str(tok_path), cpu=False)
    out = tmp_path / "out"
    run_pairpipe("run", str(config), "--count", str(MIN_ROWS), "--output", str(out))
    assert json.loads((out / "manifest.json").read_text())["tokenizer"] == str(tok_path)
    table = read_run(out)

    def count(texts):
        return [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]

    check_counts(table, count, MIN_ROWS)


def test_pair_token_budget_drops_rows_before_dedup(out_dir, tmp_path):
    """[filter] max_pair_tokens: no written row is over it, and the rows
    dropped are counted by reason in the manifest."""
    pairs = sorted(read_run(out_dir)["pair_tokens"].to_pylist())
    budget = pairs[len(pairs) // 2]
    extra = f"\n[filter]\nmax_pair_tokens = {budget}\nmax_column_tokens = {{ python_source = 100000 }}\n"
    config = smoke_config(tmp_path, "budget", "o200k_base", extra=extra, modules=True)
    out = tmp_path / "out"
    run_pairpipe("run", str(config), "--count", "300", "--output", str(out))
    table = read_run(out)
    assert table.num_rows == 300
    assert max(table["pair_tokens"].to_pylist()) <= budget
    counters = json.loads((out / "manifest.json").read_text())["counters"]
    dropped = counters["rejected"].get("too_many_pair_tokens", 0)
    assert dropped > 100, counters["rejected"]
    example = counters["rejected_examples"]["too_many_pair_tokens"][0]
    assert f"max_pair_tokens = {budget}" in example["message"]
    assert counters["generated"] == 300 + dropped + counters["duplicates"] + sum(
        n for r, n in counters["rejected"].items() if r != "too_many_pair_tokens"
    )
