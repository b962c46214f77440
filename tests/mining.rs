//! Corpus runs ([source] kind = "files" | "parquet"): every module-level
//! kernel of a corpus becomes a row with its provenance; files that cannot be
//! used are counted by reason, none fatal; dedup, determinism across worker
//! counts, `--part` and `merge` hold as for synthesized runs.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, UInt64Type};
use pairpipe::config::Config;
use pairpipe::pipeline::{Part, RunOptions, RunReport, run_with};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

const KERNELS: &str = r#"import math
import warp as wp

SCALE = wp.constant(2.0)
UNUSED = 7


@wp.func
def twice(x: float):
    return x * SCALE


def test_launch(device):
    pass


@wp.kernel
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = twice(a[i])


@wp.kernel
def add_one(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0
"#;

const MIT: &str = "MIT License\n\nCopyright (c) 2024 Someone\n\nPermission is hereby granted, \
                   free of charge, to any person obtaining a copy of this software\n";

fn config(out: &Path, source: &str, extra: &str) -> Config {
    let text = format!(
        "[run]\nname = \"mined\"\nseed = 5\noutput = \"{}\"\nworkers = 2\n\n[source]\n{source}\n{extra}",
        out.display()
    );
    Config::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(config: &Config, part: Option<Part>) -> RunReport {
    run_with(
        config,
        RunOptions {
            part,
            ..RunOptions::default()
        },
    )
    .unwrap()
}

/// Every row of a run: (column name → value as text), in manifest order.
fn rows(out: &Path) -> Vec<std::collections::BTreeMap<String, Option<String>>> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let mut out_rows = Vec::new();
    for shard in manifest["shards"].as_array().unwrap() {
        let path = out.join(shard["path"].as_str().unwrap());
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            for i in 0..batch.num_rows() {
                let mut row = std::collections::BTreeMap::new();
                for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
                    let v = match c.data_type() {
                        DataType::Utf8 => {
                            let a = c.as_string::<i32>();
                            a.is_valid(i).then(|| a.value(i).to_string())
                        }
                        DataType::Int32 => {
                            let a = c.as_primitive::<Int32Type>();
                            a.is_valid(i).then(|| a.value(i).to_string())
                        }
                        DataType::UInt64 => {
                            let a = c.as_primitive::<UInt64Type>();
                            a.is_valid(i).then(|| a.value(i).to_string())
                        }
                        _ => continue,
                    };
                    row.insert(f.name().clone(), v);
                }
                out_rows.push(row);
            }
        }
    }
    out_rows
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A corpus of two copies of one repository, and every kind of bad file.
fn folder_corpus(root: &Path) -> PathBuf {
    let corpus = root.join("corpus");
    for repo in ["repo-a", "repo-b"] {
        write(&corpus.join(repo).join("LICENSE"), MIT.as_bytes());
        write(
            &corpus.join(repo).join("src/kernels.py"),
            KERNELS.as_bytes(),
        );
    }
    let bad = corpus.join("bad");
    write(
        &bad.join("latin1.py"),
        b"# kernel caf\xe9\nimport warp as wp\n",
    );
    write(
        &bad.join("syntax.py"),
        b"import warp as wp\n\n@wp.kernel\ndef broken(a: wp.array(dtype=float):\n    pass\n",
    );
    let mut huge = String::from("import warp as wp\n");
    while huge.len() < 70_000 {
        huge.push_str("# kernel padding line ...........................................\n");
    }
    write(&bad.join("huge.py"), huge.as_bytes());
    #[cfg(unix)]
    std::os::unix::fs::symlink(bad.join("missing-target.py"), bad.join("dangling.py")).unwrap();
    // A kernel pairpipe cannot lower: counted, and its file's other kernel
    // kept, under the license its header declares.
    write(
        &bad.join("mixed.py"),
        b"# SPDX-License-Identifier: BSD-3-Clause\nimport warp as wp\n\n@wp.kernel\ndef nope(a: wp.array(dtype=float)):\n    a[0] = undefined_name\n\n\n@wp.kernel\ndef fine(a: wp.array(dtype=float)):\n    a[0] = 1.0\n",
    );
    // Not Python: not part of a folder corpus.
    write(&bad.join("notes.txt"), b"@wp.kernel");
    corpus
}

#[test]
fn folder_corpus_rows_provenance_rejections_and_dedup() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = folder_corpus(tmp.path());
    let source = format!(
        "kind = \"files\"\npaths = [\"{}\"]\nmax_file_bytes = \"64KiB\"",
        corpus.display()
    );
    let out = tmp.path().join("out");
    let report = run(&config(&out, &source, "[dedup]\nlevel = \"exact\""), None);
    let t = &report.tally;
    // repo-a's two kernels and mixed.py's good one are rows; repo-b's two
    // kernels are the same modules: duplicates.
    assert_eq!(t.written, 3, "{:?}", t);
    assert_eq!(t.duplicates, 2);
    for reason in [
        "not_utf8",
        "syntax_error",
        "file_too_large",
        "unreadable",
        "lower_error",
    ] {
        assert_eq!(
            t.rejected.get(reason),
            Some(&1),
            "{reason}: {:?}",
            t.rejected
        );
    }
    // The examples name the file and line.
    let ex = &t.rejected_examples["lower_error"][0];
    assert!(ex.message.starts_with("bad/mixed.py:4"), "{}", ex.message);
    assert!(ex.message.contains("nope"), "{}", ex.message);
    let ex = &t.rejected_examples["syntax_error"][0];
    assert!(ex.message.starts_with("bad/syntax.py:"), "{}", ex.message);
    assert_eq!(report.manifest["corpus"]["files"], 7);

    let rows = rows(&out);
    assert_eq!(rows.len(), 3);
    let get = |r: &std::collections::BTreeMap<String, Option<String>>, k: &str| {
        r[k].clone().unwrap_or_default()
    };
    let scale = rows
        .iter()
        .find(|r| get(r, "kernel_name") == "scale")
        .unwrap();
    assert_eq!(get(scale, "origin"), "mined");
    assert_eq!(get(scale, "category"), "mined");
    assert_eq!(get(scale, "source_repo"), "repo-a");
    assert_eq!(get(scale, "source_path"), "src/kernels.py");
    assert_eq!(get(scale, "source_line"), "17");
    assert_eq!(get(scale, "source_license"), "MIT");
    assert_eq!(
        get(scale, "source_file_xxh3"),
        xxhash_rust::xxh3::xxh3_64(KERNELS.as_bytes()).to_string()
    );
    // The minimal module: what `scale` reaches, nothing else.
    let py = get(scale, "python_source");
    assert!(py.contains("SCALE = wp.constant(2.0)") && py.contains("def twice"));
    assert!(!py.contains("UNUSED") && !py.contains("import math") && !py.contains("add_one"));
    assert!(!py.contains("test_launch"));
    // IR as the lowering makes it for that module.
    let lowered = pairpipe::lower::lower(&py, true, true).unwrap();
    assert_eq!(
        Some(lowered.cuda.unwrap().kernels[0].forward.clone()),
        scale["cuda_forward"].clone()
    );
    let fine = rows
        .iter()
        .find(|r| get(r, "kernel_name") == "fine")
        .unwrap();
    assert_eq!(
        get(fine, "source_repo"),
        "corpus",
        "no marker: the corpus folder"
    );
    // No license file above it, but its header declares one.
    assert_eq!(get(fine, "source_license"), "BSD-3-Clause");

    // The card and the manifest tell the licenses and repositories.
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("| MIT | 2 |"), "{card}");
    assert!(card.contains("| BSD-3-Clause | 1 |"), "{card}");
    assert!(card.contains("| repo-a | 2 |"), "{card}");
    assert!(card.contains("| syntax_error | 1 |"), "{card}");
    assert_eq!(report.manifest["counters"]["rows_per_license"]["MIT"], 2);

    // Byte-identical with another worker count.
    let out3 = tmp.path().join("out3");
    let mut c3 = config(&out3, &source, "[dedup]\nlevel = \"exact\"");
    c3.run.workers = 3;
    let r3 = run(&c3, None);
    let sums = |r: &RunReport| r.shards.iter().map(|s| s.xxh3.clone()).collect::<Vec<_>>();
    assert_eq!(sums(&report), sums(&r3));
}

#[test]
fn parts_of_a_corpus_run_merge_into_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = folder_corpus(tmp.path());
    let source = format!(
        "kind = \"files\"\npaths = [\"{}/**/*.py\"]\nmax_file_bytes = \"64KiB\"",
        corpus.display()
    );
    let whole = run(&config(&tmp.path().join("whole"), &source, ""), None);
    let mut parts = Vec::new();
    for i in 0..2 {
        let dir = tmp.path().join(format!("part{i}"));
        run(
            &config(&dir, &source, ""),
            Some(Part { index: i, count: 2 }),
        );
        parts.push(dir);
    }
    let merged = tmp.path().join("merged");
    pairpipe::merge::merge(&parts, &merged, false).unwrap();
    let ids = |dir: &Path| {
        let mut v: Vec<_> = rows(dir)
            .into_iter()
            .map(|r| {
                (
                    r["id"].clone(),
                    r["python_source"].clone(),
                    r["source_path"].clone(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids(&merged), ids(&whole.out_dir));
    assert_eq!(ids(&merged).len() as u64, whole.tally.written);
}

fn parquet_corpus(path: &Path, with_meta: bool) {
    let contents = [Some(KERNELS), Some("x = 1\n"), None, Some(KERNELS)];
    let mut fields = vec![Field::new("content", DataType::Utf8, true)];
    let mut columns: Vec<Arc<dyn Array>> = vec![Arc::new(StringArray::from(contents.to_vec()))];
    if with_meta {
        fields.push(Field::new("repo", DataType::Utf8, true));
        fields.push(Field::new("path", DataType::Utf8, true));
        fields.push(Field::new("lic", DataType::Utf8, true));
        columns.push(Arc::new(StringArray::from(vec![
            "o/a", "o/b", "o/c", "o/fork",
        ])));
        columns.push(Arc::new(StringArray::from(vec![
            "k.py", "x.py", "n.py", "k.py",
        ])));
        columns.push(Arc::new(StringArray::from(vec![
            Some("Apache-2.0"),
            None,
            None,
            Some("Apache-2.0"),
        ])));
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn parquet_corpus_with_and_without_metadata_columns() {
    let tmp = tempfile::tempdir().unwrap();
    for with_meta in [true, false] {
        let file = tmp.path().join(format!("code-{with_meta}.parquet"));
        parquet_corpus(&file, with_meta);
        let mut source = format!("kind = \"parquet\"\npaths = [\"{}\"]", file.display());
        if with_meta {
            source.push_str(
                "\nrepo_column = \"repo\"\npath_column = \"path\"\nlicense_column = \"lic\"",
            );
        }
        let out = tmp.path().join(format!("out-{with_meta}"));
        let report = run(&config(&out, &source, ""), None);
        // Two kernels in record 0; record 3 (a fork) is the same modules.
        assert_eq!(report.tally.written, 2, "{:?}", report.tally);
        assert_eq!(report.tally.duplicates, 2);
        assert_eq!(
            report.tally.rejected.get("unreadable"),
            Some(&1),
            "null content"
        );
        let rows = rows(&out);
        let r = &rows[0];
        assert_eq!(r["origin"].as_deref(), Some("mined"));
        if with_meta {
            assert_eq!(r["source_repo"].as_deref(), Some("o/a"));
            assert_eq!(r["source_path"].as_deref(), Some("k.py"));
            assert_eq!(r["source_license"].as_deref(), Some("Apache-2.0"));
        } else {
            assert_eq!(r["source_repo"], None);
            assert_eq!(r["source_path"].as_deref(), Some("code-false.parquet#0"));
            assert_eq!(r["source_license"], None);
        }
        assert!(r["source_line"].is_some() && r["source_file_xxh3"].is_some());
    }
    // A missing content column is the user's error, named.
    let file = tmp.path().join("code-true.parquet");
    let source = format!(
        "kind = \"parquet\"\npaths = [\"{}\"]\ncontent_column = \"text\"",
        file.display()
    );
    let err = run_with(
        &config(&tmp.path().join("x"), &source, ""),
        RunOptions::default(),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("no column \"text\""), "{err}");
}

#[test]
fn corpus_configs_are_checked() {
    let bad = |text: &str| Config::parse(text).err().unwrap();
    let base = "[run]\nname = \"m\"\noutput = \"o\"\n";
    assert!(bad(&format!("{base}[source]\nkind = \"files\"\n")).contains("source.paths"));
    assert!(
        bad(&format!(
            "{base}[source]\nkind = \"files\"\npaths = [\"x\"]\n[synth]\ncategories = {{ math = 1 }}\n"
        ))
        .contains("takes no [synth]")
    );
    assert!(
        bad(&format!(
            "{base}[source]\nkind = \"git\"\npaths = [\"x\"]\n"
        ))
        .contains("kind")
    );
    // A synthesized run still needs its target and categories.
    assert!(bad(base).contains("target"));
    // [run] and [source] alone are a complete corpus run, which needs no target.
    let c = Config::parse(&format!(
        "{base}[source]\nkind = \"files\"\npaths = [\"x\"]\n"
    ))
    .unwrap();
    assert!(c.target.is_unset());
    // Its TOML round-trips without a [synth] or [target] table.
    let toml = c.to_toml();
    assert!(
        !toml.contains("[synth]") && !toml.contains("[target]"),
        "{toml}"
    );
    assert_eq!(Config::parse(&toml).unwrap(), c);
}

/// A Parquet corpus of `records` records in row groups of `group` records:
/// every `every`-th record a kernel (each a different one), the others
/// `filler` bytes of Python-ish text without one. Written a row group at a
/// time, so the test itself never holds the corpus.
fn big_parquet_corpus(path: &Path, records: usize, group: usize, every: usize, filler: usize) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("content", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
    ]));
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::ZSTD(Default::default()))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let words = [
        "alpha", "beta", "x", "y", "return", "def", "import", "numpy", "value",
    ];
    let mut start = 0;
    while start < records {
        let end = (start + group).min(records);
        let (mut contents, mut paths) = (Vec::new(), Vec::new());
        for i in start..end {
            let text = if i % every == 0 {
                format!(
                    "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    \
                     i = wp.tid()\n    a[i] = a[i] * {i}.0\n"
                )
            } else {
                let mut t = String::with_capacity(filler + 16);
                while t.len() < filler {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    t.push_str(words[(seed >> 33) as usize % words.len()]);
                    t.push(if seed & 0xf == 0 { '\n' } else { ' ' });
                }
                t
            };
            contents.push(text);
            paths.push(format!("f{i:05}.py"));
        }
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(contents)),
                Arc::new(StringArray::from(paths)),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.flush().unwrap(); // ends the row group
        start = end;
    }
    let meta = w.close().unwrap();
    assert!(meta.num_row_groups() > 1);
}

/// Peak resident memory of a child while it runs, in bytes, and its exit
/// status. Read from the child's own `VmHWM` in /proc as it runs: the
/// `ru_maxrss` that wait4 reports also counts the resident memory of this
/// test process when it forked (a new process starts with its parent's
/// high-water mark), and tests of this binary running beside this one made
/// that vary by tens of MiB.
#[cfg(target_os = "linux")]
fn wait_peak_rss(mut child: std::process::Child) -> (i32, u64) {
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib * 1024);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Mines a generated Parquet corpus of `records` records (every 64th a
/// kernel, the others 100 kB of text) in row groups of 200; returns the
/// run's peak resident memory, the records' bytes and its output folder.
#[cfg(target_os = "linux")]
fn mine_big_parquet(dir: &Path, records: usize) -> (u64, u64, PathBuf) {
    // Each call its own files, so that one size can run twice.
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (every, filler) = (64, 100_000);
    let file = dir.join(format!("big-{records}-{run}.parquet"));
    big_parquet_corpus(&file, records, 200, every, filler);
    let text_bytes = ((records - records.div_ceil(every)) * filler) as u64;
    let config = dir.join(format!("big-{records}-{run}.toml"));
    let out = dir.join(format!("out-{records}-{run}"));
    std::fs::write(
        &config,
        format!(
            "[run]\nname = \"big\"\noutput = \"{}\"\nworkers = 2\n\n[source]\nkind = \"parquet\"\n\
             paths = [\"{}\"]\npath_column = \"path\"\n\n[tokens]\ntokenizer = \"none\"\n",
            out.display(),
            file.display()
        ),
    )
    .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pairpipe"))
        .args(["run", "--quiet"])
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (status, peak) = wait_peak_rss(child);
    assert_eq!(status, 0, "the run failed");
    std::fs::remove_file(&file).unwrap();
    eprintln!(
        "peak RSS {} MiB for {} MiB of records",
        peak >> 20,
        text_bytes >> 20
    );
    (peak, text_bytes, out)
}

/// A Parquet corpus is read a record batch at a time: doubling the corpus
/// (120 → 240 MiB of records, many row groups) leaves the run's peak memory
/// about where it was, below the size of the records, and every kernel is
/// found, in record order across the row groups. (Reading the records whole
/// peaked at 327 MiB for the larger corpus.)
#[cfg(target_os = "linux")]
#[test]
fn parquet_corpus_larger_than_memory_streams() {
    let tmp = tempfile::tempdir().unwrap();
    let (small, small_bytes, _) = mine_big_parquet(tmp.path(), 1280);
    let (large, large_bytes, out) = mine_big_parquet(tmp.path(), 2560);
    let added = large_bytes - small_bytes;
    assert!(
        large < small + added / 4,
        "peak RSS grew from {} to {} MiB with {} MiB more records",
        small >> 20,
        large >> 20,
        added >> 20
    );
    assert!(large < large_bytes, "peak RSS {} MiB", large >> 20);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["corpus"]["files"], 2560);
    assert_eq!(manifest["corpus"]["kernels"], 2560 / 64);
    let mut by_index: Vec<(u64, String)> = rows(&out)
        .into_iter()
        .map(|r| {
            (
                r["index"].clone().unwrap().parse().unwrap(),
                r["source_path"].clone().unwrap(),
            )
        })
        .collect();
    by_index.sort();
    let paths: Vec<String> = by_index.into_iter().map(|(_, p)| p).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths.len(), 2560 / 64);
    assert_eq!(paths, sorted, "rows in record order across row groups");
}
