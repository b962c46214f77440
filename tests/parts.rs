//! Runs cut into parts (`pairpipe run --part i/N`) and joined again
//! (`pairpipe merge`): real processes of the built binary, real Parquet.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Int32Type, Int64Type, UInt64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use pairpipe::config::Splits;
use pairpipe::dedup::{DedupKeys, split_for};
use pairpipe::row::Row;
use pairpipe::sink::{Sink, SinkOptions};
use pairpipe::synth::CATEGORIES;
use pairpipe::tokens::TokenCounts;

const PARTS: u64 = 4;
const COUNT: u64 = 240;

fn pairpipe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pairpipe"))
        .args(args)
        .output()
        .expect("run pairpipe")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_ok(out: &Output) {
    assert!(out.status.success(), "failed: {}", stderr(out));
}

/// Exit status 2 and exactly one line on stderr, `error: ...`, containing every `needle`.
fn assert_user_error(out: &Output, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} does not mention {n:?}");
    }
}

/// Dedup at the "shape" level on two small categories, so that structural
/// twins are common and some fall in different parts.
const SPLITS: (f64, f64) = (0.15, 0.15);

fn write_config(dir: &Path) -> PathBuf {
    let text = format!(
        r#"[run]
name = "partstest"
seed = 11
output = "{}"

[target]
rows = 1000

[ir]
cpu = true
cuda = true

[synth]
categories = {{ arithmetic = 1, scalar_param = 1, math = 1 }}

[dedup]
level = "shape"
expected_items = 10000
false_positive_rate = 0.0001

[splits]
validation = {}
test = {}

[shards]
max_bytes = "64KiB"
row_group_bytes = "16KiB"
"#,
        dir.join("run").display(),
        SPLITS.0,
        SPLITS.1
    );
    let path = dir.join("pipe.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Every row of one shard file, in file order, as the pipeline's `Row`.
fn read_shard(path: &Path) -> Vec<Row> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let b: RecordBatch = batch.unwrap();
        let col = |n: &str| b.column_by_name(n).unwrap().clone();
        let u64s = |n: &str| col(n).as_primitive::<UInt64Type>().clone();
        let (index, key) = (u64s("index"), u64s("dedup_key"));
        let text = |n: &str, i: usize| {
            let c = col(n);
            let a = c.as_string::<i32>();
            a.is_valid(i).then(|| a.value(i).to_string())
        };
        let list = |n: &str, i: usize| -> Vec<String> {
            let c = col(n);
            let v = c.as_list::<i32>().value(i);
            v.as_string::<i32>()
                .iter()
                .map(|s| s.unwrap().to_string())
                .collect()
        };
        let known = |name: String, among: &[&'static str]| -> &'static str {
            among.iter().copied().find(|s| *s == name).unwrap()
        };
        for i in 0..b.num_rows() {
            let row = Row {
                index: index.value(i),
                id: text("id", i).unwrap(),
                split: known(text("split", i).unwrap(), &["train", "validation", "test"]),
                category: known(text("category", i).unwrap(), CATEGORIES),
                kernel_name: text("kernel_name", i).unwrap(),
                python_source: text("python_source", i).unwrap(),
                cpu_forward: text("cpu_forward", i),
                cpu_backward: text("cpu_backward", i),
                cuda_forward: text("cuda_forward", i),
                cuda_backward: text("cuda_backward", i),
                cpu_module: text("cpu_module", i),
                cuda_module: text("cuda_module", i),
                dedup_key: key.value(i),
                keys: DedupKeys {
                    exact: u64s("key_exact").value(i),
                    renamed: u64s("key_renamed").value(i),
                    shape: u64s("key_shape").value(i),
                },
                builtins: list("builtins", i),
                dtypes: list("dtypes", i),
                launch_dims: col("launch_dims").as_primitive::<Int32Type>().value(i) as u32,
                launch_spec: text("launch_spec", i),
                motifs: list("motifs", i).into_iter().map(Into::into).collect(),
                features: list("features", i)
                    .iter()
                    .map(|n| pairpipe::lower::Features::from_name(n).unwrap())
                    .fold(Default::default(), pairpipe::lower::Features::union),
                ir_from_lowering: false,
                provenance: None,
                tokens: {
                    let n = |name: &str| {
                        let c = col(name);
                        let c = c.as_primitive::<Int32Type>();
                        c.is_valid(i).then(|| c.value(i) as u32)
                    };
                    TokenCounts {
                        python: n("python_source_tokens"),
                        ir: [
                            n("cpu_forward_tokens"),
                            n("cpu_backward_tokens"),
                            n("cuda_forward_tokens"),
                            n("cuda_backward_tokens"),
                            n("cpu_module_tokens"),
                            n("cuda_module_tokens"),
                        ],
                    }
                },
            };
            let bytes = col("text_bytes");
            let bytes = bytes.as_primitive::<Int64Type>().value(i);
            assert_eq!(bytes as u64, row.text_bytes(), "{}", row.id);
            rows.push(row);
        }
    }
    rows
}

fn shard_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    files
}

/// Every row of a dataset folder, by index.
fn read_rows(dir: &Path) -> Vec<Row> {
    let mut rows: Vec<Row> = shard_files(dir)
        .iter()
        .flat_map(|f| read_shard(f))
        .collect();
    rows.sort_by_key(|r| r.index);
    rows
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// Runs the parts as separate, concurrent processes, like a job array.
fn run_parts(config: &Path, dir: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let children: Vec<_> = (0..PARTS)
        .map(|i| {
            let out = dir.join(format!("part-{i}"));
            let child = Command::new(env!("CARGO_BIN_EXE_pairpipe"))
                .args(["run", config.to_str().unwrap(), "--quiet", "--workers", "2"])
                .args([
                    "--count",
                    &COUNT.to_string(),
                    "--part",
                    &format!("{i}/{PARTS}"),
                ])
                .args(["--output", out.to_str().unwrap()])
                .args(extra)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start pairpipe");
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, child)| {
            assert_ok(&child.wait_with_output().unwrap());
            out
        })
        .collect()
}

fn merge(parts: &[&Path], out: &Path) -> Output {
    let mut args = vec!["merge".to_string()];
    args.extend(parts.iter().map(|p| p.display().to_string()));
    args.extend([
        "--output".into(),
        out.display().to_string(),
        "--quiet".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pairpipe(&args)
}

/// Checks a merged folder against the parts it was made from; returns the
/// number of rows dropped as duplicates across parts.
fn check_merged(parts: &[PathBuf], merged: &Path) -> usize {
    let union: Vec<Row> = parts.iter().flat_map(|p| read_rows(p)).collect();
    // What the merge must keep: per key, the row with the lowest index.
    let mut lowest: HashMap<u64, &Row> = HashMap::new();
    for r in &union {
        let e = lowest.entry(r.dedup_key).or_insert(r);
        if r.index < e.index {
            *e = r;
        }
    }
    let cross_duplicates = union.len() - lowest.len();

    let rows = read_rows(merged);
    assert_eq!(rows.len(), union.len() - cross_duplicates);
    let splits = Splits {
        validation: SPLITS.0,
        test: SPLITS.1,
    };
    let mut keys = HashSet::new();
    for r in &rows {
        assert!(keys.insert(r.dedup_key), "dedup_key {} twice", r.dedup_key);
        assert_eq!(
            r, lowest[&r.dedup_key],
            "key {} not kept with its lowest index",
            r.dedup_key
        );
        assert_eq!(r.split, split_for(r.dedup_key, &splits), "row {}", r.id);
    }
    // Rows are written in index order: within every shard, indices ascend.
    for f in shard_files(merged) {
        let idx: Vec<u64> = read_shard(&f).iter().map(|r| r.index).collect();
        assert!(idx.windows(2).all(|w| w[0] < w[1]), "{}", f.display());
    }

    // The manifest sums the parts' counters and records the merge's own.
    let m = manifest(merged);
    let c = &m["counters"];
    let sum = |key: &str| -> u64 {
        parts
            .iter()
            .map(|p| manifest(p)["counters"][key].as_u64().unwrap())
            .sum()
    };
    let cross = cross_duplicates as u64;
    assert_eq!(c["written"], rows.len() as u64);
    assert_eq!(c["generated"], sum("generated"));
    assert_eq!(c["duplicates_within_parts"], sum("duplicates"));
    assert_eq!(c["duplicates_across_parts"], cross);
    assert_eq!(c["duplicates"], sum("duplicates") + cross);
    let rejected: u64 = c["rejected"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        c["generated"].as_u64().unwrap(),
        rows.len() as u64 + c["duplicates"].as_u64().unwrap() + rejected
    );
    assert_eq!(
        c["text_bytes"].as_u64().unwrap(),
        rows.iter().map(Row::text_bytes).sum::<u64>()
    );
    for split in ["train", "validation", "test"] {
        let n = rows.iter().filter(|r| r.split == split).count() as u64;
        assert_eq!(
            c["rows_per_split"][split].as_u64().unwrap_or(0),
            n,
            "{split}"
        );
    }
    assert_eq!(m["merge"]["parts"], PARTS);
    assert_eq!(m["merge"]["rows_in"], union.len() as u64);
    assert_eq!(m["merge"]["duplicates_across_parts"], cross);
    assert_eq!(m["merge"]["inputs"].as_array().unwrap().len() as u64, PARTS);
    assert_eq!(m["config"]["target"]["rows"], COUNT);
    let disk: u64 = shard_files(merged)
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    assert_eq!(c["disk_bytes"], disk);
    let card = std::fs::read_to_string(merged.join("README.md")).unwrap();
    assert!(
        card.contains(&format!("Generated by {PARTS} parts")),
        "{card}"
    );
    assert!(card.contains(&format!("removed {cross} rows")), "{card}");
    assert!(card.contains("path: data/train-*.parquet"));
    cross_duplicates
}

/// Merging the same parts again gives the same shards, byte for byte.
fn check_deterministic(parts: &[&Path], merged: &Path, again: &Path) {
    assert_ok(&merge(parts, again));
    assert_eq!(manifest(again)["shards"], manifest(merged)["shards"]);
    let files = shard_files(merged);
    assert_eq!(files.len(), shard_files(again).len());
    for f in files {
        let g = again.join("data").join(f.file_name().unwrap());
        assert!(
            std::fs::read(&f).unwrap() == std::fs::read(&g).unwrap(),
            "{}",
            f.display()
        );
    }
}

#[test]
fn parts_merge_into_the_run_deduplicated_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = write_config(dir);
    let parts = run_parts(&config, dir, &[]);

    // Each part: only its own indices, its share of the target, recorded in its manifest and card.
    let mut all_indices = HashSet::new();
    for (i, dir) in parts.iter().enumerate() {
        let (i, rows) = (i as u64, read_rows(dir));
        assert_eq!(rows.len() as u64, COUNT / PARTS, "part {i}");
        assert!(
            rows.iter().all(|r| r.index % PARTS == i),
            "part {i} holds another part's index"
        );
        for r in &rows {
            assert!(
                all_indices.insert(r.index),
                "index {} in two parts",
                r.index
            );
        }
        let keys: HashSet<u64> = rows.iter().map(|r| r.dedup_key).collect();
        assert_eq!(keys.len(), rows.len(), "part {i} repeats a key");
        let m = manifest(dir);
        assert_eq!(m["part"]["index"], i);
        assert_eq!(m["part"]["count"], PARTS);
        assert_eq!(m["part"]["target"]["rows"], COUNT / PARTS);
        assert_eq!(
            m["config"]["target"]["rows"], COUNT,
            "parts record the whole run's target"
        );
        let generated = m["counters"]["generated"].as_u64().unwrap();
        assert_eq!(m["part"]["next_index"], i + generated * PARTS);
        let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(card.contains(&format!("part {i} of {PARTS}")), "{card}");
    }

    // Parts in any order on the command line.
    let merged = dir.join("merged");
    let order: Vec<&Path> = [2, 0, 3, 1].iter().map(|&i| parts[i].as_path()).collect();
    let out = merge(&order, &merged);
    assert_ok(&out);
    let cross = check_merged(&parts, &merged);
    assert!(
        stderr(&out).contains(&format!("{cross} duplicates across parts")),
        "{}",
        stderr(&out)
    );
    assert!(shard_files(&merged).len() > 3, "small shards should rotate");
    let all: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    check_deterministic(&all, &merged, &dir.join("merged-again"));

    // The parts together are what one run makes: below the first index some
    // part did not reach, the merge holds exactly the rows of a single run.
    let single = dir.join("single");
    assert_ok(&pairpipe(&[
        "run",
        config.to_str().unwrap(),
        "--quiet",
        "--count",
        &COUNT.to_string(),
        "--output",
        single.to_str().unwrap(),
    ]));
    let reached = parts
        .iter()
        .map(|p| manifest(p)["part"]["next_index"].as_u64().unwrap())
        .min()
        .unwrap()
        .min(manifest(&single)["counters"]["generated"].as_u64().unwrap());
    let below =
        |rows: Vec<Row>| -> Vec<Row> { rows.into_iter().filter(|r| r.index < reached).collect() };
    let (a, b) = (below(read_rows(&merged)), below(read_rows(&single)));
    assert!(
        a.len() as u64 > COUNT / 2,
        "{} rows below index {reached}",
        a.len()
    );
    assert!(
        a == b,
        "merged rows differ from one run's below index {reached}"
    );
}

/// Today's synthesizers practically never repeat a kernel (no duplicate in
/// 30,000 samples even at the "shape" level), so real parts have no
/// duplicates across them to remove. This test makes some: part 1 is
/// re-written (with the pipeline's own sink, its manifest updated) so that
/// some of its rows carry kernels that part 0 made at another index, a lower
/// one for some and a higher one for others. Everything else is real.
#[test]
fn duplicates_across_parts_keep_the_lowest_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = write_config(dir);
    let mut parts = run_parts(&config, dir, &[]);
    let p0 = read_rows(&parts[0]);
    let mut p1 = read_rows(&parts[1]);
    assert_eq!(p0.len(), p1.len());
    let mut copied = Vec::new();
    for k in 0..p1.len() - 1 {
        // k % 3 == 0: part 0's kernel at about the same position, a lower
        // index (4k' < 4k'+1); k % 3 == 1: one position later, a higher index.
        let from = match k % 3 {
            0 => &p0[k],
            1 => &p0[k + 1],
            _ => continue,
        };
        let to = &mut p1[k];
        let (index, id) = (to.index, to.id.clone());
        *to = Row {
            index,
            id,
            ..from.clone()
        };
        copied.push((from.index, index));
    }
    let part1_wins = copied.iter().filter(|(a, b)| b < a).count();
    assert!(part1_wins > 0 && part1_wins < copied.len());

    // Write the doctored part 1 as the pipeline would have.
    let doctored = dir.join("part-1-doctored");
    let mut m = manifest(&parts[1]);
    let cfg = &m["config"];
    let mut sink = Sink::create(SinkOptions {
        out_dir: doctored.clone(),
        max_shard_bytes: cfg["shards"]["max_bytes"].as_u64().unwrap(),
        row_group_bytes: cfg["shards"]["row_group_bytes"].as_u64().unwrap(),
        cpu: true,
        cuda: true,
        modules: false,
        metadata: vec![],
    })
    .unwrap();
    for r in p1 {
        sink.push(r).unwrap();
    }
    m["shards"] = serde_json::to_value(sink.finish().unwrap()).unwrap();
    std::fs::write(doctored.join("manifest.json"), m.to_string()).unwrap();
    parts[1] = doctored;

    let merged = dir.join("merged");
    let all: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    assert_ok(&merge(&all, &merged));
    let cross = check_merged(&parts, &merged);
    assert_eq!(cross, copied.len());
    // Which copy survived: the one with the lower index, whichever part it is in.
    let kept: HashSet<u64> = read_rows(&merged).iter().map(|r| r.index).collect();
    for (i0, i1) in copied {
        let (low, high) = (i0.min(i1), i0.max(i1));
        assert!(kept.contains(&low) && !kept.contains(&high), "{i0} vs {i1}");
    }
    check_deterministic(&all, &merged, &dir.join("merged-again"));
}

#[test]
fn bad_parts_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = write_config(dir);
    let cfg = config.to_str().unwrap();

    for (part, needle) in [
        ("4/4", "--part 4/4: i must be in 0..4"),
        ("0/0", "N must be at least 1"),
        ("two/4", "--part two/4"),
        ("3", "expected i/N"),
    ] {
        let out = pairpipe(&["run", cfg, "--part", part, "--count", "40"]);
        assert_user_error(&out, &[needle]);
    }
    let out = pairpipe(&["run", cfg, "--part", "1/8", "--count", "5"]);
    assert_user_error(&out, &["cannot be cut into 8 parts"]);

    let parts = run_parts(&config, dir, &[]);
    let p: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    let merged = dir.join("merged");
    let run_one = |args: &[&str]| -> PathBuf {
        let out = dir.join(format!("odd-{}", args.join("_").replace('/', "of")));
        let mut all = vec!["run", cfg, "--quiet", "--count", "240", "--output"];
        all.push(out.to_str().unwrap());
        all.extend_from_slice(args);
        assert_ok(&pairpipe(&all));
        out
    };

    assert_user_error(
        &merge(&p[..3], &merged),
        &["missing part 3/4", "got 3 of 4"],
    );
    assert_user_error(
        &merge(&[p[0], p[1], p[1], p[2], p[3]], &merged),
        &["part 1/4 is given twice"],
    );
    let seed = run_one(&["--part", "1/4", "--seed", "12"]);
    assert_user_error(
        &merge(&[p[0], &seed, p[2], p[3]], &merged),
        &["different seeds", "seed 11", "seed 12"],
    );
    let other_n = run_one(&["--part", "1/3"]);
    assert_user_error(
        &merge(&[p[0], &other_n, p[2], p[3]], &merged),
        &["different N", "part 0/4", "part 1/3"],
    );
    // A different target is a different run.
    let count = pairpipe(&[
        "run",
        cfg,
        "--quiet",
        "--count",
        "120",
        "--part",
        "1/4",
        "--output",
        dir.join("odd-count").to_str().unwrap(),
    ]);
    assert_ok(&count);
    assert_user_error(
        &merge(&[p[0], &dir.join("odd-count"), p[2], p[3]], &merged),
        &["different configs", "target.rows"],
    );
    // A whole run is a run of its own: merged alone, it is itself again.
    let whole = run_one(&[]);
    let alone = dir.join("alone");
    assert_ok(&merge(&[&whole], &alone));
    assert_eq!(manifest(&alone)["shards"], manifest(&whole)["shards"]);
    assert_user_error(
        &merge(&[&whole, &whole], &merged),
        &["the run", "is given twice"],
    );
    // A join is not an input: its runs are.
    let joined = dir.join("joined");
    let other_seed = run_one(&["--seed", "12"]);
    assert_ok(&merge(&[&whole, &other_seed], &joined));
    assert_user_error(
        &merge(&[&joined], &merged),
        &["a join of 2 runs", "give the runs it was made from"],
    );
    assert_user_error(&merge(&p, &parts[2]), &["is the folder of part 2/4"]);
    assert_user_error(
        &merge(&[p[0], &dir.join("nowhere")], &merged),
        &["manifest"],
    );

    // A shard changed after its part finished.
    let victim = shard_files(&parts[3])[0].clone();
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&victim, bytes).unwrap();
    assert_user_error(&merge(&p, &merged), &["changed or incomplete"]);
    assert!(!merged.join("manifest.json").exists());

    // Nothing above wrote a merged dataset; the parts' folders are intact.
    for part in &parts[..3] {
        assert!(!shard_files(part).is_empty());
    }
}

#[test]
fn default_part_output_sits_beside_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let config = write_config(tmp.path());
    let out = pairpipe(&[
        "run",
        config.to_str().unwrap(),
        "--quiet",
        "--count",
        "20",
        "--part",
        "1/2",
    ]);
    assert_ok(&out);
    let dir = tmp.path().join("run-part-1-of-2");
    assert!(dir.join("manifest.json").is_file(), "{}", stderr(&out));
    assert!(stderr(&out).contains("as part 1/2"), "{}", stderr(&out));
    assert_eq!(read_rows(&dir).len(), 10);
}

/// When the parts together consume exactly the indices a single run does (no
/// duplicates, no rejections, a target divisible by N), the merge is not just
/// the same rows: it is the single run's shards, byte for byte.
#[test]
fn merge_of_a_clean_cut_equals_the_single_run_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = write_config(dir);
    // Exact dedup (the source byte for byte): synthesized names make repeats rare.
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("level = \"shape\"", "level = \"exact\"");
    std::fs::write(&config, text).unwrap();
    let parts = run_parts(&config, dir, &[]);
    for p in &parts {
        let m = manifest(p);
        assert_eq!(
            m["part"]["indices_consumed"],
            COUNT / PARTS,
            "{}",
            p.display()
        );
    }
    let merged = dir.join("merged");
    assert_ok(&merge(
        &parts.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
        &merged,
    ));
    let single = dir.join("single");
    assert_ok(&pairpipe(&[
        "run",
        config.to_str().unwrap(),
        "--quiet",
        "--count",
        &COUNT.to_string(),
        "--output",
        single.to_str().unwrap(),
    ]));
    assert_eq!(manifest(&merged)["shards"], manifest(&single)["shards"]);
}
