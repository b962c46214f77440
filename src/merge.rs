//! `pairpipe merge`: join the N parts of a run (`pairpipe run --part i/N`)
//! into one dataset folder.
//!
//! 1. Check the parts belong together: every part 0..N exactly once, the same
//!    N, seed, config (output folder and worker count aside) and versions, and
//!    every shard as its part's manifest lists it (size and xxh3).
//! 2. Read `index` and `dedup_key` of every row (only those two columns). The
//!    keys, 8 bytes a row, are sorted to find the keys that occur more than
//!    once; only that (small) set is kept. This is exact: no Bloom filter.
//! 3. Stream the rows of all parts in global index order (a k-way merge over
//!    each part's shards of each split, which the sink wrote in index order)
//!    into the same sink a run uses. A row whose key occurs more than once is
//!    kept only the first time its key is seen, which, in index order, is its
//!    lowest index. Memory: one small record batch per (part, split) stream,
//!    never the dataset.
//! 4. Write the manifest (the parts' counters summed, plus the merge's own)
//!    and the dataset card.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet, VecDeque};
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
    self, CardInfo, Origin, SPLITS, ShardInfo, Sink, SinkOptions, open_shard, u64_column,
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
    pub parts: u64,
    /// Rows in all parts together.
    pub rows_in: u64,
    /// Rows dropped because a lower index in another part had the same key.
    pub duplicates_across_parts: u64,
    pub tally: Tally,
    pub shards: Vec<ShardInfo>,
    pub seconds: f64,
    /// The manifest as written to OUT/manifest.json.
    pub manifest: Value,
}

/// One part's folder, as its manifest describes it.
struct PartDir {
    dir: PathBuf,
    part: Part,
    config: Config,
    manifest: Value,
    shards: Vec<ShardInfo>,
}

/// Merge the part folders `parts` into `out`. `progress` shows a bar on
/// stderr when it is a terminal.
pub fn merge(parts: &[PathBuf], out: &Path, progress: bool) -> Result<MergeReport> {
    let start = Instant::now();
    let parts = load_parts(parts)?;
    check_not_a_part(out, &parts)?;
    for p in &parts {
        verify_shards(p)?;
    }
    let count = parts[0].part.count;
    let (rows_in, repeated) = repeated_keys(&parts)?;

    let mut config = parts[0].config.clone();
    config.run.output = out.to_path_buf();
    check_output(out, "--output")?;
    let content_toml = config.content_toml();
    let sink = Sink::create(SinkOptions {
        out_dir: out.to_path_buf(),
        max_shard_bytes: config.shards.max_bytes.0,
        row_group_bytes: config.shards.row_group_bytes.0,
        cpu: config.ir.cpu,
        cuda: config.ir.cuda,
        modules: config.ir.modules,
        metadata: vec![
            ("pairpipe_version".into(), crate::PAIRPIPE_VERSION.into()),
            ("warp_version".into(), crate::WARP_VERSION.into()),
            // The same metadata as a single run's shards (the merge is recorded
            // in manifest.json), so that parts covering the same indices as a
            // run merge into byte-identical shards.
            ("pairpipe_config".into(), content_toml.clone()),
            ("pairpipe_tokenizer".into(), config.tokens.tokenizer.name()),
        ],
    })?;
    let bar = progress_bar(rows_in, progress);
    let (tally, dropped, shards) = write_in_index_order(&parts, &repeated, sink, &bar)?;
    bar.finish_and_clear();
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

    let manifest = merged_manifest(&parts, &config, &tally, &shards, rows_in, dropped, seconds)?;
    sink::write_manifest(out, &manifest)?;
    let rows_per_split = SPLITS
        .into_iter()
        .filter_map(|s| tally.rows_per_split.get(s).map(|&n| (s.to_string(), n)))
        .collect();
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
            origin: Origin::Merge {
                parts: count,
                duplicates: dropped,
            },
            mined: (!config.source.is_synth()).then(|| {
                let mut card = crate::pipeline::mined_card(&tally);
                if let Some(m) = manifest["counters"]["rejected"].as_object() {
                    card.rejected = m
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                        .collect();
                }
                card
            }),
        },
    )?;
    Ok(MergeReport {
        out_dir: out.to_path_buf(),
        parts: count,
        rows_in,
        duplicates_across_parts: dropped,
        tally,
        shards,
        seconds,
        manifest,
    })
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
    format!(
        "merged {} parts into {}: {} rows ({splits}) in {:.2} s\n  \
         {} rows in the parts, {} duplicates across parts dropped (the lowest index kept)\n  \
         text {}, on disk {} in {} shards\n",
        report.parts,
        report.out_dir.display(),
        thousands(t.written),
        report.seconds,
        thousands(report.rows_in),
        thousands(report.duplicates_across_parts),
        mib(t.text_bytes),
        mib(report.shards.iter().map(|s| s.bytes).sum()),
        report.shards.len(),
    )
}

/// Reads every part's manifest and checks they are the N parts of one run,
/// each once; returns them by part index.
fn load_parts(dirs: &[PathBuf]) -> Result<Vec<PartDir>> {
    if dirs.is_empty() {
        return Err(user_error("merge: no parts given"));
    }
    let mut parts = dirs
        .iter()
        .map(|d| load_part(d))
        .collect::<Result<Vec<_>>>()?;
    let first = &parts[0];
    for p in &parts[1..] {
        compatible(first, p)?;
    }
    parts.sort_by_key(|p| p.part.index);
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
    if parts.len() as u64 != count {
        let have: HashSet<u64> = parts.iter().map(|p| p.part.index).collect();
        let missing: Vec<String> = (0..count)
            .filter(|i| !have.contains(i))
            .take(10)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let more = if count - parts.len() as u64 > missing.len() as u64 {
            ", …"
        } else {
            ""
        };
        return Err(user_error(format!(
            "missing part{} {}{more}: got {} of {count} parts",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            parts.len()
        )));
    }
    Ok(parts)
}

fn load_part(dir: &Path) -> Result<PartDir> {
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        user_error(format!(
            "{}: cannot read the part's manifest ({e}); is it a finished `pairpipe run --part` folder?",
            path.display()
        ))
    })?;
    let bad = |what: String| user_error(format!("{}: {what}", path.display()));
    let manifest: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let p = &manifest["part"];
    if p.is_null() {
        return Err(bad(
            "not a part of a run (no \"part\" in it); parts are made with `pairpipe run CONFIG --part i/N`"
                .into(),
        ));
    }
    let (Some(index), Some(count)) = (p["index"].as_u64(), p["count"].as_u64()) else {
        return Err(bad("\"part\" has no index/count".into()));
    };
    if count == 0 || index >= count {
        return Err(bad(format!("invalid part {index}/{count}")));
    }
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
        part: Part { index, count },
        config,
        manifest,
        shards,
    })
}

/// Whether `b` may be merged with `a`: same versions, N, seed and config.
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

/// Refuse an output folder that is one of the parts: the sink would delete
/// the part's shards before they are read.
fn check_not_a_part(out: &Path, parts: &[PartDir]) -> Result<()> {
    let Ok(out_real) = out.canonicalize() else {
        return Ok(()); // does not exist yet, so it is no part
    };
    for p in parts {
        if p.dir.canonicalize().is_ok_and(|d| d == out_real) {
            return Err(user_error(format!(
                "--output {} is the folder of part {}; merge into another folder",
                out.display(),
                p.part
            )));
        }
    }
    Ok(())
}

/// Every shard the manifest lists is there, whole: its size and xxh3 match.
fn verify_shards(p: &PartDir) -> Result<()> {
    let whose = format!("part {}: ", p.part);
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
/// its manifest says. Returns the number of rows and the repeated keys.
fn repeated_keys(parts: &[PartDir]) -> Result<(u64, Repeated)> {
    let total: u64 = parts.iter().flat_map(|p| &p.shards).map(|s| s.rows).sum();
    let mut keys: Vec<u64> = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for p in parts {
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
    Ok((keys.len() as u64, repeated))
}

/// A part's shards of one split, in the order they were written.
fn shards_of<'a>(p: &'a PartDir, split: &'a str) -> impl Iterator<Item = &'a ShardInfo> + 'a {
    let mut shards: Vec<&ShardInfo> = p.shards.iter().filter(|s| s.split == split).collect();
    shards.sort_by(|a, b| a.path.cmp(&b.path));
    shards.into_iter()
}

/// The k-way merge: rows of every (part, split) stream in global index
/// order, each repeated key kept at its first (lowest) index. Returns the
/// tally of written rows, the rows dropped, and the shards.
fn write_in_index_order(
    parts: &[PartDir],
    repeated: &Repeated,
    mut sink: Sink,
    bar: &ProgressBar,
) -> Result<(Tally, u64, Vec<ShardInfo>)> {
    let mut streams: Vec<Stream> = Vec::new();
    for p in parts {
        for split in SPLITS {
            let files: VecDeque<PathBuf> =
                shards_of(p, split).map(|s| p.dir.join(&s.path)).collect();
            if !files.is_empty() {
                streams.push(Stream::new(files));
            }
        }
    }
    let batch_rows = (ROWS_IN_MEMORY / streams.len().max(1)).max(MIN_BATCH_ROWS);
    let mut heap = BinaryHeap::with_capacity(streams.len());
    for (k, s) in streams.iter_mut().enumerate() {
        if let Some(index) = s.peek(batch_rows)? {
            heap.push(Reverse((index, k)));
        }
    }
    let mut tally = Tally::default();
    let mut seen: HashSet<u64> = HashSet::with_capacity(repeated.keys.len());
    let mut dropped = 0u64;
    let mut done = 0u64;
    while let Some(Reverse((index, k))) = heap.pop() {
        let row = streams[k].take()?;
        debug_assert_eq!(row.index, index);
        if !repeated.keys.contains(&row.dedup_key) || seen.insert(row.dedup_key) {
            tally.row(&row, 0.0);
            sink.write(row)?;
        } else {
            dropped += 1;
        }
        if let Some(next) = streams[k].peek(batch_rows)? {
            heap.push(Reverse((next, k)));
        }
        done += 1;
        if done % 1024 == 0 {
            bar.set_position(done);
        }
    }
    let shards = sink.finish()?;
    tally.disk_bytes = shards.iter().map(|s| s.bytes).sum();
    Ok((tally, dropped, shards))
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

/// The merged manifest: the run's config, the parts' counters summed with the
/// merge's own, the merge's record of its inputs, and the shards.
fn merged_manifest(
    parts: &[PartDir],
    config: &Config,
    tally: &Tally,
    shards: &[ShardInfo],
    rows_in: u64,
    dropped: u64,
    seconds: f64,
) -> Result<Value> {
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut generated = 0;
    let mut within = 0;
    let mut part_seconds = 0.0;
    let mut max_part_seconds: f64 = 0.0;
    let mut false_positives = 0.0;
    let mut rejected: BTreeMap<String, u64> = BTreeMap::new();
    let mut examples: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut inputs = Vec::with_capacity(parts.len());
    for p in parts {
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
                all.extend(list.as_array().into_iter().flatten().cloned());
            }
        }
        inputs.push(json!({
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
        }));
    }
    for list in examples.values_mut() {
        list.sort_by_key(|e| u(&e["index"]));
        list.truncate(EXAMPLES_PER_REASON);
    }
    let total_seconds = part_seconds + seconds;
    let mut counters = json!({
        "generated": generated,
        "written": tally.written,
        "duplicates": within + dropped,
        "duplicates_within_parts": within,
        "duplicates_across_parts": dropped,
        "rejected": rejected,
        "rejected_examples": examples,
        "rows_per_split": tally.rows_per_split,
        "rows_per_category": tally.rows_per_category,
        "text_bytes": tally.text_bytes,
        "disk_bytes": tally.disk_bytes,
        // The parts' time and the merge's, as if one after another.
        "seconds": total_seconds,
        "rows_per_second": tally.written as f64 / total_seconds.max(1e-9),
        "bloom": { "estimated_false_positives": false_positives },
    });
    if !tally.rows_per_license.is_empty() {
        counters["rows_per_license"] = json!(tally.rows_per_license);
        counters["rows_per_repo"] = json!(tally.rows_per_repo);
    }
    Ok(json!({
        "pairpipe_version": crate::PAIRPIPE_VERSION,
        "warp_version": crate::WARP_VERSION,
        "name": config.run.name,
        "seed": config.run.seed,
        "config": config,
        "config_toml": config.to_toml(),
        "tokenizer": config.tokens.tokenizer.name(),
        "counters": counters,
        "merge": {
            "parts": parts.len(),
            "rows_in": rows_in,
            "duplicates_across_parts": dropped,
            "rows_out": tally.written,
            "seconds": seconds,
            "slowest_part_seconds": max_part_seconds,
            "dedup": "exact on dedup_key across all parts; the row with the lowest index is kept",
            "inputs": inputs,
        },
        "shards": shards,
    }))
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
