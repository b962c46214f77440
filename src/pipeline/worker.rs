//! One sample, start to finish: synthesize → lower → verify → dedup key.
//! Pure in (config, seed, index), so any worker may take any index.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::config::{Config, DedupLevel, Splits};
use crate::dedup::{dedup_keys_of_tokens, split_for};
use crate::lang::tokenize;
use crate::lower::{self, KernelIr, Target, TargetIr};
use crate::row::Row;
use crate::synth;
use crate::verify::verify;

/// What became of one sample index.
pub enum Outcome {
    Row(Box<Row>),
    Rejected(Rejection),
}

/// A sample that will not be written, and why.
pub struct Rejection {
    /// Short stable slug, counted in the manifest.
    pub reason: &'static str,
    pub category: &'static str,
    pub message: String,
    pub python_source: String,
}

/// The read-only state every worker shares.
pub struct WorkerContext {
    pub seed: u64,
    pub weights: Vec<(&'static str, f64)>,
    pub knobs: synth::Knobs,
    pub cpu: bool,
    pub cuda: bool,
    pub modules: bool,
    pub level: DedupLevel,
    pub splits: Splits,
    /// `[lower] max_generated_bytes`.
    pub max_generated: u64,
}

impl WorkerContext {
    pub fn new(config: &Config) -> WorkerContext {
        WorkerContext {
            seed: config.run.seed,
            weights: config.synth.weights(),
            knobs: config.synth.knobs(),
            cpu: config.ir.cpu,
            cuda: config.ir.cuda,
            modules: config.ir.modules,
            level: config.dedup.level,
            splits: config.splits.clone(),
            max_generated: config.lower.max_generated_bytes.0,
        }
    }
}

/// The row id: unique and stable for (seed, index).
pub fn row_id(seed: u64, index: u64) -> String {
    format!("{seed:016x}-{index:012}")
}

/// Produce sample `index`. `scratch` is the worker's reusable buffers for
/// canonical forms. A panic in the synthesizer or the lowering becomes a
/// rejection ("panic"), so one bad sample cannot stall the ordered stages.
pub fn process(ctx: &WorkerContext, index: u64, scratch: &mut [String; 2]) -> Outcome {
    let draw = || {
        let rng = synth::sample_rng(ctx.seed, index);
        let category = synth::pick_category(ctx.seed, index, &ctx.weights);
        (category, rng)
    };
    match catch_unwind(AssertUnwindSafe(|| {
        let (category, mut rng) = draw();
        build_row(ctx, index, category, &mut rng, scratch)
    })) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            // The source is what reproduces the failure; the synthesizer
            // itself may be what panicked, so it may be missing.
            let (category, python_source) = catch_unwind(AssertUnwindSafe(|| {
                let (category, mut rng) = draw();
                let source = catch_unwind(AssertUnwindSafe(|| {
                    synth::synthesize_with(category, index, &mut rng, &ctx.knobs).python_source
                }));
                (category, source.unwrap_or_default())
            }))
            .unwrap_or(("unknown", String::new()));
            Outcome::Rejected(Rejection {
                reason: "panic",
                category,
                message,
                python_source,
            })
        }
    }
}

fn build_row(
    ctx: &WorkerContext,
    index: u64,
    category: &'static str,
    rng: &mut rand_pcg::Pcg64Mcg,
    scratch: &mut [String; 2],
) -> Outcome {
    let sample = synth::synthesize_with(category, index, rng, &ctx.knobs);
    let reject = |reason, message: String, python_source: String| {
        Outcome::Rejected(Rejection {
            reason,
            category,
            message,
            python_source,
        })
    };
    // Tokenized once, for the lowering and for the dedup keys.
    let tokens = match tokenize(&sample.python_source) {
        Ok(t) => t,
        Err(e) => return reject("lower_error", e.to_string(), sample.python_source.clone()),
    };
    let lowered = match lower::lower_tokens_with(
        &sample.python_source,
        &tokens,
        (ctx.cpu, ctx.cuda, ctx.modules),
        ctx.max_generated,
    ) {
        Ok(l) => l,
        Err(e) => {
            let reason = if e.is_size_limit() {
                "too_large"
            } else {
                "lower_error"
            };
            return reject(reason, e.to_string(), sample.python_source.clone());
        }
    };
    let keys = dedup_keys_of_tokens(&sample.python_source, &tokens, scratch);
    let dedup_key = keys.at(ctx.level);
    drop(tokens);
    // Each synthesized module holds exactly one kernel; its functions per target.
    let mut cpu = None;
    let mut cuda = None;
    for (target, ir, slot) in [
        (Target::Cpu, lowered.cpu, &mut cpu),
        (Target::Cuda, lowered.cuda, &mut cuda),
    ] {
        let Some(TargetIr {
            module,
            mut kernels,
        }) = ir
        else {
            continue;
        };
        let n = kernels.len();
        let (Some(kernel), 1) = (kernels.pop(), n) else {
            return reject(
                "kernel_count",
                format!("{target:?}: {n} kernels, expected 1"),
                sample.python_source,
            );
        };
        if let Err(reason) = verify(target, &kernel, module.as_deref()) {
            let message = format!("{target:?} kernel `{}` failed {reason}", kernel.name);
            return reject(reason, message, sample.python_source);
        }
        *slot = Some((kernel, module));
    }
    let columns = |slot: Option<(KernelIr, Option<String>)>| match slot {
        Some((k, module)) => (
            Some(k.forward),
            Some(k.backward),
            module.filter(|_| ctx.modules),
        ),
        None => (None, None, None),
    };
    let (cpu_forward, cpu_backward, cpu_module) = columns(cpu);
    let (cuda_forward, cuda_backward, cuda_module) = columns(cuda);
    Outcome::Row(Box::new(Row {
        index,
        id: row_id(ctx.seed, index),
        split: split_for(dedup_key, &ctx.splits),
        category,
        kernel_name: sample.kernel_name,
        python_source: sample.python_source,
        cpu_forward,
        cpu_backward,
        cuda_forward,
        cuda_backward,
        cpu_module,
        cuda_module,
        dedup_key,
        keys,
        builtins: lowered.builtins,
        dtypes: lowered.dtypes,
        launch_dims: lowered.launch_dims,
        ir_from_lowering: true,
    }))
}
