//! OUT/README.md: a Hugging Face dataset card. Its YAML header maps splits to
//! shard files, which is what lets `load_dataset(OUT)` work offline.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use super::{SPLITS, atomic_write, column_specs};

#[derive(Debug, Clone)]
pub struct CardInfo {
    pub name: String,
    pub rows_per_split: Vec<(String, u64)>,
    pub config_toml: String,
    pub cpu: bool,
    pub cuda: bool,
    pub modules: bool,
    /// The tokenizer of the `*_tokens` columns ("none": no counts).
    pub tokenizer: String,
    /// How the folder was made: a whole run, one part of one, or a merge of parts.
    pub origin: Origin,
    /// A corpus run's provenance figures; `None` for a synthesized run.
    pub mined: Option<MinedCard>,
}

/// What the card says about mined rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MinedCard {
    /// Written rows by license (SPDX id, "unknown" where none was found).
    pub licenses: Vec<(String, u64)>,
    /// Written rows by repository.
    pub repos: Vec<(String, u64)>,
    /// Kernels or files left out, by reason.
    pub rejected: Vec<(String, u64)>,
}

/// `counts` most frequent first (ties by name), at most `n`.
fn top(counts: &[(String, u64)], n: usize) -> Vec<(String, u64)> {
    let mut v = counts.to_vec();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

/// What made a dataset folder, for the card's "How it was made".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Origin {
    /// `pairpipe run`.
    #[default]
    Run,
    /// `pairpipe run --part index/count`.
    Part { index: u64, count: u64 },
    /// `pairpipe merge` of `parts` parts, `duplicates` rows dropped across them.
    Merge { parts: u64, duplicates: u64 },
    /// `pairpipe merge` of several runs (each whole or in parts), in this order.
    Join { runs: Vec<JoinedRun> },
}

/// One run of a join, as the card describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinedRun {
    pub name: String,
    /// "synthetic" | "mined".
    pub origin: String,
    pub seed: u64,
    /// Input folders: its parts, or 1 for a whole run.
    pub parts: u64,
    pub rows_in: u64,
    /// Rows of the run in the dataset.
    pub rows: u64,
    /// Rows dropped whose key another part of the same run had at a lower index.
    pub duplicates_across_parts: u64,
    /// Rows dropped whose key an earlier run had.
    pub duplicates_across_runs: u64,
    /// The run's config (`Config::content_toml`).
    pub config_toml: String,
}

/// Writes OUT/README.md, replacing any previous card atomically.
pub fn write_dataset_card(out_dir: &Path, card: &CardInfo) -> Result<()> {
    let text = render(out_dir, card)?;
    atomic_write(&out_dir.join("README.md"), text.as_bytes())
}

/// A YAML (and JSON) double-quoted scalar: safe for any name.
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn size_category(rows: u64) -> &'static str {
    match rows {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        10_000_000..100_000_000 => "10M<n<100M",
        _ => "100M<n<1B",
    }
}

/// The `dtype` / `sequence` form datasets' YAML features use for a column type.
fn yaml_feature(type_name: &str) -> String {
    match type_name
        .strip_prefix("list<")
        .and_then(|t| t.strip_suffix('>'))
    {
        // `sequence:` is read by every datasets release (4.x maps it to List).
        Some(item) => format!("sequence: {item}"),
        None => format!("dtype: {type_name}"),
    }
}

fn render(out_dir: &Path, card: &CardInfo) -> Result<String> {
    // Only splits that have rows: a split without shard files would break loading.
    let splits: Vec<(&str, u64)> = SPLITS
        .iter()
        .filter_map(|&s| {
            let rows = card
                .rows_per_split
                .iter()
                .filter(|(n, _)| n == s)
                .map(|(_, r)| r)
                .sum();
            (rows > 0).then_some((s, rows))
        })
        .collect();
    let total: u64 = splits.iter().map(|(_, r)| r).sum();
    let columns = column_specs()?;

    let mut y = String::from("---\n");
    writeln!(y, "pretty_name: {}", quoted(&card.name))?;
    y.push_str("tags:\n- code\n- nvidia-warp\n");
    let joined = match &card.origin {
        Origin::Join { runs } => runs.as_slice(),
        _ => &[],
    };
    let rows_of = |origin: &str| -> u64 {
        joined
            .iter()
            .filter(|r| r.origin == origin)
            .map(|r| r.rows)
            .sum()
    };
    // A join may hold both kinds of rows.
    let synthetic = match joined.is_empty() {
        true => card.mined.is_none(),
        false => joined.iter().any(|r| r.origin == "synthetic"),
    };
    if card.mined.is_some() {
        y.push_str("- mined\n");
    }
    if synthetic {
        y.push_str("- synthetic\n");
    }
    if card.cuda {
        y.push_str("- cuda\n");
    }
    if card.cpu {
        y.push_str("- cpp\n");
    }
    y.push_str("task_categories:\n- text-generation\n");
    writeln!(y, "size_categories:\n- {}", size_category(total))?;
    y.push_str("configs:\n- config_name: default\n  data_files:\n");
    for (split, _) in &splits {
        writeln!(y, "  - split: {split}\n    path: data/{split}-*.parquet")?;
    }
    y.push_str("dataset_info:\n  features:\n");
    for c in columns {
        writeln!(
            y,
            "  - name: {}\n    {}",
            c.name,
            yaml_feature(&c.type_name)
        )?;
    }
    y.push_str("---\n\n");

    let ir: Vec<&str> = [
        (card.cpu, "`cpu_forward`, `cpu_backward` (C++)"),
        (card.cuda, "`cuda_forward`, `cuda_backward` (CUDA)"),
        (card.modules && card.cpu, "`cpu_module` (whole C++ module)"),
        (
            card.modules && card.cuda,
            "`cuda_module` (whole CUDA module)",
        ),
    ]
    .into_iter()
    .filter_map(|(on, text)| on.then_some(text))
    .collect();
    let filled = if ir.is_empty() {
        "none (Python sources only)".to_string()
    } else {
        ir.join(", ")
    };

    let mut m = y;
    writeln!(m, "# {}\n", card.name)?;
    let mined_how = "mined from a corpus of real Python files: each module-level \
             `@wp.kernel` was cut out of its file with the imports, constants, structs and \
             `@wp.func`s it reaches into a minimal module (`python_source`), parsed, never \
             executed; the `source_*` columns say where each came from";
    let kernels = match (card.mined.is_some(), synthetic) {
        (true, true) => format!(
            "The kernels come from several runs joined into one dataset: {} rows synthesized \
             (`origin` = `synthetic`, their `source_*` columns null) and {} rows (`origin` = \
             `mined`) {mined_how}",
            rows_of("synthetic"),
            rows_of("mined")
        ),
        (true, false) => format!("The kernels were {mined_how}"),
        _ => "The kernels are synthesized".to_string(),
    };
    writeln!(
        m,
        "Pairs of GPU kernels written in [NVIDIA Warp](https://github.com/NVIDIA/warp)'s Python \
         dialect and the C++ / CUDA source that warp-lang 1.19.0's code generator emits for them, \
         forward and backward (adjoint) passes. {kernels}; the generated source \
         was produced by pairpipe, a Rust re-implementation of warp's lowering that is byte-exact \
         (up to the 8-hex module hash in kernel names).\n"
    )?;
    if let Some(mined) = &card.mined {
        m.push_str(
            "## Sources\n\nLicenses present (rows; SPDX ids where recognizable, from a \
                    LICENSE / COPYING file at or above each file or the corpus's license column). \
                    Check each license's terms before you redistribute or train on the rows.\n\n\
                    | license | rows |\n| --- | ---: |\n",
        );
        for (l, n) in top(&mined.licenses, usize::MAX) {
            writeln!(m, "| {} | {n} |", l.replace('|', "\\|"))?;
        }
        if synthetic {
            writeln!(
                m,
                "\nThe {} synthesized rows have no source, repository or license (they were \
                 generated, not copied).",
                rows_of("synthetic")
            )?;
        }
        m.push_str("\nTop repositories:\n\n| repository | rows |\n| --- | ---: |\n");
        for (r, n) in top(&mined.repos, 10) {
            writeln!(m, "| {} | {n} |", r.replace('|', "\\|"))?;
        }
        if !mined.rejected.is_empty() {
            m.push_str(
                "\nKernels and files of the corpus left out, by reason (`manifest.json` has the \
                 first examples of each, with file and line):\n\n| reason | count |\n| --- | ---: |\n",
            );
            for (r, n) in top(&mined.rejected, usize::MAX) {
                writeln!(m, "| {r} | {n} |")?;
            }
        }
        m.push('\n');
    }
    writeln!(
        m,
        "IR columns filled in this dataset: {filled}. The other IR columns are null.\n"
    )?;
    m.push_str("| split | rows |\n| --- | ---: |\n");
    for (split, rows) in &splits {
        writeln!(m, "| {split} | {rows} |")?;
    }
    writeln!(m, "| total | {total} |\n")?;
    if card.tokenizer == "none" {
        m.push_str(
            "No token counts: the run was made with `tokens.tokenizer = \"none\"`, so the \
             `*_tokens` columns are null.\n\n",
        );
    } else {
        writeln!(
            m,
            "Token counts (`python_source_tokens`, `cuda_forward_tokens`, ..., and `pair_tokens`, \
             their sum over the columns filled) are under the tokenizer `{}`, each column \
             tokenized on its own without special tokens.\n",
            card.tokenizer.replace('`', "'")
        )?;
    }
    m.push_str(
        "Splits are chosen from `dedup_key`, so kernels that are structurally the same never \
         appear in two splits.\n\n## Columns\n\n| column | type | nullable | description |\n\
         | --- | --- | --- | --- |\n",
    );
    for c in columns {
        let description = c.description.replace('|', "\\|");
        let nullable = if c.nullable { "yes" } else { "no" };
        writeln!(
            m,
            "| `{}` | {} | {nullable} | {description} |",
            c.name, c.type_name
        )?;
    }
    let fenced = |toml: &str| {
        let fence = "`".repeat(3.max(longest_backtick_run(toml) + 1));
        format!("{fence}toml\n{}\n{fence}", toml.trim_end())
    };
    let made = match &card.origin {
        Origin::Run => "Generated by `pairpipe run`".to_string(),
        Origin::Part { index, count } => format!(
            "This folder is part {index} of {count} of a run (`pairpipe run --part {index}/{count}`): \
             the samples with index {index}, {index}+{count}, {index}+2·{count}, …, up to 1/{count} of \
             the run's target. Duplicates were removed within this part only; `pairpipe merge` joins \
             the {count} parts into the whole dataset with a global, exact deduplication. The run has"
        ),
        Origin::Merge { parts, duplicates } => format!(
            "Generated by {parts} parts (`pairpipe run --part i/{parts}`, part i taking the sample \
             indices i, i+{parts}, i+2·{parts}, …) joined by `pairpipe merge`, which removed \
             {duplicates} rows whose `dedup_key` another part also had, keeping the lowest index, \
             and wrote the rows in index order. The parts were made"
        ),
        Origin::Join { runs } => {
            let across: u64 = runs.iter().map(|r| r.duplicates_across_runs).sum();
            let mut t = format!(
                "Joined by `pairpipe merge` from {} runs, in this order: the rows of each run in \
                 index order, run after run. A row whose `dedup_key` an earlier row already had \
                 was dropped: {across} rows across runs (the earlier run's row kept), {} across \
                 the parts of a run. Splits are as each row had them. Every `id` is its run's id \
                 prefixed with `r<run>-` (`r0-`, `r1-`, ...), so ids stay unique where runs share \
                 a seed.\n\n\
                 | run | name | origin | seed | folders | rows in | rows kept | dropped across runs |\n\
                 | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
                runs.len(),
                runs.iter().map(|r| r.duplicates_across_parts).sum::<u64>()
            );
            for (k, r) in runs.iter().enumerate() {
                writeln!(
                    t,
                    "| {k} | {} | {} | {} | {} | {} | {} | {} |",
                    r.name.replace('|', "\\|"),
                    r.origin,
                    r.seed,
                    r.parts,
                    r.rows_in,
                    r.rows,
                    r.duplicates_across_runs
                )?;
            }
            for (k, r) in runs.iter().enumerate() {
                write!(
                    t,
                    "\nRun {k} (`r{k}-`) was made with this configuration:\n\n{}\n",
                    fenced(&r.config_toml)
                )?;
            }
            t
        }
    };
    let configured = match &card.origin {
        Origin::Join { .. } => made,
        _ => format!(
            "{made} with this configuration:\n\n{}\n",
            fenced(&card.config_toml)
        ),
    };
    writeln!(
        m,
        "\n## How it was made\n\n\
         {configured}\n\
         `manifest.json` next to this card lists the counters of the run (generated, duplicates, \
         rejections by reason) and every shard with its row count, size and xxh3 checksum. \
         Shards are zstd-compressed Parquet; their key-value metadata holds the pairpipe and warp \
         versions and the run config.\n"
    )?;
    let out = out_dir.display().to_string();
    let q = quoted(&out);
    let data = quoted(&format!("{out}/data"));
    let glob = quoted(&format!("{out}/data/*.parquet"));
    writeln!(
        m,
        "## How to load\n\n```python\n\
         from datasets import load_dataset\n\
         ds = load_dataset({q})  # the splits this card declares\n\
         ds = load_dataset(\"parquet\", data_dir={data})  # or from the shards alone\n\n\
         import pandas as pd\n\
         df = pd.read_parquet({data})  # every split; the `split` column tells them apart\n\n\
         import polars as pl\n\
         lf = pl.scan_parquet({glob})\n\
         lf.filter(pl.col(\"split\") == \"train\").select(\"python_source\", \"cuda_forward\").collect()\n\n\
         # what each kernel uses, as the lowering saw it: structs, funcs, loops, atomics, tiles, ...\n\
         with_loops = df[df[\"features\"].map(lambda f: \"loops\" in f)]\n\
         import json  # synthesized rows: how to launch the kernel (dims, shapes, roles, value ranges)\n\
         spec = json.loads(df[\"launch_spec\"].dropna().iloc[0]) if df[\"launch_spec\"].notna().any() else None\n```"
    )?;
    Ok(m)
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card() -> CardInfo {
        CardInfo {
            name: "demo: \"quoted\"".into(),
            rows_per_split: vec![
                ("train".into(), 1500),
                ("validation".into(), 0),
                ("test".into(), 7),
            ],
            config_toml: "[run]\nname = \"demo\"\n# a ```` fence inside\n".into(),
            cpu: false,
            cuda: true,
            modules: false,
            tokenizer: "o200k_base".into(),
            origin: Origin::Run,
            mined: None,
        }
    }

    #[test]
    fn front_matter_lists_only_splits_with_rows() {
        let text = render(Path::new("shards/demo"), &card()).unwrap();
        let front = text.split("---\n").nth(1).unwrap();
        assert!(front.contains("  - split: train\n    path: data/train-*.parquet\n"));
        assert!(front.contains("  - split: test\n    path: data/test-*.parquet\n"));
        assert!(!front.contains("validation"));
        assert!(front.contains("pretty_name: \"demo: \\\"quoted\\\"\"\n"));
        assert!(front.contains("- 1K<n<10K\n"));
        assert!(front.contains("  - name: builtins\n    sequence: string\n"));
        assert!(front.contains("  - name: dedup_key\n    dtype: uint64\n"));
    }

    #[test]
    fn body_has_columns_config_and_loading() {
        let text = render(Path::new("shards/demo"), &card()).unwrap();
        for c in column_specs().unwrap() {
            assert!(
                text.contains(&format!("| `{}` | {} |", c.name, c.type_name)),
                "{}",
                c.name
            );
        }
        // The config's own ```` run forces a longer fence, so the block stays intact.
        assert!(text.contains("`````toml\n[run]\nname = \"demo\"\n# a ```` fence inside\n`````\n"));
        assert!(text.contains("load_dataset(\"shards/demo\")"));
        assert!(text.contains("data_dir=\"shards/demo/data\""));
        assert!(text.contains("`cuda_forward`, `cuda_backward` (CUDA)"));
        assert!(!text.contains("`cpu_forward`, `cpu_backward` (C++)"));
        assert!(text.contains("Generated by `pairpipe run` with this configuration:"));
        assert!(text.contains("are under the tokenizer `o200k_base`"));
    }

    #[test]
    fn parts_and_merges_say_how_they_were_made() {
        let mut c = card();
        c.origin = Origin::Part { index: 2, count: 8 };
        let text = render(Path::new("out"), &c).unwrap();
        assert!(
            text.contains("part 2 of 8 of a run (`pairpipe run --part 2/8`)"),
            "{text}"
        );
        c.origin = Origin::Merge {
            parts: 8,
            duplicates: 17,
        };
        let text = render(Path::new("out"), &c).unwrap();
        assert!(
            text.contains("Generated by 8 parts") && text.contains("removed 17 rows"),
            "{text}"
        );
    }

    #[test]
    fn a_join_of_mined_and_synthetic_runs_tells_both() {
        let run = |name: &str, origin: &str, rows, dropped| JoinedRun {
            name: name.into(),
            origin: origin.into(),
            seed: 0,
            parts: 1,
            rows_in: rows + dropped,
            rows,
            duplicates_across_parts: 0,
            duplicates_across_runs: dropped,
            config_toml: format!("[run]\nname = \"{name}\"\n"),
        };
        let mut c = card();
        c.origin = Origin::Join {
            runs: vec![run("real", "mined", 9, 0), run("gen", "synthetic", 34, 6)],
        };
        c.mined = Some(MinedCard {
            licenses: vec![("MIT".into(), 9)],
            repos: vec![("repo".into(), 9)],
            rejected: vec![],
        });
        let text = render(Path::new("out"), &c).unwrap();
        let front = text.split("---\n").nth(1).unwrap();
        assert!(front.contains("- mined\n- synthetic\n"), "{front}");
        assert!(text.contains("34 rows synthesized"), "{text}");
        assert!(text.contains("and 9 rows (`origin` = `mined`)"), "{text}");
        assert!(text.contains("| MIT | 9 |"), "{text}");
        assert!(
            text.contains("The 34 synthesized rows have no source"),
            "{text}"
        );
        assert!(text.contains("dropped: 6 rows across runs"), "{text}");
        assert!(
            text.contains("| 1 | gen | synthetic | 0 | 1 | 40 | 34 | 6 |"),
            "{text}"
        );
        assert!(text.contains("Run 0 (`r0-`) was made with this configuration:\n\n```toml\n[run]\nname = \"real\"\n```"));
        // One configuration block per run, none for the join as a whole.
        assert_eq!(text.matches("```toml").count(), 2);
    }
}
