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
use pairpipe::dedup::dedup_key;
use pairpipe::lang::parse_module;
use pairpipe::lower::{Target, lower};
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
                black_box(parse_module(s).unwrap());
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
                    black_box(verify(target, &ir.kernels[0], &ir.module).unwrap());
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
    g.finish();
}

fn end_to_end(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pipelines/cuda200mb.toml"
    )))
    .expect("pipelines/cuda200mb.toml");
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

criterion_group!(benches, stages, end_to_end);
criterion_main!(benches);
