//! One sample, start to finish: synthesize → lower → verify → dedup key.
//! What sample `index` becomes is a function of (config, seed, index), so
//! any worker may take any index. One shortcut depends on timing and not on
//! the result: a sample whose dedup key an earlier index has already made
//! into a row is reported as [`Outcome::Duplicate`] without being lowered;
//! the ordered stage would have dropped its row as a duplicate anyway.

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::config::{Config, DedupLevel, Filter, Splits};
use crate::dedup::{dedup_keys_of_tokens, split_for};
use crate::lang::tokenize;
use crate::lower::{self, KernelIr, Target, TargetIr};
use crate::row::{Provenance, Row};
use crate::source::{Corpus, MINED, Unit};
use crate::synth;
use crate::tokens::{Counter, TokenCounts, Tokenizer};
use crate::verify::verify;

/// What became of one sample index.
pub enum Outcome {
    Row(Box<Row>),
    Rejected(Rejection),
    /// A twin (at the run's dedup level, this key) of a row that an earlier
    /// index made: not lowered, since it can only be dropped.
    Duplicate(u64),
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
    /// Counts the `*_tokens` columns (a counter per worker, see [`Scratch`]).
    pub tokenizer: Tokenizer,
    /// Token budgets: rows over them are rejected here, before dedup.
    pub filter: Filter,
    /// A corpus run's units (sample `i` is unit `i`); `None` for a synthesized run.
    pub corpus: Option<std::sync::Arc<Corpus>>,
    /// Dedup keys of the rows made so far, each with the lowest index that
    /// made it (see [`Outcome::Duplicate`]).
    rows_made: std::sync::Mutex<rustc_hash::FxHashMap<u64, u64>>,
}

/// Keys [`WorkerContext::rows_made`] remembers at most (16 bytes each); past
/// that, twins are lowered and dropped by the ordered stage as before.
const ROWS_MADE_CAP: usize = 1 << 22;

/// A worker's reusable state: buffers for canonical forms, and its token
/// counter with the counter's caches (its line and word tables shared by
/// all the workers).
pub struct Scratch {
    pub keys: crate::dedup::KeyScratch,
    pub tokens: Counter,
}

impl Scratch {
    pub fn new(ctx: &WorkerContext) -> Scratch {
        Scratch {
            keys: Default::default(),
            tokens: ctx.tokenizer.counter(),
        }
    }

    /// Another worker's scratch, whose token counter shares this one's
    /// tables ([`Counter::share`]).
    pub fn share(&self) -> Scratch {
        Scratch {
            keys: Default::default(),
            tokens: self.tokens.share(),
        }
    }
}

impl WorkerContext {
    /// The context of `config`; loads its tokenizer (a tokenizer.json that
    /// cannot be read is the user's error).
    pub fn load(config: &Config) -> anyhow::Result<WorkerContext> {
        let tokenizer = Tokenizer::load(&config.tokens.tokenizer)?;
        Ok(WorkerContext::with_tokenizer(config, tokenizer))
    }

    /// The context of `config` for tests and benches; panics if its
    /// tokenizer cannot be loaded.
    pub fn new(config: &Config) -> WorkerContext {
        WorkerContext::load(config).expect("the config's tokenizer loads")
    }

    pub fn with_tokenizer(config: &Config, tokenizer: Tokenizer) -> WorkerContext {
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
            tokenizer,
            filter: config.filter.clone(),
            corpus: None,
            rows_made: Default::default(),
        }
    }

    /// Whether an index before `index` has made a row with dedup key `key`.
    fn row_made_before(&self, key: u64, index: u64) -> bool {
        let made = self.rows_made.lock().unwrap_or_else(|e| e.into_inner());
        made.get(&key).is_some_and(|&first| first < index)
    }

    /// Notes that `index` made a row with dedup key `key`.
    fn note_row(&self, key: u64, index: u64) {
        let mut made = self.rows_made.lock().unwrap_or_else(|e| e.into_inner());
        if made.len() < ROWS_MADE_CAP {
            let first = made.entry(key).or_insert(index);
            *first = (*first).min(index);
        }
    }
}

/// The row id: unique and stable for (seed, index).
pub fn row_id(seed: u64, index: u64) -> String {
    if index >= 1_000_000_000_000 {
        return format!("{seed:016x}-{index:012}");
    }
    // That `format!`, digit by digit: its padding took ~1,900 instructions a row.
    let mut id = [0u8; 29];
    for (n, digit) in id[..16].iter_mut().enumerate() {
        *digit = b"0123456789abcdef"[(seed >> (60 - 4 * n) & 0xf) as usize];
    }
    id[16] = b'-';
    let mut rest = index;
    for digit in id[17..].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    String::from_utf8(id.to_vec()).expect("hex and decimal digits")
}

/// Produce sample `index`. `scratch` is the worker's reusable buffers for
/// canonical forms and its token counter. A panic in the synthesizer or the lowering becomes a
/// rejection ("panic"), so one bad sample cannot stall the ordered stages.
pub fn process(ctx: &WorkerContext, index: u64, scratch: &mut Scratch) -> Outcome {
    if let Some(corpus) = &ctx.corpus {
        return process_mined(ctx, corpus, index, scratch);
    }
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

/// Sample `index` of a corpus run: unit `index` lowered, or its rejection.
fn process_mined(
    ctx: &WorkerContext,
    corpus: &Corpus,
    index: u64,
    scratch: &mut Scratch,
) -> Outcome {
    let unit = usize::try_from(index)
        .ok()
        .and_then(|i| corpus.units.get(i));
    let rejected = |reason, message: String, python_source: String| {
        Outcome::Rejected(Rejection {
            reason,
            category: MINED,
            message,
            python_source,
        })
    };
    match unit {
        None => rejected(
            "no_such_unit",
            format!("index {index} is past the corpus"),
            String::new(),
        ),
        Some(Unit::Rejected { reason, message }) => {
            rejected(reason, message.clone(), String::new())
        }
        Some(Unit::Kernel {
            kernel_name,
            python_source,
            provenance,
        }) => {
            let here = |p: &Provenance| format!("{}:{}", p.path, p.line);
            match catch_unwind(AssertUnwindSafe(|| {
                lower_row(
                    ctx,
                    crate::synth::Sample {
                        index,
                        category: MINED,
                        kernel_name: kernel_name.clone(),
                        python_source: python_source.clone(),
                        launch_spec: String::new(),
                        motifs: Vec::new(),
                    },
                    Some(Box::new(provenance.clone())),
                    scratch,
                )
            })) {
                Ok(Outcome::Rejected(mut r)) => {
                    // Where in the corpus: the message's position is in the cut module.
                    r.message = format!(
                        "{} (kernel '{kernel_name}'): {}",
                        here(provenance),
                        r.message
                    );
                    Outcome::Rejected(r)
                }
                Ok(row) => row,
                Err(_) => rejected(
                    "panic",
                    format!("{} (kernel '{kernel_name}'): panic", here(provenance)),
                    python_source.clone(),
                ),
            }
        }
    }
}

fn build_row(
    ctx: &WorkerContext,
    index: u64,
    category: &'static str,
    rng: &mut rand_pcg::Pcg64Mcg,
    scratch: &mut Scratch,
) -> Outcome {
    // The dataflow check's parse of the kept sample is the one lowered.
    let (sample, lowered) = synth::synthesize_parsed(
        category,
        index,
        rng,
        &ctx.knobs,
        &mut [0; synth::dataflow::RULES],
        |sample, parsed, arena| match parsed {
            Some((tokens, module)) => lower_tree(
                ctx,
                index,
                &sample.python_source,
                tokens,
                module,
                arena,
                scratch,
            ),
            None => Err(lower_whole(ctx, index, &sample.python_source, scratch)
                .err()
                .unwrap_or_else(|| {
                    NoRow::Rejected(
                        "lower_error",
                        "the synthesized module does not parse".into(),
                    )
                })),
        },
    );
    finish_row(ctx, sample, lowered, None, scratch)
}

/// What lowering one module gives a row: the lowering and the dedup keys,
/// or why there is no row.
type LowerResult = Result<(lower::Lowered, crate::dedup::DedupKeys), NoRow>;

enum NoRow {
    /// A rejection's (reason, message).
    Rejected(&'static str, String),
    /// An earlier index made a row with this dedup key.
    Duplicate(u64),
}

/// Computes the dedup keys of a parsed module of sample `index` from its
/// tokens, and lowers it unless an earlier index made a row with its key.
fn lower_tree<'a>(
    ctx: &WorkerContext,
    index: u64,
    source: &'a str,
    tokens: &[crate::lang::Token<'a>],
    module: crate::lang::ast::Module<'a>,
    arena: &'a bumpalo::Bump,
    scratch: &mut Scratch,
) -> LowerResult {
    let keys = dedup_keys_of_tokens(source, tokens, &mut scratch.keys);
    let key = keys.at(ctx.level);
    if ctx.row_made_before(key, index) {
        return Err(NoRow::Duplicate(key));
    }
    let lowered = lower::lower_parsed_with(
        source,
        module,
        arena,
        (ctx.cpu, ctx.cuda, ctx.modules),
        ctx.max_generated,
    )
    .map_err(lower_rejection)?;
    Ok((lowered, keys))
}

fn lower_rejection(e: crate::lower::LowerError) -> NoRow {
    let reason = if e.is_size_limit() {
        "too_large"
    } else {
        "lower_error"
    };
    NoRow::Rejected(reason, e.to_string())
}

/// Tokenizes, parses and lowers `source` of sample `index` (see [`lower_tree`]).
fn lower_whole(
    ctx: &WorkerContext,
    index: u64,
    source: &str,
    scratch: &mut Scratch,
) -> LowerResult {
    let failed = |e: crate::lower::LowerError| NoRow::Rejected("lower_error", e.to_string());
    // Tokenized once, for the lowering and for the dedup keys.
    let tokens = tokenize(source).map_err(failed)?;
    lower::with_stack(|| {
        crate::lang::ast::with_arena(|arena| {
            let module = crate::lang::parse_tokens(&tokens, arena).map_err(failed)?;
            lower_tree(ctx, index, source, &tokens, module, arena, scratch)
        })
    })
}

/// Lowers one module of one kernel into a row (or a rejection).
fn lower_row(
    ctx: &WorkerContext,
    sample: crate::synth::Sample,
    provenance: Option<Box<Provenance>>,
    scratch: &mut Scratch,
) -> Outcome {
    let lowered = lower_whole(ctx, sample.index, &sample.python_source, scratch);
    finish_row(ctx, sample, lowered, provenance, scratch)
}

/// The row of a lowered sample (verified, token-counted), or its rejection.
fn finish_row(
    ctx: &WorkerContext,
    sample: crate::synth::Sample,
    lowered: LowerResult,
    provenance: Option<Box<Provenance>>,
    scratch: &mut Scratch,
) -> Outcome {
    let (index, category) = (sample.index, sample.category);
    let reject = |reason, message: String, python_source: String| {
        Outcome::Rejected(Rejection {
            reason,
            category,
            message,
            python_source,
        })
    };
    let (lowered, keys) = match lowered {
        Ok(l) => l,
        Err(NoRow::Rejected(reason, message)) => {
            return reject(reason, message, sample.python_source);
        }
        Err(NoRow::Duplicate(key)) => return Outcome::Duplicate(key),
    };
    let dedup_key = keys.at(ctx.level);
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
        // A kernel with `enable_backward=False` has no backward function.
        Some((k, module)) => (
            Some(k.forward),
            Some(k.backward).filter(|b| !b.is_empty()),
            module.filter(|_| ctx.modules),
        ),
        None => (None, None, None),
    };
    let (cpu_forward, cpu_backward, cpu_module) = columns(cpu);
    let (cuda_forward, cuda_backward, cuda_module) = columns(cuda);
    let ir = [
        &cpu_forward,
        &cpu_backward,
        &cuda_forward,
        &cuda_backward,
        &cpu_module,
        &cuda_module,
    ];
    let counter = &mut scratch.tokens;
    // A text repeats lines of the one counted before it only within a row's
    // IR (a backward function begins with its forward function's body): the
    // Python source and the row's last IR text are not indexed for the next.
    let last = ir.iter().rposition(|t| t.is_some());
    let counts = TokenCounts {
        python: counter.count_source(&sample.python_source),
        ir: std::array::from_fn(|k| {
            let text = ir[k].as_deref()?;
            if Some(k) == last {
                counter.count_unrepeated(text)
            } else {
                counter.count(text)
            }
        }),
    };
    if let Some((reason, message)) = over_budget(&ctx.filter, &counts) {
        return reject(reason, message, sample.python_source);
    }
    ctx.note_row(dedup_key, index);
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
        launch_spec: Some(sample.launch_spec).filter(|s| !s.is_empty()),
        motifs: sample.motifs.into_iter().map(Cow::Borrowed).collect(),
        features: lowered.features,
        ir_from_lowering: true,
        tokens: counts,
        provenance,
    }))
}

/// The first token budget of `filter` that `counts` exceeds, as a rejection.
fn over_budget(filter: &Filter, counts: &TokenCounts) -> Option<(&'static str, String)> {
    if let (Some(max), Some(pair)) = (filter.max_pair_tokens, counts.pair()) {
        if pair > max {
            return Some((
                "too_many_pair_tokens",
                format!("pair of {pair} tokens, filter.max_pair_tokens = {max}"),
            ));
        }
    }
    for (column, &max) in &filter.max_column_tokens {
        let n = match column.as_str() {
            "python_source" => counts.python,
            "cpu_forward" => counts.ir[0],
            "cpu_backward" => counts.ir[1],
            "cuda_forward" => counts.ir[2],
            "cuda_backward" => counts.ir[3],
            "cpu_module" => counts.ir[4],
            "cuda_module" => counts.ir[5],
            _ => None,
        };
        if let Some(n) = n.filter(|&n| n as u64 > max) {
            return Some((
                "too_many_column_tokens",
                format!("{column} of {n} tokens, filter.max_column_tokens.{column} = {max}"),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_of_an_earlier_row_is_reported_as_a_duplicate_without_lowering() {
        let text = std::fs::read_to_string("pipelines/cuda200mb.toml").unwrap();
        let config = Config::parse(&text).unwrap();
        let ctx = WorkerContext::new(&config);
        let mut scratch = Scratch::new(&ctx);
        let mut rows: Vec<(u64, u64)> = Vec::new(); // (index, dedup key)
        let mut twins = 0;
        for index in 0..600 {
            match process(&ctx, index, &mut scratch) {
                Outcome::Row(r) => rows.push((index, r.dedup_key)),
                Outcome::Duplicate(key) => {
                    twins += 1;
                    assert!(
                        rows.iter().any(|&(i, k)| k == key && i < index),
                        "sample {index}: no earlier row has key {key:x}"
                    );
                    // Alone, the same sample is a row with that key.
                    let alone = WorkerContext::new(&config);
                    match process(&alone, index, &mut Scratch::new(&alone)) {
                        Outcome::Row(r) => assert_eq!(r.dedup_key, key),
                        _ => panic!("sample {index} alone is not a row"),
                    }
                }
                Outcome::Rejected(r) => panic!("sample {index} rejected: {}", r.message),
            }
        }
        assert!(
            twins > 0,
            "the main job's first 600 samples hold renamed twins"
        );
        // Keys of rows are unique up to the first twin of each.
        let mut keys: Vec<u64> = rows.iter().map(|r| r.1).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(
            keys.len(),
            rows.len(),
            "every twin after the first row was caught"
        );
    }

    #[test]
    fn row_ids_are_the_padded_hex_seed_and_decimal_index() {
        for seed in [0, 0x2a, 0xdead_beef, u64::MAX] {
            for index in [0, 7, 123_456, 999_999_999_999, 1_000_000_000_000, u64::MAX] {
                assert_eq!(row_id(seed, index), format!("{seed:016x}-{index:012}"));
            }
        }
    }

    #[test]
    fn budgets_reject_the_first_count_over_them() {
        let counts = TokenCounts {
            python: Some(100),
            ir: [None, None, Some(300), Some(900), None, None],
        };
        assert_eq!(counts.pair(), Some(1300));
        let mut filter = Filter::default();
        assert_eq!(over_budget(&filter, &counts), None);
        filter.max_pair_tokens = Some(1300);
        assert_eq!(over_budget(&filter, &counts), None, "at the budget is in");
        filter.max_pair_tokens = Some(1299);
        let (reason, message) = over_budget(&filter, &counts).unwrap();
        assert_eq!(reason, "too_many_pair_tokens");
        assert!(message.contains("1300 tokens"), "{message}");
        filter.max_pair_tokens = None;
        filter.max_column_tokens.insert("cuda_backward".into(), 899);
        let (reason, message) = over_budget(&filter, &counts).unwrap();
        assert_eq!(reason, "too_many_column_tokens");
        assert!(
            message.starts_with("cuda_backward of 900 tokens"),
            "{message}"
        );
        // A column the row does not fill is never over budget.
        filter.max_column_tokens.clear();
        filter.max_column_tokens.insert("cpu_forward".into(), 1);
        assert_eq!(over_budget(&filter, &counts), None);
        // Without counts (no tokenizer) nothing is over budget.
        filter.max_pair_tokens = Some(1);
        assert_eq!(over_budget(&filter, &TokenCounts::default()), None);
    }
}
