//! The `pairpipe` command line. Only argument handling lives here; the work
//! is done by the library's modules.

// The lowering allocates many small strings; mimalloc makes that ~40% cheaper
// than glibc's allocator (see BENCHMARKS.md). Version 2 of mimalloc (the `v2`
// feature): workers allocate the rows the writer frees, and v3 answered that
// pattern with twice the resident memory (~200 vs ~120 MB on the main job)
// and more fresh pages to fault in. The `system-alloc` feature keeps
// the system allocator, for heap profilers that hook malloc (heaptrack).
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static GLOBAL: pairpipe::memory::Allocator = pairpipe::memory::Allocator;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use pairpipe::config::{Config, Size, TargetSpec, UserError, user_error};
use pairpipe::pipeline::Part;
use pairpipe::{lower, merge, pipeline, report, synth};

/// Training pairs of NVIDIA Warp kernels (Python) and the C++/CUDA that
/// warp-lang 1.19.0 generates for them, streamed into sharded Parquet.
#[derive(Parser)]
#[command(name = "pairpipe", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a dataset as a pipeline config describes it.
    ///
    /// Writes OUT/data/{train,validation,test}-NNNNN.parquet, OUT/manifest.json
    /// and a dataset card OUT/README.md. The same config and seed give
    /// byte-identical shards with any number of workers.
    ///
    /// A run that is killed (even with SIGKILL) or stops on an error such as
    /// a full disk leaves OUT/checkpoint.json; the same command again resumes
    /// it from its last complete shard and ends with the shards an
    /// uninterrupted run writes. Resuming with another config is refused.
    Run {
        /// Pipeline config (TOML), e.g. pipelines/smoke.toml.
        config: PathBuf,
        /// Output folder, instead of the config's run.output.
        #[arg(long, value_name = "DIR")]
        output: Option<PathBuf>,
        /// Write exactly N rows, instead of the config's [target].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
        /// Random seed, instead of the config's run.seed.
        #[arg(long, value_name = "S")]
        seed: Option<u64>,
        /// Worker threads for synthesize/lower/verify, instead of the
        /// config's run.workers (0 = one per core).
        #[arg(long, value_name = "N")]
        workers: Option<usize>,
        /// Make only part i of N (0 ≤ i < N): the sample indices i, i+N,
        /// i+2N, …, up to 1/N of the target. The output defaults to
        /// OUT-part-i-of-N beside the run's OUT; `pairpipe merge` joins the N
        /// parts.
        #[arg(long, value_name = "i/N")]
        part: Option<String>,
        /// Mine the Python files under DIR (a folder or glob) instead of the
        /// config's source: every module-level @wp.kernel becomes a row. The
        /// config's [synth] and [target] are then ignored (the run ends when
        /// the corpus does; --count caps it).
        #[arg(long, value_name = "DIR")]
        source: Option<String>,
        /// No progress bar (it is also off when stderr is not a terminal).
        #[arg(long)]
        quiet: bool,
        /// Start over even if OUT holds an interrupted run to resume.
        #[arg(long)]
        fresh: bool,
    },
    /// Join runs into one dataset: the N parts of a run (made with `run
    /// --part i/N`), several whole runs (a synthesized and a mined one, say),
    /// or both.
    ///
    /// Parts of the same config, seed and corpus are one run, which needs
    /// every part 0..N once; a whole run folder is a run of its own. Rows are
    /// deduplicated exactly on dedup_key across everything given, in (run,
    /// index) order with runs in the order given (a repeated key keeps its
    /// first row: the lowest index of a run, the earliest run), and written
    /// into DIR/data/*.parquet with DIR/manifest.json and a dataset card.
    /// Joined runs must share versions, dedup level, IR columns and
    /// tokenizer; their ids get a run prefix (r0-, r1-, ...).
    Merge {
        /// The part and run folders (each holding manifest.json and data/).
        #[arg(required = true, value_name = "RUNS")]
        parts: Vec<PathBuf>,
        /// Folder to write the merged dataset into.
        #[arg(long, value_name = "DIR")]
        output: PathBuf,
        /// No progress bar (it is also off when stderr is not a terminal).
        #[arg(long)]
        quiet: bool,
    },
    /// Summarize the dataset(s) in a run's folder, or in a folder of runs.
    Report {
        /// A run's output folder (holding manifest.json), or a folder of them.
        dir: PathBuf,
        /// Print JSON instead of text tables.
        #[arg(long)]
        json: bool,
    },
    /// Print the module source warp-lang would generate for a Python file's kernels.
    ///
    /// Lowers every module-level @wp.kernel (and the @wp.func it calls) in
    /// definition order; the rest of the file is passed over.
    Lower {
        /// A Python file with one or more @wp.kernel functions.
        file: PathBuf,
        /// Which module to print: the C++ one (cpu) or the CUDA one (cuda).
        #[arg(long, value_enum)]
        target: TargetArg,
        /// Lower every kernel that can be lowered and print the module of
        /// those; each kernel that cannot is reported on stderr, one line
        /// `FILE:LINE:COL: kernel 'NAME': message`, and the exit code is 2
        /// if there was any.
        #[arg(long)]
        keep_going: bool,
        /// Most code one kernel (or @wp.func), and the module's kernels
        /// together, may generate: bytes, or a size like "16MiB". A kernel
        /// past it fails with one line instead of filling memory (a few
        /// nested loops that warp unrolls multiply a body 16 times each).
        #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
        max_generated: Size,
    },
    /// Write synthesized kernels as Python files, DIR/{index:06}_{category}.py.
    ///
    /// Sample i is the same kernel the pipeline makes for index i with the
    /// same seed, when the pipeline's categories are these (all seventeen,
    /// with equal weights, or only --category).
    Synth {
        /// How many kernels to write (indices 0..N).
        #[arg(long, value_name = "N")]
        count: u64,
        /// Random seed.
        #[arg(long, value_name = "S", default_value_t = 0)]
        seed: u64,
        /// Only this category (default: all, with equal weights).
        #[arg(long, value_name = "C",
              value_parser = clap::builder::PossibleValuesParser::new(synth::CATEGORIES.iter().copied()))]
        category: Option<String>,
        /// Folder to write into (created if missing); each kernel's launch
        /// spec goes next to it as DIR/{index:06}_{category}.json.
        #[arg(long, value_name = "DIR", required_unless_present = "stats")]
        out: Option<PathBuf>,
        /// Print, per category, how many draws each dataflow rule sent back
        /// to be drawn again, and how often each motif was used.
        #[arg(long)]
        stats: bool,
    },
    /// Write a built-in encoding's ranks (o200k_base, cl100k_base) in
    /// tiktoken's file format, for the tests' reference tokenizer.
    #[command(hide = true)]
    TokensRanks {
        /// o200k_base or cl100k_base.
        encoding: String,
        /// The file to write.
        out: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum TargetArg {
    Cpu,
    Cuda,
}

fn main() -> ExitCode {
    no_huge_pages();
    let code = match dispatch(Cli::parse().command) {
        Ok(()) => 0,
        Err(e) => {
            let message = format!("{e:#}").replace('\n', " ");
            if out_of_space(&e) {
                // One line, like every error; what to do comes with it.
                eprintln!(
                    "error: {message}; the disk is full (or a file size or quota limit \
                     was hit): every complete shard is intact, free some space and run \
                     the same command again to resume from the last one"
                );
                2
            } else if e.downcast_ref::<UserError>().is_some() {
                eprintln!("error: {message}");
                2
            } else {
                eprintln!("error: {message}");
                1
            }
        }
    };
    exit_now(code)
}

/// Ends the process without its exit handlers. Everything is written,
/// synced and dropped by now; what is left is mimalloc's handler, which
/// returns every page of the heap to the OS one `madvise` at a time (~9 ms
/// after the main job) just before the OS takes them all back anyway.
fn exit_now(code: u8) -> ExitCode {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: _exit ends the process at once; nothing runs after it.
    unsafe {
        libc::_exit(code.into())
    }
    #[cfg(not(unix))]
    ExitCode::from(code)
}

/// Transparent huge pages off for this process. mimalloc asks for them on
/// its arena, and then every page its purge returned to the OS faults back in
/// as 2 MiB zeroed at once: on the main job that zeroing was 7-12% of all CPU
/// time, for a heap that churns through row-sized strings (BENCHMARKS.md).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// ENOSPC, EFBIG or EDQUOT anywhere in the error. Some layers (the
/// Parquet writer) keep only the message of the io::Error they wrap, hence
/// the second test.
fn out_of_space(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    let by_kind = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| matches!(io.kind(), StorageFull | FileTooLarge | QuotaExceeded))
    });
    let text = format!("{e:#}");
    by_kind
        || ["(os error 28)", "(os error 27)", "(os error 122)"]
            .iter()
            .any(|code| text.contains(code))
}

fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Run {
            config,
            output,
            count,
            seed,
            workers,
            part,
            source,
            quiet,
            fresh,
        } => {
            // Checked first: a bad --part is a one-line error whatever the config.
            let part = part.as_deref().map(Part::parse).transpose()?;
            let mut cfg = Config::load(&config)?;
            match (output, part) {
                (Some(dir), _) => cfg.run.output = dir,
                (None, Some(p)) => cfg.run.output = p.default_output(&cfg.run.output),
                (None, None) => {}
            }
            if let Some(dir) = source {
                cfg.source = pairpipe::config::SourceSpec::folder(&dir);
                cfg.synth = Default::default();
                cfg.target = TargetSpec::default();
            }
            if let Some(n) = count {
                cfg.target = TargetSpec::rows(n);
            }
            if let Some(s) = seed {
                cfg.run.seed = s;
            }
            if let Some(w) = workers {
                cfg.run.workers = w;
            }
            cfg.validate()
                .map_err(|e| user_error(format!("{}: {e}", config.display())))?;
            let opts = pipeline::RunOptions {
                part,
                progress: !quiet,
                fresh,
            };
            let report = pipeline::run_with(&cfg, opts)?;
            eprint!("{}", pipeline::summary(&report));
            Ok(())
        }
        Command::Merge {
            parts,
            output,
            quiet,
        } => {
            let report = merge::merge(&parts, &output, !quiet)?;
            eprint!("{}", merge::summary(&report));
            Ok(())
        }
        Command::Report { dir, json } => {
            if !dir.is_dir() {
                return Err(user_error(format!("{}: not a folder", dir.display())));
            }
            print_stdout(&report::run(&dir, json)?)
        }
        Command::Lower {
            file,
            target,
            keep_going,
            max_generated,
        } => {
            let source = read_source(&file)?;
            let (cpu, cuda) = (
                matches!(target, TargetArg::Cpu),
                matches!(target, TargetArg::Cuda),
            );
            // warp prints the path a module was imported from in the comments
            // above @wp.func definitions; the path as given stands in for it.
            let name = file.to_string_lossy();
            let lowered =
                lower::lower_file_with(&source, &name, cpu, cuda, keep_going, max_generated.0)
                    .map_err(|e| user_error(format!("{}:{e}", file.display())))?;
            let module = if cpu { lowered.cpu } else { lowered.cuda };
            print_stdout(&module.and_then(|m| m.module).unwrap_or_default())?;
            if lowered.skipped.is_empty() {
                return Ok(());
            }
            let mut err = std::io::stderr().lock();
            for (kernel, e) in &lowered.skipped {
                let _ = writeln!(
                    err,
                    "{}:{}:{}: kernel '{kernel}': {}",
                    file.display(),
                    e.line,
                    e.col,
                    e.message
                );
            }
            Err(user_error(format!(
                "{}: {} of the file's kernels could not be lowered",
                file.display(),
                lowered.skipped.len()
            )))
        }
        Command::Synth {
            count,
            seed,
            category,
            out,
            stats,
        } => write_samples(count, seed, category.as_deref(), out.as_deref(), stats),
        Command::TokensRanks { encoding, out } => pairpipe::tokens::write_ranks(&encoding, &out),
    }
}

fn parse_size(text: &str) -> Result<Size, String> {
    match Size::parse(text)? {
        Size(n) if n < 1 << 10 => Err("must be at least 1KiB".into()),
        size => Ok(size),
    }
}

fn read_source(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).map_err(|e| user_error(format!("{}: {e}", file.display())))
}

/// Print to stdout; a closed pipe (`| head`) is not an error.
fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn write_samples(
    count: u64,
    seed: u64,
    category: Option<&str>,
    out: Option<&Path>,
    stats: bool,
) -> anyhow::Result<()> {
    let unwritable = |e: std::io::Error| user_error(format!("cannot write: {e}"));
    if let Some(out) = out {
        std::fs::create_dir_all(out).map_err(unwritable)?;
    }
    // Draw the category exactly as the pipeline does, so index i matches.
    let weights: Vec<(&'static str, f64)> = match category {
        Some(c) => synth::CATEGORIES
            .iter()
            .filter(|&&k| k == c)
            .map(|&k| (k, 1.0))
            .collect(),
        None => synth::CATEGORIES.iter().map(|&k| (k, 1.0)).collect(),
    };
    // Per category: kernels, redraws per rule, motif uses.
    type Tally = (u64, [u64; synth::dataflow::RULES], Vec<(&'static str, u64)>);
    let mut tally: Vec<(&'static str, Tally)> = Vec::new();
    let knobs = synth::Knobs::default();
    for index in 0..count {
        let mut rng = synth::sample_rng(seed, index);
        let category = synth::pick_category(seed, index, &weights);
        let mut redrawn = [0u64; synth::dataflow::RULES];
        let sample = synth::synthesize_counting(category, index, &mut rng, &knobs, &mut redrawn);
        if stats {
            let t = match tally.iter().position(|t| t.0 == category) {
                Some(p) => &mut tally[p].1,
                None => {
                    tally.push((category, (0, [0; synth::dataflow::RULES], Vec::new())));
                    &mut tally.last_mut().unwrap().1
                }
            };
            t.0 += 1;
            for (a, b) in t.1.iter_mut().zip(redrawn) {
                *a += b;
            }
            for m in &sample.motifs {
                match t.2.iter_mut().find(|x| x.0 == *m) {
                    Some(x) => x.1 += 1,
                    None => t.2.push((m, 1)),
                }
            }
        }
        if let Some(out) = out {
            let path = out.join(format!("{index:06}_{category}.py"));
            std::fs::write(&path, &sample.python_source).map_err(unwritable)?;
            let path = out.join(format!("{index:06}_{category}.json"));
            std::fs::write(&path, &sample.launch_spec).map_err(unwritable)?;
        }
    }
    if stats {
        let mut text = String::new();
        text.push_str("category\tkernels");
        for r in synth::dataflow::RULE_NAMES {
            text.push_str(&format!("\tredrawn_{r}"));
        }
        text.push_str("\tmotifs\n");
        for (c, (n, r, ms)) in &mut tally {
            ms.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            text.push_str(&format!("{c}\t{n}"));
            for x in r.iter() {
                text.push_str(&format!("\t{x}"));
            }
            let list: Vec<String> = ms.iter().map(|(m, k)| format!("{m}:{k}")).collect();
            text.push_str(&format!("\t{}\n", list.join(",")));
        }
        print!("{text}");
    }
    Ok(())
}
