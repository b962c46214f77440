//! `pairpipe merge`: join runs into one dataset folder: the N parts of a run
//! (`pairpipe run --part i/N`), several whole runs (a synthesized one and a
//! mined one, say), or both.
//!
//! 1. Read every input's manifest. An input is one part of a run (its
//!    manifest has `"part"`) or a whole run. Parts of the same run (same N,
//!    seed, config apart from output folder and worker count, corpus and
//!    versions) are one run, which needs every part 0..N exactly once; a
//!    whole run is a run of its own. Runs are numbered in the order they
//!    first appear on the command line. All runs must share the pairpipe and
//!    warp versions, the dedup level, the IR columns and the tokenizer, or
//!    their rows could not be deduplicated together or share one table. Every
//!    shard must be as its manifest lists it (size and xxh3).
//! 2. Read `index` and `dedup_key` of every row (only those two columns). The
//!    keys, 8 bytes a row, are sorted to find the keys that occur more than
//!    once; only that (small) set is kept. This is exact: no Bloom filter.
//! 3. Stream the rows in (run, index) order (a k-way merge over each part's
//!    shards of each split, which the sink wrote in index order) into the
//!    same sink a run uses. A row whose key occurs more than once is kept
//!    only the first time its key is seen: within a run at its lowest index,
//!    across runs in the earliest run on the command line. Splits stay as the
//!    rows have them (they derive from the key, which is then in one row
//!    only). With more than one run, every id gets its run's number as a
//!    prefix (`r0-`, `r1-`, ...): ids are unique per (seed, index), and two
//!    runs may share a seed. Memory: one small record batch per (part,
//!    split) stream, never the dataset.
//! 4. Write the manifest (the inputs' counters summed, plus the merge's own,
//!    and every run described) and the dataset card.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use arrow::array::{Array, AsArray, Int32Array, ListArray, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::Int32Type;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use parquet::arrow::arrow_reader::ParquetRecordBatchReader;
use serde_json::{Value, json};

use crate::config::{Config, user_error};
use crate::dedup::DedupKeys;
use crate::lower::Features;
use crate::pipeline::{Part, Tally, check_output, mib, thousands};
use crate::row::{Provenance, Row};
use crate::sink::{
    self, CardInfo, JoinedRun, Origin, SPLITS, ShardInfo, Sink, SinkOptions, open_shard, u64_column,
};
use crate::synth::CATEGORIES;
use crate::tokens::TokenCounts;

/// Decoded rows held at once across all streams of the merge, at most
/// (each stream holds at least `MIN_BATCH_ROWS`).
const ROWS_IN_MEMORY: usize = 16_384;
const MIN_BATCH_ROWS: usize = 16;
/// Rows per batch when reading only `index` and `dedup_key`.
const KEY_BATCH_ROWS: usize = 65_536;
/// How many rejection examples the merged manifest keeps per reason.
const EXAMPLES_PER_REASON: usize = 3;

/// The columns a `Row` is rebuilt from; the size columns are derived again by the sink.
const ROW_COLUMNS: [&str; 35] = [
    "id",
    "index",
    "split",
    "category",
    "kernel_name",
    "python_source",
    "cpu_forward",
    "cpu_backward",
    "cuda_forward",
    "cuda_backward",
    "cpu_module",
    "cuda_module",
    "dedup_key",
    "key_exact",
    "key_renamed",
    "key_shape",
    "builtins",
    "dtypes",
    "launch_dims",
    "launch_spec",
    "motifs",
    "features",
    "python_source_tokens",
    "cpu_forward_tokens",
    "cpu_backward_tokens",
    "cuda_forward_tokens",
    "cuda_backward_tokens",
    "cpu_module_tokens",
    "cuda_module_tokens",
    "origin",
    "source_repo",
    "source_path",
    "source_line",
    "source_license",
    "source_file_xxh3",
];

/// The outcome of a finished merge.
pub struct MergeReport {
    pub out_dir: PathBuf,
    /// Input folders (parts and whole runs).
    pub parts: u64,
    /// Runs among them.
    pub runs: u64,
    /// Rows in all inputs together.
    pub rows_in: u64,
    /// Rows dropped because a lower index in another part of the same run had the same key.
    pub duplicates_across_parts: u64,
    /// Rows dropped because an earlier run on the command line had the same key.
    pub duplicates_across_runs: u64,
    pub tally: Tally,
    pub shards: Vec<ShardInfo>,
    pub seconds: f64,
    /// The manifest as written to OUT/manifest.json.
    pub manifest: Value,
}

/// One input folder, as its manifest describes it: a part of a run, or a
/// whole run (then `part` is 0/1).
struct PartDir {
    dir: PathBuf,
    part: Part,
    /// A whole run, not a part of one.
    whole: bool,
    config: Config,
    manifest: Value,
    shards: Vec<ShardInfo>,
}

impl PartDir {
    /// The corpus fingerprint of a corpus run.
    fn corpus(&self) -> Option<&str> {
        self.manifest["corpus"]["fingerprint"].as_str()
    }
}

/// One run: all its parts, by part index (a whole run: one).
struct RunIn {
    parts: Vec<PartDir>,
}

impl RunIn {
    fn config(&self) -> &Config {
        &self.parts[0].config
    }

    fn origin(&self) -> &'static str {
        match self.config().source.is_synth() {
            true => "synthetic",
            false => "mined",
        }
    }

    /// "run 1 `name` (seed 5, DIR)" for messages.
    fn describe(&self, ordinal: usize) -> String {
        let p = &self.parts[0];
        let parts = match p.whole {
            true => String::new(),
            false => format!("{} parts, ", p.part.count),
        };
        format!(
            "run {ordinal} `{}` ({parts}seed {}, {})",
            self.config().run.name,
            self.config().run.seed,
            p.dir.display()
        )
    }
}

/// What the merge kept and dropped of one run.
#[derive(Default, Clone)]
struct RunCount {
    rows_in: u64,
    kept: u64,
    across_parts: u64,
    across_runs: u64,
}

/// Merge the inputs `inputs` (parts and whole runs) into `out`. `progress`
/// shows a bar on stderr when it is a terminal.
pub fn merge(inputs: &[PathBuf], out: &Path, progress: bool) -> Result<MergeReport> {
    let start = Instant::now();
    let runs = load_runs(inputs)?;
    let all: Vec<&PartDir> = runs.iter().flat_map(|r| &r.parts).collect();
    check_not_an_input(out, &all)?;
    for p in &all {
        verify_shards(p)?;
    }
    let (mut counts, repeated) = repeated_keys(&runs)?;
    let rows_in: u64 = counts.iter().map(|c| c.rows_in).sum();
    let join = runs.len() > 1;

    let mut config = runs[0].config().clone();
    config.run.output = out.to_path_buf();
    if join {
        config.run.name = joined_name(&runs);
    }
    check_output(out, "--output")?;
    let content_toml = config.content_toml();
    let mut metadata = vec![
        ("pairpipe_version".into(), crate::PAIRPIPE_VERSION.into()),
        ("warp_version".into(), crate::WARP_VERSION.into()),
    ];
    if join {
        // Each run's config, as each of its shards had it.
        let configs: Vec<Value> = runs
            .iter()
            .enumerate()
            .map(|(k, r)| {
                json!({
                    "run": k,
                    "id_prefix": id_prefix(k),
                    "origin": r.origin(),
                    "config": r.config().content_toml(),
                })
            })
            .collect();
        metadata.push(("pairpipe_runs".into(), Value::from(configs).to_string()));
    } else {
        // The same metadata as a single run's shards (the merge is recorded
        // in manifest.json), so that parts covering the same indices as a
        // run merge into byte-identical shards.
        metadata.push(("pairpipe_config".into(), content_toml.clone()));
    }
    metadata.push(("pairpipe_tokenizer".into(), config.tokens.tokenizer.name()));
    let sink = Sink::create(SinkOptions {
        out_dir: out.to_path_buf(),
        max_shard_bytes: config.shards.max_bytes.0,
        row_group_bytes: config.shards.row_group_bytes.0,
        cpu: config.ir.cpu,
        cuda: config.ir.cuda,
        modules: config.ir.modules,
        metadata,
    })?;
    let bar = progress_bar(rows_in, progress);
    let (tally, shards) = write_in_order(&runs, &repeated, sink, &bar, &mut counts)?;
    bar.finish_and_clear();
    let across_parts: u64 = counts.iter().map(|c| c.across_parts).sum();
    let across_runs: u64 = counts.iter().map(|c| c.across_runs).sum();
    let dropped = across_parts + across_runs;
    let distinct_keys = rows_in - repeated.extra;
    if dropped != repeated.extra || tally.written != distinct_keys {
        bail!(
            "merge went wrong: {} rows in, {} repeated keys, but {dropped} rows dropped and {} written",
            rows_in,
            repeated.extra,
            tally.written
        );
    }
    let seconds = start.elapsed().as_secs_f64();

    let manifest = merged_manifest(&runs, &counts, &config, &tally, &shards, seconds)?;
    sink::write_manifest(out, &manifest)?;
    let rows_per_split = SPLITS
        .into_iter()
        .filter_map(|s| tally.rows_per_split.get(s).map(|&n| (s.to_string(), n)))
        .collect();
    let mined = runs.iter().any(|r| r.origin() == "mined");
    sink::write_dataset_card(
        out,
        &CardInfo {
            name: config.run.name.clone(),
            rows_per_split,
            config_toml: content_toml,
            cpu: config.ir.cpu,
            cuda: config.ir.cuda,
            modules: config.ir.modules,
            tokenizer: config.tokens.tokenizer.name(),
            origin: match join {
                false => Origin::Merge {
                    parts: runs[0].parts.len() as u64,
                    duplicates: dropped,
                },
                true => Origin::Join {
                    runs: runs
                        .iter()
                        .zip(&counts)
                        .map(|(r, c)| JoinedRun {
                            name: r.config().run.name.clone(),
                            origin: r.origin().to_string(),
                            seed: r.config().run.seed,
                            parts: r.parts.len() as u64,
                            rows_in: c.rows_in,
                            rows: c.kept,
                            duplicates_across_parts: c.across_parts,
                            duplicates_across_runs: c.across_runs,
                            config_toml: r.config().content_toml(),
                        })
                        .collect(),
                },
            },
            mined: mined.then(|| {
                let mut card = crate::pipeline::mined_card(&tally);
                card.rejected = mined_rejections(&runs).into_iter().collect();
                card
            }),
        },
    )?;
    Ok(MergeReport {
        out_dir: out.to_path_buf(),
        parts: all.len() as u64,
        runs: runs.len() as u64,
        rows_in,
        duplicates_across_parts: across_parts,
        duplicates_across_runs: across_runs,
        tally,
        shards,
        seconds,
        manifest,
    })
}

/// The id prefix of run `k` of a join.
fn id_prefix(k: usize) -> String {
    format!("r{k}-")
}

/// A join's name: its runs' names, each once, in order.
fn joined_name(runs: &[RunIn]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        let n = r.config().run.name.as_str();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names.join(" + ")
}

/// The corpus runs' rejections by reason, summed over their parts.
fn mined_rejections(runs: &[RunIn]) -> BTreeMap<String, u64> {
    let mut rejected = BTreeMap::new();
    for p in runs
        .iter()
        .filter(|r| r.origin() == "mined")
        .flat_map(|r| &r.parts)
    {
        if let Some(m) = p.manifest["counters"]["rejected"].as_object() {
            for (reason, n) in m {
                *rejected.entry(reason.clone()).or_default() += n.as_u64().unwrap_or(0);
            }
        }
    }
    rejected
}

/// The end-of-merge summary for stderr.
pub fn summary(report: &MergeReport) -> String {
    let t = &report.tally;
    let splits = SPLITS
        .iter()
        .map(|s| {
            format!(
                "{s} {}",
                thousands(t.rows_per_split.get(*s).copied().unwrap_or(0))
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let what = match report.runs {
        1 => format!("{} parts", report.parts),
        n => format!("{n} runs ({} folders)", report.parts),
    };
    let mut s = format!(
        "merged {what} into {}: {} rows ({splits}) in {:.2} s\n  \
         {} rows in the inputs, {} duplicates across parts dropped (the lowest index kept)\n",
        report.out_dir.display(),
        thousands(t.written),
        report.seconds,
        thousands(report.rows_in),
        thousands(report.duplicates_across_parts),
    );
    if report.runs > 1 {
        s.push_str(&format!(
            "  {} duplicates across runs dropped (the earliest run on the command line kept)\n",
            thousands(report.duplicates_across_runs)
        ));
        if let Some(runs) = report.manifest["merge"]["runs"].as_array() {
            for r in runs {
                s.push_str(&format!(
                    "    run {} `{}` ({}): {} of its {} rows kept, ids prefixed {}\n",
                    r["run"],
                    r["name"].as_str().unwrap_or(""),
                    r["origin"].as_str().unwrap_or(""),
                    thousands(r["rows"].as_u64().unwrap_or(0)),
                    thousands(r["rows_in"].as_u64().unwrap_or(0)),
                    r["id_prefix"].as_str().unwrap_or(""),
                ));
            }
        }
    }
    s.push_str(&format!(
        "  text {}, on disk {} in {} shards\n",
        mib(t.text_bytes),
        mib(report.shards.iter().map(|s| s.bytes).sum()),
        report.shards.len(),
    ));
    s
}

/// Reads every input's manifest and sorts the inputs into runs: the parts
/// of a run grouped (every part 0..N once, by part index), a whole run on
/// its own; runs in the order they first appear in `dirs`.
fn load_runs(dirs: &[PathBuf]) -> Result<Vec<RunIn>> {
    if dirs.is_empty() {
        return Err(user_error("merge: no runs or parts given"));
    }
    let inputs = dirs
        .iter()
        .map(|d| load_input(d))
        .collect::<Result<Vec<_>>>()?;
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    for (k, p) in inputs.iter().enumerate() {
        let real = p.dir.canonicalize().unwrap_or_else(|_| p.dir.clone());
        if let Some(&j) = seen.get(&real) {
            let what = match p.whole {
                true => format!("the run {}", p.dir.display()),
                false => format!("part {}", p.part),
            };
            return Err(user_error(format!(
                "{what} is given twice: {} and {}",
                inputs[j].dir.display(),
                p.dir.display()
            )));
        }
        seen.insert(real, k);
    }
    let mut runs: Vec<Vec<PartDir>> = Vec::new();
    for p in inputs {
        let same = match p.whole {
            true => None,
            false => runs
                .iter()
                .position(|r| !r[0].whole && compatible(&r[0], &p).is_ok()),
        };
        match same {
            Some(k) => runs[k].push(p),
            None => runs.push(vec![p]),
        }
    }
    for r in &mut runs {
        r.sort_by_key(|p| p.part.index);
    }
    for k in 0..runs.len() {
        check_complete(&runs, k)?;
    }
    let runs: Vec<RunIn> = runs.into_iter().map(|parts| RunIn { parts }).collect();
    for k in 1..runs.len() {
        joinable(&runs, k)?;
    }
    Ok(runs)
}

/// Run `k` has every part 0..N exactly once. When it lacks some and another
/// incomplete run holds a part that might have been meant for it, the error
/// says why that part is not this run's.
fn check_complete(runs: &[Vec<PartDir>], k: usize) -> Result<()> {
    let parts = &runs[k];
    for w in parts.windows(2) {
        if w[0].part.index == w[1].part.index {
            return Err(user_error(format!(
                "part {} is given twice: {} and {}",
                w[0].part,
                w[0].dir.display(),
                w[1].dir.display()
            )));
        }
    }
    let count = parts[0].part.count;
    if parts.len() as u64 == count {
        return Ok(());
    }
    let have: HashSet<u64> = parts.iter().map(|p| p.part.index).collect();
    let missing: Vec<u64> = (0..count).filter(|i| !have.contains(i)).collect();
    let strays: Vec<&PartDir> = runs
        .iter()
        .enumerate()
        .filter(|(j, r)| *j != k && !r[0].whole && r.len() as u64 != r[0].part.count)
        .flat_map(|(_, r)| r)
        .collect();
    let stray = strays
        .iter()
        .find(|p| missing.contains(&p.part.index))
        .or(strays.first());
    if let Some(stray) = stray {
        compatible(&parts[0], stray)?;
    }
    let shown: Vec<String> = missing
        .iter()
        .take(10)
        .map(|i| format!("{i}/{count}"))
        .collect();
    let more = if missing.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    let of_run = match runs.len() {
        1 => String::new(),
        _ => format!(
            " of run `{}` (seed {}, {})",
            parts[0].config.run.name,
            parts[0].config.run.seed,
            parts[0].dir.display()
        ),
    };
    Err(user_error(format!(
        "missing part{} {}{more}{of_run}: got {} of {count} parts",
        if missing.len() > 1 { "s" } else { "" },
        shown.join(", "),
        parts.len()
    )))
}

/// Whether run `k` may be joined with run 0: the same versions (the same
/// lowering), dedup level (comparable keys), IR columns and tokenizer (one
/// table).
fn joinable(runs: &[RunIn], k: usize) -> Result<()> {
    let (a, b) = (&runs[0], &runs[k]);
    let (na, nb) = (a.describe(0), b.describe(k));
    let refuse = |what: String| Err(user_error(format!("cannot join {na} and {nb}: {what}")));
    for key in ["pairpipe_version", "warp_version"] {
        let (va, vb) = (&a.parts[0].manifest[key], &b.parts[0].manifest[key]);
        if va != vb {
            return refuse(format!(
                "made by different versions ({key} {va} and {vb}); the IR would not be comparable"
            ));
        }
    }
    let (ca, cb) = (a.config(), b.config());
    if ca.dedup.level != cb.dedup.level {
        let level = |c: &Config| serde_json::to_value(c.dedup.level).unwrap_or_default();
        return refuse(format!(
            "deduplicated at different levels (dedup.level {} and {}), so their dedup_keys \
             cannot be compared; make one again at the other's level",
            level(ca),
            level(cb)
        ));
    }
    if ca.ir != cb.ir {
        let ir = |c: &Config| {
            format!(
                "cpu = {}, cuda = {}, modules = {}",
                c.ir.cpu, c.ir.cuda, c.ir.modules
            )
        };
        return refuse(format!(
            "different IR columns ([ir] {} and {}); a dataset fills one set of IR columns",
            ir(ca),
            ir(cb)
        ));
    }
    let (ta, tb) = (ca.tokens.tokenizer.name(), cb.tokens.tokenizer.name());
    if ta != tb {
        return refuse(format!(
            "token counts under different tokenizers ({ta} and {tb}); the *_tokens columns \
             would not be comparable"
        ));
    }
    Ok(())
}

fn load_input(dir: &Path) -> Result<PartDir> {
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        user_error(format!(
            "{}: cannot read its manifest ({e}); is it a finished `pairpipe run` folder?",
            path.display()
        ))
    })?;
    let bad = |what: String| user_error(format!("{}: {what}", path.display()));
    let manifest: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let p = &manifest["part"];
    let (part, whole) = if p.is_null() {
        if let Some(n) = manifest["merge"]["runs"]
            .as_array()
            .map(Vec::len)
            .filter(|&n| n > 1)
        {
            return Err(bad(format!(
                "a join of {n} runs (`pairpipe merge`); give the runs it was made from instead"
            )));
        }
        (Part { index: 0, count: 1 }, true)
    } else {
        let (Some(index), Some(count)) = (p["index"].as_u64(), p["count"].as_u64()) else {
            return Err(bad("\"part\" has no index/count".into()));
        };
        if count == 0 || index >= count {
            return Err(bad(format!("invalid part {index}/{count}")));
        }
        (Part { index, count }, false)
    };
    let config: Config = serde_json::from_value(manifest["config"].clone())
        .map_err(|e| bad(format!("config: {e}")))?;
    let shards: Vec<ShardInfo> = serde_json::from_value(manifest["shards"].clone())
        .map_err(|e| bad(format!("shards: {e}")))?;
    for s in &shards {
        if !SPLITS.contains(&s.split.as_str())
            || !s.path.starts_with("data/")
            || s.path.contains("..")
        {
            return Err(bad(format!("shards: unexpected entry {:?}", s.path)));
        }
    }
    Ok(PartDir {
        dir: dir.to_path_buf(),
        part,
        whole,
        config,
        manifest,
        shards,
    })
}

/// Whether parts `a` and `b` are parts of one run: same versions, N, seed,
/// config and corpus.
fn compatible(a: &PartDir, b: &PartDir) -> Result<()> {
    let (da, db) = (a.dir.display(), b.dir.display());
    for key in ["pairpipe_version", "warp_version"] {
        let (va, vb) = (&a.manifest[key], &b.manifest[key]);
        if va != vb {
            return Err(user_error(format!(
                "cannot merge parts made by different versions: {da} has {key} {va}, {db} has {vb}"
            )));
        }
    }
    if a.part.count != b.part.count {
        return Err(user_error(format!(
            "cannot merge parts of different N: {da} is part {}, {db} is part {}",
            a.part, b.part
        )));
    }
    if a.config.run.seed != b.config.run.seed {
        return Err(user_error(format!(
            "cannot merge parts of different seeds: {da} has seed {}, {db} has seed {}",
            a.config.run.seed, b.config.run.seed
        )));
    }
    let content = |c: &Config| {
        let mut c = c.clone();
        c.run.output = PathBuf::new();
        c.run.workers = 0;
        serde_json::to_value(c).unwrap_or_default()
    };
    let (ca, cb) = (content(&a.config), content(&b.config));
    if ca != cb {
        let key = first_difference(&ca, &cb, String::new());
        return Err(user_error(format!(
            "cannot merge parts of different configs: {da} and {db} differ in {key}"
        )));
    }
    if a.corpus() != b.corpus() {
        let f = |p: &PartDir| p.corpus().unwrap_or("none").to_string();
        return Err(user_error(format!(
            "cannot merge parts that read different corpora (the corpus changed between \
             them): {da} has corpus fingerprint {}, {db} has {}",
            f(a),
            f(b)
        )));
    }
    Ok(())
}

/// The dotted path of the first place two JSON values differ.
fn first_difference(a: &Value, b: &Value, path: String) -> String {
    if let (Value::Object(ma), Value::Object(mb)) = (a, b) {
        let keys: std::collections::BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
        for k in keys {
            let (va, vb) = (ma.get(k), mb.get(k));
            if va != vb {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                return match (va, vb) {
                    (Some(va), Some(vb)) => first_difference(va, vb, sub),
                    _ => sub,
                };
            }
        }
    }
    if path.is_empty() {
        "config".into()
    } else {
        path
    }
}

/// Refuse an output folder that is one of the inputs: the sink would delete
/// its shards before they are read.
fn check_not_an_input(out: &Path, inputs: &[&PartDir]) -> Result<()> {
    let Ok(out_real) = out.canonicalize() else {
        return Ok(()); // does not exist yet, so it is no input
    };
    for p in inputs {
        if p.dir.canonicalize().is_ok_and(|d| d == out_real) {
            let what = match p.whole {
                true => "of a run to merge".to_string(),
                false => format!("of part {}", p.part),
            };
            return Err(user_error(format!(
                "--output {} is the folder {what}; merge into another folder",
                out.display(),
            )));
        }
    }
    Ok(())
}

/// Every shard the manifest lists is there, whole: its size and xxh3 match.
fn verify_shards(p: &PartDir) -> Result<()> {
    let whose = match p.whole {
        true => String::new(),
        false => format!("part {}: ", p.part),
    };
    p.shards
        .iter()
        .try_for_each(|s| sink::verify_shard(&p.dir, s, &whose))
}

/// The keys that occur in more than one row, and how many rows are repeats.
struct Repeated {
    keys: HashSet<u64>,
    /// Rows beyond the first of each repeated key: what the merge drops.
    extra: u64,
}

/// Reads `index` and `dedup_key` of every row; checks that each part holds
/// only its own indices, in increasing order per split, and as many rows as
/// its manifest says. Returns each run's row count and the repeated keys.
fn repeated_keys(runs: &[RunIn]) -> Result<(Vec<RunCount>, Repeated)> {
    let total: u64 = runs
        .iter()
        .flat_map(|r| &r.parts)
        .flat_map(|p| &p.shards)
        .map(|s| s.rows)
        .sum();
    let mut keys: Vec<u64> = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let mut counts = vec![RunCount::default(); runs.len()];
    for (run, count) in runs.iter().zip(&mut counts) {
        let before = keys.len();
        for p in &run.parts {
            for split in SPLITS {
                let mut last: Option<u64> = None;
                for s in shards_of(p, split) {
                    let path = p.dir.join(&s.path);
                    let reader = open_shard(&path, &["index", "dedup_key"], KEY_BATCH_ROWS)?;
                    let mut rows = 0u64;
                    for batch in reader {
                        let batch = batch.with_context(|| format!("reading {}", path.display()))?;
                        let index = u64_column(&batch, "index", &path)?;
                        let key = u64_column(&batch, "dedup_key", &path)?;
                        for (&i, &k) in index.values().iter().zip(key.values().iter()) {
                            if !p.part.owns(i) {
                                return Err(user_error(format!(
                                    "{}: row with index {i}, which is not part {}'s",
                                    path.display(),
                                    p.part
                                )));
                            }
                            if last.is_some_and(|l| l >= i) {
                                return Err(user_error(format!(
                                    "{}: index {i} out of order in the {split} split",
                                    path.display()
                                )));
                            }
                            last = Some(i);
                            keys.push(k);
                        }
                        rows += batch.num_rows() as u64;
                    }
                    if rows != s.rows {
                        return Err(user_error(format!(
                            "{}: {rows} rows, its manifest says {}",
                            path.display(),
                            s.rows
                        )));
                    }
                }
            }
        }
        count.rows_in = (keys.len() - before) as u64;
    }
    keys.sort_unstable();
    let mut repeated = Repeated {
        keys: HashSet::new(),
        extra: 0,
    };
    for w in keys.windows(2) {
        if w[0] == w[1] {
            repeated.keys.insert(w[0]);
            repeated.extra += 1;
        }
    }
    Ok((counts, repeated))
}

/// A part's shards of one split, in the order they were written.
fn shards_of<'a>(p: &'a PartDir, split: &'a str) -> impl Iterator<Item = &'a ShardInfo> + 'a {
    let mut shards: Vec<&ShardInfo> = p.shards.iter().filter(|s| s.split == split).collect();
    shards.sort_by(|a, b| a.path.cmp(&b.path));
    shards.into_iter()
}

/// The k-way merge: rows of every (run, part, split) stream in (run, index)
/// order, each repeated key kept at its first occurrence. Counts into
/// `counts` what each run kept and dropped; returns the tally of written
/// rows and the shards.
fn write_in_order(
    runs: &[RunIn],
    repeated: &Repeated,
    mut sink: Sink,
    bar: &ProgressBar,
    counts: &mut [RunCount],
) -> Result<(Tally, Vec<ShardInfo>)> {
    let mut streams: Vec<(usize, Stream)> = Vec::new();
    for (run, r) in runs.iter().enumerate() {
        for p in &r.parts {
            for split in SPLITS {
                let files: VecDeque<PathBuf> =
                    shards_of(p, split).map(|s| p.dir.join(&s.path)).collect();
                if !files.is_empty() {
                    streams.push((run, Stream::new(files)));
                }
            }
        }
    }
    let prefixes: Option<Vec<String>> =
        (runs.len() > 1).then(|| (0..runs.len()).map(id_prefix).collect());
    let batch_rows = (ROWS_IN_MEMORY / streams.len().max(1)).max(MIN_BATCH_ROWS);
    let mut heap = BinaryHeap::with_capacity(streams.len());
    for (k, (run, s)) in streams.iter_mut().enumerate() {
        if let Some(index) = s.peek(batch_rows)? {
            heap.push(Reverse((*run, index, k)));
        }
    }
    let mut tally = Tally::default();
    // Per repeated key, the run whose row was kept.
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(repeated.keys.len());
    let mut done = 0u64;
    while let Some(Reverse((run, index, k))) = heap.pop() {
        let mut row = streams[k].1.take()?;
        debug_assert_eq!(row.index, index);
        let keep = !repeated.keys.contains(&row.dedup_key)
            || match seen.entry(row.dedup_key) {
                Entry::Vacant(e) => {
                    e.insert(run);
                    true
                }
                Entry::Occupied(e) => {
                    match *e.get() == run {
                        true => counts[run].across_parts += 1,
                        false => counts[run].across_runs += 1,
                    }
                    false
                }
            };
        if keep {
            if let Some(p) = &prefixes {
                row.id.insert_str(0, &p[run]);
            }
            counts[run].kept += 1;
            tally.row(&row, 0.0);
            sink.write(row)?;
        }
        if let Some(next) = streams[k].1.peek(batch_rows)? {
            heap.push(Reverse((run, next, k)));
        }
        done += 1;
        if done % 1024 == 0 {
            bar.set_position(done);
        }
    }
    let shards = sink.finish()?;
    tally.disk_bytes = shards.iter().map(|s| s.bytes).sum();
    Ok((tally, shards))
}

/// The rows of one split of one part, read shard after shard, a small batch at a time.
struct Stream {
    files: VecDeque<PathBuf>,
    reader: Option<(PathBuf, ParquetRecordBatchReader)>,
    batch: Option<Batch>,
    pos: usize,
}

impl Stream {
    fn new(files: VecDeque<PathBuf>) -> Stream {
        Stream {
            files,
            reader: None,
            batch: None,
            pos: 0,
        }
    }

    /// The index of the next row, reading on as needed; None at the end.
    fn peek(&mut self, batch_rows: usize) -> Result<Option<u64>> {
        loop {
            if let Some(b) = &self.batch {
                if self.pos < b.len {
                    return Ok(Some(b.index.value(self.pos)));
                }
                self.batch = None;
            }
            if let Some((path, reader)) = &mut self.reader {
                match reader.next() {
                    Some(batch) => {
                        let batch = batch.with_context(|| format!("reading {}", path.display()))?;
                        self.batch = Some(Batch::new(&batch, path)?);
                        self.pos = 0;
                        continue;
                    }
                    None => self.reader = None,
                }
            }
            let Some(path) = self.files.pop_front() else {
                return Ok(None);
            };
            let reader = open_shard(&path, &ROW_COLUMNS, batch_rows)?;
            self.reader = Some((path, reader));
        }
    }

    /// The row `peek` saw, rebuilt; the stream moves past it.
    fn take(&mut self) -> Result<Row> {
        let b = self.batch.as_ref().context("no row to take")?;
        let row = b.row(self.pos)?;
        self.pos += 1;
        Ok(row)
    }
}

/// A record batch's columns, typed.
struct Batch {
    len: usize,
    id: StringArray,
    index: UInt64Array,
    split: StringArray,
    category: StringArray,
    kernel_name: StringArray,
    python_source: StringArray,
    /// cpu_forward, cpu_backward, cuda_forward, cuda_backward, cpu_module, cuda_module.
    ir: [StringArray; 6],
    dedup_key: UInt64Array,
    /// key_exact, key_renamed, key_shape.
    keys: [UInt64Array; 3],
    builtins: ListArray,
    dtypes: ListArray,
    launch_dims: Int32Array,
    launch_spec: StringArray,
    motifs: ListArray,
    features: ListArray,
    /// python_source_tokens, then the IR columns' counts in `ir`'s order.
    tokens: [Int32Array; 7],
    origin: StringArray,
    /// source_repo, source_path, source_license.
    source: [StringArray; 3],
    source_line: Int32Array,
    source_file_xxh3: UInt64Array,
}

impl Batch {
    fn new(batch: &RecordBatch, path: &Path) -> Result<Batch> {
        let col = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| anyhow!("{}: no column {name}", path.display()))
        };
        let string = |name: &str| -> Result<StringArray> {
            col(name)?
                .as_string_opt::<i32>()
                .cloned()
                .ok_or_else(|| anyhow!("{}: column {name} is not a string", path.display()))
        };
        let list = |name: &str| -> Result<ListArray> {
            col(name)?
                .as_list_opt::<i32>()
                .cloned()
                .ok_or_else(|| anyhow!("{}: column {name} is not a list", path.display()))
        };
        Ok(Batch {
            len: batch.num_rows(),
            id: string("id")?,
            index: u64_column(batch, "index", path)?.clone(),
            split: string("split")?,
            category: string("category")?,
            kernel_name: string("kernel_name")?,
            python_source: string("python_source")?,
            ir: [
                string("cpu_forward")?,
                string("cpu_backward")?,
                string("cuda_forward")?,
                string("cuda_backward")?,
                string("cpu_module")?,
                string("cuda_module")?,
            ],
            dedup_key: u64_column(batch, "dedup_key", path)?.clone(),
            keys: [
                u64_column(batch, "key_exact", path)?.clone(),
                u64_column(batch, "key_renamed", path)?.clone(),
                u64_column(batch, "key_shape", path)?.clone(),
            ],
            builtins: list("builtins")?,
            dtypes: list("dtypes")?,
            launch_dims: col("launch_dims")?
                .as_primitive_opt::<Int32Type>()
                .cloned()
                .ok_or_else(|| anyhow!("{}: column launch_dims is not int32", path.display()))?,
            launch_spec: string("launch_spec")?,
            motifs: list("motifs")?,
            features: list("features")?,
            tokens: [
                "python_source_tokens",
                "cpu_forward_tokens",
                "cpu_backward_tokens",
                "cuda_forward_tokens",
                "cuda_backward_tokens",
                "cpu_module_tokens",
                "cuda_module_tokens",
            ]
            .map(|name| {
                col(name).and_then(|c| {
                    c.as_primitive_opt::<Int32Type>()
                        .cloned()
                        .ok_or_else(|| anyhow!("{}: column {name} is not int32", path.display()))
                })
            })
            .into_iter()
            .collect::<Result<Vec<_>>>()?
            .try_into()
            .map_err(|_| anyhow!("seven token columns"))?,
            origin: string("origin")?,
            source: [
                string("source_repo")?,
                string("source_path")?,
                string("source_license")?,
            ],
            source_line: col("source_line")?
                .as_primitive_opt::<Int32Type>()
                .cloned()
                .ok_or_else(|| anyhow!("{}: column source_line is not int32", path.display()))?,
            source_file_xxh3: u64_column(batch, "source_file_xxh3", path)?.clone(),
        })
    }

    fn row(&self, i: usize) -> Result<Row> {
        let text = |a: &StringArray| a.is_valid(i).then(|| a.value(i).to_string());
        let list = |a: &ListArray| -> Vec<String> {
            let values = a.value(i);
            values
                .as_string::<i32>()
                .iter()
                .map(|s| s.unwrap_or_default().to_string())
                .collect()
        };
        let split = self.split.value(i);
        let split = SPLITS
            .into_iter()
            .find(|s| *s == split)
            .ok_or_else(|| anyhow!("row {}: unknown split {split:?}", self.id.value(i)))?;
        let category = self.category.value(i);
        let category = CATEGORIES
            .iter()
            .copied()
            .chain([crate::source::MINED])
            .find(|c| *c == category)
            .ok_or_else(|| anyhow!("row {}: unknown category {category:?}", self.id.value(i)))?;
        let [
            cpu_forward,
            cpu_backward,
            cuda_forward,
            cuda_backward,
            cpu_module,
            cuda_module,
        ] = self.ir.each_ref().map(text);
        Ok(Row {
            index: self.index.value(i),
            id: self.id.value(i).to_string(),
            split,
            category,
            kernel_name: self.kernel_name.value(i).to_string(),
            python_source: self.python_source.value(i).to_string(),
            cpu_forward,
            cpu_backward,
            cuda_forward,
            cuda_backward,
            cpu_module,
            cuda_module,
            dedup_key: self.dedup_key.value(i),
            keys: DedupKeys {
                exact: self.keys[0].value(i),
                renamed: self.keys[1].value(i),
                shape: self.keys[2].value(i),
            },
            builtins: list(&self.builtins),
            dtypes: list(&self.dtypes),
            launch_dims: self.launch_dims.value(i).max(0) as u32,
            launch_spec: text(&self.launch_spec),
            motifs: list(&self.motifs).into_iter().map(Cow::Owned).collect(),
            features: {
                let values = self.features.value(i);
                let mut features = Features::empty();
                for name in values.as_string::<i32>().iter() {
                    let name = name.unwrap_or_default();
                    features.insert(Features::from_name(name).ok_or_else(|| {
                        anyhow!("row {}: unknown feature {name:?}", self.id.value(i))
                    })?);
                }
                features
            },
            ir_from_lowering: false,
            provenance: (self.origin.value(i) == "mined").then(|| {
                let [repo, path, license] = self.source.each_ref().map(text);
                Box::new(Provenance {
                    repo,
                    path: path.unwrap_or_default(),
                    line: self.source_line.value(i).max(0) as u32,
                    license,
                    file_xxh3: self.source_file_xxh3.value(i),
                })
            }),
            tokens: {
                let n = |a: &Int32Array| a.is_valid(i).then(|| a.value(i).max(0) as u32);
                let [python, ir @ ..] = &self.tokens;
                TokenCounts {
                    python: n(python),
                    ir: ir.each_ref().map(n),
                }
            },
        })
    }
}

/// The merged manifest: the config (a join: the first run's, whose shards,
/// IR, dedup and tokenizer settings all runs share), the inputs' counters
/// summed with the merge's own, the merge's record of its runs and inputs,
/// and the shards.
fn merged_manifest(
    runs: &[RunIn],
    counts: &[RunCount],
    config: &Config,
    tally: &Tally,
    shards: &[ShardInfo],
    seconds: f64,
) -> Result<Value> {
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let join = runs.len() > 1;
    let mut generated = 0;
    let mut within = 0;
    let mut part_seconds = 0.0;
    let mut max_part_seconds: f64 = 0.0;
    let mut false_positives = 0.0;
    let mut rejected: BTreeMap<String, u64> = BTreeMap::new();
    let mut examples: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut inputs = Vec::new();
    let mut run_entries = Vec::with_capacity(runs.len());
    for (k, (r, count)) in runs.iter().zip(counts).enumerate() {
        for p in &r.parts {
            let c = &p.manifest["counters"];
            generated += u(&c["generated"]);
            within += u(&c["duplicates"]);
            part_seconds += f(&c["seconds"]);
            max_part_seconds = max_part_seconds.max(f(&c["seconds"]));
            false_positives += f(&c["bloom"]["estimated_false_positives"]);
            if let Some(m) = c["rejected"].as_object() {
                for (reason, n) in m {
                    *rejected.entry(reason.clone()).or_default() += u(n);
                }
            }
            if let Some(m) = c["rejected_examples"].as_object() {
                for (reason, list) in m {
                    let all = examples.entry(reason.clone()).or_default();
                    all.extend(list.as_array().into_iter().flatten().map(|e| {
                        let mut e = e.clone();
                        if join {
                            e["run"] = json!(k);
                        }
                        e
                    }));
                }
            }
            let mut input = json!({
                "part": p.part.to_string(),
                "path": p.dir.display().to_string(),
                "rows": c["written"],
                "generated": c["generated"],
                "duplicates": c["duplicates"],
                "rejected": c["rejected"],
                "text_bytes": c["text_bytes"],
                "disk_bytes": c["disk_bytes"],
                "seconds": c["seconds"],
                "bloom": c["bloom"],
                "indices": p.manifest["part"],
                "shards": p.shards.len(),
            });
            if join {
                input["run"] = json!(k);
            }
            inputs.push(input);
        }
        let first = &r.parts[0];
        let mut entry = json!({
            "run": k,
            "name": r.config().run.name,
            "origin": r.origin(),
            "seed": r.config().run.seed,
            "parts": match first.whole {
                true => Value::Null,
                false => json!(first.part.count),
            },
            "paths": r.parts.iter().map(|p| p.dir.display().to_string()).collect::<Vec<_>>(),
            "id_prefix": if join { id_prefix(k) } else { String::new() },
            "rows_in": count.rows_in,
            "rows": count.kept,
            "duplicates_across_parts": count.across_parts,
            "duplicates_across_runs": count.across_runs,
            "config": r.config().content_toml(),
        });
        if !first.manifest["corpus"].is_null() {
            entry["corpus"] = first.manifest["corpus"].clone();
        }
        run_entries.push(entry);
    }
    // Examples of a join: the earliest run's first, each run's by index.
    for list in examples.values_mut() {
        list.sort_by_key(|e| (u(&e["run"]), u(&e["index"])));
        list.truncate(EXAMPLES_PER_REASON);
    }
    let across_parts: u64 = counts.iter().map(|c| c.across_parts).sum();
    let across_runs: u64 = counts.iter().map(|c| c.across_runs).sum();
    let rows_in: u64 = counts.iter().map(|c| c.rows_in).sum();
    let total_seconds = part_seconds + seconds;
    let mut counters = json!({
        "generated": generated,
        "written": tally.written,
        "duplicates": within + across_parts + across_runs,
        "duplicates_within_parts": within,
        "duplicates_across_parts": across_parts,
        "rejected": rejected,
        "rejected_examples": examples,
        "rows_per_split": tally.rows_per_split,
        "rows_per_category": tally.rows_per_category,
        "text_bytes": tally.text_bytes,
        "disk_bytes": tally.disk_bytes,
        // The inputs' time and the merge's, as if one after another.
        "seconds": total_seconds,
        "rows_per_second": tally.written as f64 / total_seconds.max(1e-9),
        "bloom": { "estimated_false_positives": false_positives },
    });
    if join {
        counters["duplicates_across_runs"] = json!(across_runs);
        let mut origins: BTreeMap<&str, u64> = BTreeMap::new();
        for (r, c) in runs.iter().zip(counts) {
            *origins.entry(r.origin()).or_default() += c.kept;
        }
        counters["rows_per_origin"] = json!(origins);
    }
    if !tally.rows_per_license.is_empty() {
        counters["rows_per_license"] = json!(tally.rows_per_license);
        counters["rows_per_repo"] = json!(tally.rows_per_repo);
    }
    let mut merge = json!({
        "parts": inputs.len(),
        "runs": run_entries,
        "rows_in": rows_in,
        "duplicates_across_parts": across_parts,
        "rows_out": tally.written,
        "seconds": seconds,
        "slowest_part_seconds": max_part_seconds,
        "dedup": "exact on dedup_key across all inputs; rows in (run, index) order, runs in \
                  command-line order; a repeated key is kept at its first row",
        "inputs": inputs,
    });
    if join {
        merge["duplicates_across_runs"] = json!(across_runs);
        merge["ids"] = json!(
            "each run's ids prefixed with r<run>- (its number in `runs`), unique across runs"
        );
    }
    let mut manifest = json!({
        "pairpipe_version": crate::PAIRPIPE_VERSION,
        "warp_version": crate::WARP_VERSION,
        "name": config.run.name,
        "seed": if join { Value::Null } else { json!(config.run.seed) },
        "config": config,
        "config_toml": config.to_toml(),
        "tokenizer": config.tokens.tokenizer.name(),
        "counters": counters,
    });
    if !join && !runs[0].parts[0].manifest["corpus"].is_null() {
        manifest["corpus"] = runs[0].parts[0].manifest["corpus"].clone();
    }
    manifest["merge"] = merge;
    manifest["shards"] = json!(shards);
    Ok(manifest)
}

fn progress_bar(rows: u64, enabled: bool) -> ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} rows merged  {per_sec}  ETA {eta}",
    )
    .expect("valid template")
    .progress_chars("=> ");
    let bar =
        ProgressBar::with_draw_target(Some(rows), ProgressDrawTarget::stderr()).with_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_names_the_key() {
        let a = json!({"run": {"seed": 1, "name": "x"}, "target": {"rows": 10}});
        let b = json!({"run": {"seed": 1, "name": "x"}, "target": {"text_bytes": 10}});
        assert_eq!(first_difference(&a, &b, String::new()), "target.rows");
        let c = json!({"run": {"seed": 1, "name": "y"}, "target": {"rows": 10}});
        assert_eq!(first_difference(&a, &c, String::new()), "run.name");
    }
}
