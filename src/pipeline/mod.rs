//! The stages of a run as threads joined by bounded channels:
//!
//! ```text
//! index source ─► N workers (synthesize, lower, verify, dedup key)
//!              ─► ordered stage (reorder by index, Bloom dedup)
//!              ─► writer (counters, target, Parquet sink)
//! ```
//!
//! Sample `i` depends only on (seed, i), and both the ordered stage and the
//! writer see samples in index order, so the shards are byte-identical for
//! any worker count. The writer alone decides when the target is reached;
//! it then hangs up, and every stage before it stops on its next send.
//! Memory is bounded: at most `IN_FLIGHT` samples exist between the source
//! and the ordered stage (a credit is returned per sample leaving it), and
//! the writer's queue holds at most `WRITER_QUEUE` rows.
//!
//! A run is resumable: see [`checkpoint`].
//!
//! A run may be one part of several (`--part i/N`, see [`Part`]): the source
//! then hands out only the part's indices i, i+N, i+2N, … and the writer
//! stops at the part's share of the target.

mod checkpoint;
mod part;
mod tally;
mod worker;

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use crossbeam_channel::{Receiver, Sender, bounded};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use crate::config::{Config, Target, user_error};
use crate::dedup::{Bloom, Seen};
use crate::row::Row;
use crate::sink::{self, CardInfo, Origin, ShardInfo, Sink, SinkOptions};

pub use checkpoint::{Checkpoint, CorpusStamp};
pub use part::{Part, target_spec};
pub use tally::{RejectExample, Tally, mib, thousands};
pub use worker::{Outcome, Rejection, Scratch, WorkerContext, process, row_id};

/// Samples allowed between the source and the end of the ordered stage, per
/// worker, and rows queued for the writer. A row is ~30 KB of text on the
/// main job, and a long run keeps its queues fuller than a short one, so
/// their size is part of the difference between a 200 MiB and a 2 GiB run's
/// peak memory. But the writer works in bursts (a page of a text column
/// compressed at once is ~2-3 ms): with 32 and 32, a burst filled the
/// writer's queue, the ordered stage then held every sample in flight, and
/// both workers slept with a core idle, ~26 ms of idle core in the main
/// job's second (a `sched_switch` trace). 64 and 128 leave ~0-3 ms idle: the
/// main job ~4% faster in wall time, the 2 GiB run ~7%, for ~1 MB more at
/// 200 MiB and ~3 MB at 2 GiB (BENCHMARKS.md, session 23).
const IN_FLIGHT_PER_WORKER: usize = 64;
/// Rows queued for the writer (sized with `IN_FLIGHT_PER_WORKER`, above).
const WRITER_QUEUE: usize = 128;
/// How much lower the workers' scheduling priority is than the other stages'
/// (Unix niceness). The ordered stage and the writer are serial: when they
/// have work it should run at once, the workers using what CPU is left, or
/// rows pile up in the writer's queue while the workers run ahead and the
/// run ends with work thrown away. On 2 cores this made the main job ~5%
/// faster and its peak RSS ~10 MB lower (BENCHMARKS.md).
const WORKER_NICENESS: i32 = 8;
/// Rows between two progress-bar updates.
const PROGRESS_EVERY: u64 = 64;

/// What the ordered stage hands the writer, one per sample index, in order.
enum Event {
    Row(Box<Row>, f64),
    Duplicate,
    Rejected(u64, Rejection),
}

/// The outcome of a finished run.
pub struct RunReport {
    pub out_dir: PathBuf,
    pub tally: Tally,
    pub shards: Vec<ShardInfo>,
    pub seconds: f64,
    pub bloom: serde_json::Value,
    /// The manifest as written to OUT/manifest.json.
    pub manifest: serde_json::Value,
    /// Which part of the run this was, if it was one.
    pub part: Option<Part>,
    /// Samples an interrupted run had consumed before this one resumed it.
    pub resumed_at: Option<u64>,
}

/// How to run, beyond the config.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Only this part of the run's index space (`--part i/N`).
    pub part: Option<Part>,
    /// Show a progress bar (when stderr is a terminal).
    pub progress: bool,
    /// Discard an interrupted run's checkpoint instead of resuming it.
    pub fresh: bool,
}

/// Run the pipeline described by `config` (already validated, overrides
/// applied). `progress` shows a bar on stderr when stderr is a terminal.
pub fn run(config: &Config, progress: bool) -> anyhow::Result<RunReport> {
    run_with(
        config,
        RunOptions {
            progress,
            ..RunOptions::default()
        },
    )
}

/// Run the pipeline, or only `opts.part` of it: the part's sample indices,
/// up to its share of `config`'s target, into `config.run.output`. The
/// config is the whole run's (its target included), so that every part
/// records the same config and `pairpipe merge` can check they belong
/// together. If the output folder holds the checkpoint of an interrupted
/// run, the run resumes it (unless `opts.fresh`).
pub fn run_with(config: &Config, opts: RunOptions) -> anyhow::Result<RunReport> {
    let RunOptions {
        part,
        progress,
        fresh,
    } = opts;
    let start = Instant::now();
    quiet_worker_panics();
    let whole = Part { index: 0, count: 1 };
    let target = match part {
        Some(p) => p.target(config.target.get())?,
        None => config.target.get(),
    };
    let out_dir = config.run.output.clone();
    check_output(&out_dir, "run.output")?;
    let config_toml = config.to_toml();
    let content_toml = config.content_toml();
    let mut metadata = vec![
        ("pairpipe_version".into(), crate::PAIRPIPE_VERSION.into()),
        ("warp_version".into(), crate::WARP_VERSION.into()),
        ("pairpipe_config".into(), content_toml.clone()),
        ("pairpipe_tokenizer".into(), config.tokens.tokenizer.name()),
    ];
    if let Some(p) = part {
        metadata.push(("pairpipe_part".into(), p.to_string()));
    }
    let sink_options = SinkOptions {
        out_dir: out_dir.clone(),
        max_shard_bytes: config.shards.max_bytes.0,
        row_group_bytes: config.shards.row_group_bytes.0,
        cpu: config.ir.cpu,
        cuda: config.ir.cuda,
        modules: config.ir.modules,
        metadata,
    };
    let resume = match fresh {
        true => None,
        false => Checkpoint::load(&out_dir)?,
    };
    if let Some(cp) = &resume {
        cp.check_resumable(&out_dir, &content_toml, part)?;
    }
    let start_tally = resume
        .as_ref()
        .map_or_else(Tally::default, Checkpoint::tally);
    let resumed_at = resume.as_ref().map(|cp| cp.position);
    // A part sees about 1/N of the run's samples: a filter sized for that
    // keeps the configured false-positive rate in 1/N of the memory.
    let expected_items = match part {
        Some(p) => config.dedup.expected_items.div_ceil(p.count),
        None => config.dedup.expected_items,
    };
    // The sink, its checkpoint and the Bloom filter are set up once the
    // source and the workers have started (below): clearing a previous
    // run's shards and zeroing the filter take tens of milliseconds on one
    // core, which the workers spend on the first samples instead.
    let set_up = |stamp: Option<&CorpusStamp>| -> anyhow::Result<(Sink, Bloom)> {
        let sink = match &resume {
            Some(cp) => {
                cp.verify_shards(&out_dir)?;
                Sink::resume(sink_options, cp.sink.clone())?
            }
            None => {
                // A finished run's manifest would describe shards about to go.
                remove_if_present(&out_dir.join("manifest.json"))?;
                let sink = Sink::create(sink_options)?;
                Checkpoint::new(&content_toml, part, stamp, &Tally::default(), sink.state())
                    .save(&out_dir)?;
                sink
            }
        };
        let mut bloom = Bloom::new(expected_items, config.dedup.false_positive_rate);
        if let Some(cp) = &resume {
            cp.rebuild_bloom(&out_dir, &mut bloom)?;
        }
        Ok((sink, bloom))
    };

    let workers = config.worker_count();
    let mut ctx = WorkerContext::load(config)?;
    // A corpus run reads its corpus first: its units are the index space.
    let corpus = match config.source.is_synth() {
        true => None,
        false => Some(std::sync::Arc::new(crate::source::load(
            &config.source,
            workers,
        )?)),
    };
    let stamp = corpus.as_deref().map(CorpusStamp::of);
    if let Some(cp) = &resume {
        cp.check_corpus(&out_dir, stamp.as_ref())?;
    }
    let limit = corpus.as_ref().map(|c| c.units.len() as u64);
    ctx.corpus = corpus.clone();
    let ctx = ctx;
    // Each worker's buffers, made here, and the token tables they share,
    // faulted in before any other thread starts (`memory::HugePageTable`),
    // on one thread per worker: that is most of the start-up.
    let mut first = Scratch::new(&ctx);
    first.tokens.fault_in_tables(workers);
    let mut scratches: Vec<Scratch> = (1..workers).map(|_| first.share()).collect();
    scratches.push(first);
    let bar = progress_bar(target, progress);
    let in_flight = workers * IN_FLIGHT_PER_WORKER;
    let (index_tx, index_rx) = bounded::<u64>(in_flight);
    let (credit_tx, credit_rx) = bounded::<()>(in_flight);
    let (done_tx, done_rx) = bounded::<(u64, Outcome)>(in_flight);
    let (event_tx, event_rx) = bounded::<Event>(WRITER_QUEUE);
    for _ in 0..in_flight {
        credit_tx.send(()).expect("receiver alive");
    }
    let indices = part.unwrap_or(whole);
    let first = start_tally.generated;
    let start_written = start_tally.written;
    let checkpoint = |tally: &Tally, sink: &Sink| {
        Checkpoint::new(&content_toml, part, stamp.as_ref(), tally, sink.state()).save(&out_dir)
    };

    let mut filter = None;
    let (tally, shards) = std::thread::scope(|s| -> anyhow::Result<_> {
        spawn(s, "pairpipe-source".into(), move || {
            source(indices, first, limit, index_tx, credit_rx)
        })?;
        for (w, mut scratch) in scratches.into_iter().enumerate() {
            let (index_rx, done_tx, ctx) = (index_rx.clone(), done_tx.clone(), &ctx);
            spawn(s, format!("pairpipe-worker-{w}"), move || {
                lower_thread_priority(WORKER_NICENESS);
                for (n, index) in index_rx.into_iter().enumerate() {
                    if (n as u64 + 1) % crate::memory::RELEASE_EVERY_SAMPLES == 0 {
                        crate::memory::release_free_memory();
                    }
                    if done_tx
                        .send((index, process(ctx, index, &mut scratch)))
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        }
        drop((index_rx, done_tx));
        // On an error the channels close as this returns, and the source
        // and workers stop.
        let (sink, bloom) = set_up(stamp.as_ref())?;
        let bloom = filter.insert(bloom);
        let enough = Enough::new(target, &start_tally);
        spawn(s, "pairpipe-ordered".into(), move || {
            ordered(
                indices,
                first,
                done_rx,
                Credits::out(credit_tx, in_flight),
                event_tx,
                bloom,
                enough,
            )
        })?;
        writer(
            event_rx,
            sink,
            start_tally,
            target,
            &bar,
            &checkpoint,
            limit.is_none(),
        )
    })?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let bloom = filter.expect("set up before the writer ran");

    let bloom = json!({
        "bits": bloom.bits(),
        "hashes": bloom.hashes(),
        "expected_items": expected_items,
        "false_positive_rate": config.dedup.false_positive_rate,
        "estimated_false_positives": tally.estimated_false_positives,
    });
    let mut counters = serde_json::to_value(&tally)?;
    counters["seconds"] = json!(seconds);
    // Of this process: a resumed run counts only the rows it wrote itself.
    let written_here = tally.written - start_written;
    counters["rows_per_second"] = json!(written_here as f64 / seconds.max(1e-9));
    counters["bloom"] = bloom.clone();
    let mut manifest = json!({
        "pairpipe_version": crate::PAIRPIPE_VERSION,
        "warp_version": crate::WARP_VERSION,
        "name": config.run.name,
        "seed": config.run.seed,
        "config": config,
        "config_toml": config_toml,
        "tokenizer": config.tokens.tokenizer.name(),
        "counters": counters,
        "shards": shards,
    });
    if let Some(c) = &corpus {
        manifest["corpus"] = c.summary();
    }
    if let Some(p) = part {
        // The indices this part consumed: index + k·count for k < generated.
        manifest["part"] = json!({
            "index": p.index,
            "count": p.count,
            "target": target_spec(target),
            "first_index": p.index,
            "stride": p.count,
            "indices_consumed": tally.generated,
            "next_index": p.sample_index(tally.generated),
        });
    }
    sink::write_manifest(&out_dir, &manifest)?;
    let rows_per_split = ["train", "validation", "test"]
        .into_iter()
        .filter_map(|s| tally.rows_per_split.get(s).map(|&n| (s.to_string(), n)))
        .collect();
    let card = sink::write_dataset_card(
        &out_dir,
        &CardInfo {
            name: config.run.name.clone(),
            rows_per_split,
            config_toml: content_toml,
            cpu: config.ir.cpu,
            cuda: config.ir.cuda,
            modules: config.ir.modules,
            tokenizer: config.tokens.tokenizer.name(),
            origin: match part {
                Some(p) => Origin::Part {
                    index: p.index,
                    count: p.count,
                },
                None => Origin::Run,
            },
            mined: corpus.as_ref().map(|_| mined_card(&tally)),
        },
    );
    card?;
    Checkpoint::remove(&out_dir)?;
    Ok(RunReport {
        out_dir,
        tally,
        shards,
        seconds,
        bloom,
        manifest,
        part,
        resumed_at,
    })
}

/// The card's provenance figures of a corpus run (or a merge of one's parts).
pub(crate) fn mined_card(tally: &Tally) -> crate::sink::MinedCard {
    let pairs = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter().map(|(k, &v)| (k.clone(), v)).collect()
    };
    crate::sink::MinedCard {
        licenses: pairs(&tally.rows_per_license),
        repos: pairs(&tally.rows_per_repo),
        rejected: pairs(&tally.rejected),
    }
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn spawn<'scope, 'env, F>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    name: String,
    f: F,
) -> anyhow::Result<std::thread::ScopedJoinHandle<'scope, ()>>
where
    F: FnOnce() + Send + 'scope,
{
    std::thread::Builder::new()
        .name(name)
        // Room for the deepest kernel to lower in place (no stack segment
        // allocated per sample; see `lower::with_stack`).
        .stack_size(crate::lower::THREAD_STACK)
        .spawn_scoped(s, f)
        .context("cannot start a thread")
}

/// Lowers the calling thread's scheduling priority by `by` niceness steps
/// (Linux, where niceness is per thread; elsewhere nothing). Raising
/// niceness needs no privilege; failing to is harmless, so it is ignored.
fn lower_thread_priority(by: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: plain integer arguments; gettid cannot fail.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        let current = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, (current + by).min(19));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}

/// Hand out the part's sample indices (0, 1, 2, ... for a whole run) from
/// position `first` on, one per credit, until the ordered stage stops
/// returning credits, or (a corpus run) the indices reach `limit`.
fn source(
    part: Part,
    first: u64,
    limit: Option<u64>,
    index_tx: Sender<u64>,
    credit_rx: Receiver<()>,
) {
    for k in first.. {
        let index = part.sample_index(k);
        if limit.is_some_and(|n| index >= n) {
            return;
        }
        if credit_rx.recv().is_err() || index_tx.send(index).is_err() {
            return;
        }
    }
}

/// The ordered stage's view of the target: every row it passes on is
/// written, so once the rows it has passed reach a row or text-byte target
/// the writer will stop there, and samples beyond it would be work thrown
/// away. (A disk-byte target depends on the encoder: only the writer knows.)
struct Enough {
    target: Target,
    rows: u64,
    text_bytes: u64,
    /// This process's own rows and text, for the rates of [`Enough::wanted`].
    rows_here: u64,
    text_here: u64,
}

/// Positions seen before [`Enough::wanted`] trusts its rates.
const WANTED_AFTER: u64 = 64;

impl Enough {
    fn new(target: Target, start: &Tally) -> Enough {
        Enough {
            target,
            rows: start.written,
            text_bytes: start.text_bytes,
            rows_here: 0,
            text_here: 0,
        }
    }

    /// Counts a row passed on; true once the writer will reach the target with it.
    fn passed(&mut self, row: &Row) -> bool {
        self.rows += 1;
        self.rows_here += 1;
        let bytes = row.text_bytes();
        self.text_bytes += bytes;
        self.text_here += bytes;
        match self.target {
            Target::Rows(n) => self.rows >= n,
            Target::TextBytes(n) => self.text_bytes >= n,
            Target::DiskBytes(_) => false,
        }
    }

    /// How many more samples are likely needed to reach the target, after
    /// `positions` samples (rows, duplicates and rejects) have passed: the
    /// rows or text still missing at the rate they came so far, plus a
    /// quarter and a few for a run of small rows. `None` when unknown
    /// (a disk-byte target, or too few samples yet to judge).
    fn wanted(&self, positions: u64) -> Option<u64> {
        let (missing, per_positions) = match self.target {
            Target::Rows(n) => (n.saturating_sub(self.rows), self.rows_here),
            Target::TextBytes(n) => (n.saturating_sub(self.text_bytes), self.text_here),
            Target::DiskBytes(_) => return None,
        };
        if positions < WANTED_AFTER || per_positions == 0 {
            return None;
        }
        let estimate = (missing as u128 * positions as u128).div_ceil(per_positions as u128);
        Some(u64::try_from(estimate + estimate / 4 + 16).unwrap_or(u64::MAX))
    }
}

/// The source's credits, as the ordered stage returns them.
struct Credits {
    tx: Sender<()>,
    in_flight: u64,
    /// Samples handed out and not yet passed on.
    outstanding: u64,
}

impl Credits {
    /// All `in_flight` credits are out (the source was given them at the start).
    fn out(tx: Sender<()>, in_flight: usize) -> Credits {
        Credits {
            tx,
            in_flight: in_flight as u64,
            outstanding: in_flight as u64,
        }
    }

    /// A sample was passed on: return credits until `wanted` samples (all
    /// `in_flight` if unknown, at least one) are under way.
    fn passed(&mut self, wanted: Option<u64>) {
        self.outstanding -= 1;
        let limit = wanted.map_or(self.in_flight, |w| w.clamp(1, self.in_flight));
        while self.outstanding < limit {
            let _ = self.tx.send(());
            self.outstanding += 1;
        }
    }
}

/// Put worker results back in index order, drop duplicates, and pass one
/// event per index to the writer, until the rows passed reach the target.
///
/// A credit goes back to the source for each sample passed, keeping
/// `in_flight` samples under way, except near the target: then only as many
/// as [`Enough::wanted`] expects are still needed, so the workers do not
/// compute samples past the end only to have them thrown away.
fn ordered(
    part: Part,
    first: u64,
    done_rx: Receiver<(u64, Outcome)>,
    mut credits: Credits,
    event_tx: Sender<Event>,
    bloom: &mut Bloom,
    mut enough: Enough,
) {
    // Positions in the part's sequence of indices: position p is sample
    // index part.sample_index(p).
    let mut next = first;
    // Slot k holds the outcome of position next + k, once it has arrived.
    let mut pending: VecDeque<Option<Outcome>> = VecDeque::new();
    for (index, outcome) in done_rx {
        let k = ((index - part.index) / part.count - next) as usize;
        if pending.len() <= k {
            pending.resize_with(k + 1, || None);
        }
        pending[k] = Some(outcome);
        while let Some(Some(_)) = pending.front() {
            let Some(Some(outcome)) = pending.pop_front() else {
                unreachable!()
            };
            let mut last = false;
            let event = match outcome {
                Outcome::Row(row) => match bloom.insert(row.dedup_key) {
                    Seen::Duplicate => Event::Duplicate,
                    Seen::New {
                        false_positive_odds,
                    } => {
                        last = enough.passed(&row);
                        Event::Row(row, false_positive_odds)
                    }
                },
                Outcome::Rejected(r) => Event::Rejected(part.sample_index(next), r),
                // An earlier index made a row with this key, so it has passed
                // here already: the filter holds the key.
                Outcome::Duplicate(key) => {
                    let seen = bloom.insert(key);
                    debug_assert!(matches!(seen, Seen::Duplicate));
                    Event::Duplicate
                }
            };
            // Returning hangs up on the workers and the source, which stop
            // on their next send.
            if event_tx.send(event).is_err() || last {
                return;
            }
            next += 1;
            credits.passed(enough.wanted(next - first));
        }
    }
}

/// Count every event, write the rows, and stop at the target; after every
/// cut of the shards, save a checkpoint. Runs on the calling thread;
/// returning (for any reason) hangs up on the stages before.
fn writer(
    events: Receiver<Event>,
    mut sink: Sink,
    mut tally: Tally,
    target: Target,
    bar: &ProgressBar,
    checkpoint: &dyn Fn(&Tally, &Sink) -> anyhow::Result<()>,
    // A synthesized run stops when it makes no rows for long; a corpus run
    // reads its corpus to the end, whatever it holds.
    may_stall: bool,
) -> anyhow::Result<(Tally, Vec<ShardInfo>)> {
    // A resumed run may already be there (killed between its last cut and
    // writing the manifest).
    if reached(target, &tally, &sink) {
        return finish(sink, tally);
    }
    for event in &events {
        match event {
            Event::Row(row, odds) => {
                // Cut before a row that would overflow its shard, or after
                // one that filled it: either way the checkpoint's counters
                // cover exactly the rows in closed shards.
                if sink.would_overflow(&row) {
                    sink.cut()?;
                    checkpoint(&tally, &sink)?;
                }
                tally.row(&row, odds);
                sink.push(*row)?;
                if sink.is_full() {
                    sink.cut()?;
                    checkpoint(&tally, &sink)?;
                }
                if reached(target, &tally, &sink) {
                    break;
                }
                if tally.written % PROGRESS_EVERY == 0 {
                    show_progress(bar, target, &tally, sink.disk_bytes());
                }
            }
            Event::Duplicate => tally.duplicate(),
            Event::Rejected(index, r) => {
                let example = RejectExample {
                    index,
                    category: r.category.to_string(),
                    message: r.message,
                    python_source: r.python_source,
                };
                tally.rejected(r.reason, example);
            }
        }
        if let Some(why) = tally.stalled().filter(|_| may_stall) {
            anyhow::bail!("run stopped: {why}");
        }
    }
    drop(events);
    finish(sink, tally)
}

fn reached(target: Target, tally: &Tally, sink: &Sink) -> bool {
    match target {
        Target::Rows(n) => tally.written >= n,
        Target::TextBytes(n) => tally.text_bytes >= n,
        Target::DiskBytes(n) => sink.disk_bytes() >= n,
    }
}

fn finish(sink: Sink, mut tally: Tally) -> anyhow::Result<(Tally, Vec<ShardInfo>)> {
    let shards = sink.finish()?;
    tally.disk_bytes = shards.iter().map(|s| s.bytes).sum();
    Ok((tally, shards))
}

fn progress_bar(target: Target, enabled: bool) -> ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (len, template) = match target {
        Target::Rows(n) => (
            n,
            "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} rows  {msg}  {per_sec}  ETA {eta}",
        ),
        Target::TextBytes(n) => (
            n,
            "{elapsed_precise} [{bar:30}] {bytes}/{total_bytes} text  {msg}  {bytes_per_sec}  ETA {eta}",
        ),
        Target::DiskBytes(n) => (
            n,
            "{elapsed_precise} [{bar:30}] {bytes}/{total_bytes} on disk  {msg}  {bytes_per_sec}  ETA {eta}",
        ),
    };
    let style = ProgressStyle::with_template(template)
        .expect("valid template")
        .progress_chars("=> ");
    let bar =
        ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()).with_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn show_progress(bar: &ProgressBar, target: Target, tally: &Tally, disk_bytes: u64) {
    if bar.is_hidden() {
        return;
    }
    let rows = thousands(tally.written);
    match target {
        Target::Rows(_) => {
            bar.set_position(tally.written);
            bar.set_message(mib(tally.text_bytes) + " text");
        }
        Target::TextBytes(_) => {
            bar.set_position(tally.text_bytes);
            bar.set_message(rows + " rows");
        }
        Target::DiskBytes(_) => {
            bar.set_position(disk_bytes);
            bar.set_message(format!("{rows} rows, {} text", mib(tally.text_bytes)));
        }
    }
}

/// Create the output folder and check that it is writable, so that a bad
/// output folder (`what` names the setting) is reported as the user's
/// mistake (exit 2) before any work. (The sink removes shards an earlier run
/// left there.)
pub(crate) fn check_output(out: &Path, what: &str) -> anyhow::Result<()> {
    let unwritable =
        |e: std::io::Error| user_error(format!("{what}: cannot write to {}: {e}", out.display()));
    if out.exists() && !out.is_dir() {
        return Err(user_error(format!(
            "{what}: {} exists and is not a folder",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(unwritable)?;
    let probe = out.join(".pairpipe-write-test");
    std::fs::write(&probe, b"").map_err(unwritable)?;
    std::fs::remove_file(&probe).map_err(unwritable)
}

/// A panic inside a worker is caught and counted as a rejection with its
/// message; printing it too would scribble over the progress bar.
fn quiet_worker_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let worker = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("pairpipe-worker"));
            if !worker {
                default(info);
            }
        }));
    });
}

/// The end-of-run summary for stderr.
pub fn summary(report: &RunReport) -> String {
    let t = &report.tally;
    let splits = ["train", "validation", "test"]
        .iter()
        .map(|s| {
            format!(
                "{s} {}",
                thousands(t.rows_per_split.get(*s).copied().unwrap_or(0))
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let rejected = match t.rejected_total() {
        0 => "0 rejected".to_string(),
        n => format!("{} rejected ({})", thousands(n), t.rejected_summary()),
    };
    let part = report
        .part
        .map(|p| format!(" as part {p}"))
        .unwrap_or_default()
        + &report
            .resumed_at
            .map(|n| format!(" (resumed after {} samples)", thousands(n)))
            .unwrap_or_default();
    format!(
        "wrote {} rows ({splits}) to {}{part} in {:.2} s, {} rows/s\n  \
         {} samples generated: {} duplicates dropped (~{:.1} Bloom false positives), {rejected}\n  \
         text {}, on disk {} in {} shards\n",
        thousands(t.written),
        report.out_dir.display(),
        report.seconds,
        thousands(
            report.manifest["counters"]["rows_per_second"]
                .as_f64()
                .unwrap_or(0.0) as u64
        ),
        thousands(t.generated),
        thousands(t.duplicates),
        t.estimated_false_positives,
        mib(t.text_bytes),
        mib(t.disk_bytes),
        report.shards.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ordered stage stops right after the row that reaches the target
    /// and hangs up, though later samples are waiting: nothing past the
    /// target is passed on (or waited for).
    #[test]
    fn ordered_stage_stops_at_the_target() {
        let text = std::fs::read_to_string("pipelines/smoke.toml").unwrap();
        let config = Config::parse(&text).unwrap();
        let ctx = WorkerContext::new(&config);
        let mut scratch = Scratch::new(&ctx);
        let outcomes: Vec<(u64, Outcome)> = (0..12)
            .map(|i| (i, process(&ctx, i, &mut scratch)))
            .collect();
        let row_bytes: Vec<u64> = outcomes
            .iter()
            .filter_map(|(_, o)| match o {
                Outcome::Row(r) => Some(r.text_bytes()),
                Outcome::Rejected(_) | Outcome::Duplicate(_) => None,
            })
            .collect();
        assert!(row_bytes.len() >= 6, "smoke samples should mostly be rows");
        let whole = Part { index: 0, count: 1 };
        for (target, rows) in [
            (Target::Rows(4), 4),
            (Target::TextBytes(row_bytes[..3].iter().sum::<u64>()), 3),
            (Target::TextBytes(row_bytes[..3].iter().sum::<u64>() + 1), 4),
        ] {
            let (done_tx, done_rx) = bounded(outcomes.len());
            let (credit_tx, credit_rx) = bounded(outcomes.len());
            let (event_tx, event_rx) = bounded(outcomes.len());
            // Out of order, as workers deliver them: 1, 0, 3, 2, ...
            for i in 0..outcomes.len() as u64 {
                let i = i ^ 1;
                done_tx.send((i, process(&ctx, i, &mut scratch))).unwrap();
            }
            drop(done_tx);
            let unread = done_rx.clone();
            let mut bloom = Bloom::new(1000, 0.001);
            let enough = Enough::new(target, &Tally::default());
            ordered(
                whole,
                0,
                done_rx,
                Credits::out(credit_tx, outcomes.len()),
                event_tx,
                &mut bloom,
                enough,
            );
            let passed: Vec<Event> = event_rx.iter().collect();
            let passed_rows = passed
                .iter()
                .filter(|e| matches!(e, Event::Row(..)))
                .count();
            assert_eq!(passed_rows, rows, "{target:?}");
            assert!(matches!(passed.last(), Some(Event::Row(..))));
            // A credit per event but the last: no more samples are wanted,
            // and those that arrived after it (in index order) stay unread.
            assert_eq!(credit_rx.len(), passed.len() - 1);
            assert!(unread.len() >= outcomes.len() - passed.len() - 1);
        }
    }

    #[test]
    fn disk_targets_are_left_to_the_writer() {
        let text = std::fs::read_to_string("pipelines/smoke.toml").unwrap();
        let ctx = WorkerContext::new(&Config::parse(&text).unwrap());
        let row = (0..)
            .find_map(|i| match process(&ctx, i, &mut Scratch::new(&ctx)) {
                Outcome::Row(r) => Some(r),
                Outcome::Rejected(_) | Outcome::Duplicate(_) => None,
            })
            .unwrap();
        let mut enough = Enough::new(Target::DiskBytes(1), &Tally::default());
        assert!(!enough.passed(&row));
        let start = Tally {
            written: 9,
            ..Tally::default()
        };
        let mut enough = Enough::new(Target::Rows(10), &start);
        assert!(enough.passed(&row), "counts on from a resumed run's tally");
    }

    #[test]
    fn samples_wanted_follow_the_rate_so_far() {
        let text = std::fs::read_to_string("pipelines/smoke.toml").unwrap();
        let ctx = WorkerContext::new(&Config::parse(&text).unwrap());
        let row = (0..)
            .find_map(|i| match process(&ctx, i, &mut Scratch::new(&ctx)) {
                Outcome::Row(r) => Some(r),
                Outcome::Rejected(_) | Outcome::Duplicate(_) => None,
            })
            .unwrap();
        let bytes = row.text_bytes();
        // 100 rows passed out of 200 positions (half rejected or duplicates).
        let mut by_text = Enough::new(Target::TextBytes(300 * bytes), &Tally::default());
        let mut by_rows = Enough::new(Target::Rows(300), &Tally::default());
        for _ in 0..100 {
            by_text.passed(&row);
            by_rows.passed(&row);
        }
        // 200 rows missing at 2 positions a row: 400, plus a quarter and 16.
        assert_eq!(by_text.wanted(200), Some(400 + 100 + 16));
        assert_eq!(by_rows.wanted(200), Some(400 + 100 + 16));
        assert_eq!(by_rows.wanted(WANTED_AFTER - 1), None, "too early to judge");
        let disk = Enough::new(Target::DiskBytes(1 << 30), &Tally::default());
        assert_eq!(disk.wanted(1000), None);
        // A resumed run: the missing rows count from the saved tally, the
        // rate from this process's own rows.
        let start = Tally {
            written: 250,
            ..Tally::default()
        };
        let mut resumed = Enough::new(Target::Rows(300), &start);
        for _ in 0..WANTED_AFTER {
            resumed.passed(&row);
        }
        assert_eq!(
            resumed.wanted(WANTED_AFTER),
            Some(16),
            "none missing: only the margin"
        );
    }

    /// Memory bounded by construction, first half: the source hands out a
    /// sample only for a credit, so with `in_flight` credits and none
    /// returned, exactly `in_flight` samples get under way, however fast the
    /// workers would take more.
    #[test]
    fn source_hands_out_one_sample_per_credit() {
        use std::time::Duration;
        let in_flight = 8;
        let (index_tx, index_rx) = bounded::<u64>(1000);
        let (credit_tx, credit_rx) = bounded::<()>(in_flight);
        for _ in 0..in_flight {
            credit_tx.send(()).unwrap();
        }
        let part = Part { index: 1, count: 3 };
        let source = std::thread::spawn(move || source(part, 5, None, index_tx, credit_rx));
        let take = |n: usize| -> Vec<u64> {
            (0..n)
                .map(|_| index_rx.recv_timeout(Duration::from_secs(10)).unwrap())
                .collect()
        };
        // The part's positions 5, 6, ... are samples 1 + 3k.
        assert_eq!(
            take(in_flight),
            (5..13).map(|k| 1 + 3 * k).collect::<Vec<_>>()
        );
        let idle = Duration::from_millis(200);
        assert!(
            index_rx.recv_timeout(idle).is_err(),
            "a sample without a credit"
        );
        credit_tx.send(()).unwrap();
        assert_eq!(take(1), [1 + 3 * 13]);
        assert!(
            index_rx.recv_timeout(idle).is_err(),
            "a sample without a credit"
        );
        // The ordered stage hanging up stops the source.
        drop(credit_tx);
        source.join().unwrap();
        assert!(index_rx.recv().is_err(), "the source is gone");
    }

    /// Second half: the ordered stage returns at most one credit per sample
    /// it passes on and never more than `in_flight` are out, whatever the
    /// target's estimate asks for.
    #[test]
    fn credits_out_never_exceed_in_flight() {
        let in_flight = 8;
        let (tx, rx) = bounded::<()>(100);
        let mut credits = Credits::out(tx, in_flight);
        for wanted in [None, Some(1_000_000), Some(u64::MAX), None] {
            credits.passed(wanted);
            assert_eq!(rx.try_iter().count(), 1, "one back for the one passed");
            assert_eq!(credits.outstanding, in_flight as u64);
        }
        // Near the target fewer are wanted: none returned until the samples
        // under way fall below it, and at least one is always under way.
        credits.passed(Some(3));
        assert_eq!((rx.try_iter().count(), credits.outstanding), (0, 7));
        for _ in 0..6 {
            credits.passed(Some(0));
        }
        assert_eq!((rx.try_iter().count(), credits.outstanding), (0, 1));
        credits.passed(Some(0));
        assert_eq!((rx.try_iter().count(), credits.outstanding), (1, 1));
    }

    #[test]
    fn ordered_stage_withholds_credits_near_the_target() {
        let text = std::fs::read_to_string("pipelines/smoke.toml").unwrap();
        let ctx = WorkerContext::new(&Config::parse(&text).unwrap());
        let mut scratch = Scratch::new(&ctx);
        let n = 200u64;
        let outcomes: Vec<(u64, Outcome)> = (0..n)
            .map(|i| (i, process(&ctx, i, &mut scratch)))
            .collect();
        let rows = |o: &[(u64, Outcome)]| {
            o.iter()
                .filter(|(_, o)| matches!(o, Outcome::Row(_)))
                .count()
        };
        let target = rows(&outcomes[..150]) as u64;
        let (done_tx, done_rx) = bounded(outcomes.len());
        let (credit_tx, credit_rx) = bounded(outcomes.len());
        let (event_tx, event_rx) = bounded(outcomes.len());
        for o in outcomes {
            done_tx.send(o).unwrap();
        }
        drop(done_tx);
        let mut bloom = Bloom::new(1000, 0.001);
        let enough = Enough::new(Target::Rows(target), &Tally::default());
        ordered(
            Part { index: 0, count: 1 },
            0,
            done_rx,
            Credits::out(credit_tx, n as usize),
            event_tx,
            &mut bloom,
            enough,
        );
        let passed: Vec<Event> = event_rx.iter().collect();
        assert_eq!(
            passed
                .iter()
                .filter(|e| matches!(e, Event::Row(..)))
                .count() as u64,
            target
        );
        // Up to WANTED_AFTER a credit per sample, keeping all n under way;
        // then the ~100 samples still out are more than the ~90 wanted.
        assert_eq!(credit_rx.len() as u64, WANTED_AFTER - 1);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn worker_priority_is_lowered_for_that_thread_only() {
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let before = nice();
        let (inside, after) = std::thread::spawn(move || {
            let start = nice();
            lower_thread_priority(3);
            (start, nice())
        })
        .join()
        .unwrap();
        assert_eq!(after, (inside + 3).min(19));
        assert_eq!(nice(), before, "the calling thread keeps its priority");
    }

    #[test]
    fn row_ids_are_stable_and_unique() {
        assert_eq!(row_id(0x2a, 7), "000000000000002a-000000000007");
        assert_ne!(row_id(1, 10), row_id(11, 0));
    }
}
