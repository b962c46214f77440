//! The record that flows from the lowering workers to the sink: one dataset row.

use std::borrow::Cow;

use crate::dedup::DedupKeys;
use crate::lower::Features;
use crate::tokens::TokenCounts;

/// One finished pair, ready for the sink. Size columns are derived by the sink.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Sample index in the run's index space (drives `id` and ordering).
    pub index: u64,
    /// Stable id: unique for (seed, index).
    pub id: String,
    /// "train" | "validation" | "test", derived from `dedup_key`.
    pub split: &'static str,
    pub category: &'static str,
    pub kernel_name: String,
    pub python_source: String,
    pub cpu_forward: Option<String>,
    pub cpu_backward: Option<String>,
    pub cuda_forward: Option<String>,
    pub cuda_backward: Option<String>,
    pub cpu_module: Option<String>,
    pub cuda_module: Option<String>,
    pub dedup_key: u64,
    /// The kernel's keys at all three levels (`dedup_key` is one of them),
    /// so a reader can count or drop twins at any level.
    pub keys: DedupKeys,
    pub builtins: Vec<String>,
    pub dtypes: Vec<String>,
    /// How many indices `wp.tid()` yields: 1-D to 4-D launches.
    pub launch_dims: u32,
    /// How the synthesizer means the kernel to be launched (JSON text, the
    /// schema of `launch_spec` in the README); `None` for a mined kernel.
    pub launch_spec: Option<String>,
    /// The synthesizer's motifs the kernel is made of, in order (empty for a
    /// mined kernel). Borrowed from the synthesizer's table, owned when read
    /// back from a file.
    pub motifs: Vec<Cow<'static, str>>,
    /// What the lowering saw the kernel use (the `features` column).
    pub features: Features,
    /// The IR texts are the lowering's output for `python_source` (set by
    /// the workers; rows read back from files or made by hand say `false`).
    /// The lowering writes ASCII templates with `\n` breaks around text it
    /// takes from the source, so the sink may then count an IR text's chars
    /// and lines from its bytes alone whenever the source has no other chars
    /// or breaks (see `sink::columns`).
    pub ir_from_lowering: bool,
    /// Token counts per text column (the workers count them; all None when
    /// the run has no tokenizer).
    pub tokens: TokenCounts,
    /// Where a mined kernel came from; `None` for a synthesized one (whose
    /// `origin` is then "synthetic" and `source_*` columns null).
    pub provenance: Option<Box<Provenance>>,
}

/// Where a mined row's kernel came from (the `source_*` columns).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Provenance {
    /// The repository (a folder corpus: the folder holding `.git` or a
    /// license file above the file, else the corpus folder; Parquet: the
    /// repo column).
    pub repo: Option<String>,
    /// The file's path in its repository.
    pub path: String,
    /// Line of the kernel (its first decorator) in that file.
    pub line: u32,
    /// SPDX id (or the Parquet column's text); `None` when unknown.
    pub license: Option<String>,
    /// xxh3-64 of the file's bytes.
    pub file_xxh3: u64,
}

impl Row {
    /// Uncompressed pair text: python_source plus every IR column the run fills
    /// (the measure the predecessors used for "200 MB").
    pub fn text_bytes(&self) -> u64 {
        let ir = [
            &self.cpu_forward,
            &self.cpu_backward,
            &self.cuda_forward,
            &self.cuda_backward,
            &self.cpu_module,
            &self.cuda_module,
        ];
        self.python_source.len() as u64
            + ir.iter()
                .map(|c| c.as_ref().map_or(0, |s| s.len() as u64))
                .sum::<u64>()
    }
}
