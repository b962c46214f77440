//! Where the time goes: one criterion benchmark per pipeline stage, on the
//! same synthesized kernels the pipeline makes, and the pipeline end to end.
//!
//!     cargo bench --bench stages
//!
//! Figures and the machine they were taken on are in BENCHMARKS.md.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pairpipe::config::{Config, DedupLevel, TargetSpec};
use pairpipe::dedup::{dedup_key, dedup_keys};
use pairpipe::lang::{ast::with_arena, parse_module};
use pairpipe::lower::{Target, lower, lower_file_keep_going};
use pairpipe::pipeline::{Outcome, Scratch, WorkerContext, process};
use pairpipe::sink::{Sink, SinkOptions};
use pairpipe::synth::{CATEGORIES, sample_rng, synthesize};
use pairpipe::verify::verify;
use std::hint::black_box;

const SAMPLES: u64 = 200;

fn sources() -> Vec<String> {
    (0..SAMPLES)
        .map(|i| {
            let category = CATEGORIES[i as usize % CATEGORIES.len()];
            synthesize(category, i, &mut sample_rng(42, i)).python_source
        })
        .collect()
}

fn stages(c: &mut Criterion) {
    let srcs = sources();
    let mut g = c.benchmark_group("stage");
    g.throughput(Throughput::Elements(SAMPLES));

    g.bench_function("synthesize", |b| {
        b.iter(|| {
            for i in 0..SAMPLES {
                let category = CATEGORIES[i as usize % CATEGORIES.len()];
                black_box(synthesize(category, i, &mut sample_rng(42, i)));
            }
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            for s in &srcs {
                // As the workers parse: into this thread's arena, emptied first.
                with_arena(|arena| {
                    black_box(parse_module(s, arena).unwrap());
                });
            }
        })
    });
    g.bench_function("lower_cuda", |b| {
        b.iter(|| {
            for s in &srcs {
                black_box(lower(s, false, true).unwrap());
            }
        })
    });
    g.bench_function("lower_cpu", |b| {
        b.iter(|| {
            for s in &srcs {
                black_box(lower(s, true, false).unwrap());
            }
        })
    });
    let lowered: Vec<_> = srcs.iter().map(|s| lower(s, true, true).unwrap()).collect();
    g.bench_function("verify", |b| {
        b.iter(|| {
            for l in &lowered {
                for (target, ir) in [
                    (Target::Cpu, l.cpu.as_ref().unwrap()),
                    (Target::Cuda, l.cuda.as_ref().unwrap()),
                ] {
                    black_box(verify(target, &ir.kernels[0], ir.module.as_deref()).unwrap());
                }
            }
        })
    });
    g.bench_function("dedup_key", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            for s in &srcs {
                black_box(dedup_key(s, DedupLevel::Renamed, &mut scratch).unwrap());
            }
        })
    });
    g.bench_function("dedup_keys_all_levels", |b| {
        let mut scratch = pairpipe::dedup::KeyScratch::default();
        b.iter(|| {
            for s in &srcs {
                black_box(dedup_keys(s, &mut scratch).unwrap());
            }
        })
    });
    g.finish();
}

/// The sink: 200 finished rows (CUDA columns, as the main job writes them)
/// encoded to a zstd Parquet shard, row groups, footer and rename included.
fn parquet_encode(c: &mut Criterion) {
    let config = main_config();
    let ctx = WorkerContext::new(&config);
    let mut scratch = Scratch::new(&ctx);
    let rows: Vec<_> = (0..SAMPLES)
        .filter_map(|i| match process(&ctx, i, &mut scratch) {
            Outcome::Row(r) => Some(*r),
            Outcome::Rejected(_) | Outcome::Duplicate(_) => None,
        })
        .collect();
    let bytes: u64 = rows.iter().map(|r| r.text_bytes()).sum();
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("stage");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("parquet_encode", |b| {
        b.iter(|| {
            let mut sink = Sink::create(SinkOptions {
                out_dir: dir.path().to_path_buf(),
                max_shard_bytes: config.shards.max_bytes.0,
                row_group_bytes: config.shards.row_group_bytes.0,
                cpu: false,
                cuda: true,
                modules: false,
                metadata: vec![],
            })
            .unwrap();
            for r in &rows {
                sink.write(r.clone()).unwrap();
            }
            black_box(sink.finish().unwrap());
        })
    });
    g.finish();
}

fn main_config() -> Config {
    Config::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pipelines/cuda200mb.toml"
    )))
    .expect("pipelines/cuda200mb.toml")
}

fn end_to_end(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = main_config();
    const ROWS: u64 = 2000;
    config.target = TargetSpec::rows(ROWS);
    config.run.output = dir.path().join("out");
    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("cuda_2000_rows", |b| {
        b.iter(|| black_box(pairpipe::pipeline::run(&config, false).unwrap()))
    });
    g.finish();
}

/// The real-world files: warp-lang's own tests and examples that define
/// module-level kernels, from the installed package `PAIRPIPE_WARP_DIR` points
/// at (tests/run_all.sh sets it). Real code nobody here wrote, so its figure
/// says how fast the lowering is on Warp as people write it.
fn realworld_files() -> Vec<(String, String)> {
    let Some(dir) = std::env::var_os("PAIRPIPE_WARP_DIR") else {
        return Vec::new();
    };
    let dir = std::path::PathBuf::from(dir);
    let mut paths = Vec::new();
    let mut stack = vec![dir.join("examples")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                paths.push(p);
            }
        }
    }
    for e in std::fs::read_dir(dir.join("tests"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let p = e.path();
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("test_") && name.ends_with(".py") {
            paths.push(p);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let has_kernel = text.lines().any(|l| l.starts_with("@wp.kernel"));
            has_kernel.then(|| (p.to_string_lossy().into_owned(), text))
        })
        .collect()
}

/// Lowering warp-lang's own tests and examples on one core, both targets,
/// every kernel that lowers (the others are skipped, as `lower --keep-going`).
fn realworld(c: &mut Criterion) {
    let files = realworld_files();
    if files.is_empty() {
        eprintln!("realworld: skipped (set PAIRPIPE_WARP_DIR to warp-lang's package folder)");
        return;
    }
    let kernels: usize = files
        .iter()
        .filter_map(|(name, text)| lower_file_keep_going(text, name, true, true).ok())
        .map(|l| l.cpu.map_or(0, |t| t.kernels.len()))
        .sum();
    let mut g = c.benchmark_group("realworld");
    g.sample_size(10);
    g.throughput(Throughput::Elements(kernels as u64));
    g.bench_function(
        format!("lower_both_{}_files_{kernels}_kernels", files.len()),
        |b| {
            b.iter(|| {
                for (name, text) in &files {
                    black_box(lower_file_keep_going(text, name, true, true).ok());
                }
            })
        },
    );
    g.finish();
}

criterion_group!(benches, stages, parquet_encode, end_to_end, realworld);
criterion_main!(benches);
