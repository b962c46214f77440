//! The pipeline TOML: what to generate, how much, and where to.
//!
//! Every table rejects unknown keys, so a typo fails loudly instead of being
//! ignored. Errors are one line naming the file and the key, because the CLI
//! prints them as they are.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::synth::{CATEGORIES, DTYPES, Knobs};

/// A mistake of the user (bad config, bad file, unwritable output): the CLI
/// prints it as one line and exits with status 2 instead of 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

/// Shorthand for returning a [`UserError`] as an `anyhow::Error`.
pub fn user_error(msg: impl Into<String>) -> anyhow::Error {
    UserError(msg.into()).into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub run: Run,
    /// Where kernels come from: the synthesizer (absent: the default) or a corpus.
    #[serde(default, skip_serializing_if = "SourceSpec::is_synth")]
    pub source: SourceSpec,
    /// Required for a synthesized run; optional for a corpus run (which
    /// ends when its corpus is exhausted, the target then only caps it).
    #[serde(default, skip_serializing_if = "TargetSpec::is_unset")]
    pub target: TargetSpec,
    #[serde(default)]
    pub ir: Ir,
    /// Synthesized runs only.
    #[serde(default, skip_serializing_if = "Synth::is_unset")]
    pub synth: Synth,
    #[serde(default)]
    pub dedup: Dedup,
    #[serde(default)]
    pub splits: Splits,
    #[serde(default)]
    pub shards: Shards,
    #[serde(default)]
    pub lower: Lower,
    /// Absent: o200k_base counts (see [`Tokens`]).
    #[serde(default)]
    pub tokens: Tokens,
    #[serde(default, skip_serializing_if = "Filter::is_empty")]
    pub filter: Filter,
}

/// `[source]`: where a run's kernels come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// "synth" (the default), "files" or "parquet".
    #[serde(default)]
    pub kind: SourceKind,
    /// Globs (relative to the current directory): Python files, or folders
    /// (every `*.py` under them), for "files"; Parquet files for "parquet".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Parquet: the column holding a file's text.
    #[serde(default = "default_content_column")]
    pub content_column: String,
    /// Parquet: optional columns with the repository, the path in it, the license.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_column: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_column: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_column: Option<String>,
    /// Files (or records) larger than this are counted (`file_too_large`), not read.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: Size,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    #[default]
    Synth,
    Files,
    Parquet,
}

fn default_content_column() -> String {
    "content".into()
}

fn default_max_file_bytes() -> Size {
    Size(1 << 20)
}

impl Default for SourceSpec {
    fn default() -> SourceSpec {
        SourceSpec {
            kind: SourceKind::Synth,
            paths: Vec::new(),
            content_column: default_content_column(),
            repo_column: None,
            path_column: None,
            license_column: None,
            max_file_bytes: default_max_file_bytes(),
        }
    }
}

impl SourceSpec {
    pub fn is_synth(&self) -> bool {
        self.kind == SourceKind::Synth
    }

    /// A folder corpus of `dir` (`pairpipe run CONFIG --source DIR`).
    pub fn folder(dir: &str) -> SourceSpec {
        SourceSpec {
            kind: SourceKind::Files,
            paths: vec![dir.to_string()],
            ..SourceSpec::default()
        }
    }
}

/// `[lower]`: bounds on what lowering one kernel may produce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lower {
    /// Bytes of code one kernel (or `@wp.func`) may generate; a kernel past
    /// it is rejected (reason `too_large`) before it takes more memory.
    #[serde(default = "default_max_generated")]
    pub max_generated_bytes: Size,
}

fn default_max_generated() -> Size {
    Size(crate::lower::DEFAULT_MAX_GENERATED_BYTES)
}

impl Default for Lower {
    fn default() -> Lower {
        Lower {
            max_generated_bytes: default_max_generated(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Dataset name, used in the dataset card.
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    /// Output folder, relative to the current directory.
    pub output: PathBuf,
    /// Worker threads for synthesize/lower/verify; 0 = one per core.
    #[serde(default)]
    pub workers: usize,
}

/// `[target]` as written: exactly one key may be set (checked by `validate`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_bytes: Option<Size>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_bytes: Option<Size>,
}

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// This many rows written.
    Rows(u64),
    /// Uncompressed pair text (`Row::text_bytes`) summed over written rows.
    TextBytes(u64),
    /// Bytes of Parquet on disk.
    DiskBytes(u64),
}

impl TargetSpec {
    /// The one target set; `validate` guarantees there is exactly one.
    pub fn get(&self) -> Target {
        match (self.rows, self.text_bytes, self.disk_bytes) {
            (Some(n), _, _) => Target::Rows(n),
            (_, Some(b), _) => Target::TextBytes(b.0),
            (_, _, Some(b)) => Target::DiskBytes(b.0),
            // Unset (a corpus run): until the corpus is exhausted.
            _ => Target::Rows(u64::MAX),
        }
    }

    pub fn is_unset(&self) -> bool {
        *self == TargetSpec::default()
    }

    pub fn rows(n: u64) -> TargetSpec {
        TargetSpec {
            rows: Some(n),
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ir {
    #[serde(default = "yes")]
    pub cpu: bool,
    #[serde(default = "yes")]
    pub cuda: bool,
    #[serde(default)]
    pub modules: bool,
}

fn yes() -> bool {
    true
}

impl Default for Ir {
    fn default() -> Ir {
        Ir {
            cpu: true,
            cuda: true,
            modules: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Synth {
    pub categories: BTreeMap<String, f64>,
    /// Kernel body lines (the `wp.tid()` line to the end), `[min, max]`.
    #[serde(default = "default_statements")]
    pub statements: [usize; 2],
    /// Kernel parameters, `[min, max]`.
    #[serde(default = "default_params")]
    pub params: [usize; 2],
    /// Deepest operator nesting of one expression.
    #[serde(default = "default_expr_depth")]
    pub expr_depth: u32,
    /// Deepest nesting of `for` / `while` loops (0: none).
    #[serde(default = "default_loop_depth")]
    pub loop_depth: usize,
    /// Data types arrays and values may use (`synth::DTYPES`).
    #[serde(default = "default_dtypes")]
    pub dtypes: Vec<String>,
}

fn default_statements() -> [usize; 2] {
    let k = Knobs::default();
    [k.statements.0, k.statements.1]
}

fn default_params() -> [usize; 2] {
    let k = Knobs::default();
    [k.params.0, k.params.1]
}

fn default_expr_depth() -> u32 {
    Knobs::default().expr_depth
}

fn default_loop_depth() -> usize {
    Knobs::default().loop_depth
}

fn default_dtypes() -> Vec<String> {
    DTYPES.iter().map(|d| d.to_string()).collect()
}

impl Default for Synth {
    fn default() -> Synth {
        Synth {
            categories: BTreeMap::new(),
            statements: default_statements(),
            params: default_params(),
            expr_depth: default_expr_depth(),
            loop_depth: default_loop_depth(),
            dtypes: default_dtypes(),
        }
    }
}

impl Synth {
    /// No `[synth]` table (a corpus run).
    pub fn is_unset(&self) -> bool {
        *self == Synth::default()
    }
}

/// Largest accepted `synth.statements` bound.
const MAX_STATEMENTS: usize = 400;
/// Largest accepted `synth.params` bound.
const MAX_PARAMS: usize = 32;
/// Largest accepted `synth.expr_depth`.
const MAX_EXPR_DEPTH: u32 = 12;
/// Largest accepted `synth.loop_depth` (what the generators nest).
const MAX_LOOP_DEPTH: usize = 3;

impl Synth {
    /// The size and shape knobs (valid after `Config::validate`).
    pub fn knobs(&self) -> Knobs {
        Knobs {
            statements: (self.statements[0], self.statements[1]),
            params: (self.params[0], self.params[1]),
            expr_depth: self.expr_depth,
            loop_depth: self.loop_depth,
            dtypes: Knobs::dtype_mask(&self.dtypes).unwrap_or(u8::MAX),
        }
    }

    /// The knobs' errors, one line each, as `validate` reports them.
    fn validate_knobs(&self) -> Result<(), String> {
        for (key, [lo, hi], min, max) in [
            ("statements", self.statements, 2, MAX_STATEMENTS),
            ("params", self.params, 1, MAX_PARAMS),
        ] {
            if lo < min || hi > max || lo > hi {
                return Err(format!(
                    "synth.{key}: want [min, max] with {min} <= min <= max <= {max}, got [{lo}, {hi}]"
                ));
            }
        }
        if !(1..=MAX_EXPR_DEPTH).contains(&self.expr_depth) {
            return Err(format!(
                "synth.expr_depth: must be 1 to {MAX_EXPR_DEPTH}, got {}",
                self.expr_depth
            ));
        }
        if self.loop_depth > MAX_LOOP_DEPTH {
            return Err(format!(
                "synth.loop_depth: must be 0 to {MAX_LOOP_DEPTH}, got {}",
                self.loop_depth
            ));
        }
        let mask = Knobs::dtype_mask(&self.dtypes).map_err(|d| {
            format!(
                "synth.dtypes: unknown dtype \"{d}\" (known: {})",
                DTYPES.join(", ")
            )
        })?;
        if !self.dtypes.iter().any(|d| d == "float32") {
            return Err(
                "synth.dtypes: must include \"float32\" (every category computes in it)".into(),
            );
        }
        let on = |c: &str| self.categories.contains_key(c);
        let k = Knobs {
            dtypes: mask,
            ..Knobs::default()
        };
        if on("vector") && k.vec_sizes().is_empty() {
            return Err("synth.dtypes: category vector needs one of vec2, vec3, vec4".into());
        }
        let mats = ["mat22", "mat33", "mat44"];
        if on("matrix") && !self.dtypes.iter().any(|d| mats.contains(&d.as_str())) {
            return Err("synth.dtypes: category matrix needs one of mat22, mat33, mat44".into());
        }
        if on("nested") && self.loop_depth < 2 {
            return Err(format!(
                "synth.loop_depth: category nested writes loops two deep, got {}",
                self.loop_depth
            ));
        }
        Ok(())
    }

    /// The weights in `synth::CATEGORIES` order, so the draw does not depend
    /// on how the TOML lists them.
    pub fn weights(&self) -> Vec<(&'static str, f64)> {
        CATEGORIES
            .iter()
            .filter_map(|&c| self.categories.get(c).map(|&w| (c, w)))
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DedupLevel {
    /// The python source byte for byte.
    Exact,
    /// Tokens with user identifiers renamed in order of appearance.
    Renamed,
    /// Renamed, and number literals reduced to their kind.
    Shape,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dedup {
    #[serde(default = "default_level")]
    pub level: DedupLevel,
    #[serde(default = "default_expected")]
    pub expected_items: u64,
    #[serde(default = "default_fpr")]
    pub false_positive_rate: f64,
}

fn default_level() -> DedupLevel {
    DedupLevel::Renamed
}
fn default_expected() -> u64 {
    1_000_000
}
fn default_fpr() -> f64 {
    0.001
}

impl Default for Dedup {
    fn default() -> Dedup {
        Dedup {
            level: default_level(),
            expected_items: default_expected(),
            false_positive_rate: default_fpr(),
        }
    }
}

/// Fractions of rows for validation and test; the rest is train.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Splits {
    #[serde(default = "default_split")]
    pub validation: f64,
    #[serde(default = "default_split")]
    pub test: f64,
}

fn default_split() -> f64 {
    0.05
}

impl Default for Splits {
    fn default() -> Splits {
        Splits {
            validation: default_split(),
            test: default_split(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shards {
    /// On-disk cap per shard file.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: Size,
    /// Uncompressed bytes per Parquet row group.
    #[serde(default = "default_row_group")]
    pub row_group_bytes: Size,
}

fn default_max_bytes() -> Size {
    Size(128 << 20)
}
/// 8 MiB of text is ~1.3 MB of zstd pages on the main job: still small
/// enough to stream, and against 4 MiB half the row groups, so half the
/// footer metadata the writer holds per open shard and fewer per-group costs
/// (the main job ~5% faster, BENCHMARKS.md).
fn default_row_group() -> Size {
    Size(8 << 20)
}

impl Default for Shards {
    fn default() -> Shards {
        Shards {
            max_bytes: default_max_bytes(),
            row_group_bytes: default_row_group(),
        }
    }
}

/// `[tokens]`: the tokenizer of the `*_tokens` columns. An absent table (or
/// key) means `o200k_base`: every run counts tokens unless told `"none"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// "o200k_base" | "cl100k_base" | "path/to/tokenizer.json" | "none".
    #[serde(default)]
    pub tokenizer: crate::tokens::TokenizerSpec,
}

/// `[filter]`: rows dropped before dedup, counted by reason in the manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// Drop rows whose pair (python_source plus the IR columns the run
    /// fills) takes more tokens than this (reason `too_many_pair_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pair_tokens: Option<u64>,
    /// Per text column (`python_source`, `cuda_backward`, ...): drop rows
    /// where that column takes more tokens (reason `too_many_column_tokens`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max_column_tokens: BTreeMap<String, u64>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.max_pair_tokens.is_none() && self.max_column_tokens.is_empty()
    }
}

/// The text columns a token count (and `filter.max_column_tokens`) can name.
pub const TOKEN_TEXT_COLUMNS: [&str; 7] = [
    "python_source",
    "cpu_forward",
    "cpu_backward",
    "cuda_forward",
    "cuda_backward",
    "cpu_module",
    "cuda_module",
];

/// A byte count, written as an integer or a string like "200MiB" or "1.5GB".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Size(pub u64);

impl Size {
    /// Parse "200MiB", "1.5GiB", "64kB", "10MB", "512B" or "4096".
    pub fn parse(text: &str) -> Result<Size, String> {
        let bad = || {
            format!(
                "invalid size \"{text}\" (expected bytes or a number with B, kB, MB, GB, KiB, MiB, GiB)"
            )
        };
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = (&t[..split], t[split..].trim());
        let mult: u64 = match unit {
            "" | "B" => 1,
            "kB" | "KB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            _ => return Err(bad()),
        };
        if num.is_empty() {
            return Err(bad());
        }
        if let Ok(n) = num.parse::<u64>() {
            return n.checked_mul(mult).map(Size).ok_or_else(bad);
        }
        let x: f64 = num.parse().map_err(|_| bad())?;
        let bytes = (x * mult as f64).round();
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(bad());
        }
        Ok(Size(bytes as u64))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1 << 30 && b % (1 << 30) == 0 {
            write!(f, "{}GiB", b >> 30)
        } else if b >= 1 << 20 && b % (1 << 20) == 0 {
            write!(f, "{}MiB", b >> 20)
        } else if b >= 1 << 10 && b % (1 << 10) == 0 {
            write!(f, "{}KiB", b >> 10)
        } else {
            write!(f, "{b}B")
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Text(String),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom("invalid size (expected bytes or a string like \"200MiB\")")
        })? {
            Raw::Int(n) if n >= 0 => Ok(Size(n as u64)),
            Raw::Int(n) => Err(serde::de::Error::custom(format!(
                "invalid size {n}: negative"
            ))),
            Raw::Text(s) => Size::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// The Bloom filter may use at most this many bytes, so a typo in
/// `expected_items` cannot exhaust memory.
pub const MAX_BLOOM_BYTES: u64 = 4 << 30;

impl Config {
    /// Read and validate a config file; errors are one line starting with the path.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| user_error(format!("{}: cannot read config: {e}", path.display())))?;
        Config::parse(&text).map_err(|e| user_error(format!("{}:{e}", path.display())))
    }

    /// Parse and validate TOML text. The error starts with `line:` when the
    /// position is known, or with ` key:` for semantic checks.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| one_line_toml_error(text, &e))?;
        config.validate().map_err(|e| format!(" {e}"))?;
        Ok(config)
    }

    /// Semantic checks that serde cannot express. The error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.run.name.trim().is_empty() {
            return Err("run.name: must not be empty".into());
        }
        if self.run.output.as_os_str().is_empty() {
            return Err("run.output: must not be empty".into());
        }
        let set = [
            self.target.rows.is_some(),
            self.target.text_bytes.is_some(),
            self.target.disk_bytes.is_some(),
        ]
        .iter()
        .filter(|&&s| s)
        .count();
        let mined = !self.source.is_synth();
        if mined {
            if self.source.paths.is_empty() {
                return Err("source.paths: list at least one path or glob".into());
            }
            if !self.synth.is_unset() {
                return Err(
                    "synth: a corpus run ([source] kind = files | parquet) takes no [synth] table"
                        .into(),
                );
            }
            if self.source.max_file_bytes.0 == 0 {
                return Err("source.max_file_bytes: must be more than 0".into());
            }
        } else if self.source != SourceSpec::default() {
            return Err("source: kind = \"synth\" takes no other keys".into());
        }
        if set > 1 || (set == 0 && !mined) {
            return Err(format!(
                "target: set exactly one of rows, text_bytes, disk_bytes (found {set})"
            ));
        }
        match self.target.get() {
            Target::Rows(0) => return Err("target.rows: must be at least 1".into()),
            Target::TextBytes(0) => return Err("target.text_bytes: must be more than 0".into()),
            Target::DiskBytes(0) => return Err("target.disk_bytes: must be more than 0".into()),
            _ => {}
        }
        if !self.ir.cpu && !self.ir.cuda {
            return Err("ir: at least one of cpu, cuda must be true".into());
        }
        if !mined {
            if self.synth.categories.is_empty() {
                return Err("synth.categories: list at least one category".into());
            }
            for (name, &w) in &self.synth.categories {
                if !CATEGORIES.contains(&name.as_str()) {
                    return Err(format!(
                        "synth.categories: unknown category \"{name}\" (known: {})",
                        CATEGORIES.join(", ")
                    ));
                }
                if !(w > 0.0 && w.is_finite()) {
                    return Err(format!(
                        "synth.categories.{name}: weight must be a number > 0, got {w}"
                    ));
                }
            }
            self.synth.validate_knobs()?;
        }
        let d = &self.dedup;
        if d.expected_items == 0 {
            return Err("dedup.expected_items: must be at least 1".into());
        }
        let p = d.false_positive_rate;
        if !(p > 0.0 && p < 1.0) {
            return Err(format!(
                "dedup.false_positive_rate: must be in (0, 1), got {p}"
            ));
        }
        let bytes = crate::dedup::Bloom::bits_for(d.expected_items, p) / 8;
        if bytes > MAX_BLOOM_BYTES {
            return Err(format!(
                "dedup.expected_items: a Bloom filter for {} items at rate {p} needs {} (limit {})",
                d.expected_items,
                Size(bytes),
                Size(MAX_BLOOM_BYTES)
            ));
        }
        for (key, v) in [
            ("validation", self.splits.validation),
            ("test", self.splits.test),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(format!("splits.{key}: must be in [0, 1), got {v}"));
            }
        }
        if self.splits.validation + self.splits.test >= 1.0 {
            return Err("splits: validation + test must be below 1 (the rest is train)".into());
        }
        if self.lower.max_generated_bytes.0 < 1 << 10 {
            return Err("lower.max_generated_bytes: must be at least 1KiB".into());
        }
        if self.shards.max_bytes.0 < 1 << 16 {
            return Err("shards.max_bytes: must be at least 64KiB".into());
        }
        if self.shards.row_group_bytes.0 < 1 << 10 {
            return Err("shards.row_group_bytes: must be at least 1KiB".into());
        }
        self.validate_tokens()?;
        Ok(())
    }

    /// `[tokens]` and `[filter]`: a filter needs counts, and names a column
    /// the run fills.
    fn validate_tokens(&self) -> Result<(), String> {
        let f = &self.filter;
        if f.is_empty() {
            return Ok(());
        }
        if self.tokens.tokenizer.is_none() {
            return Err(
                "filter: token budgets need token counts, but tokens.tokenizer is \"none\"".into(),
            );
        }
        if f.max_pair_tokens == Some(0) {
            return Err("filter.max_pair_tokens: must be at least 1".into());
        }
        let ir = &self.ir;
        for (name, &max) in &f.max_column_tokens {
            let filled = match name.as_str() {
                "python_source" => true,
                "cpu_forward" | "cpu_backward" => ir.cpu,
                "cuda_forward" | "cuda_backward" => ir.cuda,
                "cpu_module" => ir.cpu && ir.modules,
                "cuda_module" => ir.cuda && ir.modules,
                _ => {
                    return Err(format!(
                        "filter.max_column_tokens: unknown column \"{name}\" (known: {})",
                        TOKEN_TEXT_COLUMNS.join(", ")
                    ));
                }
            };
            if !filled {
                return Err(format!(
                    "filter.max_column_tokens.{name}: the run does not fill {name} (see [ir])"
                ));
            }
            if max == 0 {
                return Err(format!(
                    "filter.max_column_tokens.{name}: must be at least 1"
                ));
            }
        }
        Ok(())
    }

    /// Worker threads to start: the configured number, or one per core.
    pub fn worker_count(&self) -> usize {
        match self.run.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// The effective config as TOML (after command-line overrides), so a run
    /// can be reproduced from its manifest or dataset card.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The effective config without the keys that do not change what is
    /// generated (run.output, run.workers): stored in every shard and the
    /// dataset card, so shards are byte-identical wherever and with however
    /// many workers they were made.
    pub fn content_toml(&self) -> String {
        let Ok(mut value) = toml::Table::try_from(self) else {
            return String::new();
        };
        if let Some(toml::Value::Table(run)) = value.get_mut("run") {
            run.remove("output");
            run.remove("workers");
        }
        toml::to_string(&value).unwrap_or_default()
    }
}

/// toml's errors span several lines with a source excerpt; turn one into
/// `LINE:COL: [table] key: message`.
fn one_line_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else {
        return format!(" {msg}");
    };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_no = text[..start].matches('\n').count() + 1;
    let col = text[line_start..start].chars().count() + 1;
    let line = text[line_start..].lines().next().unwrap_or("");
    // The table the line belongs to: the nearest `[header]` above it.
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && !l.starts_with("[["))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    if line.trim_start().starts_with('[') {
        // The header itself is wrong (an unknown table): name it as written.
        return format!("{line_no}:{col}: {}: {msg}", line.trim());
    }
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let path = match (table, key) {
        (Some(t), Some(k)) => format!("{t}.{k}: "),
        (None, Some(k)) => format!("{k}: "),
        (Some(t), None) => format!("[{t}]: "),
        (None, None) => String::new(),
    };
    format!("{line_no}:{col}: {path}{msg}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[run]
name = "t"
seed = 7
output = "out"

[target]
text_bytes = "200MiB"

[ir]
cpu = false
cuda = true

[synth]
categories = { arithmetic = 1, math = 2.5 }

[dedup]
level = "shape"
expected_items = 1000
false_positive_rate = 0.01
"#;

    #[test]
    fn parses_good_config() {
        let c = Config::parse(GOOD).unwrap();
        assert_eq!(c.target.get(), Target::TextBytes(200 << 20));
        assert_eq!(c.synth.weights(), vec![("arithmetic", 1.0), ("math", 2.5)]);
        assert_eq!(c.dedup.level, DedupLevel::Shape);
        assert_eq!(c.shards, Shards::default());
        // The effective TOML parses back to the same config.
        assert_eq!(Config::parse(&c.to_toml()).unwrap(), c);
        let content = c.content_toml();
        assert!(
            content.contains("seed = 7")
                && !content.contains("output")
                && !content.contains("workers")
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(Size::parse("200MiB"), Ok(Size(200 << 20)));
        assert_eq!(Size::parse("1.5GiB"), Ok(Size(3 << 29)));
        assert_eq!(Size::parse("64kB"), Ok(Size(64_000)));
        assert_eq!(Size::parse("10MB"), Ok(Size(10_000_000)));
        assert_eq!(Size::parse("4096"), Ok(Size(4096)));
        assert_eq!(Size::parse("12 KiB"), Ok(Size(12 << 10)));
        for bad in [
            "",
            "MiB",
            "12XB",
            "1.2.3MB",
            "-5MB",
            "99999999999999999999GiB",
        ] {
            assert!(Size::parse(bad).is_err(), "{bad}");
        }
    }

    fn err(text: &str) -> String {
        let e = Config::parse(text).unwrap_err();
        assert!(!e.contains('\n'), "multi-line error: {e}");
        e
    }

    #[test]
    fn unknown_key_names_table_and_key() {
        let e = err(&GOOD.replace("seed = 7", "seed = 7\nworkerz = 3"));
        assert!(
            e.starts_with("5:1: run.workerz: unknown field `workerz`"),
            "{e}"
        );
    }

    #[test]
    fn unknown_table_names_itself() {
        let e = err(&GOOD.replace("[dedup]", "[dedupe]"));
        assert!(e.contains("[dedupe]: unknown field `dedupe`"), "{e}");
    }

    #[test]
    fn bad_size_names_key() {
        let e = err(&GOOD.replace("\"200MiB\"", "\"200XB\""));
        assert!(
            e.contains("target.text_bytes: invalid size \"200XB\""),
            "{e}"
        );
    }

    /// GOOD with one more `[synth]` key.
    fn knobs(line: &str) -> String {
        GOOD.replace("math = 2.5 }", &format!("math = 2.5 }}\n{line}"))
    }

    #[test]
    fn knobs_parse_with_defaults() {
        let c = Config::parse(GOOD).unwrap();
        assert_eq!(c.synth.knobs(), Knobs::default());
        let c = Config::parse(&knobs(
            "statements = [3, 9]\nparams = [2, 6]\nexpr_depth = 4\nloop_depth = 1\ndtypes = [\"float32\", \"vec3\"]",
        ))
        .unwrap();
        let k = c.synth.knobs();
        assert_eq!(
            (k.statements, k.params, k.expr_depth, k.loop_depth),
            ((3, 9), (2, 6), 4, 1)
        );
        assert_eq!(k.dtypes, Knobs::dtype_mask(&["float32", "vec3"]).unwrap());
        assert_eq!(Config::parse(&c.to_toml()).unwrap(), c);
    }

    #[test]
    fn tokens_default_to_o200k_and_parse_back() {
        use crate::tokens::TokenizerSpec;
        let c = Config::parse(GOOD).unwrap();
        assert_eq!(c.tokens.tokenizer, TokenizerSpec::O200k, "absent table");
        assert!(c.filter.is_empty());
        let text = format!(
            "{GOOD}[tokens]\ntokenizer = \"tok/tokenizer.json\"\n\n[filter]\nmax_pair_tokens = 4096\nmax_column_tokens = {{ cuda_backward = 3000 }}\n"
        );
        let c = Config::parse(&text).unwrap();
        assert_eq!(
            c.tokens.tokenizer,
            TokenizerSpec::HuggingFace("tok/tokenizer.json".into())
        );
        assert_eq!(c.filter.max_pair_tokens, Some(4096));
        assert_eq!(c.filter.max_column_tokens["cuda_backward"], 3000);
        assert_eq!(Config::parse(&c.to_toml()).unwrap(), c);
        let none = Config::parse(&format!("{GOOD}[tokens]\ntokenizer = \"none\"\n")).unwrap();
        assert!(none.tokens.tokenizer.is_none());
        assert!(none.to_toml().contains("tokenizer = \"none\""));
    }

    #[test]
    fn token_settings_errors_name_key() {
        let cases = [
            (
                "[tokens]\ntokenizer = \"gpt2\"\n",
                "tokens.tokenizer: unknown tokenizer \"gpt2\"",
            ),
            ("[tokens]\nvocab = 3\n", "tokens.vocab: unknown field"),
            (
                "[filter]\nmax_pair_tokens = 0\n",
                "filter.max_pair_tokens: must be at least 1",
            ),
            (
                "[filter]\nmax_tokens = 5\n",
                "filter.max_tokens: unknown field",
            ),
            (
                "[filter]\nmax_column_tokens = { cuda_fwd = 5 }\n",
                "filter.max_column_tokens: unknown column \"cuda_fwd\"",
            ),
            (
                "[filter]\nmax_column_tokens = { cpu_forward = 5 }\n",
                "filter.max_column_tokens.cpu_forward: the run does not fill cpu_forward",
            ),
            (
                "[tokens]\ntokenizer = \"none\"\n[filter]\nmax_pair_tokens = 10\n",
                "filter: token budgets need token counts",
            ),
        ];
        for (tail, want) in cases {
            let e = err(&format!("{GOOD}{tail}"));
            assert!(e.contains(want), "{e} does not contain {want}");
        }
    }

    #[test]
    fn semantic_errors_name_key() {
        let cases = [
            (
                GOOD.replace("math = 2.5", "maths = 1"),
                "synth.categories: unknown category \"maths\"",
            ),
            (
                GOOD.replace("math = 2.5", "math = 0"),
                "synth.categories.math: weight must be",
            ),
            (GOOD.replace("0.01", "1.0"), "dedup.false_positive_rate"),
            (
                GOOD.replace("text_bytes = \"200MiB\"", "rows = 5\ndisk_bytes = 9"),
                "found 2",
            ),
            (GOOD.replace("text_bytes = \"200MiB\"", ""), "found 0"),
            (
                GOOD.replace("cuda = true", "cuda = false"),
                "ir: at least one",
            ),
            (
                GOOD.replace("expected_items = 1000", "expected_items = 100000000000000"),
                "dedup.expected_items",
            ),
            (
                format!("{GOOD}[splits]\nvalidation = 0.6\ntest = 0.5\n"),
                "splits: validation + test",
            ),
            (
                knobs("statements = [10, 5]"),
                "synth.statements: want [min, max]",
            ),
            (knobs("statements = [1, 5]"), "synth.statements"),
            (knobs("params = [0, 5]"), "synth.params"),
            (knobs("params = [2, 99]"), "synth.params"),
            (knobs("expr_depth = 0"), "synth.expr_depth: must be 1 to 12"),
            (knobs("loop_depth = 4"), "synth.loop_depth: must be 0 to 3"),
            (
                knobs("dtypes = [\"float32\", \"float16\"]"),
                "synth.dtypes: unknown dtype \"float16\"",
            ),
            (knobs("dtypes = [\"vec3\"]"), "must include \"float32\""),
            (
                GOOD.replace(
                    "math = 2.5 }",
                    "vector = 1 }\ndtypes = [\"float32\", \"mat33\"]",
                ),
                "category vector needs one of vec2",
            ),
            (
                GOOD.replace("math = 2.5 }", "nested = 1 }\nloop_depth = 1"),
                "category nested writes loops two deep",
            ),
        ];
        for (text, want) in cases {
            let e = err(&text);
            assert!(e.contains(want), "{e} does not contain {want}");
        }
    }
}
