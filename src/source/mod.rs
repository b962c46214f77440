//! Where a run's kernels come from. The synthesizer (the default) makes
//! sample `i` from (seed, i); a corpus (a folder of Python files, or Parquet
//! code records) is read once at the start into a list of *units*, and sample
//! `i` is unit `i`: one module-level `@wp.kernel` cut out of its file with
//! what it reaches (see [`cut`]), or a file that could not be used (unreadable,
//! not UTF-8, too large, a syntax error), which the workers count as a
//! rejection by reason. The corpus is sorted (paths, then records, then
//! kernels in file order), so unit `i` is the same for any worker count,
//! `--part` and resume. Files are tokenized and parsed, never executed.

pub mod cut;

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use crate::config::{SourceKind, SourceSpec, user_error};
use crate::lang::tokenize;
use crate::row::Provenance;

/// Records of a Parquet corpus read (and cut) at a time: about this many
/// records' text is in memory at once (the decoded batch, read in place).
const PARQUET_BATCH_RECORDS: usize = 256;

/// The category of a mined row.
pub const MINED: &str = "mined";

/// One sample of a corpus run.
#[derive(Debug, Clone)]
pub enum Unit {
    /// A kernel cut out of its file, ready to lower.
    Kernel {
        kernel_name: String,
        python_source: String,
        provenance: Provenance,
    },
    /// A file (or record) that yields no kernel to lower, and why.
    Rejected {
        reason: &'static str,
        /// `PATH:LINE: what`.
        message: String,
    },
}

/// A corpus read and cut into units.
#[derive(Debug, Default)]
pub struct Corpus {
    pub units: Vec<Unit>,
    /// Files (or Parquet records) read.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Files with at least one kernel.
    pub files_with_kernels: u64,
    /// Seconds spent reading, parsing and cutting.
    pub seconds: f64,
    /// xxh3 (16 hex digits) over every input in corpus order: its path,
    /// repository, license and the xxh3 of its bytes. Two reads give the same
    /// fingerprint exactly when they give the same units, so a resumed run
    /// or the parts of one run can tell that their corpus is the same.
    pub fingerprint: String,
}

impl Corpus {
    /// The corpus summary for the manifest.
    pub fn summary(&self) -> serde_json::Value {
        let kernels = self
            .units
            .iter()
            .filter(|u| matches!(u, Unit::Kernel { .. }))
            .count();
        serde_json::json!({
            "files": self.files,
            "bytes": self.bytes,
            "files_with_kernels": self.files_with_kernels,
            "kernels": kernels,
            "units": self.units.len(),
            "fingerprint": self.fingerprint,
            "seconds": self.seconds,
        })
    }
}

/// A file of a corpus, before it is read.
struct Input {
    /// Shown in messages and kept as the provenance path.
    path: String,
    repo: Option<String>,
    license: Option<String>,
    content: Content,
}

enum Content {
    /// A file on disk, read by the loader.
    File(PathBuf),
    /// A Parquet record's text: row `.1` of the batch's content column
    /// (shared by the batch's records, so not copied out).
    Cell(arrow::array::ArrayRef, usize),
}

/// The bytes of row `i` of a Utf8 / Binary column (any offset size or
/// view); `None` for a null cell.
fn cell_bytes(a: &arrow::array::ArrayRef, i: usize) -> Option<&[u8]> {
    use arrow::array::AsArray;
    use arrow::datatypes::DataType;
    if a.is_null(i) {
        return None;
    }
    Some(match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
        DataType::Utf8View => a.as_string_view().value(i).as_bytes(),
        DataType::Binary => a.as_binary::<i32>().value(i),
        DataType::LargeBinary => a.as_binary::<i64>().value(i),
        DataType::BinaryView => a.as_binary_view().value(i),
        _ => return None, // cast to Binary when read (see parquet_inputs)
    })
}

/// Reads the corpus `spec` describes (paths relative to the current
/// directory), with `workers` threads. A path or glob that matches nothing, or
/// a Parquet file without the content column, is the user's error; a file
/// that cannot be used becomes a rejected unit. A Parquet corpus is read a
/// record batch at a time and only the kernels cut from it are kept, so it
/// may be larger than memory.
pub fn load(spec: &SourceSpec, workers: usize) -> anyhow::Result<Corpus> {
    let start = Instant::now();
    let mut corpus = Corpus::default();
    let mut fingerprint = Xxh3Default::new();
    let max = spec.max_file_bytes.0;
    match spec.kind {
        SourceKind::Synth => return Ok(corpus),
        SourceKind::Files => {
            let inputs = folder_inputs(&spec.paths)?;
            read_inputs(&inputs, max, workers, &mut corpus, &mut fingerprint)?;
        }
        SourceKind::Parquet => parquet_inputs(spec, &mut |inputs| {
            read_inputs(&inputs, max, workers, &mut corpus, &mut fingerprint)
        })?,
    }
    corpus.fingerprint = format!("{:016x}", fingerprint.digest());
    corpus.seconds = start.elapsed().as_secs_f64();
    Ok(corpus)
}

/// Reads `inputs` (in order) into `corpus` with up to `workers` threads, and
/// adds each input's digest to `fingerprint` in that order.
fn read_inputs(
    inputs: &[Input],
    max: u64,
    workers: usize,
    corpus: &mut Corpus,
    fingerprint: &mut Xxh3Default,
) -> anyhow::Result<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    let workers = workers.max(1).min(inputs.len());
    let chunk = inputs.len().div_ceil(workers).max(1);
    type Read = (Vec<Unit>, u64, u64, u64, Vec<u64>);
    let mut parts: Vec<Read> = Vec::new();
    std::thread::scope(|s| -> anyhow::Result<()> {
        let handles = inputs
            .chunks(chunk)
            .map(|files| {
                std::thread::Builder::new()
                    .name("pairpipe-corpus".into())
                    .stack_size(crate::lower::THREAD_STACK)
                    .spawn_scoped(s, move || {
                        let mut units = Vec::new();
                        let mut digests = Vec::with_capacity(files.len());
                        let (mut n, mut bytes, mut with) = (0u64, 0u64, 0u64);
                        for input in files {
                            n += 1;
                            let before = units.len();
                            let (read, digest) = read_input(input, max, &mut units);
                            bytes += read;
                            digests.push(digest);
                            if units[before..]
                                .iter()
                                .any(|u| matches!(u, Unit::Kernel { .. }))
                            {
                                with += 1;
                            }
                        }
                        (units, n, bytes, with, digests)
                    })
                    .context("cannot start a thread")
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        for h in handles {
            parts.push(h.join().expect("corpus reader panicked"));
        }
        Ok(())
    })?;
    for (units, n, bytes, with, digests) in parts {
        corpus.units.extend(units);
        corpus.files += n;
        corpus.bytes += bytes;
        corpus.files_with_kernels += with;
        for d in digests {
            fingerprint.update(&d.to_le_bytes());
        }
    }
    Ok(())
}

/// An input's digest for the corpus fingerprint: its name, repository and
/// license as the rows would carry them, and its content (the xxh3 of its
/// bytes, or why they were not read).
fn input_digest(input: &Input, content: &[u8]) -> u64 {
    let mut h = Xxh3Default::new();
    for field in [
        Some(input.path.as_str()),
        input.repo.as_deref(),
        input.license.as_deref(),
    ] {
        match field {
            Some(s) => {
                h.update(&[1]);
                h.update(&(s.len() as u64).to_le_bytes());
                h.update(s.as_bytes());
            }
            None => h.update(&[0]),
        }
    }
    h.update(content);
    h.digest()
}

/// Reads one input into units; returns the bytes read and the input's
/// digest (see [`input_digest`]).
fn read_input(input: &Input, max: u64, units: &mut Vec<Unit>) -> (u64, u64) {
    let digest = |what: &[u8]| input_digest(input, what);
    let reject = |units: &mut Vec<Unit>, reason, what: String| {
        units.push(Unit::Rejected {
            reason,
            message: format!("{}:1: {what}", input.path),
        })
    };
    let bytes = match &input.content {
        Content::File(p) => {
            match std::fs::metadata(p) {
                Ok(m) if m.len() > max => {
                    reject(
                        units,
                        "file_too_large",
                        format!("{} bytes, source.max_file_bytes is {max}", m.len()),
                    );
                    return (0, digest(format!("too large: {}", m.len()).as_bytes()));
                }
                _ => {}
            }
            match std::fs::read(p) {
                Ok(b) => Cow::Owned(b),
                Err(e) => {
                    reject(units, "unreadable", format!("cannot read: {e}"));
                    return (0, digest(b"unreadable"));
                }
            }
        }
        Content::Cell(a, i) => match cell_bytes(a, *i) {
            None => {
                reject(units, "unreadable", "the content cell is null".into());
                return (0, digest(b"null"));
            }
            Some(b) if b.len() as u64 > max => {
                reject(
                    units,
                    "file_too_large",
                    format!("{} bytes, source.max_file_bytes is {max}", b.len()),
                );
                return (b.len() as u64, digest(&xxh3_64(b).to_le_bytes()));
            }
            Some(b) => Cow::Borrowed(b),
        },
    };
    let n = bytes.len() as u64;
    let file_xxh3 = xxh3_64(&bytes);
    let done = (n, digest(&file_xxh3.to_le_bytes()));
    let Ok(text) = std::str::from_utf8(&bytes) else {
        reject(units, "not_utf8", "not UTF-8 text".into());
        return done;
    };
    // Only a file that mentions a kernel is worth parsing.
    if memchr::memmem::find(&bytes, b"kernel").is_none() {
        return done;
    }
    // A file that declares its license (`# SPDX-License-Identifier: ...` in
    // its header, as warp-lang's own files do) is under that license, whatever
    // its folder's LICENSE file or the corpus's column say: the declaration
    // is the author's, for this file (the REUSE convention).
    let license = spdx_header(text)
        .map(str::to_owned)
        .or_else(|| input.license.clone());
    let cuts = crate::lower::with_stack(|| {
        let tokens = tokenize(text)?;
        crate::lang::ast::with_arena(|arena| {
            crate::lang::parse_tokens(&tokens, arena).map(|_| ())
        })?;
        Ok::<_, crate::lower::LowerError>(cut::cut_kernels(text, &tokens))
    });
    match cuts {
        Err(e) => units.push(Unit::Rejected {
            reason: "syntax_error",
            message: format!("{}:{e}", input.path),
        }),
        Ok(cuts) => {
            for c in cuts {
                units.push(Unit::Kernel {
                    kernel_name: c.kernel_name,
                    python_source: c.python_source,
                    provenance: Provenance {
                        repo: input.repo.clone(),
                        path: input.path.clone(),
                        line: c.line as u32,
                        license: license.clone(),
                        file_xxh3,
                    },
                });
            }
        }
    }
    done
}

/// Whether a path component holds glob syntax.
fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `name` matches the one-component glob `pat` (`*`, `?`; `[` is literal).
fn glob_component(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_component(&pat[1..], name) || (!name.is_empty() && glob_component(pat, &name[1..]))
        }
        (Some(b'?'), Some(_)) => glob_component(&pat[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => glob_component(&pat[1..], &name[1..]),
        _ => false,
    }
}

/// `path` (components) matches `pat` (components, `**` for any number of folders).
fn glob_path(pat: &[&str], path: &[&str]) -> bool {
    match pat.first() {
        None => path.is_empty(),
        Some(&"**") => (0..=path.len()).any(|k| glob_path(&pat[1..], &path[k..])),
        Some(p) => {
            !path.is_empty()
                && glob_component(p.as_bytes(), path[0].as_bytes())
                && glob_path(&pat[1..], &path[1..])
        }
    }
}

/// Every file under `dir` (symbolic links to folders not followed), as
/// paths relative to it, sorted.
fn walk(dir: &Path, rel: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(ft) = e.file_type() else { continue };
        rel.push(name);
        if ft.is_dir() {
            if rel.last().is_some_and(|n| n.as_str() != ".git") {
                walk(&e.path(), rel, out);
            }
        } else {
            out.push(rel.clone());
        }
        rel.pop();
    }
}

/// The files a list of paths and globs names: a folder means every `*.py`
/// under it. Sorted, each once. `ext` is what a folder's files end with.
fn expand(paths: &[String], ext: &str) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    let mut found: BTreeSet<(PathBuf, PathBuf)> = BTreeSet::new();
    for p in paths {
        let comps: Vec<&str> = p.split('/').collect();
        let literal = comps.iter().take_while(|c| !has_glob(c)).count();
        let (base, pattern): (PathBuf, Vec<String>) = if literal == comps.len() {
            let path = PathBuf::from(p);
            if path.is_dir() {
                (path, vec!["**".into(), format!("*{ext}")])
            } else if std::fs::symlink_metadata(&path).is_ok() {
                let base = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
                found.insert((base, path));
                continue;
            } else {
                return Err(user_error(format!(
                    "source.paths: {p}: no such file or folder"
                )));
            }
        } else {
            let joined = comps[..literal].join("/");
            let base = PathBuf::from(match joined.as_str() {
                "" if p.starts_with('/') => "/",
                "" => ".",
                _ => joined.as_str(),
            });
            (
                base,
                comps[literal..].iter().map(|s| s.to_string()).collect(),
            )
        };
        let pat: Vec<&str> = pattern.iter().map(String::as_str).collect();
        let mut files = Vec::new();
        walk(&base, &mut Vec::new(), &mut files);
        let before = found.len();
        for f in files {
            let rel: Vec<&str> = f.iter().map(String::as_str).collect();
            if glob_path(&pat, &rel) {
                found.insert((base.clone(), base.join(f.join("/"))));
            }
        }
        if found.len() == before && literal != comps.len() {
            return Err(user_error(format!("source.paths: {p}: matches no file")));
        }
    }
    Ok(found.into_iter().collect())
}

/// Whether a file name is a license file (LICENSE, LICENCE, COPYING, any extension).
fn is_license_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["license", "licence", "copying"]
        .iter()
        .any(|p| n.starts_with(p) && !n.ends_with(".py"))
}

/// How far into a file its license declaration is looked for: the header
/// comments (REUSE puts it in the first lines; 4 KiB leaves room for a
/// copyright list).
const SPDX_HEADER_BYTES: usize = 4096;

/// The license expression a file declares in its header with an
/// `SPDX-License-Identifier:` tag (`Apache-2.0`, `MIT OR Apache-2.0`, ...):
/// the first tag in the file's first [`SPDX_HEADER_BYTES`] bytes, on a
/// comment line, up to the line's end or a closing comment mark. `None`
/// where there is none, or what follows is not an SPDX expression (ids,
/// `AND`/`OR`/`WITH`, parentheses, `+`).
pub fn spdx_header(text: &str) -> Option<&str> {
    const TAG: &str = "SPDX-License-Identifier:";
    let head = &text.as_bytes()[..text.len().min(SPDX_HEADER_BYTES)];
    let at = memchr::memmem::find(head, TAG.as_bytes())?;
    let line_start = head[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    // A tag inside code (a string, say) is not a declaration: only comments.
    let before = text[line_start..at].trim_start();
    if !["#", "//", "/*", "*", "<!--", "\"\"\"", "'''"]
        .iter()
        .any(|mark| before.starts_with(mark))
    {
        return None;
    }
    let rest = &text[at + TAG.len()..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let mut expr = line.trim();
    for close in ["*/", "-->", "\"\"\"", "'''"] {
        expr = expr.strip_suffix(close).unwrap_or(expr).trim_end();
    }
    let valid = !expr.is_empty()
        && expr.len() <= 200
        && expr
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-.+:() ".contains(&c));
    valid.then_some(expr)
}

/// The SPDX id of a license text, where recognizable.
pub fn spdx_of(text: &str) -> String {
    let t: String = text
        .chars()
        .take(20_000)
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let has = |s: &str| t.contains(s);
    let id = if has("Apache License") && has("Version 2.0") {
        "Apache-2.0"
    } else if has("GNU LESSER GENERAL PUBLIC LICENSE") || has("GNU Lesser General Public License") {
        if has("Version 3") {
            "LGPL-3.0"
        } else {
            "LGPL-2.1"
        }
    } else if has("GNU AFFERO GENERAL PUBLIC LICENSE") {
        "AGPL-3.0"
    } else if has("GNU GENERAL PUBLIC LICENSE") {
        if has("Version 3") {
            "GPL-3.0"
        } else {
            "GPL-2.0"
        }
    } else if has("Mozilla Public License Version 2.0") || has("Mozilla Public License, v. 2.0") {
        "MPL-2.0"
    } else if has("Permission is hereby granted, free of charge") {
        "MIT"
    } else if has("Redistribution and use in source and binary forms") {
        if has("Neither the name") || has("names of its contributors") {
            "BSD-3-Clause"
        } else {
            "BSD-2-Clause"
        }
    } else if has("This is free and unencumbered software released into the public domain") {
        "Unlicense"
    } else if has("Boost Software License") {
        "BSL-1.0"
    } else if has("ISC License") || has("Permission to use, copy, modify, and/or distribute") {
        "ISC"
    } else if has("CC0 1.0") {
        "CC0-1.0"
    } else if has("NVIDIA Software License") || has("NVIDIA CORPORATION") && has("proprietary") {
        "LicenseRef-NVIDIA-proprietary"
    } else {
        "LicenseRef-unknown"
    };
    id.to_string()
}

/// Per folder: (repository root, license) as found at or above it, up to `base`.
#[derive(Default)]
struct RepoCache {
    dirs: HashMap<PathBuf, (PathBuf, Option<String>)>,
}

impl RepoCache {
    /// The repository root of `dir` (the nearest folder from `dir` up to
    /// `base` holding `.git` or a license file, else `base`) and the license
    /// of the nearest license file on the way.
    fn of(&mut self, dir: &Path, base: &Path) -> (PathBuf, Option<String>) {
        if let Some(v) = self.dirs.get(dir) {
            return v.clone();
        }
        let mut license = None;
        let mut marker = false;
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut names: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            marker = names.iter().any(|n| n == ".git");
            if let Some(l) = names.iter().find(|n| is_license_name(n)) {
                marker = true;
                let text = std::fs::read(dir.join(l)).unwrap_or_default();
                license = Some(spdx_of(&String::from_utf8_lossy(&text)));
            }
        }
        let up = dir
            .parent()
            .filter(|_| dir != base && dir.starts_with(base));
        let v = match (marker, up) {
            (true, _) => (dir.to_path_buf(), license),
            (false, None) => (base.to_path_buf(), None),
            (false, Some(parent)) => self.of(parent, base),
        };
        self.dirs.insert(dir.to_path_buf(), v.clone());
        v
    }
}

fn folder_inputs(paths: &[String]) -> anyhow::Result<Vec<Input>> {
    let mut cache = RepoCache::default();
    let mut out = Vec::new();
    for (base, file) in expand(paths, ".py")? {
        let dir = file.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let (root, license) = cache.of(&dir, &base);
        let root_abs = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let repo = root_abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let rel = file
            .strip_prefix(&root)
            .map_or_else(|_| file.clone(), Path::to_path_buf);
        out.push(Input {
            path: rel.to_string_lossy().into_owned(),
            repo,
            license,
            content: Content::File(file),
        });
    }
    Ok(out)
}

/// Reads the Parquet files of `spec` a record batch at a time, handing each
/// batch's records to `each` in order; nothing more than one batch is held.
fn parquet_inputs(
    spec: &SourceSpec,
    each: &mut dyn FnMut(Vec<Input>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::DataType;
    use parquet::arrow::ProjectionMask;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    for (_, file) in expand(&spec.paths, ".parquet")? {
        let shown = file.display().to_string();
        let f = std::fs::File::open(&file)
            .map_err(|e| user_error(format!("source.paths: {shown}: cannot read: {e}")))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(f)
            .map_err(|e| user_error(format!("source.paths: {shown}: not Parquet: {e}")))?;
        let schema = builder.schema().clone();
        let wanted = [
            Some(&spec.content_column),
            spec.repo_column.as_ref(),
            spec.path_column.as_ref(),
            spec.license_column.as_ref(),
        ];
        let mut roots = Vec::new();
        for name in wanted.iter().flatten() {
            let Ok(i) = schema.index_of(name) else {
                return Err(user_error(format!(
                    "source: {shown} has no column {name:?} (columns: {})",
                    schema
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            roots.push(i);
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(PARQUET_BATCH_RECORDS)
            .build()
            .with_context(|| format!("{shown}: reading"))?;
        let mut record = 0u64;
        for batch in reader {
            // The batch's records as inputs; the batch itself is dropped
            // before they are read.
            let out = {
                let batch = batch.with_context(|| format!("{shown}: reading"))?;
                // Each wanted column as optional strings (a list is joined with " OR ").
                let column =
                    |name: Option<&String>| -> anyhow::Result<Option<Vec<Option<String>>>> {
                        let Some(name) = name else { return Ok(None) };
                        let col = batch
                            .column_by_name(name)
                            .ok_or_else(|| anyhow::anyhow!("{shown}: column {name} missing"))?;
                        let values: Vec<Option<String>> = match col.data_type() {
                            DataType::List(_) | DataType::LargeList(_) => {
                                let list = arrow::compute::cast(
                                    col,
                                    &DataType::List(std::sync::Arc::new(
                                        arrow::datatypes::Field::new("item", DataType::Utf8, true),
                                    )),
                                )?;
                                let list = list.as_list::<i32>();
                                (0..list.len())
                                    .map(|i| {
                                        list.is_valid(i).then(|| {
                                            let v = list.value(i);
                                            v.as_string::<i32>()
                                                .iter()
                                                .flatten()
                                                .collect::<Vec<_>>()
                                                .join(" OR ")
                                        })
                                    })
                                    .collect()
                            }
                            _ => {
                                let s =
                                    arrow::compute::cast(col, &DataType::Utf8).map_err(|e| {
                                        user_error(format!("source: {shown}: column {name}: {e}"))
                                    })?;
                                s.as_string::<i32>()
                                    .iter()
                                    .map(|v| v.map(str::to_string))
                                    .collect()
                            }
                        };
                        Ok(Some(values))
                    };
                let content = batch
                    .column_by_name(&spec.content_column)
                    .expect("projected")
                    .clone();
                // Text and binary columns are read in place; anything else
                // (a dictionary, say) is cast to Binary first.
                let content = match content.data_type() {
                    DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
                    | DataType::Binary
                    | DataType::LargeBinary
                    | DataType::BinaryView => content,
                    _ => arrow::compute::cast(&content, &DataType::Binary).map_err(|e| {
                        user_error(format!(
                            "source: {shown}: column {}: {e}",
                            spec.content_column
                        ))
                    })?,
                };
                let repos = column(spec.repo_column.as_ref())?;
                let paths = column(spec.path_column.as_ref())?;
                let licenses = column(spec.license_column.as_ref())?;
                let mut out = Vec::with_capacity(batch.num_rows());
                for i in 0..batch.num_rows() {
                    let get =
                        |c: &Option<Vec<Option<String>>>| c.as_ref().and_then(|v| v[i].clone());
                    let path = get(&paths).unwrap_or_else(|| {
                        let name = file
                            .file_name()
                            .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
                        format!("{name}#{record}")
                    });
                    out.push(Input {
                        path,
                        repo: get(&repos),
                        license: get(&licenses),
                        content: Content::Cell(content.clone(), i),
                    });
                    record += 1;
                }
                out
            };
            each(out)?;
            // The batch's pages, freed, go back to the OS rather than
            // linger in this thread's heap (see `memory`).
            crate::memory::release_free_memory();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_components_and_any_depth() {
        let g = |p: &str, path: &str| {
            let pat: Vec<&str> = p.split('/').collect();
            let path: Vec<&str> = path.split('/').collect();
            glob_path(&pat, &path)
        };
        assert!(g("**/*.py", "a.py"));
        assert!(g("**/*.py", "x/y/a.py"));
        assert!(g("x/**/test_?.py", "x/test_a.py"));
        assert!(!g("*.py", "x/a.py"));
        assert!(!g("**/*.py", "a.pyc"));
    }

    #[test]
    fn licenses_are_recognized_by_their_text() {
        assert_eq!(
            spdx_of("                                 Apache License\n Version 2.0, January 2004"),
            "Apache-2.0"
        );
        assert_eq!(
            spdx_of("MIT License\n\nPermission is hereby granted, free of charge, to any person"),
            "MIT"
        );
        assert_eq!(spdx_of("all rights reserved"), "LicenseRef-unknown");
    }
    #[test]
    fn a_files_header_declares_its_license() {
        // warp-lang's own header.
        let warp = "# SPDX-FileCopyrightText: Copyright (c) 2022 NVIDIA CORPORATION & AFFILIATES. \
                    All rights reserved.\n# SPDX-License-Identifier: Apache-2.0\n\nimport warp as wp\n";
        assert_eq!(spdx_header(warp), Some("Apache-2.0"));
        assert_eq!(
            spdx_header(
                "#!/usr/bin/env python\n#   SPDX-License-Identifier:  MIT OR Apache-2.0  \r\n"
            ),
            Some("MIT OR Apache-2.0")
        );
        assert_eq!(
            spdx_header(
                "/* SPDX-License-Identifier: GPL-2.0-or-later WITH Classpath-exception-2.0 */\n"
            ),
            Some("GPL-2.0-or-later WITH Classpath-exception-2.0")
        );
        assert_eq!(
            spdx_header("\"\"\" SPDX-License-Identifier: BSD-3-Clause \"\"\"\n"),
            Some("BSD-3-Clause")
        );
        // Not declarations: none, in code or in a docstring's body, empty,
        // not an expression, too far down.
        assert_eq!(spdx_header("import warp as wp\n"), None);
        assert_eq!(
            spdx_header("TAG = \"SPDX-License-Identifier: MIT\"\n"),
            None
        );
        assert_eq!(
            spdx_header("\"\"\"Module.\n\nSPDX-License-Identifier: BSD-3-Clause\n\"\"\"\n"),
            None
        );
        assert_eq!(spdx_header("# SPDX-License-Identifier:\n"), None);
        assert_eq!(
            spdx_header("# SPDX-License-Identifier: see <LICENSE.txt>\n"),
            None
        );
        let late = format!(
            "{}# SPDX-License-Identifier: MIT\n",
            "# padding\n".repeat(500)
        );
        assert_eq!(spdx_header(&late), None);
    }
}
