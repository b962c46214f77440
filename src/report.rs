//! `pairpipe report`: what is inside one run's shards, or a folder of runs.
//!
//! Every number comes from polars queries over the integer size columns
//! (`*_chars`, `*_lines`, `text_bytes`), `split`, `category`, the short
//! list columns `builtins`, `dtypes`, `features` and `motifs`, `launch_dims` and the three dedup
//! keys: the scan projects only those, so the report never reads the text
//! and stays fast on hundreds of MiB of pairs. Counters that only the pipeline knows
//! (generated, duplicates, rejections, time) come from `manifest.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// Text columns and the prefix of their size columns (`{prefix}_chars`, `{prefix}_lines`).
const TEXT_COLUMNS: [(&str, &str); 7] = [
    ("python_source", "python"),
    ("cpu_forward", "cpu_forward"),
    ("cpu_backward", "cpu_backward"),
    ("cuda_forward", "cuda_forward"),
    ("cuda_backward", "cuda_backward"),
    ("cpu_module", "cpu_module"),
    ("cuda_module", "cuda_module"),
];

/// Context windows the report measures pairs against (tokens).
const CONTEXTS: [i64; 5] = [2048, 4096, 8192, 16384, 32768];

/// Splits in the order a reader expects them; any other split follows, sorted.
const SPLIT_ORDER: [&str; 3] = ["train", "validation", "test"];

/// The key columns of the three dedup levels, finest first.
const KEY_COLUMNS: [(&str, &str); 3] = [
    ("exact text", "key_exact"),
    ("identifiers renamed", "key_renamed"),
    ("identifiers and literals canonical", "key_shape"),
];

/// Upper bounds of the python_source line-count buckets (the last is open).
const LINE_BUCKETS: [i64; 6] = [5, 10, 20, 40, 80, 160];

/// Builtins listed in the Markdown report (the JSON has all of them).
const TOP_BUILTINS: usize = 30;

/// Builds the report for `dir` (a run folder, or a folder of run folders) as
/// Markdown tables, or as one JSON object with the same content when `json`.
pub fn run(dir: &Path, json: bool) -> Result<String> {
    let runs = find_runs(dir)?;
    let mut sections = Vec::with_capacity(runs.len());
    let mut frames = Vec::with_capacity(runs.len());
    for run_dir in &runs {
        let run = load_run(run_dir)?;
        sections.push(summarize(
            run.name,
            run_dir.display().to_string(),
            &run.frame,
            run.shards,
            run.disk_bytes,
            run.manifest.as_ref(),
        )?);
        frames.push(run.frame.lazy());
    }
    let total = if runs.len() > 1 {
        let all = concat(frames, UnionArgs::default())?.collect()?;
        Some(total_of(dir, &sections, &all)?)
    } else {
        None
    };
    let report = Report {
        path: dir.display().to_string(),
        runs: sections,
        total,
    };
    if json {
        Ok(serde_json::to_string_pretty(&report)? + "\n")
    } else {
        Ok(report.to_markdown())
    }
}

#[derive(Serialize)]
struct Report {
    path: String,
    runs: Vec<Section>,
    /// Present when `path` holds several runs: all their rows taken together.
    total: Option<Section>,
}

#[derive(Serialize)]
struct Section {
    name: String,
    path: String,
    rows: u64,
    splits: Vec<Share>,
    categories: Vec<Share>,
    /// Rows by `origin` (synthetic / mined).
    origins: Vec<Share>,
    /// Mined rows by `source_license` ("unknown" where none was found), and
    /// the ten repositories with the most rows; empty for synthesized data.
    licenses: Vec<Share>,
    repositories: Vec<Share>,
    columns: Vec<ColumnStats>,
    /// Token counts (`*_tokens`, `pair_tokens`); None when the shards have none.
    tokens: Option<TokenStats>,
    /// What the kernels are made of: sizes, builtins, types, launch shapes,
    /// distinct kernels per dedup level.
    contents: Contents,
    storage: Storage,
    /// From manifest.json; None when a run has none (or, in the total, when any run has none).
    counters: Option<Counters>,
    /// Disagreements between the shards and the manifest.
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct Share {
    name: String,
    rows: u64,
    share: f64,
}

#[derive(Serialize)]
struct ColumnStats {
    column: String,
    /// Rows where the column is not null.
    rows: u64,
    chars: Dist,
    lines: Dist,
    /// Mean over rows of (this column's chars / python_source chars); None for python_source.
    expansion: Option<f64>,
    /// Tokens of this column (`{column}_tokens`); None without counts.
    tokens: Option<Dist>,
}

#[derive(Serialize)]
struct TokenStats {
    /// The tokenizer the manifest names (None without a manifest, or for a total of runs that differ).
    tokenizer: Option<String>,
    /// Rows with a pair_tokens count.
    rows: u64,
    /// pair_tokens: python_source plus the IR columns filled.
    pair: Dist,
    /// Sum of pair_tokens over all rows.
    total: u64,
    per_split: Vec<TokenTotal>,
    per_category: Vec<TokenTotal>,
    /// Rows whose pair fits each context window (pair_tokens <= context).
    context_fit: Vec<Fit>,
}

#[derive(Serialize)]
struct TokenTotal {
    name: String,
    rows: u64,
    /// Sum of pair_tokens.
    tokens: u64,
    share: f64,
}

#[derive(Serialize)]
struct Fit {
    context: i64,
    rows: u64,
    share: f64,
}

#[derive(Serialize)]
struct Contents {
    /// Rows per python_source line-count bucket ("1-5", ..., ">160").
    python_lines: Vec<Share>,
    /// Rows calling each builtin (a row counts once per builtin), most used first.
    builtins: Vec<Share>,
    /// Rows using each data type.
    dtypes: Vec<Share>,
    /// Rows per launch dimensionality (1-D to 4-D).
    launch_dims: Vec<Share>,
    /// Rows using each feature the lowering saw (the `features` column:
    /// structs, funcs, loops, atomics, tiles, random, geometry), in that
    /// order, each listed even where no row uses it; empty for shards
    /// without the column.
    features: Vec<Share>,
    /// Per category, the rows using each synthesizer motif (most used
    /// first; share of the category's rows); categories without motifs
    /// (mined rows, shards without the column) are left out.
    motifs: Vec<CategoryMotifs>,
    /// Distinct kernels at each dedup level; empty for shards without the key columns.
    distinct: Vec<Distinct>,
}

#[derive(Serialize)]
struct CategoryMotifs {
    category: String,
    /// Rows of the category.
    rows: u64,
    motifs: Vec<Share>,
}

#[derive(Serialize)]
struct Distinct {
    level: String,
    column: String,
    kernels: u64,
    share: f64,
}

/// Percentiles are nearest-rank (polars `QuantileMethod::Nearest`), so they are real values.
#[derive(Serialize)]
struct Dist {
    mean: f64,
    p50: i64,
    p95: i64,
    max: i64,
}

#[derive(Serialize)]
struct Storage {
    shards: u64,
    /// Uncompressed pair text: sum of the `text_bytes` column.
    text_bytes: u64,
    /// Size of the shard files on disk.
    disk_bytes: u64,
    /// text_bytes / disk_bytes.
    compression_ratio: f64,
}

#[derive(Serialize, Default)]
struct Counters {
    generated: u64,
    written: u64,
    duplicates: u64,
    rejected: BTreeMap<String, u64>,
    rejected_total: u64,
    seconds: f64,
    rows_per_second: f64,
}

/// One run folder, its size columns loaded (no text).
struct Run {
    name: String,
    frame: DataFrame,
    shards: u64,
    disk_bytes: u64,
    manifest: Option<Value>,
}

/// `dir` itself when it is a run, else its sub-folders that are runs, sorted.
fn find_runs(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        bail!("{}: not a directory", dir.display());
    }
    if is_run(dir)? {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() && is_run(&path)? {
            runs.push(path);
        }
    }
    if runs.is_empty() {
        bail!(
            "no pairpipe shards in {}: expected data/*.parquet in it (one run) \
             or in its sub-folders (several runs)",
            dir.display()
        );
    }
    runs.sort();
    Ok(runs)
}

fn is_run(dir: &Path) -> Result<bool> {
    Ok(dir.join("manifest.json").is_file() || !shard_files(dir)?.is_empty())
}

/// Finished shards: `data/*.parquet`, skipping the hidden temporary files the sink renames.
fn shard_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let data = dir.join("data");
    if !data.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&data).with_context(|| format!("reading {}", data.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".parquet") && !name.starts_with('.') && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn load_run(dir: &Path) -> Result<Run> {
    let files = shard_files(dir)?;
    if files.is_empty() {
        bail!("no Parquet shards in {}", dir.join("data").display());
    }
    let manifest_path = dir.join("manifest.json");
    let manifest = if manifest_path.is_file() {
        let text = std::fs::read_to_string(&manifest_path)
            .with_context(|| format!("reading {}", manifest_path.display()))?;
        Some(
            serde_json::from_str::<Value>(&text)
                .with_context(|| format!("parsing {}", manifest_path.display()))?,
        )
    } else {
        None
    };
    let mut disk_bytes = 0;
    for f in &files {
        disk_bytes += std::fs::metadata(f)
            .with_context(|| format!("reading {}", f.display()))?
            .len();
    }
    let name = manifest
        .as_ref()
        .and_then(|m| m["name"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            dir.file_name().map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        });
    let frame =
        scan_sizes(&files).with_context(|| format!("reading shards in {}", dir.display()))?;
    Ok(Run {
        name,
        frame,
        shards: files.len() as u64,
        disk_bytes,
        manifest,
    })
}

/// Reads `split`, `category`, `text_bytes` and every size column the shards have
/// (absent ones become null), as Int64, so frames of different runs stack.
fn scan_sizes(files: &[PathBuf]) -> Result<DataFrame> {
    let paths: Vec<PlRefPath> = files
        .iter()
        .map(|p| PlRefPath::new(p.to_string_lossy().into_owned()))
        .collect();
    let args = ScanArgsParquet {
        hive_options: HiveOptions {
            enabled: Some(false),
            ..Default::default()
        },
        glob: false,
        allow_missing_columns: true,
        ..Default::default()
    };
    let mut lf = LazyFrame::scan_parquet_files(paths.into_iter().collect(), args)?;
    let schema = lf.collect_schema()?;
    let mut exprs = Vec::new();
    for required in [
        "split",
        "category",
        "text_bytes",
        "python_chars",
        "python_lines",
    ] {
        if schema.get(required).is_none() {
            bail!("shards have no `{required}` column (see schemas/columns.json)");
        }
    }
    exprs.push(col("split").cast(DataType::String));
    exprs.push(col("category").cast(DataType::String));
    exprs.push(col("text_bytes").cast(DataType::Int64));
    // Shards from before these columns existed report them as empty.
    let or_null = |name: &str, dtype: DataType| {
        if schema.get(name).is_some() {
            col(name).cast(dtype)
        } else {
            lit(NULL).cast(dtype).alias(name)
        }
    };
    let strings = DataType::List(Box::new(DataType::String));
    exprs.push(or_null("builtins", strings.clone()));
    exprs.push(or_null("dtypes", strings.clone()));
    exprs.push(or_null("features", strings.clone()));
    exprs.push(or_null("motifs", strings));
    exprs.push(or_null("launch_dims", DataType::Int64));
    for (_, key) in KEY_COLUMNS {
        exprs.push(or_null(key, DataType::UInt64));
    }
    for (_, prefix) in TEXT_COLUMNS {
        for size in ["chars", "lines"] {
            let name = format!("{prefix}_{size}");
            exprs.push(or_null(&name, DataType::Int64));
        }
    }
    for (column, _) in TEXT_COLUMNS {
        exprs.push(or_null(&format!("{column}_tokens"), DataType::Int64));
    }
    exprs.push(or_null("pair_tokens", DataType::Int64));
    // Shards from before the provenance columns hold synthesized rows only.
    exprs.push(if schema.get("origin").is_some() {
        col("origin").cast(DataType::String)
    } else {
        lit("synthetic").alias("origin")
    });
    exprs.push(or_null("source_license", DataType::String));
    exprs.push(or_null("source_repo", DataType::String));
    Ok(lf.select(exprs).collect()?)
}

fn summarize(
    name: String,
    path: String,
    frame: &DataFrame,
    shards: u64,
    disk_bytes: u64,
    manifest: Option<&Value>,
) -> Result<Section> {
    let rows = frame.height() as u64;
    let mut splits = shares(frame, "split", rows)?;
    splits.sort_by_key(|s| {
        let rank = SPLIT_ORDER.iter().position(|o| *o == s.name);
        (rank.unwrap_or(SPLIT_ORDER.len()), s.name.clone())
    });
    let mut categories = shares(frame, "category", rows)?;
    categories.sort_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.name.cmp(&b.name)));
    let by_rows = |v: &mut Vec<Share>| {
        v.sort_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.name.cmp(&b.name)))
    };
    let mut origins = shares(frame, "origin", rows)?;
    by_rows(&mut origins);
    let mined = frame
        .clone()
        .lazy()
        .filter(col("origin").eq(lit("mined")))
        .with_column(col("source_license").fill_null(lit("unknown")))
        .with_column(col("source_repo").fill_null(lit("unknown")))
        .collect()?;
    let mined_rows = mined.height() as u64;
    let (mut licenses, mut repositories) = if mined_rows > 0 {
        (
            shares(&mined, "source_license", mined_rows)?,
            shares(&mined, "source_repo", mined_rows)?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    by_rows(&mut licenses);
    by_rows(&mut repositories);
    repositories.truncate(10);

    let (columns, text_bytes) = column_stats(frame)?;
    let tokenizer = manifest.and_then(|m| m["tokenizer"].as_str().map(str::to_owned));
    let tokens = token_stats(frame, tokenizer)?;
    let contents = contents(frame, rows)?;
    let storage = Storage {
        shards,
        text_bytes,
        disk_bytes,
        compression_ratio: ratio(text_bytes as f64, disk_bytes as f64),
    };
    let counters = manifest.map(counters_of);
    let mut warnings = Vec::new();
    if let Some(m) = manifest {
        check_manifest(m, rows, &splits, shards, &mut warnings);
    }
    Ok(Section {
        name,
        path,
        rows,
        splits,
        categories,
        origins,
        licenses,
        repositories,
        columns,
        tokens,
        contents,
        storage,
        counters,
        warnings,
    })
}

/// Token statistics from `pair_tokens`, `split` and `category`: None when
/// no row has a count.
fn token_stats(frame: &DataFrame, tokenizer: Option<String>) -> Result<Option<TokenStats>> {
    let counted = frame
        .clone()
        .lazy()
        .filter(col("pair_tokens").is_not_null())
        .select([col("split"), col("category"), col("pair_tokens")]);
    let mut exprs = vec![
        len().cast(DataType::Int64).alias("rows"),
        col("pair_tokens")
            .sum()
            .cast(DataType::Int64)
            .alias("total"),
    ];
    exprs.extend(dist_exprs("pair_tokens", "pair"));
    for c in CONTEXTS {
        exprs.push(
            col("pair_tokens")
                .lt_eq(lit(c))
                .sum()
                .cast(DataType::Int64)
                .alias(format!("fit{c}")),
        );
    }
    let stats = counted.clone().select(exprs).collect()?;
    let f = |name: &str| -> Result<Option<f64>> {
        let c = stats.column(name)?.cast(&DataType::Float64)?;
        Ok(c.f64()?.get(0))
    };
    let rows = f("rows")?.unwrap_or(0.0) as u64;
    if rows == 0 {
        return Ok(None);
    }
    let total = f("total")?.unwrap_or(0.0) as u64;
    let totals = |key: &str| -> Result<Vec<TokenTotal>> {
        let g = counted
            .clone()
            .group_by([col(key)])
            .agg([
                len().cast(DataType::Int64).alias("rows"),
                col("pair_tokens")
                    .sum()
                    .cast(DataType::Int64)
                    .alias("tokens"),
            ])
            .collect()?;
        let names = g.column(key)?.str()?;
        let r = g.column("rows")?.i64()?;
        let t = g.column("tokens")?.i64()?;
        Ok(names
            .iter()
            .zip(r.iter())
            .zip(t.iter())
            .map(|((n, r), t)| {
                let t = t.unwrap_or(0).max(0) as u64;
                TokenTotal {
                    name: n.unwrap_or("(null)").to_owned(),
                    rows: r.unwrap_or(0).max(0) as u64,
                    tokens: t,
                    share: ratio(t as f64, total as f64),
                }
            })
            .collect())
    };
    let mut per_split = totals("split")?;
    per_split.sort_by_key(|s| {
        let rank = SPLIT_ORDER.iter().position(|o| *o == s.name);
        (rank.unwrap_or(SPLIT_ORDER.len()), s.name.clone())
    });
    let mut per_category = totals("category")?;
    per_category.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
    let mut context_fit = Vec::new();
    for c in CONTEXTS {
        let n = f(&format!("fit{c}"))?.unwrap_or(0.0) as u64;
        context_fit.push(Fit {
            context: c,
            rows: n,
            share: ratio(n as f64, rows as f64),
        });
    }
    Ok(Some(TokenStats {
        tokenizer,
        rows,
        pair: dist_of(&stats, "pair")?,
        total,
        per_split,
        per_category,
        context_fit,
    }))
}

/// mean, p50, p95 and max of `column`, aliased `{name}|mean` etc.
fn dist_exprs(column: &str, name: &str) -> Vec<Expr> {
    let c = || col(column);
    vec![
        c().cast(DataType::Float64)
            .mean()
            .alias(format!("{name}|mean")),
        c().quantile(lit(0.5), QuantileMethod::Nearest)
            .cast(DataType::Int64)
            .alias(format!("{name}|p50")),
        c().quantile(lit(0.95), QuantileMethod::Nearest)
            .cast(DataType::Int64)
            .alias(format!("{name}|p95")),
        c().max().cast(DataType::Int64).alias(format!("{name}|max")),
    ]
}

/// The [`Dist`] that [`dist_exprs`] computed under `name`.
fn dist_of(stats: &DataFrame, name: &str) -> Result<Dist> {
    let f = |s: &str| -> Result<Option<f64>> {
        let c = stats
            .column(&format!("{name}|{s}"))?
            .cast(&DataType::Float64)?;
        Ok(c.f64()?.get(0))
    };
    Ok(Dist {
        mean: f("mean")?.unwrap_or(0.0),
        p50: f("p50")?.unwrap_or(0.0) as i64,
        p95: f("p95")?.unwrap_or(0.0) as i64,
        max: f("max")?.unwrap_or(0.0) as i64,
    })
}

fn contents(frame: &DataFrame, rows: u64) -> Result<Contents> {
    // Line-count buckets: "1-5", "6-10", ..., ">160".
    let last = LINE_BUCKETS[LINE_BUCKETS.len() - 1];
    let mut order = Vec::new();
    let mut bucket = lit(format!(">{last}"));
    let mut low = 1;
    for &high in &LINE_BUCKETS {
        order.push((high, format!("{low}-{high}")));
        low = high + 1;
    }
    for (high, name) in order.iter().rev() {
        bucket = when(col("python_lines").lt_eq(lit(*high)))
            .then(lit(name.clone()))
            .otherwise(bucket);
    }
    let mut order: Vec<String> = order.into_iter().map(|(_, n)| n).collect();
    order.push(format!(">{last}"));
    let lines_frame = frame
        .clone()
        .lazy()
        .select([bucket.alias("python_lines")])
        .collect()?;
    let mut python_lines = shares(&lines_frame, "python_lines", rows)?;
    python_lines.sort_by_key(|s| order.iter().position(|o| *o == s.name));

    let listed = |column: &str| -> Result<Vec<Share>> {
        let exploded = frame
            .clone()
            .lazy()
            .select([col(column).explode(ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            })])
            .filter(col(column).is_not_null())
            .collect()?;
        let mut v = shares(&exploded, column, rows)?;
        v.sort_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.name.cmp(&b.name)));
        Ok(v)
    };
    let builtins = listed("builtins")?;
    let dtypes = listed("dtypes")?;
    let features = if frame.column("features")?.null_count() == frame.height() && rows > 0 {
        Vec::new()
    } else {
        let used = listed("features")?;
        crate::lower::Features::ALL
            .iter()
            .map(|(name, _)| {
                let n = used.iter().find(|s| s.name == *name).map_or(0, |s| s.rows);
                Share {
                    name: (*name).to_owned(),
                    rows: n,
                    share: ratio(n as f64, rows as f64),
                }
            })
            .collect()
    };
    let motifs = motifs_per_category(frame)?;

    let dims_frame = frame
        .clone()
        .lazy()
        .filter(col("launch_dims").is_not_null())
        .select([(col("launch_dims").cast(DataType::String) + lit("-D")).alias("launch_dims")])
        .collect()?;
    let mut launch_dims = shares(&dims_frame, "launch_dims", rows)?;
    launch_dims.sort_by(|a, b| a.name.cmp(&b.name));

    let counts = frame
        .clone()
        .lazy()
        .select(
            KEY_COLUMNS
                .iter()
                .map(|(_, c)| {
                    col(*c)
                        .drop_nulls()
                        .n_unique()
                        .cast(DataType::UInt64)
                        .alias(*c)
                })
                .collect::<Vec<_>>(),
        )
        .collect()?;
    let mut distinct = Vec::new();
    for (level, column) in KEY_COLUMNS {
        let kernels = counts.column(column)?.u64()?.get(0).unwrap_or(0);
        if kernels > 0 {
            distinct.push(Distinct {
                level: level.to_owned(),
                column: column.to_owned(),
                kernels,
                share: ratio(kernels as f64, rows as f64),
            });
        }
    }
    Ok(Contents {
        python_lines,
        builtins,
        dtypes,
        launch_dims,
        features,
        motifs,
        distinct,
    })
}

/// Rows using each motif, per category (a row counts once per motif).
fn motifs_per_category(frame: &DataFrame) -> Result<Vec<CategoryMotifs>> {
    let per_category = frame
        .clone()
        .lazy()
        .group_by([col("category")])
        .agg([len().cast(DataType::UInt64).alias("rows")])
        .collect()?;
    let category_rows: BTreeMap<String, u64> = per_category
        .column("category")?
        .str()?
        .iter()
        .zip(per_category.column("rows")?.u64()?.iter())
        .map(|(c, n)| (c.unwrap_or("(null)").to_owned(), n.unwrap_or(0)))
        .collect();
    // A motif used twice in one kernel counts its row once.
    let counts = frame
        .clone()
        .lazy()
        .select([col("category"), col("motifs")])
        .with_row_index("row", None)
        .explode(
            by_name(["motifs"], true, false),
            ExplodeOptions {
                empty_as_null: false,
                keep_nulls: false,
            },
        )
        .filter(col("motifs").is_not_null())
        .group_by([col("category"), col("motifs")])
        .agg([col("row").n_unique().cast(DataType::UInt64).alias("rows")])
        .collect()?;
    let mut by_category: BTreeMap<String, Vec<Share>> = BTreeMap::new();
    let cats = counts.column("category")?.str()?;
    let names = counts.column("motifs")?.str()?;
    let rows = counts.column("rows")?.u64()?;
    for ((c, m), n) in cats.iter().zip(names.iter()).zip(rows.iter()) {
        let c = c.unwrap_or("(null)").to_owned();
        let n = n.unwrap_or(0);
        let total = category_rows.get(&c).copied().unwrap_or(0);
        by_category.entry(c).or_default().push(Share {
            name: m.unwrap_or("(null)").to_owned(),
            rows: n,
            share: ratio(n as f64, total as f64),
        });
    }
    Ok(by_category
        .into_iter()
        .map(|(category, mut motifs)| {
            motifs.sort_by(|a, b| b.rows.cmp(&a.rows).then_with(|| a.name.cmp(&b.name)));
            CategoryMotifs {
                rows: category_rows.get(&category).copied().unwrap_or(0),
                category,
                motifs,
            }
        })
        .collect())
}

/// Rows per value of `column`, with their share of `total`.
fn shares(frame: &DataFrame, column: &str, total: u64) -> Result<Vec<Share>> {
    let counts = frame
        .clone()
        .lazy()
        .group_by([col(column)])
        .agg([len().cast(DataType::UInt64).alias("rows")])
        .collect()?;
    let names = counts.column(column)?.str()?;
    let rows = counts.column("rows")?.u64()?;
    Ok(names
        .iter()
        .zip(rows.iter())
        .map(|(n, r)| {
            let r = r.unwrap_or(0);
            Share {
                name: n.unwrap_or("(null)").to_owned(),
                rows: r,
                share: ratio(r as f64, total as f64),
            }
        })
        .collect())
}

/// Size statistics of every text column that has at least one non-null row,
/// and the total text bytes, in one aggregation.
fn column_stats(frame: &DataFrame) -> Result<(Vec<ColumnStats>, u64)> {
    let mut exprs = vec![
        col("text_bytes")
            .sum()
            .cast(DataType::Int64)
            .alias("text_bytes"),
    ];
    for (_, prefix) in TEXT_COLUMNS {
        let chars = format!("{prefix}_chars");
        exprs.push(
            col(chars.as_str())
                .count()
                .cast(DataType::Int64)
                .alias(format!("{prefix}|rows")),
        );
        for size in ["chars", "lines"] {
            let c = format!("{prefix}_{size}");
            let stat = |e: Expr, s: &str| e.alias(format!("{prefix}|{size}|{s}"));
            exprs.push(stat(col(c.as_str()).cast(DataType::Float64).mean(), "mean"));
            for (q, s) in [(0.5, "p50"), (0.95, "p95")] {
                let e = col(c.as_str()).quantile(lit(q), QuantileMethod::Nearest);
                exprs.push(stat(e.cast(DataType::Int64), s));
            }
            exprs.push(stat(col(c.as_str()).max(), "max"));
        }
        let e = (col(chars.as_str()).cast(DataType::Float64)
            / col("python_chars").cast(DataType::Float64))
        .mean();
        exprs.push(e.alias(format!("{prefix}|expansion")));
    }
    for (column, _) in TEXT_COLUMNS {
        let t = format!("{column}_tokens");
        exprs.push(
            col(t.as_str())
                .count()
                .cast(DataType::Int64)
                .alias(format!("{column}|tokens|rows")),
        );
        exprs.extend(dist_exprs(&t, &format!("{column}|tokens")));
    }
    let stats = frame.clone().lazy().select(exprs).collect()?;
    let f = |name: &str| -> Result<Option<f64>> {
        let c = stats.column(name)?.cast(&DataType::Float64)?;
        Ok(c.f64()?.get(0))
    };
    let i = |name: &str| -> Result<i64> { Ok(f(name)?.unwrap_or(0.0) as i64) };
    let mut columns = Vec::new();
    for (column, prefix) in TEXT_COLUMNS {
        let rows = i(&format!("{prefix}|rows"))?;
        if rows == 0 {
            continue;
        }
        let dist = |size: &str| -> Result<Dist> {
            Ok(Dist {
                mean: f(&format!("{prefix}|{size}|mean"))?.unwrap_or(0.0),
                p50: i(&format!("{prefix}|{size}|p50"))?,
                p95: i(&format!("{prefix}|{size}|p95"))?,
                max: i(&format!("{prefix}|{size}|max"))?,
            })
        };
        columns.push(ColumnStats {
            column: column.to_owned(),
            rows: rows as u64,
            chars: dist("chars")?,
            lines: dist("lines")?,
            expansion: if prefix == "python" {
                None
            } else {
                f(&format!("{prefix}|expansion"))?
            },
            tokens: if i(&format!("{column}|tokens|rows"))? > 0 {
                Some(dist_of(&stats, &format!("{column}|tokens"))?)
            } else {
                None
            },
        });
    }
    Ok((columns, i("text_bytes")?.max(0) as u64))
}

fn counters_of(manifest: &Value) -> Counters {
    let c = &manifest["counters"];
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let rejected: BTreeMap<String, u64> = c["rejected"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), u(v))).collect())
        .unwrap_or_default();
    let seconds = c["seconds"].as_f64().unwrap_or(0.0);
    let written = u(&c["written"]);
    Counters {
        generated: u(&c["generated"]),
        written,
        duplicates: u(&c["duplicates"]),
        rejected_total: rejected.values().sum(),
        rejected,
        seconds,
        rows_per_second: c["rows_per_second"]
            .as_f64()
            .unwrap_or_else(|| ratio(written as f64, seconds)),
    }
}

/// Notes where the shards on disk and the manifest disagree (e.g. a run still
/// going, or files added or removed by hand).
fn check_manifest(m: &Value, rows: u64, splits: &[Share], shards: u64, warnings: &mut Vec<String>) {
    let c = &m["counters"];
    if let Some(written) = c["written"].as_u64() {
        if written != rows {
            warnings.push(format!(
                "manifest says {written} rows written, shards hold {rows}"
            ));
        }
    }
    if let Some(per_split) = c["rows_per_split"].as_object() {
        for (split, n) in per_split {
            let found = splits
                .iter()
                .find(|s| &s.name == split)
                .map_or(0, |s| s.rows);
            let n = n.as_u64().unwrap_or(0);
            if n != found {
                warnings.push(format!(
                    "manifest says {n} {split} rows, shards hold {found}"
                ));
            }
        }
    }
    if let Some(listed) = m["shards"].as_array() {
        if listed.len() as u64 != shards {
            warnings.push(format!(
                "manifest lists {} shard files, data/ holds {shards}",
                listed.len()
            ));
        }
    }
}

/// All runs taken together: distributions over the stacked rows, counters summed.
fn total_of(dir: &Path, sections: &[Section], all: &DataFrame) -> Result<Section> {
    let shards = sections.iter().map(|s| s.storage.shards).sum();
    let disk_bytes = sections.iter().map(|s| s.storage.disk_bytes).sum();
    let mut total = summarize(
        format!("total of {} runs", sections.len()),
        dir.display().to_string(),
        all,
        shards,
        disk_bytes,
        None,
    )?;
    // The tokenizer, when every run names the same one.
    let names: Vec<Option<&str>> = sections
        .iter()
        .map(|s| s.tokens.as_ref().and_then(|t| t.tokenizer.as_deref()))
        .collect();
    if let (Some(t), Some(first)) = (total.tokens.as_mut(), names.first()) {
        if names.iter().all(|n| n == first) {
            t.tokenizer = first.map(str::to_owned);
        }
    }
    if sections.iter().all(|s| s.counters.is_some()) {
        let mut sum = Counters::default();
        for c in sections.iter().filter_map(|s| s.counters.as_ref()) {
            sum.generated += c.generated;
            sum.written += c.written;
            sum.duplicates += c.duplicates;
            sum.seconds += c.seconds;
            for (reason, n) in &c.rejected {
                *sum.rejected.entry(reason.clone()).or_default() += n;
            }
        }
        sum.rejected_total = sum.rejected.values().sum();
        // Runs may have run one after another: rate over their summed time.
        sum.rows_per_second = ratio(sum.written as f64, sum.seconds);
        total.counters = Some(sum);
    }
    Ok(total)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

impl Report {
    fn to_markdown(&self) -> String {
        let mut out = format!("# pairpipe report: {}\n", self.path);
        for s in self.runs.iter().chain(&self.total) {
            s.write_markdown(&mut out);
        }
        out
    }
}

impl Section {
    fn write_markdown(&self, out: &mut String) {
        // Writing to a String cannot fail.
        let _ = self.try_write_markdown(out);
    }

    fn try_write_markdown(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "\n## {} ({})\n", self.name, self.path)?;
        writeln!(
            out,
            "{} rows in {} shards, {} of text.",
            self.rows,
            self.storage.shards,
            human_bytes(self.storage.text_bytes)
        )?;
        for w in &self.warnings {
            writeln!(out, "\n> warning: {w}")?;
        }
        for (title, key, shares) in [
            ("Rows per split", "split", &self.splits),
            ("Categories", "category", &self.categories),
            ("Origins", "origin", &self.origins),
            ("Licenses of the mined rows", "license", &self.licenses),
            (
                "Top repositories of the mined rows",
                "repository",
                &self.repositories,
            ),
        ] {
            if shares.is_empty() {
                continue;
            }
            writeln!(
                out,
                "\n### {title}\n\n| {key} | rows | share |\n| --- | ---: | ---: |"
            )?;
            for s in shares {
                writeln!(out, "| {} | {} | {:.1}% |", s.name, s.rows, 100.0 * s.share)?;
            }
        }
        writeln!(
            out,
            "\n### Text sizes\n\n\
             | column | rows | chars mean | chars p50 | chars p95 | chars max \
             | lines mean | lines p50 | lines p95 | lines max | chars / python |\n\
             | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        )?;
        for c in &self.columns {
            let expansion = c.expansion.map_or("–".to_owned(), |e| format!("{e:.2}×"));
            writeln!(
                out,
                "| {} | {} | {:.1} | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                c.column,
                c.rows,
                c.chars.mean,
                c.chars.p50,
                c.chars.p95,
                c.chars.max,
                c.lines.mean,
                c.lines.p50,
                c.lines.p95,
                c.lines.max,
                expansion
            )?;
        }
        if let Some(t) = &self.tokens {
            t.write_markdown(&self.columns, out)?;
        }
        self.contents.write_markdown(out)?;
        let st = &self.storage;
        writeln!(
            out,
            "\n### Storage\n\n| shards | text bytes | disk bytes | compression |\n\
             | ---: | ---: | ---: | ---: |\n| {} | {} ({}) | {} ({}) | {:.2}× |",
            st.shards,
            human_bytes(st.text_bytes),
            st.text_bytes,
            human_bytes(st.disk_bytes),
            st.disk_bytes,
            st.compression_ratio
        )?;
        match &self.counters {
            None => writeln!(out, "\n### Counters\n\nno manifest.json")?,
            Some(c) => {
                writeln!(
                    out,
                    "\n### Counters (manifest.json)\n\n\
                     | generated | written | duplicates | rejected | seconds | rows/s |\n\
                     | ---: | ---: | ---: | ---: | ---: | ---: |\n\
                     | {} | {} | {} | {} | {:.2} | {:.0} |",
                    c.generated,
                    c.written,
                    c.duplicates,
                    c.rejected_total,
                    c.seconds,
                    c.rows_per_second
                )?;
                if !c.rejected.is_empty() {
                    writeln!(out, "\n| rejected because | rows |\n| --- | ---: |")?;
                    for (reason, n) in &c.rejected {
                        writeln!(out, "| {reason} | {n} |")?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl TokenStats {
    fn write_markdown(&self, columns: &[ColumnStats], out: &mut String) -> std::fmt::Result {
        let tokenizer = self
            .tokenizer
            .as_deref()
            .map_or(String::new(), |t| format!(" ({t})"));
        writeln!(
            out,
            "\n### Tokens{tokenizer}\n\n{} tokens in {} pairs.\n\n\
             | column | tokens mean | p50 | p95 | max |\n| --- | ---: | ---: | ---: | ---: |",
            self.total, self.rows
        )?;
        for c in columns {
            if let Some(d) = &c.tokens {
                writeln!(
                    out,
                    "| {} | {:.1} | {} | {} | {} |",
                    c.column, d.mean, d.p50, d.p95, d.max
                )?;
            }
        }
        let d = &self.pair;
        writeln!(
            out,
            "| pair | {:.1} | {} | {} | {} |",
            d.mean, d.p50, d.p95, d.max
        )?;
        writeln!(
            out,
            "\nPairs that fit a context window (pair_tokens ≤ context):\n\n\
             | context | rows | share |\n| ---: | ---: | ---: |"
        )?;
        for f in &self.context_fit {
            writeln!(
                out,
                "| {} | {} | {:.1}% |",
                f.context,
                f.rows,
                100.0 * f.share
            )?;
        }
        for (title, key, totals) in [
            ("Tokens per split", "split", &self.per_split),
            ("Tokens per category", "category", &self.per_category),
        ] {
            writeln!(
                out,
                "\n### {title}\n\n| {key} | rows | pair tokens | share |\n| --- | ---: | ---: | ---: |"
            )?;
            for t in totals {
                writeln!(
                    out,
                    "| {} | {} | {} | {:.1}% |",
                    t.name,
                    t.rows,
                    t.tokens,
                    100.0 * t.share
                )?;
            }
        }
        Ok(())
    }
}

impl Contents {
    fn write_markdown(&self, out: &mut String) -> std::fmt::Result {
        let table = |out: &mut String, title: &str, key: &str, shares: &[Share], note: &str| {
            if shares.is_empty() {
                return Ok(());
            }
            writeln!(
                out,
                "\n### {title}\n\n{note}| {key} | rows | share |\n| --- | ---: | ---: |"
            )?;
            for s in shares {
                writeln!(out, "| {} | {} | {:.1}% |", s.name, s.rows, 100.0 * s.share)?;
            }
            Ok(())
        };
        table(
            out,
            "Kernel size (python_source lines)",
            "lines",
            &self.python_lines,
            "",
        )?;
        let shown = self.builtins.len().min(TOP_BUILTINS);
        let note = format!(
            "Rows calling each builtin; the {shown} most used of {} (all in --json).\n\n",
            self.builtins.len()
        );
        table(out, "Builtins", "builtin", &self.builtins[..shown], &note)?;
        table(
            out,
            "Data types",
            "dtype",
            &self.dtypes,
            "Rows using each type.\n\n",
        )?;
        table(out, "Launch dimensions", "wp.tid()", &self.launch_dims, "")?;
        table(
            out,
            "Features",
            "feature",
            &self.features,
            "Rows whose kernel (with its functions) uses each, as the lowering saw it \
             (the `features` column).\n\n",
        )?;
        if !self.motifs.is_empty() {
            writeln!(
                out,
                "\n### Motifs per category\n\nRows of the category using each motif \
                 (the `motifs` column).\n\n| category | rows | motif | rows using it | share |\n\
                 | --- | ---: | --- | ---: | ---: |"
            )?;
            for c in &self.motifs {
                for (i, m) in c.motifs.iter().enumerate() {
                    let (cat, rows) = if i == 0 {
                        (c.category.as_str(), c.rows.to_string())
                    } else {
                        ("", String::new())
                    };
                    writeln!(
                        out,
                        "| {cat} | {rows} | {} | {} | {:.1}% |",
                        m.name,
                        m.rows,
                        100.0 * m.share
                    )?;
                }
            }
        }
        if !self.distinct.is_empty() {
            writeln!(
                out,
                "\n### Distinct kernels by dedup level\n\n\
                 | level | key column | distinct kernels | share of rows |\n| --- | --- | ---: | ---: |"
            )?;
            for d in &self.distinct {
                writeln!(
                    out,
                    "| {} | {} | {} | {:.1}% |",
                    d.level,
                    d.column,
                    d.kernels,
                    100.0 * d.share
                )?;
            }
        }
        Ok(())
    }
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motifs_count_rows_per_category_once_per_row() {
        let list = |v: &[&[&str]]| -> Series {
            let mut b = ListStringChunkedBuilder::new("motifs".into(), v.len(), 8);
            for row in v {
                b.append_values_iter(row.iter().copied());
            }
            b.finish().into_series()
        };
        let frame = DataFrame::new_infer_height(vec![
            Series::new(
                "category".into(),
                ["physics", "physics", "physics", "fields", "mined"],
            )
            .into(),
            list(&[
                &["spring", "euler", "spring"],
                &["euler"],
                &[],
                &["blur"],
                &[],
            ])
            .into(),
        ])
        .unwrap();
        let got: Vec<(String, u64, Vec<(String, u64, f64)>)> = motifs_per_category(&frame)
            .unwrap()
            .into_iter()
            .map(|c| {
                let m = c
                    .motifs
                    .into_iter()
                    .map(|s| (s.name, s.rows, s.share))
                    .collect();
                (c.category, c.rows, m)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("fields".into(), 1, vec![("blur".into(), 1, 1.0)]),
                (
                    "physics".into(),
                    3,
                    vec![
                        ("euler".into(), 2, 2.0 / 3.0),
                        // Twice in one kernel: one row.
                        ("spring".into(), 1, 1.0 / 3.0),
                    ]
                ),
            ]
        );
    }
}
