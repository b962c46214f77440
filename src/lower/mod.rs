//! Type inference and the warp-exact code generator (CPU and CUDA, forward and backward).
//!
//! The output is byte-for-byte what warp-lang 1.19.0's `ModuleBuilder.codegen`
//! produces, except the 8-hex hash after each kernel's name, which pairpipe
//! derives from the source text itself.

use std::fmt;

mod adjoint;
pub mod builtins;
mod features;
mod lines;
mod module;
mod pyconst;
mod sha256;
mod templates;
pub mod types;

pub use features::Features;
pub use module::Scope;

/// The language constructs the lowering supports, each with a source fragment
/// that shows it. `tests/supported.rs` counts the hand-written test kernels
/// containing each fragment and renders `tests/kernels/SUPPORTED.md` from this
/// list, so the table cannot drift from what is tested.
pub const LANGUAGE: &[(&str, &str, &str)] = &[
    ("types", "float32 / float", "dtype=float"),
    ("types", "float64", "float64"),
    ("types", "int32 / int", "dtype=int"),
    ("types", "uint32", "uint32"),
    ("types", "bool", "bool("),
    ("types", "vec2 / vec3 / vec4 (f, d, i variants)", "wp.vec3"),
    ("types", "mat22 / mat33 / mat44", "wp.mat33"),
    ("types", "quat", "wp.quat"),
    ("types", "1-D arrays", "wp.array(dtype="),
    ("types", "2-D arrays (array2d, ndim=2)", "array2d"),
    ("types", "3-D arrays (array3d, ndim=3)", "array3d"),
    ("types", "arrays of vectors", "wp.array(dtype=wp.vec3)"),
    ("types", "arrays of matrices", "wp.array(dtype=wp.mat33)"),
    (
        "types",
        "textures (wp.Texture1D/2D/3D: arguments, struct fields, array elements)",
        "wp.Texture",
    ),
    ("statements", "assignment", " = "),
    (
        "statements",
        "tuple unpacking of wp.tid()",
        ", j = wp.tid()",
    ),
    ("statements", "augmented assignment on locals", " += "),
    ("statements", "array element += / -= (atomic)", "] += "),
    ("statements", "array element *= (load, op, store)", "] *= "),
    ("statements", "vector component assignment", ".x += "),
    ("statements", "if / elif / else", "elif "),
    ("statements", "for over range(n)", "in range(n)"),
    ("statements", "for over range(a, b, step)", "in range("),
    ("statements", "while", "while "),
    ("statements", "break", "break"),
    ("statements", "continue", "continue"),
    (
        "statements",
        "early return in kernels",
        "return
",
    ),
    ("statements", "@wp.func helpers", "@wp.func"),
    (
        "statements",
        "generic @wp.func (`Any`, `wp.array[Any]`), one instance per signature",
        ": Any",
    ),
    (
        "statements",
        "@wp.kernel(enable_backward=False)",
        "enable_backward=False",
    ),
    ("expressions", "floor division, modulo, power", "//"),
    ("expressions", "comparisons (chained)", " <= "),
    ("expressions", "and / or / not", " and "),
    ("expressions", "conditional expressions", " if "),
    (
        "expressions",
        "the `@` operator and `@=` (warp's `mul`)",
        " @ ",
    ),
    (
        "expressions",
        "an array as a condition (not null): `if arr:`, `wp.where(arr, a, b)`",
        "wp.where(weights",
    ),
    (
        "expressions",
        "type(x)(...) and aliases of scalar types as constructors",
        "type(p)(",
    ),
    (
        "expressions",
        "enum members and their `.value` as constants",
        "Task.GRASP.value",
    ),
    (
        "expressions",
        "transform composition and scaling (`a * b`, `s * t`)",
        "a[i] * b[i]",
    ),
    (
        "expressions",
        "casts float(), int(), wp.float64()",
        "float(",
    ),
    (
        "expressions",
        "component access v[0], v.x, m[i, j], m[i]",
        ".x",
    ),
    (
        "expressions",
        "constructors wp.vec3(...), wp.mat33(...), wp.identity(...)",
        "wp.identity(",
    ),
    (
        "expressions",
        "multi-dimensional indexing a[i, j, k]",
        ", k]",
    ),
    (
        "expressions",
        "module-level constants (wp.constant(...), plain numbers)",
        "wp.constant(",
    ),
    (
        "tiles",
        "1-D and 2-D tiles (float32, float64, int32)",
        "wp.tile_load(",
    ),
    ("tiles", "int tuples as tile shapes and offsets", "shape=("),
    (
        "tiles",
        "tile + - * / tile, scalar * tile, -tile",
        "tx * alpha + ty",
    ),
    (
        "tiles",
        "wp.tile_map with a warp builtin",
        "wp.tile_map(wp.",
    ),
    ("tiles", "in-place tile += / -=", "acc += ta * tb"),
    (
        "tiles",
        "tiles carried through dynamic loops",
        "acc = acc + t",
    ),
    (
        "tiles",
        "element reads t[i] / t[i, j] (tile becomes shared)",
        "mix[4, 2]",
    ),
    (
        "tiles",
        "tile_store / tile_atomic_add of reductions",
        "wp.tile_atomic_add(total, s)",
    ),
    (
        "tiles",
        "wp.tile_matmul (accumulating and returning forms)",
        "wp.tile_matmul(",
    ),
    (
        "tiles",
        "shared tiles (storage=\"shared\")",
        "storage=\"shared\"",
    ),
    (
        "tiles",
        "wp.tile_transpose (shared views)",
        "wp.tile_transpose(",
    ),
    (
        "tiles",
        "wp.tile(x) / wp.untile(t) of per-thread values",
        "wp.untile(",
    ),
    (
        "tiles",
        "views: wp.tile_view, rows t[i], slices t[a:b, ::-1], chained subscripts",
        "wp.tile_view(",
    ),
    (
        "tiles",
        "assignment through views (t[a:b, :] = src) and wp.tile_assign",
        "] = src",
    ),
    (
        "tiles",
        "wp.tile_squeeze / wp.tile_reshape / wp.tile_broadcast",
        "wp.tile_broadcast(",
    ),
    (
        "tiles",
        "gathers by an index tile (t[idx, :]) and wp.tile_scatter_add",
        "wp.tile_scatter_add(",
    ),
];

/// warp's default `block_dim` module option: threads per block, the length of `wp.tile(x)`.
pub(crate) const BLOCK_DIM: u32 = 256;

/// Code generation target, as warp's `device` ("cpu" or "cuda").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Cpu,
    Cuda,
}

/// One kernel's generated functions for one target.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelIr {
    /// The kernel's Python name.
    pub name: String,
    /// The forward function exactly as it stands in the module source.
    pub forward: String,
    /// The backward (adjoint) function exactly as it stands in the module source.
    pub backward: String,
}

/// The lowering of one module for one target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetIr {
    /// The whole module source (what warp writes to the .cpp / .cu file);
    /// `None` for a CUDA lowering that was asked for its kernels only.
    pub module: Option<String>,
    /// The kernels in definition order.
    pub kernels: Vec<KernelIr>,
}

/// Everything the dataset needs from lowering one Python module.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    pub cpu: Option<TargetIr>,
    pub cuda: Option<TargetIr>,
    /// Warp builtins the kernels call (sorted, unique), e.g. "sin", "atomic_add".
    pub builtins: Vec<String>,
    /// Warp data types the kernels use (sorted, unique), e.g. "float32", "int32".
    pub dtypes: Vec<String>,
    /// The largest launch dimension of the module's kernels (1 to 4: how
    /// many indices `wp.tid()` yields); 0 for a module without kernels.
    pub launch_dims: u32,
    /// What the kernels use (structs, functions, loops, atomics, tiles,
    /// random numbers, geometry queries), kernels and their functions together.
    pub features: Features,
    /// Kernels left out by a keep-going lowering, with why (definition order).
    pub skipped: Vec<(String, LowerError)>,
}

/// A source position (1-based line and column) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for LowerError {}

/// The default bound on the code one kernel (or `@wp.func`) generates, and on
/// a module's kernels together: 15 times the largest module warp-lang 1.19.0
/// generates for its own tests and examples (4.2 MB, `test_spatial.py` on
/// the CPU), and still small for a laptop.
pub const DEFAULT_MAX_GENERATED_BYTES: u64 = 64 << 20;

/// What the message of a [`size_limit_error`] holds.
const SIZE_LIMIT_MESSAGE: &str = " exceeds the limit of ";

/// The error of a kernel or function whose generated code (`what`) would
/// exceed `limit` bytes.
pub(crate) fn size_limit_error(line: usize, col: usize, what: &str, limit: usize) -> LowerError {
    let shown = if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    };
    LowerError {
        line,
        col,
        message: format!(
            "{what}{SIZE_LIMIT_MESSAGE}{shown} (set [lower] max_generated_bytes in a \
             pipeline config, or --max-generated for `pairpipe lower`)"
        ),
    }
}

impl LowerError {
    /// Whether this is the generated-size bound (not the language) refusing a kernel.
    pub fn is_size_limit(&self) -> bool {
        self.message.contains(SIZE_LIMIT_MESSAGE)
    }
}

/// Stack a lowering needs at hand: the deepest syntax tree the parser
/// accepts (`lang::parser::MAX_TREE_DEPTH`) takes about 2 MiB to parse and
/// lower. A thread with less (the 2 MiB of a spawned thread, a low
/// `ulimit -s`) lowers on a segment of [`STACK_SEGMENT`] allocated for it.
pub const STACK_RED_ZONE: usize = 8 << 20;
const STACK_SEGMENT: usize = 32 << 20;
/// Stack size for threads that lower many kernels (pipeline workers): enough
/// that [`with_stack`] never has to allocate a segment for them.
pub const THREAD_STACK: usize = STACK_RED_ZONE + (8 << 20);

/// Runs `f` where at least [`STACK_RED_ZONE`] of stack is left.
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}

/// Lower every module-level `@wp.kernel` of `source` for the requested targets.
pub fn lower(source: &str, cpu: bool, cuda: bool) -> Result<Lowered, LowerError> {
    lower_file_with(
        source,
        DEFAULT_FILENAME,
        cpu,
        cuda,
        false,
        DEFAULT_MAX_GENERATED_BYTES,
    )
}

/// Like [`lower`], from the tokens of `source` (`lang::tokenize`), for a
/// caller that needs them for something else too; the CUDA module source is
/// assembled only when `cuda_module` (the kernels always are).
pub fn lower_tokens(
    source: &str,
    tokens: &[crate::lang::Token<'_>],
    cpu: bool,
    cuda: bool,
    cuda_module: bool,
) -> Result<Lowered, LowerError> {
    lower_tokens_with(
        source,
        tokens,
        (cpu, cuda, cuda_module),
        DEFAULT_MAX_GENERATED_BYTES,
    )
}

/// [`lower_tokens`] with a bound on the generated code: a kernel past
/// `max_generated` bytes fails with an error for which
/// [`LowerError::is_size_limit`] holds.
pub fn lower_tokens_with(
    source: &str,
    tokens: &[crate::lang::Token<'_>],
    (cpu, cuda, cuda_module): (bool, bool, bool),
    max_generated: u64,
) -> Result<Lowered, LowerError> {
    with_stack(|| {
        crate::lang::ast::with_arena(|arena| {
            let module = crate::lang::parse_tokens(tokens, arena)?;
            lower_parsed_with(
                source,
                module,
                arena,
                (cpu, cuda, cuda_module),
                max_generated,
            )
        })
    })
}

/// [`lower_tokens_with`] for a module its caller has already parsed into
/// `arena` (the synthesizer parses each kernel for its dataflow check, and
/// the worker lowers that same tree instead of parsing the text again).
/// The caller runs it under [`with_stack`].
pub fn lower_parsed_with<'a>(
    source: &'a str,
    module: crate::lang::ast::Module<'a>,
    arena: &'a bumpalo::Bump,
    (cpu, cuda, cuda_module): (bool, bool, bool),
    max_generated: u64,
) -> Result<Lowered, LowerError> {
    module::lower_parsed(
        source,
        module,
        arena,
        DEFAULT_FILENAME,
        (cpu, cuda, cuda_module),
        false,
        bytes_limit(max_generated),
    )
}

fn bytes_limit(max_generated: u64) -> usize {
    usize::try_from(max_generated).unwrap_or(usize::MAX)
}

/// The file name used in `// file:line` comments when the source has no file
/// of its own (synthesized samples).
pub const DEFAULT_FILENAME: &str = "kernel.py";

/// Like [`lower`], for a file: `filename` appears in the comments above
/// `@wp.func`s, as warp prints the path the module was imported from.
pub fn lower_file(
    source: &str,
    filename: &str,
    cpu: bool,
    cuda: bool,
) -> Result<Lowered, LowerError> {
    lower_file_with(
        source,
        filename,
        cpu,
        cuda,
        false,
        DEFAULT_MAX_GENERATED_BYTES,
    )
}

/// [`lower_file`] or, with `keep_going`, [`lower_file_keep_going`], with a
/// bound on the generated code (see [`lower_tokens_with`]).
pub fn lower_file_with(
    source: &str,
    filename: &str,
    cpu: bool,
    cuda: bool,
    keep_going: bool,
    max_generated: u64,
) -> Result<Lowered, LowerError> {
    with_stack(|| {
        module::lower_module(
            source,
            filename,
            cpu,
            cuda,
            keep_going,
            bytes_limit(max_generated),
        )
    })
}

/// Like [`lower_file`], but a kernel that cannot be lowered is left out of the
/// module (listed in `Lowered::skipped`) instead of failing the whole file.
/// Errors of the file as a whole (syntax) still fail it.
pub fn lower_file_keep_going(
    source: &str,
    filename: &str,
    cpu: bool,
    cuda: bool,
) -> Result<Lowered, LowerError> {
    lower_file_with(
        source,
        filename,
        cpu,
        cuda,
        true,
        DEFAULT_MAX_GENERATED_BYTES,
    )
}
