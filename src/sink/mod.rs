//! The end of the pipeline: rows → Arrow record batches → zstd Parquet shards,
//! one open shard per split, plus the run's manifest and dataset card.
//!
//! Shards are written as `OUT/data/.{name}.tmp`, fsynced and renamed when
//! complete, so a reader never sees a partial file. Row groups are cut when the
//! buffered string data of a split reaches `row_group_bytes`.
//!
//! Shards are closed at *cuts*, all splits at once: before a row that would
//! take its split's shard past `max_shard_bytes` (estimated from the
//! compression of the split's previous group), or as soon as a shard reaches
//! that size. After a cut every row pushed so far is in a closed shard and
//! nothing is buffered, so the sink's whole state is a [`SinkState`]: a run
//! killed after a cut resumes from it and writes the very bytes an
//! uninterrupted run would (see `pipeline::checkpoint`).

mod card;
mod columns;
mod pages;
mod read;
mod shard;

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

pub use card::{CardInfo, JoinedRun, MinedCard, Origin, write_dataset_card};
pub use columns::{COLUMNS_JSON, ColumnSpec, arrow_schema, arrow_type, chars, column_specs, lines};
pub use read::{open_shard, u64_column, verify_shard};

use crate::memory::Releaser;
use crate::row::Row;
use columns::Columns;
use shard::{OpenShard, ShardFormat};

/// Split names in the order shards are reported; also the only values `Row::split` may take.
pub const SPLITS: [&str; 3] = ["train", "validation", "test"];

/// Cap on `row_group_bytes`: with a row capped at [`MAX_ROW_BYTES`] this keeps
/// every string column of a batch below Arrow's 2 GiB i32-offset limit.
const MAX_ROW_GROUP_BYTES: u64 = 512 << 20;
/// Pending bytes of a split that are encoded together into its open row
/// group: small enough to keep the sink's memory and each step of its work
/// small, large enough that the per-batch cost (every column's writer is
/// called once a batch) stays negligible.
const ENCODE_BATCH_BYTES: u64 = 256 << 10;
/// Page size of the text the run fills (parquet's default is 1 MiB). Each
/// text column of each split keeps one page's values in a buffer that grows
/// by doubling, and zstd works on a page at a time: 256 KiB pages took ~7 MB
/// off the main job's peak RSS (~69 -> ~62 MB) for 1.7% more bytes on disk
/// (31.66 -> 32.19 MiB); 128 KiB would cost 3.2% (BENCHMARKS.md).
const TEXT_PAGE_BYTES: usize = 256 << 10;
/// Least time between two releases of the writer's free memory. Each release
/// purges the buffers of the row group just written, which the next one
/// faults back in: at 100 ms that was ~12k of the main job's ~26k page faults
/// and 2-4% of its time. Once a second still stops the long-run creep: the
/// 2 GiB run peaks +7.5-7.8% over the main job (+9.4% at 100 ms; N=10,
/// BENCHMARKS.md).
const RELEASE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);
/// Largest row (all its strings together) the sink accepts.
const MAX_ROW_BYTES: u64 = 1 << 30;
/// Guess of footer bytes per column chunk (chunk metadata and statistics;
/// ~85 in the main job's shards) until a closed shard gives the real figure.
const FOOTER_BYTES_PER_CHUNK_GUESS: f64 = 90.0;

#[derive(Debug, Clone)]
pub struct SinkOptions {
    pub out_dir: PathBuf,
    pub max_shard_bytes: u64,
    pub row_group_bytes: u64,
    /// Which IR columns are filled; the others are written all-null, and a row
    /// that fills one of them is refused. `modules` adds the module column of
    /// each enabled target (cpu_module needs cpu, cuda_module needs cuda).
    pub cpu: bool,
    pub cuda: bool,
    pub modules: bool,
    /// Parquet key-value metadata (config, versions), in every shard.
    pub metadata: Vec<(String, String)>,
}

/// A finished shard, as listed in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// Relative to the output directory, e.g. "data/train-00000.parquet".
    pub path: String,
    pub split: String,
    pub rows: u64,
    pub bytes: u64,
    /// xxh3-64 of the file's bytes, 16 lowercase hex digits.
    pub xxh3: String,
}

pub struct Sink {
    shared: Shared,
    splits: [SplitWriter; 3],
    /// Removes a previous run's shards (see [`OldShards`]); joined before
    /// this sink closes a shard of its own, and when it is dropped.
    clearing: Option<OldShards>,
}

/// Everything the sink carries from one cut to the next: the closed shards
/// and, per split, what its next shard's size estimates start from. Floats
/// are kept as their bits so a JSON round trip cannot change a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SinkState {
    pub shards: Vec<ShardInfo>,
    splits: Vec<SplitState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SplitState {
    split: String,
    next_number: u32,
    ratio_bits: Option<u64>,
    footer_per_group_bits: u64,
}

/// What every split writer needs, kept apart from them so both can be borrowed.
struct Shared {
    opts: SinkOptions,
    data_dir: PathBuf,
    columns: &'static Columns,
    format: Arc<ShardFormat>,
    finished: Vec<ShardInfo>,
    finished_bytes: u64,
    /// Hands the writer's freed memory back after row groups (crate::memory).
    releaser: Releaser,
}

/// Predicts a shard's footer: a fixed part (schema, key-value metadata),
/// measured exactly by writing an empty file, plus a part per row group,
/// re-measured at every close of the split's shards.
#[derive(Clone)]
struct FooterModel {
    fixed: f64,
    per_group: f64,
}

impl FooterModel {
    fn new(columns: &Columns, format: &ShardFormat) -> Result<FooterModel> {
        let leaves = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&columns.schema)?
            .num_columns();
        Ok(FooterModel {
            // Without the leading magic, which bytes_written already counts.
            fixed: format.empty_bytes.saturating_sub(4) as f64,
            per_group: leaves as f64 * FOOTER_BYTES_PER_CHUNK_GUESS,
        })
    }

    /// Final size of `shard` if `extra` more data bytes went into one more row group.
    fn projected(&self, shard: &OpenShard, extra: f64) -> f64 {
        let groups = shard.row_groups + usize::from(extra > 0.0);
        shard.bytes_written() as f64 + extra + self.fixed + groups as f64 * self.per_group
    }

    fn observe(&mut self, groups: usize, footer_bytes: u64) {
        if groups > 0 {
            self.per_group = ((footer_bytes as f64 - self.fixed) / groups as f64).max(0.0);
        }
    }
}

impl Sink {
    /// Creates OUT/data (failing clearly if OUT is a file or not writable) and
    /// removes shards a previous run left there, so the directory holds exactly
    /// this run's data once `finish` returns. Other files are left alone.
    pub fn create(opts: SinkOptions) -> Result<Sink> {
        Sink::open(opts, None)
    }

    /// Continues after the last cut of an interrupted run: keeps the shards
    /// `state` lists (which the caller has verified), removes any other shard
    /// or temporary file, and writes on as the run would have.
    pub fn resume(opts: SinkOptions, state: SinkState) -> Result<Sink> {
        Sink::open(opts, Some(state))
    }

    fn open(opts: SinkOptions, state: Option<SinkState>) -> Result<Sink> {
        if opts.max_shard_bytes == 0 {
            bail!("shards.max_bytes must be greater than 0");
        }
        if opts.row_group_bytes == 0 || opts.row_group_bytes > MAX_ROW_GROUP_BYTES {
            bail!(
                "shards.row_group_bytes must be between 1 byte and 512MiB, got {}",
                opts.row_group_bytes
            );
        }
        let columns = columns::columns()?;
        let keep: Vec<&str> = state
            .iter()
            .flat_map(|s| &s.shards)
            .filter_map(|s| s.path.strip_prefix("data/"))
            .collect();
        let (data_dir, old) = prepare_data_dir(&opts.out_dir, &keep)?;
        let clearing = OldShards::remove(old)?;
        let props = writer_properties(columns, &opts)?;
        let format = Arc::new(ShardFormat::new(columns.schema.clone(), &props)?);
        let footer = FooterModel::new(columns, &format)?;
        let mut splits = SPLITS.map(|s| SplitWriter::new(s, footer.clone()));
        let mut finished = Vec::new();
        if let Some(state) = state {
            for (writer, saved) in splits.iter_mut().zip(&state.splits) {
                if saved.split != writer.split {
                    bail!(
                        "saved sink state lists split {:?} where {:?} belongs",
                        saved.split,
                        writer.split
                    );
                }
                writer.next_number = saved.next_number;
                writer.ratio = saved.ratio_bits.map(f64::from_bits);
                writer.footer.per_group = f64::from_bits(saved.footer_per_group_bits);
            }
            finished = state.shards;
        }
        Ok(Sink {
            shared: Shared {
                opts,
                data_dir,
                columns,
                format,
                finished_bytes: finished.iter().map(|s| s.bytes).sum(),
                finished,
                releaser: Releaser::new(RELEASE_INTERVAL),
            },
            splits,
            clearing,
        })
    }

    /// Waits until a previous run's shards are gone: before a shard of this
    /// run takes one of their names.
    fn wait_cleared(&mut self) -> Result<()> {
        self.clearing.take().map_or(Ok(()), OldShards::join)
    }

    /// The state to resume from. Complete only right after a [`Sink::cut`].
    pub fn state(&self) -> SinkState {
        SinkState {
            shards: self.shared.finished.clone(),
            splits: self
                .splits
                .iter()
                .map(|w| SplitState {
                    split: w.split.to_string(),
                    next_number: w.next_number,
                    ratio_bits: w.ratio.map(f64::to_bits),
                    footer_per_group_bits: w.footer.per_group.to_bits(),
                })
                .collect(),
        }
    }

    /// True if `row` would likely take its split's open shard past
    /// `max_shard_bytes`: the caller cuts before pushing it.
    pub fn would_overflow(&self, row: &Row) -> bool {
        let Some(w) = self.splits.iter().find(|w| w.split == row.split) else {
            return false;
        };
        let (Some(open), Some(ratio)) = (w.shard_with_groups(), w.ratio) else {
            return false;
        };
        let extra = (w.buffered + row_bytes(row)) as f64 * ratio;
        w.footer.projected(open, extra) > self.shared.opts.max_shard_bytes as f64
    }

    /// True if some open shard has reached `max_shard_bytes`: time to cut.
    pub fn is_full(&self) -> bool {
        let max = self.shared.opts.max_shard_bytes as f64;
        self.splits.iter().any(|w| {
            w.shard_with_groups()
                .is_some_and(|o| w.footer.projected(o, 0.0) >= max)
        })
    }

    /// Writes every split's buffered rows and closes every open shard.
    pub fn cut(&mut self) -> Result<()> {
        self.cut_splits(false)
    }

    /// [`Sink::cut`], with the splits other than the first finished on a
    /// second thread when `parallel`.
    fn cut_splits(&mut self, parallel: bool) -> Result<()> {
        self.wait_cleared()?;
        let shared = &self.shared;
        let mut busy: Vec<&mut SplitWriter> = self
            .splits
            .iter_mut()
            .filter(|s| s.group_rows > 0 || s.open.is_some())
            .collect();
        let cuts: Vec<Result<Option<ShardInfo>>> = match busy.split_first_mut() {
            None => Vec::new(),
            // One after the other, stopping at the first that fails.
            Some((first, rest)) if !parallel || rest.is_empty() => {
                let mut cuts = Vec::new();
                for split in std::iter::once(first).chain(rest) {
                    let cut = split.cut(shared);
                    let failed = cut.is_err();
                    cuts.push(cut);
                    if failed {
                        break;
                    }
                }
                cuts
            }
            Some((first, rest)) => std::thread::scope(|scope| {
                let job =
                    scope.spawn(|| rest.iter_mut().map(|s| s.cut(shared)).collect::<Vec<_>>());
                let first = first.cut(shared);
                let rest = job.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                std::iter::once(first).chain(rest).collect()
            }),
        };
        if !cuts.is_empty() {
            self.shared.releaser.maybe_release();
        }
        // In split order, as one thread would have closed them.
        for info in cuts {
            if let Some(info) = info? {
                self.shared.finished_bytes += info.bytes;
                self.shared.finished.push(info);
            }
        }
        Ok(())
    }

    /// Pushes `row`, cutting before it or after it when a shard is full
    /// (for callers that need no checkpoint between the two).
    pub fn write(&mut self, row: Row) -> Result<()> {
        if self.would_overflow(&row) {
            self.cut()?;
        }
        self.push(row)?;
        if self.is_full() {
            self.cut()?;
        }
        Ok(())
    }

    /// Buffers the row in its split; writes a row group when the split's
    /// buffer is full. Shards are closed only by [`Sink::cut`].
    pub fn push(&mut self, row: Row) -> Result<()> {
        let Some(i) = SPLITS.iter().position(|s| *s == row.split) else {
            bail!(
                "row {}: unknown split {:?} (expected one of {SPLITS:?})",
                row.id,
                row.split
            );
        };
        let o = &self.shared.opts;
        if let Some(ir) = columns::Ir::ALL
            .into_iter()
            .find(|ir| !ir.enabled(o.cpu, o.cuda, o.modules) && ir.get(&row).is_some())
        {
            bail!(
                "row {}: {} is filled but the run does not write that column (cpu={}, cuda={}, modules={})",
                row.id,
                ir.name(),
                o.cpu,
                o.cuda,
                o.modules
            );
        }
        let bytes = row_bytes(&row);
        if bytes > MAX_ROW_BYTES {
            bail!(
                "row {}: {bytes} bytes of text, more than the 1GiB a row may hold",
                row.id
            );
        }
        let split = &mut self.splits[i];
        split.rows.push(row);
        split.group_rows += 1;
        split.buffered += bytes;
        split.pending += bytes;
        if split.buffered >= self.shared.opts.row_group_bytes {
            split.write_group(&self.shared)?;
            // The group's pages and buffers were just freed: give them back
            // now and then rather than let them pile up over the run
            // (crate::memory).
            self.shared.releaser.maybe_release();
        } else if split.pending >= ENCODE_BATCH_BYTES {
            split.encode_pending(&self.shared)?;
        }
        Ok(())
    }

    /// Bytes written to shard files so far, closed and open (rows still
    /// buffered for a row group are not counted until it is written).
    pub fn disk_bytes(&self) -> u64 {
        self.shared.finished_bytes
            + self
                .splits
                .iter()
                .filter_map(SplitWriter::shard_with_groups)
                .map(|o| o.bytes_written())
                .sum::<u64>()
    }

    /// Writes what is buffered, closes and renames every open shard, and
    /// returns all shards: by split (train, validation, test), then number.
    pub fn finish(mut self) -> Result<Vec<ShardInfo>> {
        // The splits' files are independent: while this thread finishes the
        // first's (train's) last row group (compressing its partly filled
        // pages) and footer, another does the rest, so that at the end of a
        // run, when the workers are done, the other core is not left idle.
        // Train stays here, where the memory its pages need was used before;
        // cuts within a run stay on one thread (the workers keep both cores
        // busy then, and a second thread's pages would raise the peak).
        self.cut_splits(true)?;
        // Make the renames durable; not every platform can sync a directory.
        if let Ok(dir) = File::open(&self.shared.data_dir) {
            let _ = dir.sync_all();
        }
        let mut shards = std::mem::take(&mut self.shared.finished);
        shards.sort_by_key(|s| (SPLITS.iter().position(|x| *x == s.split), s.path.clone()));
        Ok(shards)
    }
}

/// All string bytes of a row: what a row group's size is measured in.
fn row_bytes(row: &Row) -> u64 {
    let lists = row
        .builtins
        .iter()
        .chain(&row.dtypes)
        .map(|s| s.len() as u64)
        .sum::<u64>()
        + row.motifs.iter().map(|s| s.len() as u64).sum::<u64>();
    let spec = row.launch_spec.as_ref().map_or(0, |s| s.len() as u64);
    row.text_bytes()
        + (row.id.len() + row.kernel_name.len() + row.category.len()) as u64
        + lists
        + spec
}

fn writer_properties(columns: &Columns, opts: &SinkOptions) -> Result<WriterProperties> {
    let kv = opts
        .metadata
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    // Only the text the run fills is compressed (below): the other columns
    // are a few bytes a row (or dictionary indices, or random keys), and
    // parquet creates a zstd compressor and decompressor for every
    // compressed column of every row group, which costs more than those
    // columns would save.
    let mut b = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        // Version 2 data pages compress the values straight into the page;
        // version 1 first copies them behind the levels and then grows that
        // copy by a full `realloc`: two extra copies of every byte of text.
        // Plain encoding where there is no dictionary, as with version 1
        // (version 2's default would be delta encodings).
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_encoding(Encoding::PLAIN)
        // Min/max statistics per column chunk, and no page index: a small
        // column's chunk is a single page, so the index would only repeat
        // them, and the writer holds every index of a shard until its footer.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        // Row groups are cut by the sink (by text bytes), never by the writer.
        .set_max_row_group_row_count(None)
        .set_max_row_group_bytes(None)
        .set_key_value_metadata(Some(kv));
    for (name, dictionary) in columns.dictionary_flags() {
        if !dictionary {
            b = b.set_column_dictionary_enabled(ColumnPath::from(name), false);
        }
    }
    // No min/max statistics on text: whole kernels compared help no reader
    // and cost a full comparison of every value.
    for (name, filled) in columns.text_columns(|ir| ir.enabled(opts.cpu, opts.cuda, opts.modules)) {
        b = b.set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::None);
        if filled {
            b = b.set_column_compression(
                ColumnPath::from(name),
                Compression::ZSTD(ZstdLevel::try_new(1)?),
            );
            b = b.set_column_data_page_size_limit(ColumnPath::from(name), TEXT_PAGE_BYTES);
        }
    }
    // The launch spec is JSON text (a few hundred bytes a row, repetitive):
    // compressed like the texts, without statistics.
    if columns.specs.iter().any(|s| s.name == "launch_spec") {
        let path = || ColumnPath::from("launch_spec");
        b = b.set_column_statistics_enabled(path(), EnabledStatistics::None);
        b = b.set_column_compression(path(), Compression::ZSTD(ZstdLevel::try_new(1)?));
    }
    Ok(b.build())
}

impl Drop for Sink {
    fn drop(&mut self) {
        // A failed run still leaves no shard of the previous one behind.
        let _ = self.wait_cleared();
    }
}

/// A previous run's shards, being removed on a thread of their own: the
/// kernel drops their cached pages as it unlinks them (~10 ms for the main
/// job's 32 MB), which delayed the writer's start, and with it the credits
/// the workers wait for, while a core sat idle.
struct OldShards(std::thread::JoinHandle<Result<()>>);

impl OldShards {
    fn remove(paths: Vec<PathBuf>) -> Result<Option<OldShards>> {
        if paths.is_empty() {
            return Ok(None);
        }
        let remove = move || -> Result<()> {
            for path in paths {
                fs::remove_file(&path).with_context(|| {
                    format!("cannot remove {} left by a previous run", path.display())
                })?;
            }
            Ok(())
        };
        let thread = std::thread::Builder::new()
            .name("pairpipe-clear".into())
            .spawn(remove)
            .context("cannot start a thread")?;
        Ok(Some(OldShards(thread)))
    }

    fn join(self) -> Result<()> {
        self.0
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// Creates OUT/data, checks it is writable, and clears a previous run's
/// temporary files; returns it and the previous run's shards but those
/// named in `keep`, for the caller to remove ([`OldShards`]: no shard of
/// this run has their names until the first closes).
fn prepare_data_dir(out_dir: &Path, keep: &[&str]) -> Result<(PathBuf, Vec<PathBuf>)> {
    if out_dir.exists() && !out_dir.is_dir() {
        bail!(
            "output path {} exists and is not a directory",
            out_dir.display()
        );
    }
    let data_dir = out_dir.join("data");
    fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create output directory {}", data_dir.display()))?;
    let probe = data_dir.join(format!(".pairpipe-probe-{}", std::process::id()));
    File::create(&probe)
        .with_context(|| format!("output directory {} is not writable", data_dir.display()))?;
    let _ = fs::remove_file(&probe);
    let entries = fs::read_dir(&data_dir)
        .with_context(|| format!("cannot list output directory {}", data_dir.display()))?;
    let mut old = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list output directory {}", data_dir.display()))?
            .path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let tmp_of_shard = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".tmp"))
            .is_some_and(is_shard_name);
        if tmp_of_shard {
            // Now: this run writes its shards under these names.
            fs::remove_file(&path).with_context(|| {
                format!("cannot remove {} left by a previous run", path.display())
            })?;
        } else if is_shard_name(name) && !keep.contains(&name) {
            old.push(path);
        }
    }
    Ok((data_dir, old))
}

/// `{split}-{NNNNN}.parquet`, the names this sink gives its shards.
fn is_shard_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".parquet") else {
        return false;
    };
    let Some((split, number)) = stem.rsplit_once('-') else {
        return false;
    };
    SPLITS.contains(&split) && number.len() >= 5 && number.bytes().all(|b| b.is_ascii_digit())
}

/// The row group a split is filling, and the split's open shard.
///
/// Rows are encoded into the open row group a batch of about
/// [`ENCODE_BATCH_BYTES`] at a time, so the split holds a few pending rows and
/// the group's compressed pages, not a whole group of rows: the writer's work
/// and memory stay even instead of coming in row-group-sized bursts.
struct SplitWriter {
    split: &'static str,
    /// Rows not yet encoded.
    rows: Vec<Row>,
    /// Their bytes ([`row_bytes`]).
    pending: u64,
    /// Rows and bytes of the row group being filled, encoded or not.
    group_rows: usize,
    buffered: u64,
    /// Number of the next shard file of this split.
    next_number: u32,
    open: Option<OpenShard>,
    /// On-disk bytes per buffered byte of the last row group written.
    ratio: Option<f64>,
    /// Footer estimate, learnt from this split's own shards only, so that a
    /// split's cuts do not depend on when the other splits' shards closed.
    footer: FooterModel,
}

impl SplitWriter {
    fn new(split: &'static str, footer: FooterModel) -> SplitWriter {
        SplitWriter {
            split,
            rows: Vec::new(),
            pending: 0,
            group_rows: 0,
            buffered: 0,
            next_number: 0,
            open: None,
            ratio: None,
            footer,
        }
    }

    /// The open shard, if it holds a complete row group: until then the
    /// shard counts for nothing (no bytes, no footer), as if not yet created.
    fn shard_with_groups(&self) -> Option<&OpenShard> {
        self.open.as_ref().filter(|o| o.row_groups > 0)
    }

    /// Encodes the pending rows into the open row group (opening the split's
    /// next shard if none is open).
    fn encode_pending(&mut self, shared: &Shared) -> Result<()> {
        let open = match &mut self.open {
            Some(open) => open,
            none => {
                let name = format!("{}-{:05}.parquet", self.split, self.next_number);
                self.next_number += 1;
                let tmp = shared.data_dir.join(format!(".{name}.tmp"));
                let file = File::create(&tmp)
                    .with_context(|| format!("cannot create shard {}", tmp.display()))?;
                none.insert(OpenShard::new(
                    shared.format.clone(),
                    file,
                    self.split,
                    name,
                    tmp,
                )?)
            }
        };
        if !self.rows.is_empty() {
            let o = &shared.opts;
            let batch = shared
                .columns
                .take_batch(&mut self.rows, |ir| ir.enabled(o.cpu, o.cuda, o.modules))?;
            open.encode(&batch)?;
            self.rows.clear();
            self.pending = 0;
        }
        Ok(())
    }

    /// Encodes what is pending and completes the row group in the split's shard.
    fn write_group(&mut self, shared: &Shared) -> Result<()> {
        self.encode_pending(shared)?;
        let open = self.open.as_mut().context("no open shard after encoding")?;
        let before = open.bytes_written();
        open.end_group()?;
        self.ratio = Some((open.bytes_written() - before) as f64 / self.buffered.max(1) as f64);
        self.group_rows = 0;
        self.buffered = 0;
        Ok(())
    }

    /// Finishes a shard: footer, fsync, rename to its final name.
    fn close(&mut self, shared: &Shared, shard: OpenShard) -> Result<ShardInfo> {
        let groups = shard.row_groups;
        let before_footer = shard.bytes_written();
        let info = shard.finish(&shared.data_dir)?;
        self.footer.observe(groups, info.bytes - before_footer);
        Ok(info)
    }

    /// Writes the split's last row group and closes its shard, if any.
    fn cut(&mut self, shared: &Shared) -> Result<Option<ShardInfo>> {
        if self.group_rows > 0 {
            self.write_group(shared)?;
        }
        self.open
            .take()
            .map(|open| self.close(shared, open))
            .transpose()
    }
}

/// Replaces `path` atomically: temporary file in the same directory, fsync, rename.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .context("path has no file name")?;
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))?;
    let tmp = dir.join(format!(".{name}.tmp"));
    let result = (|| -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes OUT/manifest.json (pretty JSON), replacing any previous one atomically.
pub fn write_manifest(out_dir: &Path, manifest: &serde_json::Value) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(manifest).context("serializing the manifest")?;
    bytes.push(b'\n');
    atomic_write(&out_dir.join("manifest.json"), &bytes)
}

#[cfg(test)]
mod tests;
