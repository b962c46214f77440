//! Resuming a run that was killed (SIGKILL, power loss, full disk).
//!
//! The sink closes shards only at cuts (see `sink`), and at a cut every row
//! of the samples consumed so far is in a closed, renamed, fsynced shard. So
//! the run's whole state at a cut is small: how many samples were consumed,
//! the counters, and the sink's [`SinkState`]. That is written to
//! `OUT/checkpoint.json` (atomically) after every cut and once at the start.
//! The Bloom filter is not saved: at a cut it holds exactly the dedup keys
//! of the rows in the closed shards, so it is rebuilt from their `dedup_key`
//! column.
//!
//! Started again with the same config, the run verifies the shards the
//! checkpoint lists (size and xxh3), removes anything written after the cut,
//! and goes on from the next sample: as samples depend only on (seed,
//! index), it writes what the uninterrupted run would have, byte for byte.
//! The checkpoint is removed when the run finishes.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Part, Tally};
use crate::config::user_error;
use crate::dedup::Bloom;
use crate::sink::{self, SinkState, open_shard, u64_column, verify_shard};

pub const FILE: &str = "checkpoint.json";

/// Rows per batch when reading dedup keys back.
const KEY_BATCH_ROWS: usize = 64 * 1024;

/// A run's state at its last cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub pairpipe_version: String,
    /// The config that decides the run's bytes (`Config::content_toml`); a
    /// resume must use the same one.
    pub config: String,
    /// `i/N` when the run is one part of several.
    pub part: Option<String>,
    /// Samples consumed: positions 0..position of the part's index sequence.
    pub position: u64,
    pub tally: Tally,
    pub estimated_false_positives_bits: u64,
    pub since_last_row: u64,
    pub sink: SinkState,
    /// The corpus a corpus run read (None for a synthesized run): a resume
    /// must read the same one, or its rows would not belong with those
    /// already written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<CorpusStamp>,
}

/// What identifies a corpus: its fingerprint (see `source::Corpus`), with
/// its size for the message when it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusStamp {
    pub fingerprint: String,
    pub files: u64,
    pub bytes: u64,
}

impl CorpusStamp {
    pub fn of(corpus: &crate::source::Corpus) -> CorpusStamp {
        CorpusStamp {
            fingerprint: corpus.fingerprint.clone(),
            files: corpus.files,
            bytes: corpus.bytes,
        }
    }
}

impl Checkpoint {
    pub fn new(
        config: &str,
        part: Option<Part>,
        corpus: Option<&CorpusStamp>,
        tally: &Tally,
        sink: SinkState,
    ) -> Checkpoint {
        Checkpoint {
            corpus: corpus.cloned(),
            pairpipe_version: crate::PAIRPIPE_VERSION.to_string(),
            config: config.to_string(),
            part: part.map(|p| p.to_string()),
            position: tally.generated,
            tally: tally.clone(),
            estimated_false_positives_bits: tally.estimated_false_positives.to_bits(),
            since_last_row: tally.since_last_row,
            sink,
        }
    }

    /// The counters as they stood at the cut.
    pub fn tally(&self) -> Tally {
        let mut t = self.tally.clone();
        t.estimated_false_positives = f64::from_bits(self.estimated_false_positives_bits);
        t.since_last_row = self.since_last_row;
        t
    }

    pub fn save(&self, out: &Path) -> Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self).context("serializing the checkpoint")?;
        bytes.push(b'\n');
        sink::atomic_write(&out.join(FILE), &bytes)
    }

    /// The checkpoint in `out`, if an interrupted run left one.
    pub fn load(out: &Path) -> Result<Option<Checkpoint>> {
        let path = out.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(user_error(format!("cannot read {}: {e}", path.display()))),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            user_error(format!(
                "{} is damaged ({e}); run with --fresh to start the run over",
                path.display()
            ))
        })
    }

    /// Refuses to resume a run made by another config, part or version: the
    /// rows it would add would not belong with those already written.
    pub fn check_resumable(&self, out: &Path, config: &str, part: Option<Part>) -> Result<()> {
        let refuse = |what: String| {
            Err(user_error(format!(
                "{} holds an interrupted run {what}; run it again as it was to resume it, \
                 or pass --fresh to discard it and start over",
                out.display()
            )))
        };
        if self.pairpipe_version != crate::PAIRPIPE_VERSION {
            return refuse(format!("of pairpipe {}", self.pairpipe_version));
        }
        let part = part.map(|p| p.to_string());
        if self.part != part {
            let name = |p: &Option<String>| {
                p.as_deref()
                    .map_or("the whole run".into(), |p| format!("part {p}"))
            };
            return refuse(format!("of {}, not {}", name(&self.part), name(&part)));
        }
        if self.config != config {
            return refuse(format!(
                "with another config (first difference: {})",
                first_difference(&self.config, config)
            ));
        }
        Ok(())
    }

    /// Refuses to resume a corpus run when the corpus it reads now is not
    /// the one the interrupted run read: unit `i` would then be another
    /// kernel, and the rows written so far would be mixed with rows of
    /// another corpus (or kernels skipped or written twice).
    pub fn check_corpus(&self, out: &Path, now: Option<&CorpusStamp>) -> Result<()> {
        if self.corpus.as_ref() == now {
            return Ok(());
        }
        let describe = |c: Option<&CorpusStamp>| match c {
            Some(c) => format!(
                "{} files, {} bytes, fingerprint {}",
                c.files, c.bytes, c.fingerprint
            ),
            None => "none recorded".to_string(),
        };
        Err(user_error(format!(
            "{} holds an interrupted run of a corpus that has changed since ({} then, {} now); \
             resuming would mix rows of two corpora. Restore the corpus as it was to resume, \
             or pass --fresh to discard the run and start over",
            out.display(),
            describe(self.corpus.as_ref()),
            describe(now)
        )))
    }

    /// Checks every shard the checkpoint lists against its size and xxh3.
    pub fn verify_shards(&self, out: &Path) -> Result<()> {
        for s in &self.sink.shards {
            verify_shard(out, s, "cannot resume: ")?;
        }
        Ok(())
    }

    /// Inserts the dedup key of every row of the listed shards.
    pub fn rebuild_bloom(&self, out: &Path, bloom: &mut Bloom) -> Result<()> {
        for s in &self.sink.shards {
            let path = out.join(&s.path);
            for batch in open_shard(&path, &["dedup_key"], KEY_BATCH_ROWS)? {
                let batch = batch.with_context(|| format!("reading {}", path.display()))?;
                for &key in u64_column(&batch, "dedup_key", &path)?.values() {
                    bloom.insert(key);
                }
            }
        }
        Ok(())
    }

    pub fn remove(out: &Path) -> Result<()> {
        let path = out.join(FILE);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        }
    }
}

/// The first line where two config texts differ, with its `[table]`.
fn first_difference(old: &str, new: &str) -> String {
    let (mut a, mut b) = (old.lines(), new.lines());
    let mut table = "";
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => {
                if x.starts_with('[') {
                    table = x;
                }
            }
            (x, y) => {
                return format!(
                    "{table} `{}` became `{}`",
                    x.unwrap_or("(nothing)"),
                    y.unwrap_or("(nothing)")
                )
                .trim_start()
                .to_string();
            }
        }
    }
}
