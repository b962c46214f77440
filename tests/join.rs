//! `pairpipe merge` of several runs: a synthesized run and a mined run (whole
//! or in parts) joined into one dataset, deduplicated exactly across both,
//! rows in (run, index) order, ids unique, splits kept, the card and the
//! report telling both origins; runs that cannot share a table refused.
//! Real processes of the built binary, real Parquet.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow::array::{Array, AsArray};
use arrow::datatypes::UInt64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_pairpipe");

/// A hand-written kernel file (not one the synthesizer makes).
const HANDWRITTEN: &str = r#"import warp as wp


@wp.func
def twice(x: float):
    return x * 2.0


@wp.kernel
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = twice(a[i])
"#;

const MIT: &str = "MIT License\n\nCopyright (c) 2024 Someone\n\nPermission is hereby granted, \
                   free of charge, to any person obtaining a copy of this software\n";

fn pairpipe<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN).args(args).output().expect("run pairpipe")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_ok(out: &Output) {
    assert!(out.status.success(), "failed: {}", stderr(out));
}

/// Exit status 2 and exactly one line on stderr containing every `needle`.
fn assert_user_error(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} does not mention {n:?}");
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A run's config; `body` is everything after `[run]`.
fn config(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    write(
        &path,
        &format!(
            "[run]\nname = \"{name}\"\nseed = 7\noutput = \"{}\"\nworkers = 2\n\n{body}\n\
             [shards]\nmax_bytes = \"64KiB\"\nrow_group_bytes = \"16KiB\"\n",
            dir.join(name).display()
        ),
    );
    path
}

fn synth_body(rows: u64) -> String {
    format!("[target]\nrows = {rows}\n\n[synth]\ncategories = {{ arithmetic = 1 }}\n")
}

fn mined_body(corpus: &Path) -> String {
    format!(
        "[source]\nkind = \"files\"\npaths = [\"{}\"]\n",
        corpus.display()
    )
}

fn run(config: &Path, extra: &[&str]) -> PathBuf {
    let mut args: Vec<String> = vec!["run".into(), config.display().to_string(), "--quiet".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_ok(&pairpipe(&args));
    let text = std::fs::read_to_string(config).unwrap();
    let out = text
        .lines()
        .find_map(|l| l.strip_prefix("output = \""))
        .unwrap()
        .trim_end_matches('"');
    PathBuf::from(out)
}

fn merge(inputs: &[&Path], out: &Path) -> Output {
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend([
        "--output".into(),
        out.display().to_string(),
        "--quiet".into(),
    ]);
    pairpipe(&args)
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

#[derive(Debug, Clone, PartialEq)]
struct R {
    id: String,
    index: u64,
    split: String,
    origin: String,
    key: u64,
    python_source: String,
    source_path: Option<String>,
}

/// Every row of a dataset folder, shard by shard in manifest order, each
/// shard's rows in file order.
fn shards(dir: &Path) -> Vec<(String, Vec<R>)> {
    let m = manifest(dir);
    let mut out = Vec::new();
    for shard in m["shards"].as_array().unwrap() {
        let rel = shard["path"].as_str().unwrap().to_string();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(dir.join(&rel)).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let mut rows = Vec::new();
        for batch in reader {
            let b = batch.unwrap();
            let s = |name: &str| b.column_by_name(name).unwrap().as_string::<i32>().clone();
            let u = |name: &str| {
                b.column_by_name(name)
                    .unwrap()
                    .as_primitive::<UInt64Type>()
                    .clone()
            };
            let (id, split, origin, py, path) = (
                s("id"),
                s("split"),
                s("origin"),
                s("python_source"),
                s("source_path"),
            );
            let (index, key) = (u("index"), u("dedup_key"));
            for i in 0..b.num_rows() {
                rows.push(R {
                    id: id.value(i).to_string(),
                    index: index.value(i),
                    split: split.value(i).to_string(),
                    origin: origin.value(i).to_string(),
                    key: key.value(i),
                    python_source: py.value(i).to_string(),
                    source_path: path.is_valid(i).then(|| path.value(i).to_string()),
                });
            }
        }
        out.push((rel, rows));
    }
    out
}

fn rows(dir: &Path) -> Vec<R> {
    shards(dir).into_iter().flat_map(|(_, r)| r).collect()
}

/// The shard files' bytes, by name.
fn shard_bytes(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    manifest(dir)["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let p = s["path"].as_str().unwrap();
            (p.to_string(), std::fs::read(dir.join(p)).unwrap())
        })
        .collect()
}

/// A corpus holding copies of the synthesizer's first kernels (seed 7,
/// arithmetic: the same modules the synthesized run makes for indices
/// 0..8) and a hand-written repository with a license.
fn corpus(root: &Path) -> PathBuf {
    let corpus = root.join("corpus");
    assert_ok(&pairpipe(&[
        "synth",
        "--count",
        "8",
        "--seed",
        "7",
        "--category",
        "arithmetic",
        "--out",
        corpus.join("copied").to_str().unwrap(),
    ]));
    write(&corpus.join("repo/LICENSE"), MIT);
    write(&corpus.join("repo/src/scale.py"), HANDWRITTEN);
    corpus
}

/// The joined rows must be: every row of the runs in (run, index) order, a
/// key kept at its first row, with the run's prefix on its id and its split.
fn check_join(runs: &[&[R]], joined: &Path) -> usize {
    let mut expected: Vec<(usize, R)> = Vec::new();
    let mut first: HashSet<u64> = HashSet::new();
    for (k, rows) in runs.iter().enumerate() {
        let mut rows = rows.to_vec();
        rows.sort_by_key(|r| r.index);
        for r in rows {
            if first.insert(r.key) {
                expected.push((k, r));
            }
        }
    }
    let by_key: HashMap<u64, &(usize, R)> = expected.iter().map(|e| (e.1.key, e)).collect();
    let got = shards(joined);
    let mut ids = HashSet::new();
    let mut n = 0;
    for (file, rows) in &got {
        let mut last: Option<(usize, u64)> = None;
        for r in rows {
            n += 1;
            let (k, want) = by_key
                .get(&r.key)
                .unwrap_or_else(|| panic!("{} kept, but it repeats an earlier key", r.id));
            let run: usize = r.id[1..r.id.find('-').unwrap()].parse().unwrap();
            assert_eq!(run, *k, "{}: from run {k}", r.id);
            assert_eq!(r.id, format!("r{k}-{}", want.id));
            assert_eq!(
                (&r.index, &r.split, &r.origin, &r.python_source),
                (&want.index, &want.split, &want.origin, &want.python_source),
                "{}",
                r.id
            );
            assert!(ids.insert(r.id.clone()), "id {} twice", r.id);
            // In (run, index) order within every shard.
            assert!(last < Some((run, r.index)), "{file}: {} out of order", r.id);
            last = Some((run, r.index));
        }
    }
    assert_eq!(n, expected.len(), "rows written");
    runs.iter().map(|r| r.len()).sum::<usize>() - expected.len()
}

#[test]
fn a_mined_and_a_synthesized_run_join_deduplicated_across_both() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let corpus = corpus(dir);
    let synth = run(&config(dir, "synth", &synth_body(40)), &[]);
    let mined = run(&config(dir, "mined", &mined_body(&corpus)), &[]);
    let (s, m) = (rows(&synth), rows(&mined));
    assert_eq!(m.len(), 9, "8 copied kernels and the hand-written one");

    // The same seed: the two runs' own ids collide (index i is "7-i" in
    // both), which is what the run prefix is for.
    let s_ids: HashSet<&str> = s.iter().map(|r| r.id.as_str()).collect();
    assert!(m.iter().any(|r| s_ids.contains(r.id.as_str())));
    // The copied files are the synthesized modules: the same keys.
    let s_keys: HashSet<u64> = s.iter().map(|r| r.key).collect();
    let shared: HashSet<u64> = m
        .iter()
        .map(|r| r.key)
        .filter(|k| s_keys.contains(k))
        .collect();
    assert!(shared.len() >= 6, "only {} kernels in both", shared.len());
    for r in m.iter().filter(|r| shared.contains(&r.key)) {
        assert!(r.source_path.as_deref().unwrap().contains("_arithmetic.py"));
    }

    // Mined first: the mined copy of each shared kernel is kept.
    let joined = dir.join("joined");
    let out = merge(&[&mined, &synth], &joined);
    assert_ok(&out);
    assert!(stderr(&out).contains("merged 2 runs"), "{}", stderr(&out));
    let dropped = check_join(&[&m, &s], &joined);
    assert_eq!(dropped, shared.len());
    let j = rows(&joined);
    for r in j.iter().filter(|r| shared.contains(&r.key)) {
        assert_eq!(r.origin, "mined", "{}", r.id);
        assert!(r.id.starts_with("r0-"));
    }
    assert_eq!(j.iter().filter(|r| r.origin == "mined").count(), m.len());
    assert!(shards(&joined).len() > 2, "small shards should rotate");

    // The manifest describes both runs and what the join dropped.
    let man = manifest(&joined);
    let c = &man["counters"];
    assert_eq!(c["written"], j.len() as u64);
    assert_eq!(c["duplicates_across_runs"], shared.len() as u64);
    assert_eq!(c["duplicates_across_parts"], 0);
    assert_eq!(c["rows_per_origin"]["mined"], m.len() as u64);
    assert_eq!(
        c["rows_per_origin"]["synthetic"],
        (s.len() - shared.len()) as u64
    );
    assert_eq!(c["rows_per_license"]["MIT"], 1);
    let runs = man["merge"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (&runs[0]["origin"], &runs[0]["name"], &runs[0]["id_prefix"]),
        (
            &Value::from("mined"),
            &Value::from("mined"),
            &Value::from("r0-")
        )
    );
    assert_eq!(runs[0]["rows_in"], m.len() as u64);
    assert_eq!(runs[0]["rows"], m.len() as u64);
    assert!(runs[0]["corpus"]["fingerprint"].is_string());
    assert_eq!(runs[1]["origin"], "synthetic");
    assert_eq!(runs[1]["rows_in"], s.len() as u64);
    assert_eq!(runs[1]["rows"], (s.len() - shared.len()) as u64);
    assert_eq!(runs[1]["duplicates_across_runs"], shared.len() as u64);
    assert_eq!(man["name"], "mined + synth");
    assert!(man["seed"].is_null());

    // The card: both origins, the licenses of the mined rows, each run.
    let card = std::fs::read_to_string(joined.join("README.md")).unwrap();
    let front = card.split("---\n").nth(1).unwrap();
    assert!(
        front.contains("- mined\n") && front.contains("- synthetic\n"),
        "{front}"
    );
    assert!(card.contains("| MIT | 1 |"), "{card}");
    assert!(
        card.contains(&format!(
            "The {} synthesized rows have no source",
            s.len() - shared.len()
        )),
        "{card}"
    );
    assert!(
        card.contains("Joined by `pairpipe merge` from 2 runs"),
        "{card}"
    );
    assert!(
        card.contains(&format!("dropped: {} rows across runs", shared.len())),
        "{card}"
    );
    assert!(card.contains("| 0 | mined | mined | 7 | 1 |"), "{card}");
    assert!(card.contains("Run 1 (`r1-`) was made with this configuration"));
    assert!(card.contains("categories = { arithmetic = 1 }") || card.contains("arithmetic = 1"));

    // `report` shows both origins.
    let out = pairpipe(&["report", joined.to_str().unwrap(), "--json"]);
    assert_ok(&out);
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let origins: BTreeMap<String, u64> = rep["runs"][0]["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(origins["mined"], m.len() as u64);
    assert_eq!(origins["synthetic"], (s.len() - shared.len()) as u64);

    // Deterministic: the same join again is the same bytes.
    let again = dir.join("joined-again");
    assert_ok(&merge(&[&mined, &synth], &again));
    assert_eq!(shard_bytes(&again), shard_bytes(&joined));

    // The other order keeps the synthesized copies, and the same kernels.
    let reversed = dir.join("reversed");
    assert_ok(&merge(&[&synth, &mined], &reversed));
    assert_eq!(check_join(&[&s, &m], &reversed), shared.len());
    let r = rows(&reversed);
    for row in r.iter().filter(|r| shared.contains(&r.key)) {
        assert_eq!(row.origin, "synthetic");
        assert!(row.id.starts_with("r0-"));
    }
    let keys = |rows: &[R]| rows.iter().map(|r| r.key).collect::<HashSet<_>>();
    assert_eq!(keys(&r), keys(&j));

    // The parts of the mined run join like the whole of it.
    let mined_cfg = dir.join("mined.toml");
    let mut parts = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("mined-part-{i}"));
        let part = format!("{i}/2");
        run(
            &mined_cfg,
            &["--part", &part, "--output", out.to_str().unwrap()],
        );
        parts.push(out);
    }
    let with_parts = dir.join("with-parts");
    // Parts and runs in any order on the command line: runs are numbered by
    // their first folder.
    assert_ok(&merge(&[&parts[1], &synth, &parts[0]], &with_parts));
    let man = manifest(&with_parts);
    assert_eq!(man["merge"]["runs"][0]["parts"], 2);
    assert_eq!(man["merge"]["runs"][0]["origin"], "mined");
    assert_eq!(man["merge"]["parts"], 3);
    assert_eq!(shard_bytes(&with_parts), shard_bytes(&joined));
}

#[test]
fn runs_that_cannot_share_a_table_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let corpus = corpus(dir);
    let mined = run(&config(dir, "mined", &mined_body(&corpus)), &[]);
    let merged = dir.join("merged");
    for (name, extra, needles) in [
        (
            "shape",
            "[dedup]\nlevel = \"shape\"\n",
            &[
                "cannot join",
                "different levels",
                "\"renamed\"",
                "\"shape\"",
            ][..],
        ),
        (
            "cpu-only",
            "[ir]\ncpu = true\ncuda = false\n",
            &["cannot join", "different IR columns", "cuda = false"][..],
        ),
        (
            "untokenized",
            "[tokens]\ntokenizer = \"none\"\n",
            &["cannot join", "different tokenizers", "o200k_base", "none"][..],
        ),
    ] {
        let other = run(
            &config(dir, name, &format!("{}{extra}", synth_body(10))),
            &[],
        );
        assert_user_error(&merge(&[&mined, &other], &merged), needles);
        assert!(!merged.exists(), "{name}: a refused join wrote something");
    }

    // A run's parts must have read the same corpus.
    let cfg = dir.join("mined.toml");
    let p0 = dir.join("p0");
    run(&cfg, &["--part", "0/2", "--output", p0.to_str().unwrap()]);
    write(
        &corpus.join("repo/src/more.py"),
        &HANDWRITTEN.replace("scale", "scale2"),
    );
    let p1 = dir.join("p1");
    run(&cfg, &["--part", "1/2", "--output", p1.to_str().unwrap()]);
    assert_user_error(
        &merge(&[&p0, &p1], &merged),
        &["different corpora", "fingerprint"],
    );
    // An incomplete run among complete ones is named.
    let synth = run(&config(dir, "synth", &synth_body(10)), &[]);
    assert_user_error(
        &merge(&[&synth, &p0], &merged),
        &["missing part 1/2 of run `mined`", "got 1 of 2 parts"],
    );
}
