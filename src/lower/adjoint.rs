//! Lowering of one kernel body to warp's forward / replay / reverse statement
//! lists. This follows warp's `Adjoint` visitor step for step — the order in
//! which it allocates variables, loads references and emits comments is what
//! makes the output byte-identical, so every `emit_*` here mirrors the
//! corresponding visitor of warp 1.19.0's codegen.

use crate::text::{Put, same};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::builtins::{self, Overload};
use super::lines::{LINE_START, Lines, Replay};
use super::types::{ArrayKind, ConstVal, Scalar, StructId, Type, Value};
use super::{LowerError, Scope};
use crate::lang::ast::*;
use smallvec::SmallVec;
use std::cell::RefCell;

/// A callee's or function argument's name, owned (inline up to 24 bytes):
/// the lowering's own values outlive no syntax tree.
type Name = compact_str::CompactString;

/// A call's or an index's variables: a few, kept inline (no allocation).
type Vars = smallvec::SmallVec<[VarId; 8]>;
use std::fmt::Write;

/// `forward!(adj, "…", args…)`: one forward (and replay) line, written by
/// `write!` into the reused line buffer. `format!` would allocate a string
/// per line and grow it while writing: most of its cost on these short lines.
macro_rules! forward {
    ($adj:expr, $($fmt:tt)+) => {{
        let mut line = $adj.new_line();
        let _ = write!(line, $($fmt)+);
        $adj.push_forward_line(line);
    }};
}

/// `reverse!(adj, "…", args…)`: one reverse-pass line, as [`forward!`].
macro_rules! reverse {
    ($adj:expr, $($fmt:tt)+) => {{
        let mut line = $adj.new_line();
        let _ = write!(line, $($fmt)+);
        $adj.push_reverse_line(line);
    }};
}

#[path = "tile.rs"]
mod tile;

#[path = "structs.rs"]
pub(super) mod structs;

#[path = "arrays.rs"]
mod arrays;
#[path = "refs.rs"]
mod refs;
pub(super) use refs::build_custom_grad;
use refs::{OriginNode, Step};

/// Index of a variable in `Adjoint::vars`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarId(usize);

#[derive(Debug, Clone)]
pub struct VarInfo {
    /// `var_{label}adj_{label}` in one string: the label is the argument
    /// name or the local's index, and both spellings are emitted many times.
    /// A local's names are borrowed from [`LOCAL_NAMES`]; an argument's are
    /// allocated. (A CompactString was tried: slower to build, and argument
    /// names rarely fit inline.)
    names: Cow<'static, str>,
    pub ty: Type,
    pub constant: Option<ConstVal>,
}

/// Locals numbered below this have their names in [`LOCAL_NAMES`].
const NAMED_LOCALS: usize = 4096;

/// `var_{i}adj_{i}` for every local index `i` below [`NAMED_LOCALS`]: a
/// kernel has ~100 locals, and an allocation for each one's names was the
/// lowering's most frequent. One text, leaked once per process (it lives as
/// long as the program), sliced up front: taking a name is one index.
static LOCAL_NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut text = String::with_capacity(NAMED_LOCALS * 16);
    let mut ends = Vec::with_capacity(NAMED_LOCALS);
    let mut digits = itoa::Buffer::new();
    for i in 0..NAMED_LOCALS {
        let i = digits.format(i);
        text.put_all(&["var_", i, "adj_", i]);
        ends.push(text.len());
    }
    let text: &'static str = text.leak();
    let starts = std::iter::once(0).chain(ends.iter().copied());
    starts.zip(&ends).map(|(s, &e)| &text[s..e]).collect()
});

impl VarInfo {
    fn new(label: &str, ty: Type, constant: Option<ConstVal>) -> VarInfo {
        let mut names = String::with_capacity(8 + 2 * label.len());
        names.put_all(&["var_", label, "adj_", label]);
        VarInfo {
            names: Cow::Owned(names),
            ty,
            constant,
        }
    }

    /// A local numbered `index` (its label is the number).
    fn local(index: usize, ty: Type, constant: Option<ConstVal>) -> VarInfo {
        if index >= NAMED_LOCALS {
            return VarInfo::new(itoa::Buffer::new().format(index), ty, constant);
        }
        VarInfo {
            names: Cow::Borrowed(LOCAL_NAMES[index]),
            ty,
            constant,
        }
    }

    /// Argument name, or the local's index.
    pub fn label(&self) -> &str {
        &self.name()["var_".len()..]
    }

    /// `var_{label}`, the variable's C++ name.
    pub fn name(&self) -> &str {
        self.names_split().0
    }

    /// `adj_{label}`, the name of its adjoint.
    pub fn adj(&self) -> &str {
        self.names_split().1
    }

    /// `names` cut in its two spellings. Every emitted line takes a few of
    /// them, and slicing the `str` checked the middle for a character
    /// boundary each time.
    #[inline]
    fn names_split(&self) -> (&str, &str) {
        let (names, half) = (&*self.names, self.names.len() / 2);
        // SAFETY: `names` is `var_{label}adj_{label}`, so its middle is where
        // `adj_` starts: a character boundary within the string.
        unsafe { (names.get_unchecked(..half), names.get_unchecked(half..)) }
    }
}

#[derive(Debug, Default)]
struct Block {
    vars: Vec<VarId>,
    forward: Lines,
    replay: Replay,
    reverse: Lines,
}

impl Block {
    /// A function's top block, with room for the passes of a body of
    /// `lines` Python lines (~400 bytes of C++ and 8 lines each per pass):
    /// grown by doubling, these buffers were copied ~20 times a kernel.
    fn for_lines(lines: usize) -> Block {
        let pass = || Lines::with_capacity(400 * lines, 8 * lines);
        Block {
            vars: Vec::with_capacity(4 * lines),
            forward: pass(),
            replay: Replay::with_capacity(8 * lines),
            reverse: pass(),
        }
    }

    /// A loop's or branch's block: ~4 lines of Python, sized as the top
    /// block is (grown by doubling from empty, each of its buffers was
    /// copied several times before it was reused).
    fn nested() -> Block {
        Block::for_lines(4)
    }

    fn clear(&mut self) {
        self.vars.clear();
        self.forward.clear();
        self.replay.clear();
        self.reverse.clear();
    }
}

/// `line.trim()` and its length in characters: by bytes for an ASCII line
/// (nearly all source lines), where each byte is a character and the
/// whitespace `trim` strips is U+0009 to U+000D and the space.
fn trim_line(line: &str) -> (&str, usize) {
    if !line.is_ascii() {
        let t = line.trim();
        return (t, t.chars().count());
    }
    let b = line.as_bytes();
    let space = |c: &u8| matches!(c, b'\t'..=b'\r' | b' ');
    let start = b.iter().position(|c| !space(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !space(c)).map_or(start, |e| e + 1);
    (&line[start..end], end - start)
}

/// Spaces to pad the echoed Python line of a `// ... <L n>` comment to 80 columns.
const PAD: &str =
    "                                                                                ";

/// How a `for` loop over `range()` is lowered (warp's `get_unroll_range`).
enum LoopRange {
    /// Constant bounds within `max_unroll` iterations: the body is repeated.
    Unrolled(Vec<i128>),
    /// Constant bounds, too many iterations: a counted loop.
    Counted { start: i128, stop: i128, step: i128 },
    /// A `range_t` value iterated at run time.
    Dynamic(VarId),
}

/// warp's default `max_unroll` module option.
const MAX_UNROLL: usize = 16;

/// What a callee expression names.
enum Callee {
    Builtin(Name),
    /// A vector, matrix or quaternion type called as a constructor.
    Constructor(super::types::Value),
    /// warp's generic constructors `vector`, `matrix`, `quaternion` and
    /// `transformation` (`wp.types.vector(..., length=3, dtype=float)`),
    /// whose arguments pick the type.
    Generic(&'static str),
    /// A module-level `@wp.func`, by name.
    User(Name),
    /// `wp.grad(f)`: the adjoint of function value `f`.
    Grad(Name),
}

impl Callee {
    /// A value type called: a scalar type is its builtin (`float32(1.0)` as
    /// `wp.float32(1.0)`), the others their constructor.
    fn of_type(v: super::types::Value) -> Callee {
        match v {
            super::types::Value::Scalar(s) => Callee::Builtin(s.name().into()),
            v => Callee::Constructor(v),
        }
    }
}

/// What a call binds to a user function's parameter.
#[derive(Clone, Debug)]
enum Bound {
    Var(VarId),
    /// A function value (for a `wp.Function` parameter).
    Func(String),
    /// A parameter's default value.
    Const(ConstVal),
}

/// A `@wp.func` lowered once and shared by every caller in the module.
#[derive(Debug)]
pub struct BuiltFunc {
    /// C++ name: the Python name plus its overload index (`lerp_0`).
    pub native: String,
    pub params: Vec<Type>,
    pub ret: Option<Type>,
    /// The types of a function returning several values (through `ret_i` references).
    pub outputs: Vec<Type>,
    /// `WP_NOINLINE ` / `WP_FORCEINLINE ` from `@wp.func(inline=False/True)`.
    pub inline_attr: &'static str,
    /// A `@wp.func_replay` function: no adjoint is generated.
    pub forward_only: bool,
    /// The C++ name of its `@wp.func_replay` function, called in the replay pass.
    pub replay: Option<String>,
    /// Indices (in `FuncTable::built`) of the user functions it calls.
    pub callees: Vec<usize>,
    /// Reached from a kernel that has a backward pass: its adjoint body is generated.
    pub used_by_backward: bool,
    /// Its parameter lists and bodies in C++, for the module source.
    pub text: FunctionText,
    /// Bytes of code it generated, as the module's bound counts them: the
    /// estimate of [`Adjoint::generated_bytes`] for a lowered body, the
    /// snippets' length for a native one.
    pub generated_bytes: usize,
    /// Line of the function's first decorator (printed in the `// file:line` comment).
    pub first_line: usize,
    /// A `@wp.func_grad` replaces its adjoint: a call passes no outputs to it.
    pub custom_grad: bool,
    /// Its adjoint is written by hand (a custom gradient, or a native
    /// snippet's `adj_snippet`): `wp.ref[T]` parameters may be differentiated.
    pub manual_ref_adjoint: bool,
    /// Why a backward-enabled kernel reaching it is refused: it calls a
    /// `wp.ref[T]` function that has no manual adjoint, or updates a
    /// differentiable array slot through an operator (warp raises both only
    /// when generating the adjoint).
    pub backward_error: Option<LowerError>,
    /// A `@wp.func_native` function: its bodies are the user's snippets.
    pub snippet: bool,
    /// The body of a native function's `replay_` function (its `replay_snippet`).
    pub snippet_replay: Option<String>,
    /// Its `@wp.func_grad`, once built: the adjoint's parameters, body and line.
    pub custom_grad_source: Option<(Vec<String>, String, usize)>,
    /// What its body uses (loops, atomics...; not what its callees use).
    pub features: super::Features,
    /// The structs its tiles (and tile stacks) hold: the module defines them
    /// with the helpers tile code needs.
    pub tile_structs: Vec<StructId>,
}

/// A function's C++ parameter lists and bodies, as the module source prints them.
#[derive(Debug, Clone)]
pub struct FunctionSource {
    /// `template<typename tile_t>\n` where parameters are tiles (warp passes a
    /// tile by reference to a template type, so that one function takes
    /// register and shared tiles alike); empty otherwise.
    pub template: String,
    pub forward_args: Vec<String>,
    pub reverse_args: Vec<String>,
    pub forward_body: String,
    pub reverse_body: String,
}

/// A function's C++ text: only a module source prints it, and a run that
/// keeps the CUDA kernels alone never asks for one, so a lowered body is
/// rendered the first time it is asked for.
#[derive(Debug)]
pub enum FunctionText {
    /// Written when built (a `@wp.func_native` function's snippets).
    Written(FunctionSource),
    /// A lowered body and, once asked for, its rendering.
    Lowered(LoweredBody, std::cell::OnceCell<FunctionSource>),
}

/// What rendering a lowered body reads, moved out of its [`Adjoint`]:
/// its variables, its string constants and its top block's passes.
#[derive(Debug)]
pub struct LoweredBody {
    vars: Vec<VarInfo>,
    args: Vec<VarId>,
    locals: Vec<VarId>,
    strings: Vec<String>,
    top: Block,
}

impl LoweredBody {
    pub fn code(&self) -> Code<'_> {
        Code {
            vars: &self.vars,
            args: &self.args,
            locals: &self.locals,
            strings: &self.strings,
            top: &self.top,
        }
    }
}

/// A lowered body as its rendering reads it, borrowed from its [`Adjoint`]
/// (a kernel) or from a function's [`LoweredBody`].
#[derive(Clone, Copy)]
pub struct Code<'c> {
    pub args: &'c [VarId],
    pub locals: &'c [VarId],
    /// Texts of the string constants (see [`Adjoint::strings`]).
    pub strings: &'c [String],
    vars: &'c [VarInfo],
    top: &'c Block,
}

impl<'c> Code<'c> {
    pub fn var(&self, id: VarId) -> &'c VarInfo {
        &self.vars[id.0]
    }

    pub fn body_forward(&self) -> &'c Lines {
        &self.top.forward
    }

    pub fn body_replay(&self) -> &'c Replay {
        &self.top.replay
    }

    pub fn body_reverse(&self) -> &'c Lines {
        &self.top.reverse
    }
}

/// The user functions of a module in warp's build order (callees before callers).
#[derive(Debug, Default)]
pub struct FuncTable {
    pub built: Vec<(String, BuiltFunc)>,
    /// The structs the module defines, in warp's build order.
    pub structs: Vec<super::types::StructId>,
    building: Vec<String>,
    /// Functions whose custom gradient was built, in that order (warp emits
    /// those adjoints before all others).
    pub grads: Vec<usize>,
    /// `@wp.func_replay` functions of built functions, built after the kernels
    /// (warp's deferred functions): (index of the function they replay, C++
    /// name); and the custom gradients (`@wp.func_grad`) of built functions
    /// (index of the function, no name), in the order warp defers them.
    pub deferred: Vec<(usize, Option<String>)>,
    /// Functions whose adjoint a `wp.grad(f)(...)` calls: generated whatever
    /// the kernels' `enable_backward`.
    pub grad_called: Vec<usize>,
}

type LResult<T> = Result<T, LowerError>;

pub struct Adjoint<'a> {
    scope: &'a Scope<'a>,
    funcs: &'a RefCell<FuncTable>,
    /// A `@wp.func` (not a kernel): returns values, has no tid.
    is_function: bool,
    /// The variables of the return statements seen so far (warp's `return_var`).
    pub return_var: Option<Vec<VarId>>,
    /// User functions this body calls (indices into the function table).
    pub called: Vec<usize>,
    /// Line of the function's first decorator: warp's `fun_lineno`.
    fun_lineno: usize,
    pub vars: Vec<VarInfo>,
    pub args: Vec<VarId>,
    pub locals: Vec<VarId>,
    /// Python names bound to variables, in binding order (branches and loops snapshot them).
    symbols: Vec<Symbol<'a>>,
    /// [`key_bit`] of every name ever bound in this body: a name whose bit
    /// is clear is unbound without a scan (`wp` is asked for at each `wp.`
    /// call). Bindings are only ever dropped, so the bits stay a superset.
    symbol_bits: u64,
    /// Locals bound to a `@wp.func` (`f = some_func`): the function's name.
    func_aliases: Vec<(&'a str, String)>,
    /// Statement blocks; loops lower their condition and body into blocks of their own.
    blocks: Vec<Block>,
    /// Labels of the enclosing loops' condition blocks (for break/continue).
    loop_blocks: Vec<String>,
    /// Symbols at the start of each enclosing dynamic loop.
    loop_symbols: Vec<Vec<Symbol<'a>>>,
    /// Iterator names of unrolled loops (their constants may be redefined).
    loop_const_iter_symbols: Vec<&'a str>,
    /// The `wp.tid()` dimension (warp's `kernel_dim`).
    pub kernel_dim: usize,
    /// The module's `max_unroll`: constant loops up to this many iterations are unrolled.
    pub max_unroll: usize,
    /// The module's `block_dim` and `enable_backward` (tile builtins depend on them).
    pub block_dim: u32,
    pub enable_backward: bool,
    /// What each line starts with: `LINE_START` (the stored lines' start),
    /// then four spaces per open block.
    indentation: String,
    label_count: usize,
    /// The closure variables of a factory-made function (read as constants).
    closure: &'a [(String, super::pyconst::PyVal)],
    /// Subtracted from the line numbers of the `<L n>` comments: a function
    /// specialized on function arguments numbers its lines from its `def`.
    line_offset: usize,
    /// Current line relative to `fun_lineno` (warp's `adj.lineno`).
    lineno: Option<usize>,
    /// Position of the node being lowered, for error messages.
    pos: Pos,
    /// The builtins the body calls, each once, in the order first called:
    /// a kernel calls a dozen, found by a scan without a tree or a string each.
    pub builtins_used: Vec<Name>,
    /// Features seen while lowering the body (loops); see [`Adjoint::features`].
    features: super::Features,
    /// Tuple variables and their elements as evaluated (warp's `tuple_t.values`).
    tuples: Vec<(VarId, Vec<VarId>)>,
    /// Slices of vectors, quaternions and transforms (bounds known when the
    /// code is generated) and the number of components each selects.
    composite_slices: Vec<(VarId, u8)>,
    /// `slice(start, stop, step)` values of constant bounds, by variable (an
    /// explicit `wp.tile_view` offset reads them).
    slice_values: Vec<(VarId, [i128; 3])>,
    /// Reused for building one line at a time (see [`Adjoint::new_line`]).
    line_buf: String,
    /// Finished loop blocks, cleared, whose buffers the next blocks reuse:
    /// every loop opens two, and growing fresh ones was most of their cost.
    spare_blocks: Vec<Block>,
    /// References to array elements (or their components) that a store
    /// target resolved to (warp's `Var.array_slot`).
    slots: Vec<(VarId, Slot)>,
    /// Array views and the array and indices they were taken from, outermost
    /// first (warp's `ref_origin` of a view: `view` steps from a root).
    view_origins: Vec<(VarId, VarId, Vec<Vars>)>,
    /// A differentiable composite slot updated by an operator with no atomic:
    /// warp refuses such kernels when it generates their backward pass.
    pub slot_augassign_error: Option<LowerError>,
    /// A call of a function with `wp.ref[T]` parameters and no manual
    /// adjoint: warp refuses it where a backward pass is generated.
    pub ref_call_error: Option<LowerError>,
    /// The function's Python name (warp's `fun_name`), for messages.
    fun_name: &'a str,
    /// Texts of the string constants (`Type::Str(i)` is `strings[i]`), as warp spells them in C++.
    pub strings: Vec<String>,
    /// warp's `Var.ref_origin`: per variable, an index into `origin_pool`
    /// (`u32::MAX`: none), the last step of the storage path the variable
    /// reads; the records link back to the path's root.
    origin_index: Vec<u32>,
    origin_pool: Vec<OriginNode>,
    /// Names of the function's `wp.ref[T]` parameters.
    ref_params: Vec<&'a str>,
    /// Struct fields read from a struct variable (warp's field steps of a
    /// `ref_origin`): the variable, the struct it was read from, the field
    /// names; the adjoint of a slot in an array field goes through them.
    field_origins: Vec<(VarId, VarId, Vec<OriginStep>)>,
    /// Python ints not yet variables (an array's `ndim`): placeholders that
    /// the next builtin call registers as constants after its output, as
    /// warp registers the plain values it is passed.
    pending_ints: Vec<VarId>,
}

/// A Python name bound to a variable. `key` fingerprints the name: a lookup
/// compares one word per binding, and the bytes only where the words agree
/// (a kernel binds tens of names, looked up for nearly every expression).
#[derive(Debug, Clone, Copy)]
struct Symbol<'a> {
    key: u64,
    name: &'a str,
    var: VarId,
}

/// The length and up to 16 bytes of `name` (all of a name up to 8 bytes), in one word.
fn name_key(name: &str) -> u64 {
    let b = name.as_bytes();
    let n = b.len();
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64;
    let bytes = if n >= 8 {
        word(0) ^ word(n - 8).rotate_left(31)
    } else if n >= 4 {
        half(0) | half(n - 4) << 32
    } else if n > 0 {
        // The first, middle and last byte are every byte of 1 to 3.
        b[0] as u64 | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16
    } else {
        0
    };
    bytes ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// One of 64 bits for a name's key.
fn key_bit(key: u64) -> u64 {
    1 << (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58)
}

/// The variable `name` is bound to in `symbols`.
fn find_symbol(symbols: &[Symbol<'_>], name: &str) -> Option<VarId> {
    find_key(symbols, name_key(name), name)
}

fn find_key(symbols: &[Symbol<'_>], key: u64, name: &str) -> Option<VarId> {
    // Newest first: a statement mostly reads the names bound just before it
    // (each name is bound once, so the order changes no answer).
    symbols
        .iter()
        .rev()
        .find(|s| s.key == key && same(s.name, name))
        .map(|s| s.var)
}

/// A step from a variable to the lvalue a struct field reference reads.
#[derive(Debug, Clone)]
enum OriginStep {
    /// A field of a struct.
    Field(String),
    /// An element of an array of structs.
    Element(Vars),
}

/// An evaluated array location, for stores and atomic updates of an element's
/// component (warp's `_ArraySlot`): `wp::index(root, indices)` then `access`.
#[derive(Debug, Clone)]
struct Slot {
    root: VarId,
    indices: Vars,
    access: String,
    ty: Type,
}

/// How a slot is narrowed: by subscript indices or by a component name.
enum SlotSel<'s> {
    Index(&'s [VarId]),
    Attr(&'s str),
}

impl<'a> Adjoint<'a> {
    pub fn new(
        scope: &'a Scope<'a>,
        funcs: &'a RefCell<FuncTable>,
        def: &FunctionDef<'a>,
        is_function: bool,
    ) -> LResult<Self> {
        Adjoint::specialized(scope, funcs, def, is_function, &[])
    }

    /// [`Adjoint::new`] for a call of a generic function: its parameters
    /// annotated `Any` take the call's argument types, `concrete` (one per
    /// parameter that is not a `wp.Function`), as warp instantiates a generic
    /// `@wp.func` per signature it is called with.
    pub fn specialized(
        scope: &'a Scope<'a>,
        funcs: &'a RefCell<FuncTable>,
        def: &FunctionDef<'a>,
        is_function: bool,
        concrete: &[Type],
    ) -> LResult<Self> {
        let mut adj = Adjoint {
            scope,
            funcs,
            is_function,
            return_var: None,
            called: Vec::new(),
            fun_lineno: def.first_line,
            line_offset: 0,
            closure: &[],
            // Room for a large kernel's variables: growing these by doubling
            // copied them ~8 times each.
            vars: Vec::with_capacity(256),
            args: Vec::with_capacity(def.args.len()),
            locals: Vec::with_capacity(256),
            // Likewise the bindings, and the origins of variables below.
            symbols: Vec::with_capacity(32),
            symbol_bits: 0,
            func_aliases: Vec::new(),
            blocks: vec![Block::for_lines(
                def.end_line.saturating_sub(def.first_line),
            )],
            loop_blocks: Vec::new(),
            loop_symbols: Vec::new(),
            loop_const_iter_symbols: Vec::new(),
            kernel_dim: {
                // Unpacking a call of a bare name: `wp.tid` aliases, found on demand.
                let found = std::cell::OnceCell::new();
                let is_tid = |f: &Expr| match &f.kind {
                    ExprKind::Name(n) => {
                        let (locals, aliases) = found.get_or_init(|| tid_aliases(scope, def.body));
                        if locals.iter().any(|l| l == n) {
                            aliases.iter().any(|a| a == n)
                        } else {
                            scope.module_function_alias(n).as_deref() == Some("wp.tid")
                        }
                    }
                    _ => false,
                };
                tid_dimension(def.body, &is_tid)
            },
            max_unroll: MAX_UNROLL,
            block_dim: super::BLOCK_DIM,
            enable_backward: true,
            indentation: LINE_START.to_string(),
            label_count: 0,
            lineno: None,
            pos: Pos {
                line: def.first_line,
                col: 1,
            },
            builtins_used: Vec::new(),
            features: super::Features::empty(),
            strings: Vec::new(),
            tuples: Vec::new(),
            composite_slices: Vec::new(),
            slice_values: Vec::new(),
            line_buf: String::with_capacity(256),
            spare_blocks: Vec::new(),
            slots: Vec::new(),
            view_origins: Vec::new(),
            slot_augassign_error: None,
            ref_call_error: None,
            fun_name: def.name,
            origin_index: Vec::with_capacity(256),
            origin_pool: Vec::with_capacity(64),
            ref_params: Vec::new(),
            field_origins: Vec::new(),
            pending_ints: Vec::new(),
        };
        if def.has_complex_args || (def.has_defaults && !is_function) {
            return Err(adj.err("kernel arguments cannot have defaults, *args or **kwargs"));
        }
        for arg in def.args {
            let Some(annotation) = &arg.annotation else {
                return Err(LowerError {
                    line: arg.pos.line,
                    col: arg.pos.col,
                    message: format!("argument '{}' has no type annotation", arg.name),
                });
            };
            if is_function && scope.is_function_annotation(annotation) {
                // A `wp.Function` parameter is no C++ parameter: each call
                // specializes the function on the function it passes.
                continue;
            }
            let ty = match (concrete.get(adj.args.len()), is_function) {
                (Some(t), true) => match scope.generic_template(annotation) {
                    Some(p) if p.fits(t) => *t,
                    Some(_) => {
                        return Err(LowerError {
                            line: arg.pos.line,
                            col: arg.pos.col,
                            message: format!(
                                "couldn't find a function '{}' compatible with the arguments: '{}' takes no {}",
                                def.name, arg.name, t
                            ),
                        });
                    }
                    None => scope.annotation_type(annotation)?,
                },
                _ => scope.annotation_type(annotation)?,
            };
            let id = VarId(adj.vars.len());
            adj.vars.push(VarInfo::new(arg.name, ty, None));
            adj.args.push(id);
            adj.set_symbol(arg.name, id);
            if ty.is_ref() {
                if !is_function {
                    return Err(LowerError {
                        line: annotation.pos.line,
                        col: annotation.pos.col,
                        message: "wp.ref[T] parameters are only supported in @wp.func functions"
                            .into(),
                    });
                }
                adj.ref_params.push(arg.name);
                adj.set_root_origin(id, true);
            } else if matches!(ty, Type::Array { .. }) {
                adj.set_root_origin(id, false);
            }
        }
        Ok(adj)
    }

    fn err(&self, message: impl Into<String>) -> LowerError {
        LowerError {
            line: self.pos.line,
            col: self.pos.col,
            message: message.into(),
        }
    }

    /// The lowered body, for rendering.
    pub fn code(&self) -> Code<'_> {
        Code {
            vars: &self.vars,
            args: &self.args,
            locals: &self.locals,
            strings: &self.strings,
            top: &self.blocks[0],
        }
    }

    /// The lowered body, kept to be rendered later.
    pub fn into_body(mut self) -> LoweredBody {
        LoweredBody {
            top: self.blocks.swap_remove(0),
            vars: self.vars,
            args: self.args,
            locals: self.locals,
            strings: self.strings,
        }
    }

    pub fn var(&self, id: VarId) -> &VarInfo {
        &self.vars[id.0]
    }

    fn ty(&self, id: VarId) -> &Type {
        &self.vars[id.0].ty
    }

    /// `var_{label}`, the variable's C++ name.
    pub fn emit(&self, id: VarId) -> &str {
        self.vars[id.0].name()
    }

    /// `adj_{label}`, the name of the variable's adjoint.
    pub fn emit_adj(&self, id: VarId) -> String {
        self.vars[id.0].adj().to_string()
    }

    fn symbol(&self, name: &str) -> Option<VarId> {
        let key = name_key(name);
        if self.symbol_bits & key_bit(key) == 0 {
            return None;
        }
        find_key(&self.symbols, key, name)
    }

    /// Records a call of builtin `name` (see `builtins_used`).
    pub(super) fn use_builtin(&mut self, name: &str) {
        if !self.builtins_used.iter().any(|b| same(b, name)) {
            self.builtins_used.push(name.into());
        }
    }

    fn set_symbol(&mut self, name: &'a str, id: VarId) {
        let key = name_key(name);
        let bit = key_bit(key);
        if self.symbol_bits & bit != 0 {
            let mut bound = self.symbols.iter_mut();
            if let Some(slot) = bound.find(|s| s.key == key && same(s.name, name)) {
                slot.var = id;
                return;
            }
        }
        self.symbol_bits |= bit;
        self.symbols.push(Symbol { key, name, var: id });
    }

    // ------------------------------------------------------------ emission

    fn add_var(&mut self, mut ty: Type, constant: Option<ConstVal>) -> VarId {
        let id = VarId(self.vars.len());
        // Every tile value has a type object of its own.
        if let Type::Tile(t) = &mut ty {
            t.obj = id.0 as u32;
        }
        self.vars
            .push(VarInfo::local(self.locals.len(), ty, constant));
        self.locals.push(id);
        self.block().vars.push(id);
        id
    }

    /// A string constant: a `const wp::str` variable (warp's `constant_str`
    /// escapes the text as Python's `unicode-escape` codec does).
    fn add_string(&mut self, text: &str) -> VarId {
        let mut c = String::with_capacity(text.len() + 2);
        c.push('"');
        for ch in text.chars() {
            match ch {
                '\\' => c.push_str("\\\\"),
                '\n' => c.push_str("\\n"),
                '\t' => c.push_str("\\t"),
                '\r' => c.push_str("\\r"),
                ' '..='~' => c.push(ch),
                ch if (ch as u32) < 0x100 => c.push_str(&format!("\\x{:02x}", ch as u32)),
                ch if (ch as u32) < 0x10000 => c.push_str(&format!("\\u{:04x}", ch as u32)),
                ch => c.push_str(&format!("\\U{:08x}", ch as u32)),
            }
        }
        c.push('"');
        self.strings.push(c);
        self.add_var(Type::Str(self.strings.len() as u32 - 1), None)
    }

    /// The text of a string constant variable, as its quoted C++ spelling
    /// holds it (None for other variables).
    pub(super) fn string_constant(&self, v: VarId) -> Option<&str> {
        match self.var(v).ty {
            Type::Str(i) => self
                .strings
                .get(i as usize)?
                .strip_prefix('"')?
                .strip_suffix('"'),
            _ => None,
        }
    }

    fn add_constant(&mut self, c: ConstVal) -> VarId {
        self.add_var(c.literal_type(), Some(c))
    }

    fn block(&mut self) -> &mut Block {
        self.blocks
            .last_mut()
            .expect("the function block is never popped")
    }

    /// [`Adjoint::block`] and the current indentation, borrowed together.
    fn block_and_indentation(&mut self) -> (&mut Block, &str) {
        let block = self
            .blocks
            .last_mut()
            .expect("the function block is never popped");
        (block, &self.indentation)
    }

    /// An empty line already indented, in the reused line buffer: give it
    /// back through `push_forward_line` or `push_reverse_line`.
    fn new_line(&mut self) -> String {
        let mut line = std::mem::take(&mut self.line_buf);
        line.clear();
        line.put(&self.indentation);
        line
    }

    /// Appends `names` separated by ", ".
    fn push_names<'n>(&self, out: &mut String, names: impl Iterator<Item = &'n str>) {
        for (i, name) in names.enumerate() {
            if i > 0 {
                out.put(", ");
            }
            out.put(name);
        }
    }

    /// Adds a line from [`Adjoint::new_line`] to the forward pass and, unchanged, to the replay.
    fn push_forward_line(&mut self, line: String) {
        let block = self.block();
        block.forward.push(&line);
        block.replay.push_last_of(&block.forward);
        self.line_buf = line;
    }

    /// Adds a line from [`Adjoint::new_line`] to the reverse pass.
    fn push_reverse_line(&mut self, line: String) {
        self.block().reverse.push(&line);
        self.line_buf = line;
    }

    fn add_forward(&mut self, statement: &str, replay: Option<&str>, skip_replay: bool) {
        let (block, indentation) = self.block_and_indentation();
        block.forward.push_parts(&[indentation, statement]);
        match replay {
            _ if skip_replay => {}
            None => block.replay.push_last_of(&block.forward),
            Some(r) => block.replay.push_parts(&[indentation, r]),
        }
    }

    fn add_forward_plain(&mut self, statement: &str) {
        self.add_forward(statement, None, false);
    }

    fn add_reverse(&mut self, statement: &str) {
        let (block, indentation) = self.block_and_indentation();
        block.reverse.push_parts(&[indentation, statement]);
    }

    fn begin_block(&mut self, name: &str) -> String {
        let label = format!("{name}_{}", self.label_count);
        self.label_count += 1;
        let block = self.spare_block();
        self.blocks.push(block);
        label
    }

    /// A cleared block, one of the finished blocks' if any is left.
    fn spare_block(&mut self) -> Block {
        self.spare_blocks.pop().unwrap_or_else(Block::nested)
    }

    /// Keeps finished blocks' buffers for the next [`Adjoint::begin_block`].
    fn recycle<const N: usize>(&mut self, blocks: [Block; N]) {
        for mut b in blocks {
            b.clear();
            self.spare_blocks.push(b);
        }
    }

    fn end_block(&mut self) -> Block {
        self.blocks.pop().expect("block stack underflow")
    }

    fn indent(&mut self) {
        self.indentation.put("    ");
    }

    fn dedent(&mut self) {
        let n = self.indentation.len().saturating_sub(4);
        self.indentation.truncate(n.max(LINE_START.len()));
    }

    /// Warp annotates the generated code with the Python line each time the
    /// visited node's line changes.
    #[inline]
    fn set_lineno(&mut self, pos: Pos) {
        self.pos = pos;
        let rel = pos.line.saturating_sub(self.fun_lineno);
        // Most nodes are on the line of the one before: that test is in line,
        // the comments are not.
        if self.lineno != Some(rel) {
            self.push_line_comments(rel);
        }
    }

    /// The `// <python line>   <L n>` comments of a new line, in each pass.
    #[inline(never)]
    fn push_line_comments(&mut self, rel: usize) {
        let line = rel + self.fun_lineno;
        let (text, chars) = trim_line(self.scope.lines.get(line - 1).copied().unwrap_or(""));
        let depth = self.indentation.len() - LINE_START.len();
        let width = 80usize.saturating_sub(depth);
        let pad = width.saturating_sub(chars);
        let mut number = itoa::Buffer::new();
        let number = number.format(line.saturating_sub(self.line_offset));
        let (block, indentation) = self.block_and_indentation();
        let pad = &PAD[..pad.min(PAD.len())];
        // Written in place (`push_with` and `put_all` are in line, not the
        // loop of `push_parts`): the constant pieces' lengths are then known,
        // and each of them is copied by a store or two.
        let forward = [indentation, "// ", text, pad, "       <L ", number, ">"];
        block.forward.push_with(|t| t.put_all(&forward));
        block.replay.push_last_of(&block.forward);
        let reverse = [indentation, "// adj: ", text, pad, "  <L ", number, ">"];
        block.reverse.push_with(|t| t.put_all(&reverse));
        self.lineno = Some(rel);
    }

    /// Bytes of code this body has generated: its statement lines (in every
    /// open block, each once) and the declarations its variables will get.
    /// A sum over the few open blocks, not a walk of the lines.
    /// What this body uses: its loops and the features of the builtins it
    /// calls (not those of the user functions it calls).
    pub fn features(&self) -> super::Features {
        self.features.union(super::Features::of_builtins(
            self.builtins_used.iter().map(Name::as_str),
        ))
    }

    pub fn generated_bytes(&self) -> usize {
        /// A variable's declarations (forward and backward) and its adjoint's, about
        /// (30 bytes each, with `const` and the type).
        const VAR_BYTES: usize = 96;
        /// The indentation and line end the module puts around each line.
        const LINE_BYTES: usize = 5;
        let pass = |l: &Lines| l.text_len() + l.len() * LINE_BYTES;
        let lines: usize = self
            .blocks
            .iter()
            .map(|b| {
                let replay = b.replay.text_len() + b.replay.len() * LINE_BYTES;
                pass(&b.forward) + replay + pass(&b.reverse)
            })
            .sum();
        lines + self.vars.len() * VAR_BYTES
    }

    /// Fails when the code generated so far, and `more` bytes expected to
    /// follow, pass the bound (`Scope::max_generated`).
    fn check_size(&self, more: usize) -> LResult<()> {
        let limit = self.scope.max_generated;
        if self.generated_bytes().saturating_add(more) > limit {
            return Err(super::size_limit_error(
                self.pos.line,
                self.pos.col,
                "generated code",
                limit,
            ));
        }
        Ok(())
    }

    fn load(&mut self, id: VarId) -> LResult<VarId> {
        if self.ty(id).is_ref() {
            Ok(self.add_call("load", &[id])?.expect("load returns a value"))
        } else {
            Ok(id)
        }
    }

    /// Emit a call of builtin `name`: output allocated first, then arguments loaded,
    /// then the forward call, its replay and its adjoint — warp's `add_call`.
    fn add_call(&mut self, name: &str, args: &[VarId]) -> LResult<Option<VarId>> {
        // Argument types on the stack: calls rarely take more than a few arguments.
        let mut inline = [Type::BOOL; 8];
        let spilled: Vec<Type>;
        let types: &[Type] = if args.len() <= inline.len() {
            for (t, a) in inline.iter_mut().zip(args) {
                *t = self.ty(*a).strip_ref();
            }
            &inline[..args.len()]
        } else {
            spilled = args.iter().map(|a| self.ty(*a).strip_ref()).collect();
            &spilled
        };
        if types.iter().any(|t| matches!(t, Type::Tile(_))) {
            return self.tile_operator(name, args);
        }
        let ov = builtins::resolve(name, types).map_err(|m| self.err(m))?;
        self.emit_call(&ov, args)
    }

    /// A Python int the next builtin call registers as a constant (see `pending_ints`).
    fn pending_int(&mut self, value: i128) -> VarId {
        let id = VarId(self.vars.len());
        self.vars.push(VarInfo::new(
            "pending",
            Type::I32,
            Some(ConstVal::Int(value)),
        ));
        self.pending_ints.push(id);
        id
    }

    /// `args` with their pending ints made constants, in order.
    fn register_pending(&mut self, args: &[VarId]) -> Vars {
        let mut out = Vars::new();
        for &a in args {
            out.push(if self.pending_ints.contains(&a) {
                let c = self.var(a).constant.expect("a pending int has its value");
                self.add_constant(c)
            } else {
                a
            });
        }
        // Others stay pending for the call that takes them (`f(a.ndim, b[i])`
        // indexes `b` before calling `f`).
        self.pending_ints.retain(|p| !args.contains(p));
        out
    }

    fn emit_call(&mut self, ov: &Overload, args: &[VarId]) -> LResult<Option<VarId>> {
        // A 64-bit cast of a literal keeps the literal's precision: warp retypes the
        // constant's variable and assigns the value instead of narrowing it first.
        if let (
            [arg],
            Some(Type::Scalar(wide @ (Scalar::Float64 | Scalar::Int64 | Scalar::UInt64))),
        ) = (args, &ov.ret)
        {
            if ov.native == wide.name() {
                let v = &self.vars[arg.0];
                // The Python value as warp's scalar holds it (its `constant_str`):
                // `wp.float64(6)` is `6`, `wp.int64(2.0)` is `2.0`.
                let literal = match v.constant {
                    Some(ConstVal::Int(i)) => Some(match wide {
                        Scalar::Int64 => format!("{i}ll"),
                        Scalar::UInt64 => format!("{i}ull"),
                        _ => i.to_string(),
                    }),
                    Some(ConstVal::Float(f)) if f == f64::INFINITY => Some("INFINITY".into()),
                    Some(ConstVal::Float(f)) if f == f64::NEG_INFINITY => Some("-INFINITY".into()),
                    Some(ConstVal::Float(f)) if !f.is_nan() => {
                        Some(super::types::python_float_repr(f))
                    }
                    _ => None,
                };
                if let Some(lit) = literal {
                    let arg = *arg;
                    self.vars[arg.0].ty = Type::Scalar(*wide);
                    self.vars[arg.0].constant = None;
                    forward!(self, "{} = {lit};", self.emit(arg));
                    return Ok(Some(arg));
                }
            }
        }
        let output = ov.ret.clone().map(|t| self.add_var(t, None));
        let registered: Vars;
        let args = if self.pending_ints.is_empty() {
            args
        } else {
            registered = self.register_pending(args);
            &registered[..]
        };
        // Arguments left out take the signature's defaults: constants created
        // after the output, before the arguments are loaded.
        let with_defaults: Vars;
        let args = if ov.defaults.is_empty() {
            args
        } else {
            let mut all: Vars = args.iter().copied().collect();
            for &(ty, c) in ov.defaults {
                all.push(self.add_var(ty, Some(c)));
            }
            with_defaults = all;
            &with_defaults[..]
        };

        let mut fwd_args = Vars::new();
        // `load` takes the reference itself; every other builtin takes values.
        let takes_refs = ov.native == "load";
        for &a in args {
            fwd_args.push(if takes_refs { a } else { self.load(a)? });
        }
        // The lines are written in place into the blocks' buffers, indentation
        // first: this is the hottest path of the lowering, and `format!` +
        // `join` cost more than the text. The replay copies the forward line,
        // and the adjoint copies its argument list.
        let Adjoint {
            blocks,
            indentation,
            vars,
            ..
        } = self;
        let (indentation, vars): (&str, &[VarInfo]) = (indentation, vars);
        let block = blocks
            .last_mut()
            .expect("the function block is never popped");
        let name = |a: VarId| vars[a.0].name();
        // Where the call starts, and its arguments, in the forward line.
        let (call_at, args_at) = block.forward.push_with(|line| {
            let start = line.len();
            line.put(indentation);
            let call_at = line.len() - start;
            if let Some(o) = output {
                line.put_all(&[name(o), " = "]);
            }
            line.put_all(&[
                ov.namespace,
                &ov.native,
                if ov.initializer_list { "({" } else { "(" },
            ]);
            let args_start = line.len() - start;
            for (i, &a) in fwd_args.iter().enumerate() {
                if i > 0 {
                    line.put(", ");
                }
                line.put(name(a));
            }
            let args_at = args_start..line.len() - start;
            line.put(if ov.initializer_list { "});" } else { ");" });
            (call_at, args_at)
        });
        let forward = block.forward.last_stored().expect("the line just pushed");
        if ov.skip_replay {
            block
                .replay
                .push_parts(&[indentation, "// ", &forward[call_at..]]);
        } else {
            block.replay.push_last_of(&block.forward);
        }

        if ov.differentiable && !args.is_empty() {
            let fwd_names = &forward[args_at];
            let adj = |a: VarId| vars[a.0].adj();
            block.reverse.push_with(|line| {
                line.put_all(&[indentation, ov.namespace, "adj_", &ov.adj_native, "("]);
                if ov.initializer_list {
                    // `adj_f({a, b}, {&adj_a, &adj_b}, adj_ret)`
                    line.put_all(&["{", fwd_names, "}, {"]);
                    for (i, &a) in args.iter().enumerate() {
                        line.put_all(&[if i > 0 { ", &" } else { "&" }, adj(a)]);
                    }
                    line.put("}");
                    if let Some(o) = output {
                        line.put_all(&[", ", adj(o)]);
                    }
                } else {
                    // Forward arguments, the original output if the adjoint
                    // needs it, then the adjoints of the original (unloaded)
                    // arguments and of the output.
                    line.put(fwd_names);
                    if let (true, Some(o)) = (ov.require_original_output, output) {
                        line.put_all(&[", ", name(o)]);
                    }
                    for &a in args.iter().chain(&output) {
                        line.put_all(&[", ", adj(a)]);
                    }
                }
                line.put(");");
            });
        }
        Ok(output)
    }

    fn add_value_call(&mut self, name: &str, args: &[VarId]) -> LResult<VarId> {
        self.add_call(name, args)?
            .ok_or_else(|| self.err(format!("'{name}' does not return a value")))
    }

    // ---------------------------------------------------------- statements

    pub fn lower_function(&mut self, def: &FunctionDef<'a>, def_pos: Pos) -> LResult<()> {
        self.set_lineno(def_pos);
        for stmt in def.body {
            // Docstrings and other bare constants create nothing.
            if let StmtKind::Expr(Expr {
                kind: ExprKind::Constant(_),
                ..
            }) = stmt.kind
            {
                continue;
            }
            self.stmt(stmt)?;
        }
        if self.return_var.as_ref().is_some_and(|r| r.len() == 1)
            && !matches!(def.body.last().map(|s| &s.kind), Some(StmtKind::Return(_)))
        {
            self.add_forward("return {};", None, true);
        }
        self.use_argument_structs();
        let several = self.return_var.as_ref().is_some_and(|r| r.len() > 1);
        let returns = def
            .returns
            .as_ref()
            .filter(|a| !matches!(a.kind, ExprKind::Constant(Constant::None)));
        if let (Some(annotation), true, false) = (returns, self.is_function, several) {
            let actual = self
                .return_var
                .as_ref()
                .and_then(|r| r.first())
                .map(|v| self.ty(*v).clone());
            // `-> wp.tile[float]`, `-> wp.Float`: any type the template takes.
            if let Some(template) = self.scope.generic_template(annotation) {
                if actual.as_ref().is_some_and(|t| template.fits(t)) {
                    return Ok(());
                }
            }
            let declared = self.scope.annotation_type(annotation)?;
            // Arrays match on their element type and family (warp's `types_equal`).
            let same = match (&actual, &declared) {
                (
                    Some(Type::Array {
                        dtype: a, kind: k, ..
                    }),
                    Type::Array {
                        dtype: b, kind: l, ..
                    },
                ) => {
                    a == b
                        && (k == l || matches!((k, l), (ArrayKind::Fixed(_), ArrayKind::Fixed(_))))
                }
                // Tiles match on their element type (warp's `types_equal`).
                (Some(Type::Tile(a)), Type::Tile(b)) => a.dtype == b.dtype,
                _ => actual.as_ref() == Some(&declared),
            };
            if !same {
                let got = actual.map_or("None".to_string(), |t| t.to_string());
                return Err(self.err(format!(
                    "function '{}' is annotated to return {declared} but returns {got}",
                    def.name
                )));
            }
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt<'a>) -> LResult<()> {
        self.set_lineno(stmt.pos);
        self.check_size(0)?;
        match &stmt.kind {
            StmtKind::Expr(e) => {
                if let ExprKind::Call(func, args, kwargs) = &e.kind {
                    self.set_lineno(e.pos);
                    self.call(func, args, kwargs)?;
                } else {
                    self.expr(e)?;
                }
                Ok(())
            }
            StmtKind::Assign(targets, value) => self.assign(targets, value),
            StmtKind::AugAssign(target, op, value) => self.aug_assign(target, *op, value),
            StmtKind::If(test, body, orelse) => self.if_stmt(test, body, orelse),
            StmtKind::Return(value) => self.return_stmt(value.as_ref()),
            StmtKind::Pass => Ok(()),
            StmtKind::AnnAssign(..) => {
                Err(self.err("annotated assignments are not supported in kernels"))
            }
            StmtKind::For(target, iter, body, _orelse) => self.for_stmt(target, iter, body),
            StmtKind::While(test, body, _orelse) => self.while_stmt(test, body),
            StmtKind::Break | StmtKind::Continue => {
                let Some(label) = self.loop_blocks.last().cloned() else {
                    return Err(self.err("'break' or 'continue' outside a loop"));
                };
                let snapshot = self.loop_symbols.last().cloned().unwrap_or_default();
                self.materialize_redefinitions(&snapshot)?;
                let which = if matches!(stmt.kind, StmtKind::Break) {
                    "end"
                } else {
                    "start"
                };
                forward!(self, "goto {which}_{label};");
                Ok(())
            }
            StmtKind::Assert(test, _) => self.assert_stmt(stmt.pos, test),
            StmtKind::FunctionDef(_) => {
                Err(self.err("nested function definitions are not supported in kernels"))
            }
            StmtKind::ClassDef(_) => {
                Err(self.err("class definitions are not supported in kernels"))
            }
            StmtKind::Import(_) | StmtKind::ImportFrom(..) => {
                Err(self.err("imports are not supported in kernels"))
            }
            StmtKind::Other(kind) => {
                Err(self.err(format!("construct `ast.{kind}` not supported in kernels")))
            }
        }
    }

    /// warp's `emit_Assert`: the condition, then a C `assert` that carries
    /// the statement's source text (quotes escaped).
    fn assert_stmt(&mut self, pos: Pos, test: &Expr<'a>) -> LResult<()> {
        let cond = self.expr(test)?;
        let cond = self.load(cond)?;
        let line = self.scope.lines.get(pos.line - 1).copied().unwrap_or("");
        let start = line
            .char_indices()
            .nth(pos.col.saturating_sub(1))
            .map_or(line.len(), |(b, _)| b);
        let segment = statement_segment(&line[start..]).ok_or_else(|| {
            self.err(
                "an assert spanning several lines is not supported by this version of the lowering",
            )
        })?;
        let escaped = segment.replace('"', "\\\"");
        forward!(self, "assert(((void)\"{escaped}\",{}));", self.emit(cond));
        Ok(())
    }

    fn assign(&mut self, targets: &[Expr<'a>], value: &Expr<'a>) -> LResult<()> {
        if targets.len() != 1 {
            return Err(self.err("assigning the same value to multiple variables is not supported"));
        }
        if matches!(value.kind, ExprKind::List(_)) {
            return Err(self.err("list constructs are not supported in kernels"));
        }
        let lhs = &targets[0];
        match &lhs.kind {
            ExprKind::Name(name) => {
                if let Some(f) = self.function_value(value)? {
                    if self.symbol(name).is_some() {
                        return Err(self.err(format!(
                            "rebinding the variable '{name}' to a function is not supported"
                        )));
                    }
                    self.func_aliases.retain(|(n, _)| n != name);
                    self.func_aliases.push((name, f));
                    return Ok(());
                }
                if self.func_aliases.iter().any(|(n, _)| n == name) {
                    return Err(self.err(format!(
                        "rebinding function-valued local '{name}' is not supported"
                    )));
                }
                let rhs = self.expr(value)?;
                if self.is_ref_param(name) {
                    return self.store_ref_param(name, rhs, false);
                }
                if let Some(prev) = self.symbol(name) {
                    let (new_t, old_t) = (self.ty(rhs).strip_ref(), self.ty(prev).clone());
                    if !same_type(&new_t, &old_t) {
                        return Err(self.err(format!(
                            "assigning to existing symbol {name} ({old_t}) with different type ({new_t})"
                        )));
                    }
                }
                let out = if matches!(value.kind, ExprKind::Name(_)) || self.ty(rhs).is_ref() {
                    self.add_value_call("copy", &[rhs])?
                } else {
                    rhs
                };
                if matches!(self.ty(out), Type::Array { .. }) {
                    self.propagate_view_origin(out, rhs);
                    self.propagate_field_origin(out, rhs);
                    // warp's `propagate_array_alias_metadata`: the descriptor keeps its storage.
                    if out != rhs {
                        self.copy_origin(out, rhs);
                    }
                }
                self.set_symbol(name, out);
                Ok(())
            }
            ExprKind::Subscript(..) if self.adjoint_slice(lhs).is_some() => {
                let slice = self.adjoint_slice(lhs).expect("checked");
                self.adjoint_store(slice, None, value)
            }
            ExprKind::Subscript(..) => {
                let mut rhs = self.expr(value)?;
                if self.ty(rhs).is_ref() {
                    rhs = self.add_value_call("copy", &[rhs])?;
                }
                let (base, nodes) = self.subscript_target(lhs, true)?;
                if matches!(self.ty(base), Type::Tile(_)) {
                    return self.tile_assign(base, &nodes, rhs);
                }
                let indices = self.eval_indices(base, &nodes)?;
                if let Some(slot) = self.select_slot(base, SlotSel::Index(&indices))? {
                    return self.emit_array_slot(&slot, rhs, None);
                }
                self.store_subscript(base, &indices, rhs)
            }
            ExprKind::Attribute(base, attr) => {
                let mut rhs = self.expr(value)?;
                if self.ty(rhs).is_ref() {
                    rhs = self.add_value_call("copy", &[rhs])?;
                }
                // A field of a local struct value is written in place.
                if self.local_struct_store(base, attr, rhs)? {
                    return Ok(());
                }
                let agg = self.eval_store_target(base)?;
                if let Some(slot) = self.select_slot(agg, SlotSel::Attr(attr))? {
                    return self.emit_array_slot(&slot, rhs, None);
                }
                self.store_attribute(agg, attr, rhs)
            }
            ExprKind::Tuple(elts) => {
                let names = elts
                    .iter()
                    .map(|e| match &e.kind {
                        ExprKind::Name(n) => Ok(*n),
                        _ => Err(self.err(
                            "multiple return functions can only assign to simple variables, e.g.: x, y = func()",
                        )),
                    })
                    .collect::<LResult<Vec<_>>>()?;
                let values = match &value.kind {
                    ExprKind::Tuple(vals) => vals
                        .iter()
                        .map(|v| self.expr(v))
                        .collect::<LResult<Vec<_>>>()?,
                    ExprKind::Call(func, args, kwargs) => {
                        self.set_lineno(value.pos);
                        self.call_multi(func, args, kwargs, names.len())?
                    }
                    // A tuple value: each element extracted in turn.
                    _ => {
                        let t = self.expr(value)?;
                        let Some(elems) = self.ty(t).strip_ref().tuple_elems() else {
                            return Err(self.err(
                                    "tuple unpacking needs a tuple or a multiple-output call on the right",
                                ));
                        };
                        if elems.len() != names.len() {
                            return Err(self.err(format!(
                                "incorrect number of values to unpack (expected {}, got {})",
                                elems.len(),
                                names.len()
                            )));
                        }
                        let mut outs = Vec::with_capacity(elems.len());
                        for (k, ty) in elems.iter().enumerate() {
                            self.add_constant(ConstVal::Int(k as i128));
                            let out = self.add_var(*ty, None);
                            let l = self.load(t)?;
                            forward!(
                                self,
                                "{} = wp::extract<{k}>({});",
                                self.emit(out),
                                self.emit(l)
                            );
                            outs.push(out);
                        }
                        outs
                    }
                };
                if values.len() != names.len() {
                    return Err(self.err(format!(
                        "incorrect number of values to unpack (expected {}, got {})",
                        values.len(),
                        names.len()
                    )));
                }
                // Storing into a reference parameter: every referenced value is
                // read first, so `x, y = y, x` swaps.
                let values = if names.iter().any(|n| self.is_ref_param(n)) {
                    let mut loaded = Vec::with_capacity(values.len());
                    for v in values {
                        loaded.push(self.load(v)?);
                    }
                    loaded
                } else {
                    values
                };
                for (name, v) in names.iter().zip(values) {
                    if self.is_ref_param(name) {
                        self.store_ref_param(name, v, false)?;
                        continue;
                    }
                    if let Some(prev) = self.symbol(name) {
                        let (new_t, old_t) = (self.ty(v).clone(), self.ty(prev).clone());
                        if !same_type(&new_t, &old_t) {
                            return Err(self.err(format!(
                                "assigning to existing symbol {name} ({old_t}) with different type ({new_t})"
                            )));
                        }
                    }
                    self.set_symbol(name, v);
                }
                Ok(())
            }
            _ => Err(self.err("unsupported assignment target")),
        }
    }

    fn aug_assign(&mut self, target: &Expr<'a>, op: BinOp, value: &Expr<'a>) -> LResult<()> {
        match &target.kind {
            ExprKind::Name(name) => {
                let rhs = self.expr(value)?;
                let current = self.expr(target)?;
                if let (Type::Tile(_), Type::Tile(_), Some(_)) = (
                    self.ty(current),
                    self.ty(rhs),
                    tile::tile_inplace_native(op),
                ) {
                    // Tiles update in place; the name keeps its variable.
                    return self.tile_inplace(op, current, rhs);
                }
                let result = self.add_value_call(binop_builtin(op), &[current, rhs])?;
                if self.is_ref_param(name) {
                    return self.store_ref_param(name, result, true);
                }
                let (new_t, old_t) = (self.ty(result).strip_ref(), self.ty(current).strip_ref());
                if !same_type(&new_t, &old_t) {
                    return Err(self.err(format!(
                        "augmented assignment to `{name}` ({old_t}) produces different type ({new_t})"
                    )));
                }
                self.set_symbol(name, result);
                Ok(())
            }
            ExprKind::Subscript(..) if self.adjoint_slice(target).is_some() => {
                let slice = self.adjoint_slice(target).expect("checked");
                self.adjoint_store(slice, Some(op), value)
            }
            ExprKind::Subscript(..) => {
                let (base, nodes) = self.subscript_target(target, true)?;
                if matches!(self.ty(base).strip_ref(), Type::Tile(_)) {
                    return self.tile_element_inplace(base, &nodes, op, value);
                }
                let indices = self.eval_indices(base, &nodes)?;
                let inplace = match self.ty(base) {
                    // An array, or an array field of a struct (`s.arr[i] += v`).
                    Type::Array { dtype, .. } | Type::ArrayRef { dtype, .. } => {
                        // Small integer elements have no atomics: load, apply, store.
                        if is_non_atomic(dtype.dtype()) {
                            None
                        } else {
                            match op {
                                BinOp::Add => Some("atomic_add"),
                                BinOp::Sub => Some("atomic_sub"),
                                BinOp::BitAnd => Some("atomic_and"),
                                BinOp::BitOr => Some("atomic_or"),
                                BinOp::BitXor => Some("atomic_xor"),
                                _ => None,
                            }
                        }
                    }
                    Type::Vector(..) | Type::Quat(_) | Type::Transform(_) | Type::Matrix(..) => {
                        match op {
                            BinOp::Add => Some("add_inplace"),
                            BinOp::Sub => Some("sub_inplace"),
                            BinOp::BitAnd => Some("bit_and_inplace"),
                            BinOp::BitOr => Some("bit_or_inplace"),
                            BinOp::BitXor => Some("bit_xor_inplace"),
                            _ => None,
                        }
                    }
                    // An array element's component: through its slot.
                    Type::Ref(_) => None,
                    _ => {
                        return Err(self.err(
                            "Can only subscript in-place assign array, vector, quaternion, and matrix types",
                        ));
                    }
                };
                if inplace.is_some_and(|n| n.starts_with("atomic_")) {
                    self.features.insert(super::Features::ATOMICS);
                }
                let Some(name) = inplace else {
                    return self.aug_assign_subscript_slow(base, indices, op, value);
                };
                let rhs = self.expr(value)?;
                if let [slice] = indices[..] {
                    if self.composite_slice_len(slice).is_some() {
                        if !matches!(name, "add_inplace" | "sub_inplace") {
                            return Err(
                                self.err("only += and -= update a slice of a vector in place")
                            );
                        }
                        self.composite_slice_call(name, base, slice, Some(rhs))?;
                        return Ok(());
                    }
                }
                let mut args = Vars::new();
                args.push(base);
                args.extend(indices);
                args.push(rhs);
                self.add_call(name, &args)?;
                Ok(())
            }
            ExprKind::Attribute(base, attr) => {
                // A field of a local struct value: read, operate, write back.
                if self.struct_field_aug_assign(base, attr, op, value)? {
                    return Ok(());
                }
                let agg = self.eval_store_target(base)?;
                let slot = self.select_slot(agg, SlotSel::Attr(attr))?;
                let user_op = self.has_user_operator(binop_builtin(op));
                if let (Some(slot), false) = (&slot, user_op) {
                    if let Some(atomic) = slot_atomic(&slot.ty, op) {
                        let rhs = self.expr(value)?;
                        return self.emit_array_slot(slot, rhs, Some(atomic));
                    }
                }
                let current = self.attribute_read(agg, attr)?;
                let Some(result) =
                    self.slot_update_after_read(slot.as_ref(), current, op, value, user_op)?
                else {
                    return Ok(());
                };
                match slot {
                    Some(slot) => self.emit_array_slot(&slot, result, None),
                    None => self.store_attribute(agg, attr, result),
                }
            }
            _ => Err(self.err("unsupported augmented assignment target")),
        }
    }

    fn if_stmt(&mut self, test: &Expr<'a>, body: &[Stmt<'a>], orelse: &[Stmt<'a>]) -> LResult<()> {
        if body.is_empty() {
            return Ok(());
        }
        let cond = self.expr(test)?;
        if let Some(c) = self.var(cond).constant {
            for s in if c.truthy() { body } else { orelse } {
                self.stmt(s)?;
            }
            return Ok(());
        }
        let symbols_prev = self.symbols.clone();
        self.begin_if(cond, "")?;
        for s in body {
            self.stmt(s)?;
        }
        self.end_if(cond, "")?;
        let symbols_if = std::mem::replace(&mut self.symbols, symbols_prev.clone());
        if !orelse.is_empty() {
            self.begin_if(cond, "!")?;
            for s in orelse {
                self.stmt(s)?;
            }
            self.end_if(cond, "!")?;
        }
        let symbols_else = std::mem::take(&mut self.symbols);

        // Merge the branch versions of each symbol with a select on `cond` (a phi).
        // Each branch started from a copy of the bindings before it and only
        // rebinds or appends: unless a binding was removed, the first `known`
        // entries of all three name the same symbols, and are read by position.
        let aligned = |syms: &[Symbol<'a>]| {
            syms.len() >= symbols_prev.len()
                && syms
                    .iter()
                    .zip(&symbols_prev)
                    .all(|(a, b)| std::ptr::eq(a.name, b.name))
        };
        let known = if aligned(&symbols_if) && aligned(&symbols_else) {
            symbols_prev.len()
        } else {
            0
        };
        let mut names: Vec<&'a str> = symbols_if.iter().map(|s| s.name).collect();
        for s in &symbols_else[known..] {
            if find_symbol(&symbols_if[known..], s.name).is_none() {
                names.push(s.name);
            }
        }
        self.symbols = symbols_prev.clone();
        for (i, name) in names.into_iter().enumerate() {
            let lookup = |syms: &[Symbol<'a>]| match i < known {
                true => Some(syms[i].var),
                false => find_symbol(syms, name),
            };
            let prev = lookup(&symbols_prev);
            let if_var = lookup(&symbols_if).or(prev);
            let else_var = lookup(&symbols_else).or(prev);
            let merged = match (if_var, else_var) {
                (a, b) if a == b => a,
                (None, b) => b,
                (a, None) => a,
                (Some(a), Some(b)) => Some(self.add_value_call("where", &[cond, a, b])?),
            };
            if let Some(v) = merged {
                self.set_symbol(name, v);
            }
        }
        Ok(())
    }

    fn begin_if(&mut self, cond: VarId, negate: &str) -> LResult<()> {
        // Nested branches indent every line once more: their code grows as
        // the square of their depth, even within one statement.
        self.check_size(0)?;
        let c = self.load(cond)?;
        let mut line = self.new_line();
        line.put_all(&["if (", negate, self.emit(c), ") {"]);
        self.push_forward_line(line);
        self.add_reverse("}");
        self.indent();
        Ok(())
    }

    fn end_if(&mut self, cond: VarId, negate: &str) -> LResult<()> {
        self.dedent();
        self.add_forward_plain("}");
        let c = self.load(cond)?;
        let mut line = self.new_line();
        line.put_all(&["if (", negate, self.emit(c), ") {"]);
        self.push_reverse_line(line);
        Ok(())
    }

    // ---------------------------------------------------------------- loops

    fn for_stmt(&mut self, target: &Expr<'a>, iter: &Expr<'a>, body: &[Stmt<'a>]) -> LResult<()> {
        let ExprKind::Name(target_name) = &target.kind else {
            return Err(self.err("for-loop targets must be a single name"));
        };
        self.features.insert(super::Features::LOOPS);
        match self.loop_range(iter, body)? {
            LoopRange::Unrolled(values) => self.unrolled_loop(target_name, &values, body),
            range => {
                let (iter_var, counted) = match range {
                    LoopRange::Counted { start, stop, step } => {
                        (self.add_var(Type::I32, None), Some((start, stop, step)))
                    }
                    LoopRange::Dynamic(v) => (v, None),
                    LoopRange::Unrolled(_) => unreachable!(),
                };
                self.promote_mutated_iter_constants(body)?;
                let (label, value) = self.begin_for(iter_var, counted)?;
                self.set_symbol(target_name, value);
                self.loop_symbols.push(self.symbols.clone());
                for s in body {
                    self.stmt(s)?;
                }
                let snapshot = self.loop_symbols.pop().unwrap_or_default();
                self.materialize_redefinitions(&snapshot)?;
                self.end_for(&label, iter_var, counted, value);
                Ok(())
            }
        }
    }

    /// Decides whether `for _ in iter` is unrolled, counted or iterated (warp's `get_unroll_range`).
    fn loop_range(&mut self, iter: &Expr<'a>, body: &[Stmt<'a>]) -> LResult<LoopRange> {
        if let ExprKind::Call(func, args, kwargs) = &iter.kind {
            if matches!(&func.kind, ExprKind::Name("reversed"))
                && self.symbol("reversed").is_none()
                && args.len() == 1
                && kwargs.is_empty()
            {
                // Not unrolled: the range is built, then reversed, at run time.
                let range = self.expr(&args[0])?;
                return Ok(LoopRange::Dynamic(
                    self.add_value_call("reversed", &[range])?,
                ));
            }
        }
        let range_call = match &iter.kind {
            ExprKind::Call(func, args, kwargs)
                if matches!(&func.kind, ExprKind::Name(n) if *n == "range")
                    && self.symbol("range").is_none() =>
            {
                Some((args, kwargs))
            }
            _ => None,
        };
        let Some((args, kwargs)) = range_call else {
            // Any other iterable is evaluated and walked with `iter_next`: a
            // query object (`for index in wp.hash_grid_query(...)`).
            let it = self.expr(iter)?;
            if !matches!(self.ty(it), Type::Query(_)) {
                return Err(self.err("for-loops over anything but range() or a query object are not supported by this version of the lowering"));
            }
            return Ok(LoopRange::Dynamic(it));
        };
        if args.is_empty() || args.len() > 3 || !kwargs.is_empty() {
            return Err(self.err("for-loops over anything but range(start, stop, step) are not supported by this version of the lowering"));
        }
        // Evaluate every argument once, in order: constants stay compile-time values.
        let mut nums: Vec<Result<i128, VarId>> = Vec::with_capacity(args.len());
        for a in args.iter() {
            let literal = match &a.kind {
                ExprKind::Constant(c) => Some(c.clone()),
                // computed before code generation: a literal
                ExprKind::Call(f, sa, sk) if self.scope.names_warp(f, "static") => {
                    match self.static_value(sa, sk) {
                        Ok((super::pyconst::PyVal::Int(v), true)) => Some(Constant::Int(v)),
                        _ => None,
                    }
                }
                ExprKind::UnaryOp(UnaryOp::Neg, inner) => match &inner.kind {
                    ExprKind::Constant(Constant::Int(v)) => Some(Constant::Int(-v)),
                    ExprKind::Constant(Constant::Float(v)) => Some(Constant::Float(-v)),
                    _ => None,
                },
                _ => None,
            };
            // A module constant not yet bound to a variable is read statically (no variable).
            let literal = literal.or_else(|| match &a.kind {
                ExprKind::Name(n) if self.symbol(n).is_none() => {
                    match self.scope.module_constant(n) {
                        Some(ConstVal::Int(v)) => Some(Constant::Int(v)),
                        Some(ConstVal::Float(v)) => Some(Constant::Float(v)),
                        _ => None,
                    }
                }
                _ => None,
            });
            nums.push(match literal {
                Some(Constant::Int(v)) => Ok(v),
                Some(_) => return Err(self.err("range() arguments must be integers")),
                None => {
                    let v = self.expr(a)?;
                    match self.var(v).constant {
                        Some(ConstVal::Int(c)) => Ok(c),
                        _ => Err(v),
                    }
                }
            });
        }
        if let Ok(vals) = nums.iter().cloned().collect::<Result<Vec<i128>, VarId>>() {
            let (start, stop, step) = match vals[..] {
                [stop] => (0, stop, 1),
                [start, stop] => (start, stop, 1),
                [start, stop, step] => (start, stop, step),
                _ => unreachable!(),
            };
            if step == 0 {
                return Err(self.err("range() arg 3 must not be zero"));
            }
            let count = range_len(start, stop, step)
                .ok_or_else(|| self.err("range() bounds are too large"))?;
            let has_break = contains_loop_control(body, true, false);
            // A loop with wp.static() in it is always unrolled.
            let forced = || {
                let iter_stmt = Stmt {
                    kind: StmtKind::Expr(iter.clone()),
                    pos: iter.pos,
                };
                contains_static_call(self.scope, std::slice::from_ref(&iter_stmt))
                    || contains_static_call(self.scope, body)
            };
            if (count <= self.max_unroll as i128 && !has_break) || forced() {
                let values = (0..count)
                    .map(|k| start.wrapping_add(k.wrapping_mul(step)))
                    .collect();
                return Ok(LoopRange::Unrolled(values));
            }
            if !contains_loop_control(body, true, true) {
                return Ok(LoopRange::Counted { start, stop, step });
            }
        }
        let mut range_args = Vec::with_capacity(nums.len());
        for n in nums {
            range_args.push(match n {
                Ok(c) => self.add_constant(ConstVal::Int(c)),
                Err(v) => v,
            });
        }
        Ok(LoopRange::Dynamic(
            self.add_value_call("range", &range_args)?,
        ))
    }

    fn unrolled_loop(
        &mut self,
        target: &'a str,
        values: &[i128],
        body: &[Stmt<'a>],
    ) -> LResult<()> {
        if !values.is_empty() && !self.loop_const_iter_symbols.contains(&target) {
            self.loop_const_iter_symbols.push(target);
        }
        let mut active = None;
        let mut lowered = body;
        if !values.is_empty() && contains_loop_control(body, false, true) {
            let mut names = BTreeSet::new();
            collect_names_stmts(body, &mut names);
            names.insert(target);
            names.extend(self.symbols.iter().map(|s| s.name));
            let mut name = format!("_wp_continue_{}", self.label_count);
            while names.contains(name.as_str()) {
                self.label_count += 1;
                name = format!("_wp_continue_{}", self.label_count);
            }
            self.label_count += 1;
            let arena = self.scope.arena;
            let name: &'a str = arena.alloc_str(&name);
            lowered = lower_unrolled_continues(body, name, arena).0;
            active = Some(name);
        }
        let (before, loop_pos) = (self.generated_bytes(), self.pos);
        for (k, &v) in values.iter().enumerate() {
            if k == 1 {
                // What the first iteration generated, the others will too:
                // a loop that would pass the bound stops before repeating it.
                let now = self.generated_bytes();
                let limit = self.scope.max_generated;
                let rest = (now - before).saturating_mul(values.len() - 1);
                if now.saturating_add(rest) > limit {
                    let what = format!(
                        "generated code of this loop unrolled {} times",
                        values.len()
                    );
                    let (line, col) = (loop_pos.line, loop_pos.col);
                    return Err(super::size_limit_error(line, col, &what, limit));
                }
            }
            let c = self.add_constant(ConstVal::Int(v));
            self.set_symbol(target, c);
            if let Some(name) = active {
                let t = self.add_constant(ConstVal::Bool(true));
                self.set_symbol(name, t);
            }
            for s in lowered {
                self.stmt(s)?;
            }
        }
        if let Some(name) = active {
            self.symbols.retain(|s| s.name != name);
        }
        Ok(())
    }

    fn begin_for(
        &mut self,
        iter: VarId,
        counted: Option<(i128, i128, i128)>,
    ) -> LResult<(String, VarId)> {
        if let Some((start, _, _)) = counted {
            forward!(self, "{} = {start};", self.emit(iter));
        }
        let label = self.begin_block("for");
        self.loop_blocks.push(label.clone());
        forward!(self, "start_{label}:;");
        self.indent();
        let it = self.emit(iter).to_string();
        let value = match counted {
            None => {
                forward!(self, "if (iter_cmp({it}) == 0) goto end_{label};");
                self.add_value_call("iter_next", &[iter])?
            }
            Some((_, stop, step)) => {
                let cmp = if step > 0 { ">=" } else { "<=" };
                forward!(self, "if ({it} {cmp} {stop}) goto end_{label};");
                let v = self.add_var(Type::I32, None);
                forward!(self, "{} = {it};", self.emit(v));
                forward!(self, "{it} += {step};");
                v
            }
        };
        self.begin_block("block");
        Ok((label, value))
    }

    fn end_for(
        &mut self,
        label: &str,
        iter: VarId,
        counted: Option<(i128, i128, i128)>,
        value: VarId,
    ) {
        let body = self.end_block();
        let cond = self.end_block();
        self.loop_blocks.pop();
        self.block().forward.extend_from(&cond.forward);
        self.block().forward.extend_from(&body.forward);
        let mut line = self.new_line();
        let _ = write!(line, "goto start_{label};");
        self.block().forward.push(&line);
        self.dedent();
        line.clear();
        let _ = write!(line, "{}end_{label}:;", self.indentation);
        self.block().forward.push(&line);
        self.line_buf = line;

        let ind = self.indentation.clone();
        let it = self.emit(iter).to_string();
        let mut scratch = self.spare_block();
        let reverse = &mut scratch.reverse;
        match counted {
            None => {
                reverse.push_fmt(format_args!("{ind}{it} = wp::iter_reverse({it});"));
                reverse.extend_from(&cond.forward);
            }
            Some((start, stop, step)) => {
                let n = range_len(start, stop, step).unwrap_or(0);
                let last = start.wrapping_add((n - 1).wrapping_mul(step));
                let rc = if step > 0 { "<" } else { ">" };
                reverse.push_fmt(format_args!("{ind}{it} = {last};"));
                reverse.push_fmt(format_args!("{ind}start_{label}:;"));
                reverse.push_fmt(format_args!(
                    "{ind}\tif ({it} {rc} {start}) goto end_{label};"
                ));
                reverse.push_fmt(format_args!("{ind}\t{} = {it};", self.emit(value)));
                reverse.push_fmt(format_args!("{ind}\t{it} -= {step};"));
            }
        }
        for &v in &body.vars {
            if let Type::Tile(t) = self.ty(v) {
                // A view's adjoint aliases storage another tile owns: left alone.
                if !t.view {
                    reverse.push_parts(&[&ind, "\t", self.var(v).adj(), ".grad_zero();"]);
                }
            } else {
                // One per variable of the body: pieces, not `format_args!`.
                reverse.push_parts(&[&ind, "\t", self.var(v).adj(), " = {};"]);
            }
        }
        body.replay.append_to(reverse, &body.forward);
        reverse.extend_reversed_from(&body.reverse);
        reverse.push_fmt(format_args!("{ind}\tgoto start_{label};"));
        reverse.push_fmt(format_args!("{ind}end_{label}:;"));
        let parent = self.block();
        parent.reverse.extend_reversed_from(reverse);
        parent.vars.extend_from_slice(&cond.vars);
        parent.vars.extend_from_slice(&body.vars);
        self.recycle([body, cond, scratch]);
    }

    fn while_stmt(&mut self, test: &Expr<'a>, body: &[Stmt<'a>]) -> LResult<()> {
        self.features.insert(super::Features::LOOPS);
        self.promote_mutated_iter_constants(body)?;
        let label = self.begin_block("while");
        self.loop_blocks.push(label.clone());
        self.block()
            .forward
            .push_fmt(format_args!("{LINE_START}start_{label}:;"));
        let c = self.expr(test)?;
        let c = self.load(c)?;
        let mut check = std::mem::take(&mut self.line_buf);
        check.clear();
        let _ = write!(
            check,
            "{LINE_START}if (({}) == false) goto end_{label};",
            self.emit(c)
        );
        self.block().forward.push(&check);
        self.line_buf = check;
        self.begin_block("block");
        self.indent();

        self.loop_symbols.push(self.symbols.clone());
        for s in body {
            self.stmt(s)?;
        }
        let snapshot = self.loop_symbols.pop().unwrap_or_default();
        self.materialize_redefinitions(&snapshot)?;

        self.dedent();
        let body = self.end_block();
        let cond = self.end_block();
        self.loop_blocks.pop();
        let parent = self.block();
        parent.forward.extend_from(&cond.forward);
        parent.forward.extend_from(&body.forward);
        parent
            .forward
            .push_fmt(format_args!("{LINE_START}goto start_{label};"));
        parent
            .forward
            .push_fmt(format_args!("{LINE_START}end_{label}:;"));
        let mut scratch = self.spare_block();
        let reverse = &mut scratch.reverse;
        reverse.extend_from(&cond.forward);
        for &v in &body.vars {
            if let Type::Tile(t) = self.ty(v) {
                if !t.view {
                    reverse.push_parts(&[LINE_START, self.var(v).adj(), ".grad_zero();"]);
                }
            } else {
                reverse.push_parts(&[LINE_START, self.var(v).adj(), " = {};"]);
            }
        }
        body.replay.append_to(reverse, &body.forward);
        reverse.extend_reversed_from(&body.reverse);
        reverse.push_fmt(format_args!("{LINE_START}goto start_{label};"));
        reverse.push_fmt(format_args!("{LINE_START}end_{label}:;"));
        self.block().reverse.extend_reversed_from(reverse);
        self.recycle([body, cond, scratch]);
        Ok(())
    }

    /// Variables reassigned in a dynamic loop are written back to their
    /// loop-entry variable (warp violates SSA here with `assign`).
    fn materialize_redefinitions(&mut self, snapshot: &[Symbol<'a>]) -> LResult<()> {
        for Symbol {
            name: sym,
            var: var1,
            ..
        } in snapshot
        {
            let sym = *sym;
            let Some(var2) = self.symbol(sym) else {
                continue;
            };
            if *var1 == var2 {
                continue;
            }
            let is_const = self.var(*var1).constant.is_some();
            if is_const && self.loop_const_iter_symbols.contains(&sym) {
                continue;
            }
            if is_const {
                return Err(self.err(format!(
                    "error mutating a constant {sym} inside a dynamic loop, use the following syntax: pi = float(3.141) to declare a dynamic variable"
                )));
            }
            self.add_call("assign", &[*var1, var2])?;
            self.set_symbol(sym, *var1);
        }
        Ok(())
    }

    /// Before a dynamic loop, an unrolled loop's leftover iterator constant that
    /// the body reassigns becomes a mutable copy.
    fn promote_mutated_iter_constants(&mut self, body: &[Stmt<'a>]) -> LResult<()> {
        if self.loop_const_iter_symbols.is_empty() {
            return Ok(());
        }
        let mut stored = BTreeSet::new();
        collect_stored_names(body, &mut stored);
        for name in stored {
            if !self.loop_const_iter_symbols.contains(&name) {
                continue;
            }
            if let Some(v) = self.symbol(name) {
                if self.var(v).constant.is_some() {
                    let c = self.add_value_call("copy", &[v])?;
                    self.set_symbol(name, c);
                }
            }
        }
        Ok(())
    }

    fn return_stmt(&mut self, value: Option<&Expr<'a>>) -> LResult<()> {
        let label = self.label_count;
        let Some(value) = value else {
            self.add_forward("return;", Some(&format!("goto label{label};")), false);
            reverse!(self, "label{label}:;");
            self.label_count += 1;
            return Ok(());
        };
        if !self.is_function {
            return Err(self.err("a kernel cannot return a value"));
        }
        if let ExprKind::Tuple(elts) = &value.kind {
            return self.return_values(elts);
        }
        let mut v = self.expr(value)?;
        if let Some(prev) = &self.return_var {
            let (old, new) = (self.ty(prev[0]).ctype(true), self.ty(v).ctype(true));
            if old != new {
                return Err(self.err(format!(
                    "function returned different types, previous: [{old}], new [{new}]"
                )));
            }
        }
        if self.ty(v).is_ref() {
            v = self.add_value_call("copy", &[v])?;
        }
        self.return_var = Some(vec![v]);
        let label = self.label_count;
        let s = format!("return {};", self.emit(v));
        self.add_forward(&s, Some(&format!("goto label{label};")), false);
        reverse!(self, "{} += adj_ret;", self.var(v).adj());
        reverse!(self, "label{label}:;");
        self.label_count += 1;
        Ok(())
    }

    /// `return a, b`: each value goes out through a `ret_i` reference.
    fn return_values(&mut self, elts: &[Expr<'a>]) -> LResult<()> {
        let mut vals = Vec::with_capacity(elts.len());
        for e in elts {
            vals.push(self.expr(e)?);
        }
        if let Some(prev) = &self.return_var {
            let old: Vec<String> = prev
                .iter()
                .map(|v| self.ty(*v).ctype(true).into_owned())
                .collect();
            let new: Vec<String> = vals
                .iter()
                .map(|v| self.ty(*v).ctype(true).into_owned())
                .collect();
            if old != new {
                return Err(self.err(format!(
                    "function returned different types, previous: [{}], new [{}]",
                    old.join(", "),
                    new.join(", ")
                )));
            }
        }
        let mut rets = Vec::with_capacity(vals.len());
        for v in vals {
            rets.push(if self.ty(v).is_ref() {
                self.add_value_call("copy", &[v])?
            } else {
                v
            });
        }
        if rets.len() == 1 {
            let v = rets[0];
            self.return_var = Some(rets);
            let label = self.label_count;
            let s = format!("return {};", self.emit(v));
            self.add_forward(&s, Some(&format!("goto label{label};")), false);
            reverse!(self, "{} += adj_ret;", self.var(v).adj());
        } else {
            for (i, &v) in rets.iter().enumerate() {
                let s = format!("ret_{i} = {};", self.emit(v));
                self.add_forward(&s, None, false);
                reverse!(self, "{} += adj_ret_{i};", self.var(v).adj());
            }
            let label = self.label_count;
            self.add_forward("return;", Some(&format!("goto label{label};")), false);
            self.return_var = Some(rets);
        }
        let label = self.label_count;
        reverse!(self, "label{label}:;");
        self.label_count += 1;
        Ok(())
    }

    /// Index of a user function (`native` names the overload) in the module's
    /// table, lowering it first if needed.
    fn ensure_built(
        &mut self,
        def: &'a FunctionDef<'a>,
        pos: Pos,
        native: &str,
        callables: &[(&'a str, String)],
        concrete: &[Type],
    ) -> LResult<usize> {
        // A generic function is built once per signature it is called with,
        // each instance under the same C++ name (C++ overloads); one with a
        // shapeless tile parameter once, on its first call's types.
        let per_signature = !concrete.is_empty() && self.scope.is_generic_function(def);
        if let Some(i) = self.funcs.borrow().built.iter().position(|(n, f)| {
            n == native
                && (!per_signature
                    || f.params.len() == concrete.len()
                        && f.params.iter().zip(concrete).all(|(p, c)| match (p, c) {
                            // warp's `types_equal` of tiles: an instance built
                            // for one tile serves every tile of its element type.
                            (Type::Tile(p), Type::Tile(c)) => p.dtype == c.dtype,
                            _ => p.strip_ref() == *c,
                        }))
        }) {
            return Ok(i);
        }
        if self.funcs.borrow().building.iter().any(|n| n == native) {
            return Err(self.err(format!("recursive call of '{}' is not supported", def.name)));
        }
        // Each function called from a function lowers on a stack with room
        // for its own deepest tree, however long the chain of calls.
        let (idx, replay) = super::with_stack(|| {
            build_function(
                self.scope,
                self.funcs,
                def,
                pos,
                native,
                self.max_unroll,
                callables,
                concrete,
            )
        })?;
        let custom_grad = self.funcs.borrow().built[idx].1.custom_grad;
        if custom_grad {
            self.funcs.borrow_mut().deferred.push((idx, None));
        }
        if let Some(r) = replay {
            self.funcs.borrow_mut().deferred.push((idx, Some(r)));
        }
        Ok(idx)
    }

    /// Calls user function `name` (the overload whose parameter types match
    /// the arguments'); a function of several values gives one variable each.
    /// `nodes` are the argument expressions (when they match `args` one to
    /// one): a `wp.ref[T]` parameter takes the address of what its node names.
    fn call_user_outputs(
        &mut self,
        name: &str,
        args: &[VarId],
        nodes: Option<&[Expr<'a>]>,
    ) -> LResult<Vec<VarId>> {
        // Argument types on the stack: calls rarely take more than a few arguments.
        let mut inline = [Type::BOOL; 8];
        let spilled: Vec<Type>;
        let types: &[Type] = if args.len() <= inline.len() {
            for (t, a) in inline.iter_mut().zip(args) {
                *t = self.ty(*a).strip_ref();
            }
            &inline[..args.len()]
        } else {
            spilled = args.iter().map(|a| self.ty(*a).strip_ref()).collect();
            &spilled
        };
        if args.iter().any(|a| self.pending_ints.contains(a)) {
            return Err(self.err(
                "an array's ndim passed to a user function is not supported by this version of the lowering",
            ));
        }
        // `=NATIVE`: one definition, reached through a name bound to it.
        let found = match name.strip_prefix('=') {
            Some(native) => self.scope.function_by_native(native),
            None => self.scope.user_overload(name, types),
        };
        let (def, pos, native) =
            found.ok_or_else(|| self.err(format!("could not find function {name}")))?;
        let concrete = self.scope.build_types(def, types);
        let idx = self.ensure_built(def, pos, native, &[], concrete)?;
        self.emit_user_call(idx, def.name, types, args, &[], nodes)
    }

    /// Emits a call of built user function `idx` on `args`; `types` are the
    /// types of all arguments, left-out ones included, which take the constant
    /// `defaults` (at their places among the arguments, in order), created
    /// after the outputs as warp registers them. `nodes`: the argument
    /// expressions, when they line up with `args` (for `wp.ref[T]` parameters).
    fn emit_user_call(
        &mut self,
        idx: usize,
        name: &str,
        types: &[Type],
        args: &[VarId],
        defaults: &[(usize, ConstVal)],
        nodes: Option<&[Expr<'a>]>,
    ) -> LResult<Vec<VarId>> {
        let (native, params, ret, outputs, custom_grad, manual_ref_adjoint) = {
            let t = self.funcs.borrow();
            let f = &t.built[idx].1;
            (
                f.native.clone(),
                f.params.clone(),
                f.ret,
                f.outputs.clone(),
                f.custom_grad,
                f.manual_ref_adjoint,
            )
        };
        if types != params
            && (types.len() != params.len()
                || !types
                    .iter()
                    .zip(params.iter())
                    .all(|(a, p)| arg_fits(a, &p.strip_ref())))
        {
            let show = |ts: &[Type]| {
                ts.iter()
                    .map(|t| t.strip_ref().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(self.err(format!(
                "couldn't find a function '{name}' compatible with the arguments '{}' (expected '{}')",
                show(types),
                show(&params)
            )));
        }
        if !self.called.contains(&idx) {
            self.called.push(idx);
        }
        let output = ret.map(|t| self.add_var(t, None));
        let outs: Vec<VarId> = outputs.into_iter().map(|t| self.add_var(t, None)).collect();
        let with_defaults: Vec<VarId>;
        let (args, nodes) = if defaults.is_empty() {
            (args, nodes)
        } else {
            let mut all = args.to_vec();
            for &(i, c) in defaults {
                let v = self.add_constant(c);
                all.insert(i.min(all.len()), v);
            }
            with_defaults = all;
            (&with_defaults[..], None)
        };
        let mut fwd_s: Vec<String> = Vec::with_capacity(args.len() + outs.len());
        let mut adj_s: Vec<String> = Vec::with_capacity(args.len());
        let mut prelude: Vec<String> = Vec::new();
        let has_ref_params = params.iter().any(Type::is_ref);
        for (i, (&a, p)) in args.iter().zip(&params).enumerate() {
            if p.is_ref() {
                let node = nodes.and_then(|n| n.get(i));
                let purpose = format!("wp.ref[{}] parameter", p.strip_ref());
                let (ptr, origin) = self.addressable_reference(node, a, &purpose)?;
                let adj_ptr = self.origin_pointer(&origin, true, Some(&mut prelude));
                fwd_s.push(ptr);
                adj_s.push(adj_ptr);
            } else {
                let v = self.load(a)?;
                fwd_s.push(self.emit(v).to_string());
                adj_s.push(self.emit_adj(a));
            }
        }
        if has_ref_params && !manual_ref_adjoint && self.ref_call_error.is_none() {
            let scope = if self.is_function {
                "function"
            } else {
                "kernel"
            };
            self.ref_call_error = Some(self.err(format!(
                "In {scope} '{}': Cannot call '{name}' with wp.ref[T] parameters from a backward-enabled kernel. Use enable_backward=False on the kernel, or switch to @wp.func_native with adj_snippet for a manually written adjoint.",
                self.fun_name
            )));
        }
        let n_args = fwd_s.len();
        fwd_s.extend(outs.iter().map(|o| self.emit(*o).to_string()));
        let call = format!("{native}({})", fwd_s.join(", "));
        let forward = match output {
            Some(o) => format!("{} = {call};", self.emit(o)),
            None => format!("{call};"),
        };
        let replay_native = self.funcs.borrow().built[idx].1.replay.clone();
        match replay_native {
            Some(r) if outs.is_empty() => {
                let call = format!("{r}({})", fwd_s.join(", "));
                let replay = match output {
                    Some(o) => format!("{} = {call};", self.emit(o)),
                    None => format!("{call};"),
                };
                self.add_forward(&forward, Some(&replay), false);
            }
            _ => self.add_forward_plain(&forward),
        }
        if !args.is_empty() {
            // The outputs of a function of several values are passed to its
            // adjoint, unless a custom gradient (`@wp.func_grad`) replaces it.
            let mut parts = if custom_grad {
                fwd_s[..n_args].to_vec()
            } else {
                fwd_s
            };
            parts.extend(adj_s);
            if let Some(o) = output {
                parts.push(self.emit_adj(o));
            }
            parts.extend(outs.iter().map(|o| self.emit_adj(*o)));
            reverse!(self, "adj_{native}({});", parts.join(", "));
            for line in prelude.iter().rev() {
                self.add_reverse(line);
            }
        }
        Ok(match output {
            Some(o) => vec![o],
            None => outs,
        })
    }

    /// warp tries a module-level `@wp.func` named after an operator's builtin
    /// (`def add(a: Complex, b: Complex)`) for the operator first, when its
    /// parameters take the operands.
    fn user_operator(&mut self, name: &str, left: VarId, right: VarId) -> LResult<Option<VarId>> {
        if !self.user_operator_takes(name, left, right) {
            return Ok(None);
        }
        self.call_user(name, &[left, right], None)
    }

    /// Whether a module-level `@wp.func` named after the operator's builtin
    /// exists at all (warp's `find_user_operator`: by name, whatever its types).
    fn has_user_operator(&self, name: &str) -> bool {
        self.symbol(name).is_none() && self.scope.user_function(name).is_some()
    }

    /// Whether that function has an overload taking `left` and `right`
    /// (warp's `resolve_user_operator`).
    fn user_operator_takes(&self, name: &str, left: VarId, right: VarId) -> bool {
        if self.symbol(name).is_some() {
            return false;
        }
        let types = [self.ty(left).strip_ref(), self.ty(right).strip_ref()];
        let Some((def, _, _)) = self.scope.user_overload(name, &types) else {
            return false;
        };
        def.args.len() == 2
            && def.args.iter().zip(&types).all(|(a, t)| {
                a.annotation
                    .as_ref()
                    .and_then(|x| self.scope.annotation_type(x).ok())
                    .is_some_and(|p| t.passes_as(&p))
            })
    }

    /// The rest of an augmented assignment to an array slot or a component
    /// once `current` is read (warp's `lower_subscript_augassign` /
    /// `lower_attribute_augassign` after the load): with a user operator of
    /// that name, the right side is evaluated now; when no overload takes the
    /// operands and the slot has the atomic, the update is atomic; otherwise
    /// the operator (user or builtin) is applied and the result stored, which
    /// makes a differentiable slot's backward pass impossible.
    fn slot_update_after_read(
        &mut self,
        slot: Option<&Slot>,
        current: VarId,
        op: BinOp,
        value: &Expr<'a>,
        user_op: bool,
    ) -> LResult<Option<VarId>> {
        let name = binop_builtin(op);
        let rhs = self.expr(value)?;
        let takes = user_op && self.user_operator_takes(name, current, rhs);
        if user_op && !takes {
            if let Some(slot) = slot {
                if let Some(atomic) = slot_atomic(&slot.ty, op) {
                    self.emit_array_slot(slot, rhs, Some(atomic))?;
                    return Ok(None);
                }
            }
        }
        let result = match takes {
            true => self
                .call_user(name, &[current, rhs], None)?
                .ok_or_else(|| self.err(format!("user operator `{name}` returns no value")))?,
            false => self.add_value_call(name, &[current, rhs])?,
        };
        if slot.is_some() {
            self.record_unsupported_slot_update(result);
        }
        Ok(Some(result))
    }

    fn call_user(
        &mut self,
        name: &str,
        args: &[VarId],
        nodes: Option<&[Expr<'a>]>,
    ) -> LResult<Option<VarId>> {
        let outs = self.call_user_outputs(name, args, nodes)?;
        match outs[..] {
            [] => Ok(None),
            [o] => Ok(Some(o)),
            // Several values used as one: a tuple of them.
            _ => self.tuple_from_vars(&outs).map(Some),
        }
    }

    /// Whether a call argument is a function value (passed to a `wp.Function` parameter).
    fn is_function_arg(&self, a: &Expr<'a>) -> bool {
        match &a.kind {
            ExprKind::Name(n) => {
                self.func_aliases.iter().any(|(x, _)| x == n)
                    || (self.symbol(n).is_none() && self.scope.module_function_alias(n).is_some())
            }
            ExprKind::Attribute(..) | ExprKind::Call(..) => {
                matches!(self.function_value(a), Ok(Some(_)))
            }
            _ => false,
        }
    }

    /// Calls user function `name` on the argument expressions: keyword
    /// arguments, parameter defaults and function-valued arguments bind to the
    /// parameters of the first overload they fit; a call passing functions to
    /// `wp.Function` parameters calls a copy specialized on them.
    fn call_user_exprs(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
        grad: bool,
    ) -> LResult<Vec<VarId>> {
        if !grad
            && kwargs.is_empty()
            && !self.scope.function_has_defaults(name)
            && !args.iter().any(|a| self.is_function_arg(a))
        {
            let vals = self.eval_args(args)?;
            // Starred arguments do not line up with their expressions.
            let starred = args.iter().any(|a| matches!(a.kind, ExprKind::Starred(_)));
            return self.call_user_outputs(name, &vals, (!starred).then_some(args));
        }
        let mut given: Vec<(Option<&'a str>, Bound)> =
            Vec::with_capacity(args.len() + kwargs.len());
        for a in args {
            if matches!(a.kind, ExprKind::Starred(_)) {
                return Err(self.err(
                    "starred arguments to user functions are not supported by this version of the lowering",
                ));
            }
            let b = match self.function_value(a)? {
                Some(f) => Bound::Func(f),
                None => Bound::Var(self.expr(a)?),
            };
            given.push((None, b));
        }
        for kw in kwargs {
            let Some(n) = kw.arg else {
                return Err(self.err("'**' arguments are not supported in kernels"));
            };
            let b = match self.function_value(&kw.value)? {
                Some(f) => Bound::Func(f),
                None => Bound::Var(self.expr(&kw.value)?),
            };
            given.push((Some(n), b));
        }
        let candidates: Vec<_> = match name.strip_prefix('=') {
            Some(native) => self.scope.function_by_native(native).into_iter().collect(),
            None => self.scope.overload_set(name),
        };
        let mut chosen = None;
        let mut fallback = None;
        for (def, pos, native) in candidates {
            if let Some((bound, exact)) = self.bind_call(def, &given) {
                if exact {
                    chosen = Some((def, pos, native, bound));
                    break;
                }
                fallback = Some((def, pos, native, bound));
            }
        }
        let Some((def, pos, native, bound)) = chosen.or(fallback) else {
            let shown = given
                .iter()
                .map(|(k, b)| {
                    let t = match b {
                        Bound::Var(v) => self.ty(*v).strip_ref().to_string(),
                        Bound::Func(_) => "Function".to_string(),
                        Bound::Const(c) => c.literal_type().to_string(),
                    };
                    match k {
                        Some(k) => format!("{k}={t}"),
                        None => t,
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            return Err(self.err(format!(
                "couldn't find a function '{}' compatible with the arguments '{shown}'",
                name.trim_start_matches('=')
            )));
        };
        let mut callables: Vec<(&'a str, String)> = Vec::new();
        let mut vars = Vec::new();
        let mut types = Vec::new();
        let mut defaults = Vec::new();
        for (arg, b) in def.args.iter().zip(bound) {
            match b {
                Bound::Func(f) => callables.push((arg.name, f)),
                Bound::Var(v) => {
                    types.push(self.ty(v).strip_ref());
                    vars.push(v);
                }
                Bound::Const(c) => {
                    defaults.push((types.len(), c));
                    types.push(c.literal_type());
                }
            }
        }
        let native = if callables.is_empty() {
            native.to_string()
        } else {
            // warp's specialization: the C++ name hashes the function's and
            // each target's key and C++ name.
            let mut data = native.as_bytes().to_vec();
            for (p, f) in &callables {
                let (key, target) = self.scope.function_identity(f);
                data.extend_from_slice(p.as_bytes());
                data.extend_from_slice(key.as_bytes());
                data.extend_from_slice(target.as_bytes());
            }
            let digest = super::sha256::digest(&data);
            let mut hex = String::with_capacity(12);
            for b in &digest[..6] {
                hex.push_str(&format!("{b:02x}"));
            }
            format!("{native}_callable_{hex}")
        };
        let concrete: &[Type] = if callables.is_empty() {
            self.scope.build_types(def, &types)
        } else {
            &[]
        };
        let idx = self.ensure_built(def, pos, &native, &callables, concrete)?;
        if grad {
            return self.emit_grad_call(idx, def.name, &types, &vars, &defaults);
        }
        self.emit_user_call(idx, def.name, &types, &vars, &defaults, None)
    }

    /// `wp.grad(f)(args)` (warp's `add_grad_call`): zeroed adjoints of the
    /// inputs and a unit adjoint of the result, passed to `adj_f` in the
    /// forward pass; the value is the adjoint of the only input.
    fn emit_grad_call(
        &mut self,
        idx: usize,
        name: &str,
        types: &[Type],
        args: &[VarId],
        defaults: &[(usize, ConstVal)],
    ) -> LResult<Vec<VarId>> {
        let (native, params, ret, several) = {
            let t = self.funcs.borrow();
            let f = &t.built[idx].1;
            (
                f.native.clone(),
                f.params.clone(),
                f.ret.clone(),
                !f.outputs.is_empty(),
            )
        };
        if !defaults.is_empty() || several {
            return Err(self.err(format!(
                "wp.grad() of '{name}' with default arguments or several results is not supported by this version of the lowering"
            )));
        }
        let Some(ret) = ret else {
            return Err(self.err(format!("Cannot compute gradient of void function '{name}'")));
        };
        if types != params {
            return Err(self.err(format!(
                "couldn't find a function '{name}' compatible with the arguments given to its gradient"
            )));
        }
        if params.len() != 1 {
            return Err(self.err(
                "wp.grad() of a function of several inputs (a tuple of gradients) is not supported by this version of the lowering",
            ));
        }
        {
            let mut t = self.funcs.borrow_mut();
            if !t.grad_called.contains(&idx) {
                t.grad_called.push(idx);
            }
        }
        if !self.called.contains(&idx) {
            self.called.push(idx);
        }
        let mut parts = Vec::with_capacity(args.len() * 2 + 1);
        for &a in args {
            let l = self.load(a)?;
            parts.push(self.emit(l).to_string());
        }
        let mut adj_inputs = Vec::with_capacity(params.len());
        for t in &params {
            let v = self.add_var(t.clone(), None);
            forward!(self, "{} = {{}};", self.emit(v));
            adj_inputs.push(v);
        }
        let r = self.add_var(ret.clone(), None);
        forward!(self, "{} = {}(1);", self.emit(r), ret.ctype(false));
        parts.extend(adj_inputs.iter().map(|v| self.emit(*v).to_string()));
        parts.push(self.emit(r).to_string());
        forward!(self, "adj_{native}({});", parts.join(", "));
        Ok(adj_inputs)
    }

    /// Binds the given arguments to `def`'s parameters, defaults filling the
    /// rest: the bound values in signature order, and whether every type
    /// matches its annotation; `None` when they cannot bind.
    fn bind_call(
        &self,
        def: &'a FunctionDef<'a>,
        given: &[(Option<&'a str>, Bound)],
    ) -> Option<(Vec<Bound>, bool)> {
        let mut slots: Vec<Option<Bound>> = vec![None; def.args.len()];
        let mut i = 0;
        for (k, b) in given {
            let at = match k {
                None => {
                    i += 1;
                    i - 1
                }
                Some(k) => def.args.iter().position(|a| a.name == *k)?,
            };
            let slot = slots.get_mut(at)?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(b.clone());
        }
        let mut exact = true;
        let mut out = Vec::with_capacity(slots.len());
        for (arg, slot) in def.args.iter().zip(slots) {
            let is_fn = arg
                .annotation
                .as_ref()
                .is_some_and(|a| self.scope.is_function_annotation(a));
            let b = match slot {
                Some(b) => b,
                None => {
                    let d = arg.default.as_ref()?;
                    match self.scope.eval(d)? {
                        super::pyconst::PyVal::Function(f) => Bound::Func(f),
                        v => Bound::Const(v.const_val()?),
                    }
                }
            };
            let ty = match &b {
                Bound::Func(_) if is_fn => None,
                Bound::Func(_) => return None,
                _ if is_fn => return None,
                Bound::Var(v) => Some(self.ty(*v).strip_ref()),
                Bound::Const(c) => Some(c.literal_type()),
            };
            if let (Some(t), Some(a)) = (ty, arg.annotation.as_ref()) {
                if self.scope.annotation_type(a).ok().as_ref() != Some(&t) {
                    exact = false;
                }
            }
            out.push(b);
        }
        Some((out, exact))
    }

    // --------------------------------------------------------- expressions

    fn expr(&mut self, e: &Expr<'a>) -> LResult<VarId> {
        self.set_lineno(e.pos);
        match &e.kind {
            ExprKind::Name(name) => match self.symbol(name) {
                Some(v) => Ok(v),
                None if self.closure.iter().any(|(n, _)| n == name) => {
                    let c = self
                        .closure
                        .iter()
                        .find(|(n, _)| n == name)
                        .and_then(|(_, v)| v.const_val())
                        .ok_or_else(|| {
                            self.err(format!(
                                "the closure variable '{name}' is not a constant value a kernel can use"
                            ))
                        })?;
                    let v = self.add_constant(c);
                    self.set_symbol(name, v);
                    Ok(v)
                }
                None => match self.scope.module_typed_constant(name) {
                    // A module constant becomes a constant variable, bound to the name.
                    Some((ty, c)) => {
                        let v = self.add_var(ty, Some(c));
                        self.set_symbol(name, v);
                        Ok(v)
                    }
                    None => Err(self.err(
                        self.scope
                            .module_value_problem(name)
                            .unwrap_or_else(|| format!("referencing undefined symbol: {name}")),
                    )),
                },
            },
            ExprKind::Constant(Constant::Str(text)) => Ok(self.add_string(text)),
            ExprKind::Constant(c) => {
                let c = self.constant(c)?;
                Ok(self.add_constant(c))
            }
            ExprKind::BinOp(lr, op) => {
                let left = self.expr(&lr[0])?;
                let right = self.expr(&lr[1])?;
                if self.scope.operator_funcs {
                    if let Some(v) = self.user_operator(binop_builtin(*op), left, right)? {
                        return Ok(v);
                    }
                }
                self.add_value_call(binop_builtin(*op), &[left, right])
            }
            ExprKind::UnaryOp(op, operand) => {
                let arg = self.expr(operand)?;
                // warp folds a minus on a Python number only (not on a warp scalar such as
                // a module-level `wp.float64(...)`, whose variable has another type).
                if let Some(c) = self
                    .var(arg)
                    .constant
                    .filter(|c| c.is_python_scalar() && *self.ty(arg) == c.literal_type())
                {
                    if *op == UnaryOp::Neg {
                        if matches!(operand.kind, ExprKind::Constant(_)) {
                            // A fresh literal is negated in place, as warp does.
                            self.vars[arg.0].constant = Some(c.negated());
                            return Ok(arg);
                        }
                        return Ok(self.add_constant(c.negated()));
                    }
                }
                let name = match op {
                    UnaryOp::Neg => "neg",
                    UnaryOp::Pos => "pos",
                    UnaryOp::Not => "unot",
                    UnaryOp::Invert => "invert",
                };
                self.add_value_call(name, &[arg])
            }
            ExprKind::Compare(left, comps) => self.compare(left, comps),
            ExprKind::BoolOp(is_and, values) => self.bool_op(*is_and, values),
            ExprKind::IfExp(test, body, orelse) => self.if_exp(test, body, orelse),
            ExprKind::Call(func, args, kwargs) => self
                .call(func, args, kwargs)?
                .ok_or_else(|| self.err("the called function does not return a value")),
            ExprKind::Subscript(..) => {
                if let Some(slice) = self.adjoint_slice(e) {
                    return self.adjoint_target(slice);
                }
                let (base, nodes) = self.subscript_target(e, false)?;
                self.emit_indexing(base, &nodes)
            }
            ExprKind::Attribute(base, attr) => {
                if let Some(c) = self.static_attribute(e) {
                    return Ok(self.add_constant(c));
                }
                if let ExprKind::Name(m) = &base.kind {
                    if self.symbol(m).is_none() {
                        if self.scope.is_plain_class(m) {
                            return Err(self.err(format!(
                                "'{m}.{attr}' is not an attribute of class '{m}' that a kernel can read as a constant"
                            )));
                        }
                    }
                    if self.scope.is_warp_module(m) && self.symbol(m).is_none() {
                        if let Some(v) = builtins::warp_constant(attr) {
                            return Ok(self.add_constant(ConstVal::Float(v)));
                        }
                        return Err(self.err(format!(
                            "{m}.{attr} is not supported as a value by this version of the lowering"
                        )));
                    }
                }
                // The sampling modes of volumes: `wp.Volume.LINEAR`.
                if let ExprKind::Attribute(inner, "Volume") = &base.kind {
                    if let ExprKind::Name(m) = &inner.kind {
                        if self.scope.is_warp_module(m) && self.symbol(m).is_none() {
                            let mode = match *attr {
                                "CLOSEST" => 0,
                                "LINEAR" => 1,
                                _ => {
                                    return Err(self.err(format!(
                                        "wp.Volume.{attr} is not supported as a value by this version of the lowering"
                                    )));
                                }
                            };
                            // warp registers the class constant, then its value again as an argument.
                            self.add_constant(ConstVal::Int(mode));
                            return Ok(self.add_constant(ConstVal::Int(mode)));
                        }
                    }
                }
                let agg = self.expr(base)?;
                if *attr == "ndim" {
                    // warp answers a type attribute with a Python int.
                    if let Type::Array { ndim, .. } = self.ty(agg).strip_ref() {
                        return Ok(self.pending_int(ndim as i128));
                    }
                }
                self.attribute_read(agg, attr)
            }
            ExprKind::Tuple(elts) => self.tuple_expr(elts),
            ExprKind::List(_) => Err(self.err("list constructs are not supported in kernels")),
            ExprKind::Slice(lower, upper, step) => self.slice_expr(*lower, *upper, *step),
            ExprKind::Starred(_) => {
                Err(self.err("starred expressions are not supported in kernels"))
            }
            ExprKind::Other(kind) => {
                Err(self.err(format!("construct `ast.{kind}` not supported in kernels")))
            }
        }
    }

    /// warp's `emit_Slice`: the given bounds are evaluated first, then the
    /// slice is allocated, then the omitted bounds become constants.
    fn slice_expr(
        &mut self,
        lower: Option<&Expr<'a>>,
        upper: Option<&Expr<'a>>,
        step: Option<&Expr<'a>>,
    ) -> LResult<VarId> {
        let lower = lower.map(|e| self.expr(e)).transpose()?;
        let upper = upper.map(|e| self.expr(e)).transpose()?;
        let step = step.map(|e| self.expr(e)).transpose()?;
        if let Some(s) = step {
            if matches!(self.var(s).constant, Some(ConstVal::Int(0))) {
                return Err(self.err("Slice step cannot be zero."));
            }
        }
        let out = self.add_var(Type::Slice, None);
        let start = lower.unwrap_or_else(|| self.add_constant(ConstVal::Int(i32::MAX as i128)));
        let stop = upper.unwrap_or_else(|| self.add_constant(ConstVal::Int(i32::MIN as i128)));
        let step = step.unwrap_or_else(|| self.add_constant(ConstVal::Int(1)));
        let mut parts = [start, stop, step];
        for p in parts.iter_mut() {
            if !self.ty(*p).strip_ref().scalar().is_some_and(Scalar::is_int) {
                return Err(self.err("slice bounds must be integers"));
            }
            *p = self.load(*p)?;
        }
        let [start, stop, step] = parts;
        self.emit_slice_t(out, [start, stop, step]);
        Ok(out)
    }

    fn constant(&self, c: &Constant) -> LResult<ConstVal> {
        match c {
            Constant::Int(v) => Ok(ConstVal::Int(*v)),
            Constant::Float(v) => Ok(ConstVal::Float(*v)),
            Constant::Bool(b) => Ok(ConstVal::Bool(*b)),
            Constant::None => Err(self.err("None type unsupported")),
            Constant::Str(_) => Err(self.err("string constants are not supported in kernels")),
            Constant::Ellipsis => Err(self.err("'...' is not supported in kernels")),
            Constant::Other(kind) => {
                Err(self.err(format!("{kind} literals are not supported in kernels")))
            }
        }
    }

    /// warp's `recurse_subscript`: `a[i][j, k]` becomes the innermost target
    /// with the flattened index expressions, indexing through an array first
    /// when there are more indices than it has dimensions.
    fn subscript_target<'e>(
        &mut self,
        e: &'e Expr<'a>,
        as_target: bool,
    ) -> LResult<(VarId, SmallVec<[&'e Expr<'a>; 4]>)> {
        if self.adjoint_slice(e).is_some() {
            return Ok((self.expr(e)?, SmallVec::new()));
        }
        let ExprKind::Subscript(value_slice) = &e.kind else {
            let v = if as_target {
                self.eval_store_target(e)?
            } else {
                self.expr(e)?
            };
            return Ok((v, SmallVec::new()));
        };
        let [value, slice] = &**value_slice;
        let (mut target, mut indices) = match &value.kind {
            ExprKind::Name(_) => (self.expr(value)?, SmallVec::new()),
            _ => self.subscript_target(value, as_target)?,
        };
        // Chained tile subscripts (warp's `eval_subscript`): a group that
        // makes a view or a gather (a slice, an index tile), or a partial
        // integer group re-indexed by one, is applied before the next group; integer groups flatten.
        if let (Type::Tile(t), false) = (self.ty(target).strip_ref(), indices.is_empty()) {
            let group_slices = match &slice.kind {
                ExprKind::Tuple(elts) => elts.iter().any(|n| self.makes_tile_view(n)),
                _ => self.makes_tile_view(slice),
            };
            if indices.iter().any(|n| self.makes_tile_view(n))
                || (group_slices && indices.len() < t.ndim as usize)
            {
                target = self.emit_indexing_as(target, &indices, as_target)?;
                indices.clear();
            }
        }
        match &slice.kind {
            ExprKind::Tuple(elts) => indices.extend(elts.iter()),
            _ => indices.push(slice),
        }
        if let Type::Array { ndim, .. } = self.ty(target).strip_ref() {
            if indices.len() > ndim {
                let first: Vec<&Expr<'a>> = indices.drain(..ndim).collect();
                target = self.emit_indexing_as(target, &first, as_target)?;
            }
        }
        Ok((target, indices))
    }

    /// warp's `eval_store_target`: the location an assignment writes to,
    /// resolving array elements to slots rather than reading them.
    fn eval_store_target(&mut self, e: &Expr<'a>) -> LResult<VarId> {
        match &e.kind {
            ExprKind::Attribute(base, attr) => {
                let agg = self.eval_store_target(base)?;
                if let Some(slot) = self.select_slot(agg, SlotSel::Attr(attr))? {
                    return Ok(self.array_slot_reference(slot));
                }
                self.attribute_read(agg, attr)
            }
            ExprKind::Subscript(..) => {
                let (base, nodes) = self.subscript_target(e, true)?;
                self.emit_indexing_as(base, &nodes, true)
            }
            _ => self.expr(e),
        }
    }

    /// Evaluates index expressions after checking their number against the target.
    fn eval_indices(&mut self, target: VarId, nodes: &[&Expr<'a>]) -> LResult<Vars> {
        let n = nodes.len();
        let ok = match self.ty(target).strip_ref() {
            Type::Array { ndim, .. } => {
                if n > ndim {
                    return Err(self.err(format!(
                        "Incorrect number of indices specified for array indexing, got {n} indices for a {ndim} dimensional array."
                    )));
                }
                n > 0
            }
            Type::Vector(..) | Type::Quat(_) | Type::Transform(_) | Type::Shape(_) => n == 1,
            Type::IntTuple(_) | Type::Tuple(_) => n == 1,
            Type::Matrix(..) => (1..=2).contains(&n),
            _ => false,
        };
        if !ok {
            return Err(self.err(format!(
                "cannot index a value of type {} with {n} index(es)",
                self.ty(target).strip_ref()
            )));
        }
        let length = match self.ty(target).strip_ref() {
            Type::Vector(n, _) => Some(n as i128),
            Type::Quat(_) => Some(4),
            Type::Transform(_) => Some(7),
            _ => None,
        };
        if let (Some(length), [node]) = (length, nodes) {
            if let ExprKind::Slice(lower, upper, step) = &node.kind {
                return Ok(
                    std::iter::once(self.composite_slice(length, *lower, *upper, *step)?).collect(),
                );
            }
        }
        nodes.iter().map(|node| self.expr(node)).collect()
    }

    /// warp's slice of a vector, quaternion or transform: its bounds are
    /// compile-time constants (step, start, stop evaluated in that order),
    /// resolved against the length as Python's `slice.indices` does; the
    /// slice variable is built from the resolved bounds.
    fn composite_slice(
        &mut self,
        length: i128,
        lower: Option<&Expr<'a>>,
        upper: Option<&Expr<'a>>,
        step: Option<&Expr<'a>>,
    ) -> LResult<VarId> {
        let step = self.slice_step(step)?;
        let (low, high) = if step > 0 {
            (0, length)
        } else {
            (-1, length - 1)
        };
        let resolve = |this: &mut Self, e: Option<&Expr<'a>>, default: i128| -> LResult<i128> {
            Ok(match e {
                None => default,
                Some(e) => {
                    let v = this.const_slice_component(e)?;
                    if v < 0 {
                        (v + length).max(low)
                    } else {
                        v.min(high)
                    }
                }
            })
        };
        let start = resolve(self, lower, if step > 0 { low } else { high })?;
        let stop = resolve(self, upper, if step > 0 { high } else { low })?;
        let count = range_len(start, stop, step).unwrap_or(0).max(0);
        let out = self.add_var(Type::Slice, None);
        let parts = [start, stop, step].map(|c| self.add_constant(ConstVal::Int(c)));
        self.emit_slice_t(out, parts);
        self.composite_slices.push((out, count as u8));
        Ok(out)
    }

    /// The number of components a slice of a vector selects, when `v` is one.
    fn composite_slice_len(&self, v: VarId) -> Option<u8> {
        self.composite_slices
            .iter()
            .find(|(s, _)| *s == v)
            .map(|(_, n)| *n)
    }

    /// `wp::NAME<N>(target, slice[, value])`, `N` the slice's component count:
    /// `extract` (which returns the selected components as a vector) and the
    /// in-place updates of them (`assign_inplace`, `add_inplace`, `sub_inplace`).
    fn composite_slice_call(
        &mut self,
        name: &str,
        target: VarId,
        slice: VarId,
        value: Option<VarId>,
    ) -> LResult<Option<VarId>> {
        let n = self.composite_slice_len(slice).expect("a composite slice");
        let dtype = match self.ty(target).strip_ref().value() {
            Some(v) => v.dtype(),
            None => {
                return Err(self.err("only vectors, quaternions and transforms are sliced here"));
            }
        };
        if let Some(v) = value {
            match self.ty(v).strip_ref() {
                Type::Vector(m, s) if m == n && s == dtype => {}
                t => {
                    return Err(self.err(format!(
                        "The provided vector is expected to be of length {n} with dtype {}, got {t}",
                        dtype.name()
                    )));
                }
            }
        }
        let out = value
            .is_none()
            .then(|| self.add_var(Type::Vector(n, dtype), None));
        let mut originals: Vars = std::iter::once(target).chain([slice]).collect();
        originals.extend(value);
        let mut loaded = Vars::new();
        for v in &originals {
            loaded.push(self.load(*v)?);
        }
        self.use_builtin(name);
        let args: Vec<&str> = loaded.iter().map(|v| self.emit(*v)).collect();
        let args = args.join(", ");
        match out {
            Some(o) => forward!(self, "{} = wp::{name}<{n}>({args});", self.emit(o)),
            None => forward!(self, "wp::{name}<{n}>({args});"),
        }
        let mut adjs: Vec<String> = originals.iter().map(|v| self.emit_adj(*v)).collect();
        if let Some(o) = out {
            adjs.push(self.emit_adj(o));
        }
        reverse!(self, "wp::adj_{name}({args}, {});", adjs.join(", "));
        Ok(out)
    }

    /// Reads `target[indices]`: an element reference of an array (indices loaded
    /// first), or a component of a vector, matrix or quaternion.
    fn emit_indexing(&mut self, target: VarId, nodes: &[&Expr<'a>]) -> LResult<VarId> {
        self.emit_indexing_as(target, nodes, false)
    }

    /// warp's `emit_indexing`: as a store target, an element of an array of
    /// vectors, matrices or quaternions is a slot (its address), and a
    /// component of a slot another slot; fewer indices than an array has
    /// dimensions make a view.
    fn emit_indexing_as(
        &mut self,
        target: VarId,
        nodes: &[&Expr<'a>],
        as_target: bool,
    ) -> LResult<VarId> {
        if matches!(self.ty(target), Type::Tile(_)) {
            return self.tile_subscript(target, nodes);
        }
        let indices = self.eval_indices(target, nodes)?;
        let mut args = Vars::new();
        args.push(target);
        args.extend(indices);
        if let Type::Array { dtype, ndim, kind } = self.ty(target).strip_ref() {
            let all_int = args[1..]
                .iter()
                .all(|a| self.ty(*a).strip_ref().scalar().is_some_and(Scalar::is_int));
            let int_or_slice = args[1..].iter().all(|a| {
                let t = self.ty(*a).strip_ref();
                t == Type::Slice || t.scalar().is_some_and(Scalar::is_int)
            });
            if as_target && !int_or_slice {
                return Err(self.err("Array slot write indices must be integers or slices"));
            }
            for a in args.iter_mut().skip(1) {
                *a = self.load(*a)?;
            }
            if args.len() - 1 == ndim && all_int {
                // warp's array slots are for `wp.array`s (a fixed array is one).
                let slot_root =
                    matches!(self.ty(target), Type::Array { .. } | Type::ArrayRef { .. })
                        && matches!(kind, ArrayKind::Array | ArrayKind::Fixed(_));
                if as_target && slot_root && !matches!(dtype, Value::Scalar(_)) {
                    let slot = Slot {
                        root: target,
                        indices: args[1..].iter().copied().collect(),
                        access: String::new(),
                        ty: dtype.to_type(),
                    };
                    let r = self.array_slot_reference(slot);
                    let step = Step::Array(args[1..].iter().copied().collect());
                    self.note_origin_step(target, r, step);
                    if let Value::Struct(_) = dtype {
                        self.note_element_step(target, &args[1..], r);
                    }
                    return Ok(r);
                }
                let out = self.add_value_call("address", &args)?;
                let step = Step::Array(args[1..].iter().copied().collect());
                self.note_origin_step(target, out, step);
                return Ok(out);
            }
            let view = self.add_value_call("view", &args)?;
            self.record_view(view, target, &args[1..]);
            let step = Step::View(args[1..].iter().copied().collect());
            self.note_origin_step(target, view, step);
            return Ok(view);
        }
        if let (Some(elems), [_, index]) = (self.ty(target).strip_ref().tuple_elems(), &args[..]) {
            // A tuple element: its index is a constant (`wp::extract<i>(t)`, no adjoint).
            let i = match self.var(*index).constant {
                Some(ConstVal::Int(i)) => i,
                _ => return Err(self.err("tuple indices must be compile-time constant integers")),
            };
            let k = if i < 0 { i + elems.len() as i128 } else { i };
            let Some(ty) = usize::try_from(k).ok().and_then(|k| elems.get(k)).copied() else {
                return Err(self.err(format!("tuple index {i} is out of range")));
            };
            let out = self.add_var(ty, None);
            let t = self.load(target)?;
            forward!(
                self,
                "{} = wp::extract<{k}>({});",
                self.emit(out),
                self.emit(t)
            );
            return Ok(out);
        }
        if let [_, slice] = args[..] {
            if self.composite_slice_len(slice).is_some() {
                let out = self.composite_slice_call("extract", target, slice, None)?;
                return Ok(out.expect("extract returns a value"));
            }
        }
        if as_target {
            if let Some(slot) = self.select_slot(target, SlotSel::Index(&args[1..]))? {
                let r = self.array_slot_reference(slot);
                // warp's slot origin: the matrix indices, or the one component index.
                let n = if matches!(self.ty(target).strip_ref(), Type::Matrix(..)) {
                    args.len() - 1
                } else {
                    1
                };
                let step = Step::Index(args[1..=n].iter().copied().collect());
                self.note_origin_step(target, r, step);
                return Ok(r);
            }
        }
        let out = self.add_value_call("extract", &args)?;
        self.note_component_origin(target, &args[1..], out);
        Ok(out)
    }

    /// Remembers where view `view` of `target` comes from, for the adjoint
    /// of a slot written through it.
    fn record_view(&mut self, view: VarId, target: VarId, indices: &[VarId]) {
        let index_vars: Vars = indices.iter().copied().collect();
        let origin = if let Some((_, root, steps)) =
            self.view_origins.iter().find(|(v, _, _)| *v == target)
        {
            let mut steps = steps.clone();
            steps.push(index_vars);
            Some((*root, steps))
        } else if self.symbols.iter().any(|s| s.var == target) {
            Some((target, vec![index_vars]))
        } else {
            None
        };
        if let Some((root, steps)) = origin {
            self.view_origins.push((view, root, steps));
        }
    }

    /// An array view's origin follows it into a copy (`b = view`).
    fn propagate_view_origin(&mut self, to: VarId, from: VarId) {
        if to == from {
            return;
        }
        if let Some((_, root, steps)) = self.view_origins.iter().find(|(v, _, _)| *v == from) {
            let entry = (to, *root, steps.clone());
            self.view_origins.push(entry);
        }
    }

    /// A struct field's origin follows it into a copy (`values = holder.values`).
    fn propagate_field_origin(&mut self, to: VarId, from: VarId) {
        if to == from {
            return;
        }
        if let Some((_, root, steps)) = self.field_origins.iter().find(|(v, _, _)| *v == from) {
            let entry = (to, *root, steps.clone());
            self.field_origins.push(entry);
        }
    }

    /// Records that `out` is field `attr` of `agg` (a struct variable, or a
    /// field of one), for the adjoint of slots written through it.
    pub(super) fn note_field_origin(&mut self, agg: VarId, attr: &str, out: VarId) {
        let origin =
            if let Some((_, root, steps)) = self.field_origins.iter().find(|(v, _, _)| *v == agg) {
                let mut steps = steps.clone();
                steps.push(OriginStep::Field(attr.to_string()));
                Some((*root, steps))
            } else if matches!(self.ty(agg), Type::Struct(_))
                && self.symbols.iter().any(|s| s.var == agg)
            {
                Some((agg, vec![OriginStep::Field(attr.to_string())]))
            } else {
                None
            };
        if let Some((root, steps)) = origin {
            self.field_origins.push((out, root, steps));
        }
    }

    /// Records that `out` is an element of `array` (an array of structs that
    /// is a variable, or a field of one), for the adjoint of slots in its fields.
    fn note_element_step(&mut self, array: VarId, indices: &[VarId], out: VarId) {
        let step = OriginStep::Element(indices.iter().copied().collect());
        let origin = if let Some((_, root, steps)) =
            self.field_origins.iter().find(|(v, _, _)| *v == array)
        {
            let mut steps = steps.clone();
            steps.push(step);
            Some((*root, steps))
        } else if matches!(self.ty(array), Type::Array { .. })
            && self.symbols.iter().any(|s| s.var == array)
        {
            Some((array, vec![step]))
        } else {
            None
        };
        if let Some((root, steps)) = origin {
            self.field_origins.push((out, root, steps));
        }
    }

    /// The C++ array descriptor of a slot's root (a pointer to an array field is dereferenced).
    fn slot_root_expr(&self, root: VarId) -> String {
        if self.ty(root).is_ref() {
            format!("*({})", self.emit(root))
        } else {
            self.emit(root).to_string()
        }
    }

    /// warp's `array_slot_reference`: the address of a slot, as a store target.
    fn array_slot_reference(&mut self, slot: Slot) -> VarId {
        let value = slot.ty.value().expect("slots hold values");
        let r = self.add_var(Type::Ref(value), None);
        let mut line = self.new_line();
        let root = self.slot_root_expr(slot.root);
        line.put_all(&[self.emit(r), " = &(wp::index(", &root, ", "]);
        self.push_names(&mut line, slot.indices.iter().map(|a| self.emit(*a)));
        line.put_all(&[")", &slot.access, ");"]);
        self.push_forward_line(line);
        self.slots.push((r, slot));
        r
    }

    /// warp's `select_array_slot`: narrows the slot `target` refers to (if
    /// any) to a row, element or component.
    fn select_slot(&mut self, target: VarId, sel: SlotSel<'_>) -> LResult<Option<Slot>> {
        let Some(source) = self
            .slots
            .iter()
            .find(|(v, _)| *v == target)
            .map(|(_, s)| s.clone())
        else {
            return Ok(None);
        };
        let (suffix, ty) = match (sel, source.ty) {
            (SlotSel::Index(idx), Type::Matrix(_, c, s)) if (1..=2).contains(&idx.len()) => {
                let mut loaded = Vars::new();
                for &i in idx {
                    loaded.push(self.load(i)?);
                }
                if !loaded
                    .iter()
                    .all(|a| self.ty(*a).scalar().is_some_and(Scalar::is_int))
                {
                    return Ok(None);
                }
                if loaded.len() == 1 {
                    (
                        format!(".row_ref({})", self.emit(loaded[0])),
                        Type::Vector(c, s),
                    )
                } else {
                    (
                        format!(
                            ".element_ref({}, {})",
                            self.emit(loaded[0]),
                            self.emit(loaded[1])
                        ),
                        Type::Scalar(s),
                    )
                }
            }
            (SlotSel::Index([i]), Type::Vector(_, s) | Type::Quat(s) | Type::Transform(s)) => {
                let i = self.load(*i)?;
                if !self.ty(i).scalar().is_some_and(Scalar::is_int) {
                    return Ok(None);
                }
                (format!(".component_ref({})", self.emit(i)), Type::Scalar(s))
            }
            (SlotSel::Attr(attr), Type::Vector(_, s) | Type::Quat(s)) => {
                let i = self.component_index(target, attr)?;
                (format!(".component_ref({})", self.emit(i)), Type::Scalar(s))
            }
            (SlotSel::Attr(attr @ ("p" | "q")), Type::Transform(s)) => {
                let ty = if attr == "p" {
                    Type::Vector(3, s)
                } else {
                    Type::Quat(s)
                };
                (format!(".{attr}"), ty)
            }
            (SlotSel::Attr(attr), Type::Struct(id)) => match id.def().field(attr) {
                Some((_, Type::Array { .. })) | None => return Ok(None),
                Some((_, ty)) => (format!(".{attr}"), ty),
            },
            _ => return Ok(None),
        };
        Ok(Some(Slot {
            root: source.root,
            indices: source.indices,
            access: source.access + &suffix,
            ty,
        }))
    }

    /// warp's `emit_array_slot`: stores `rhs` in the slot, or updates it
    /// atomically with `op` (`add`, `sub`, ...); neither is replayed.
    fn emit_array_slot(&mut self, slot: &Slot, rhs: VarId, op: Option<&str>) -> LResult<()> {
        let mut rhs = rhs;
        if self.ty(rhs).is_ref() {
            rhs = self.add_value_call("copy", &[rhs])?;
        }
        let got = self.ty(rhs).strip_ref();
        if got != slot.ty {
            return Err(self.err(format!(
                "Composite slot assignment expects value of type {}, got {got}",
                slot.ty
            )));
        }
        let array = self.slot_root_expr(slot.root);
        let mut indices = String::new();
        self.push_names(&mut indices, slot.indices.iter().map(|a| self.emit(*a)));
        let access = &slot.access;
        let accessor = format!("[&](auto& _e) -> auto& {{ return _e{access}; }}");
        let value = self.emit(rhs).to_string();
        let (forward, reverse_op) = match op {
            None => (
                format!("wp::store(&(wp::index({array}, {indices}){access}), {value});"),
                "store".to_string(),
            ),
            Some(op) => (
                {
                    self.features.insert(super::Features::ATOMICS);
                    format!("wp::array_atomic_{op}_slot({array}, {value}, {accessor}, {indices});")
                },
                format!("atomic_{op}"),
            ),
        };
        let replay = format!("// {forward}");
        self.add_forward(&forward, Some(&replay), false);
        let adj_array = self.slot_adjoint(slot.root);
        reverse!(
            self,
            "wp::adj_array_{reverse_op}_slot({array}, {adj_array}, {}, {accessor}, {indices});",
            self.var(rhs).adj()
        );
        Ok(())
    }

    /// warp's `array_slot_adjoint`: the gradient array a slot's adjoint goes
    /// to; through a view, the same view of the root's gradient (none if the
    /// root has no gradient).
    fn slot_adjoint(&self, root: VarId) -> String {
        if let Some((_, base, fields)) = self.field_origins.iter().find(|(v, _, _)| *v == root) {
            let mut out = String::with_capacity(128);
            out.put("([&]() -> ");
            self.ty(root).strip_ref().push_ctype(&mut out, false);
            out.put_all(&[" { auto slot_adj_0 = ", self.var(*base).adj(), ";"]);
            let mut digits = itoa::Buffer::new();
            for (k, step) in fields.iter().enumerate() {
                let cur = digits.format(k).to_string();
                let next = digits.format(k + 1).to_string();
                match step {
                    OriginStep::Field(field) => out.put_all(&[
                        " auto slot_adj_",
                        &next,
                        " = (slot_adj_",
                        &cur,
                        ").",
                        field,
                        ";",
                    ]),
                    OriginStep::Element(idx) => {
                        out.put_all(&[" if (!slot_adj_", &cur, ".data) return {};"]);
                        out.put_all(&[
                            " auto slot_adj_",
                            &next,
                            " = (*wp::address(slot_adj_",
                            &cur,
                            ", ",
                        ]);
                        self.push_names(&mut out, idx.iter().map(|a| self.emit(*a)));
                        out.put("));");
                    }
                }
            }
            out.put_all(&[" return slot_adj_", digits.format(fields.len()), "; }())"]);
            return out;
        }
        let Some((_, base, steps)) = self.view_origins.iter().find(|(v, _, _)| *v == root) else {
            return self.var(root).adj().to_string();
        };
        let mut out = String::with_capacity(128);
        out.put("([&]() -> ");
        self.ty(root).push_ctype(&mut out, false);
        out.put_all(&[" { auto slot_adj_0 = ", self.var(*base).adj(), ";"]);
        let mut digits = itoa::Buffer::new();
        for (k, idx) in steps.iter().enumerate() {
            let cur = digits.format(k).to_string();
            let next = digits.format(k + 1).to_string();
            out.put_all(&[" if (!slot_adj_", &cur, ".data) return {};"]);
            out.put_all(&[
                " auto slot_adj_",
                &next,
                " = wp::view(slot_adj_",
                &cur,
                ", ",
            ]);
            self.push_names(&mut out, idx.iter().map(|a| self.emit(*a)));
            out.put(");");
        }
        out.put_all(&[" return slot_adj_", digits.format(steps.len()), "; }())"]);
        out
    }

    /// An update of a differentiable slot that is not atomic makes the
    /// backward pass impossible (warp refuses it when generating that pass).
    fn record_unsupported_slot_update(&mut self, result: VarId) {
        let differentiable = self
            .ty(result)
            .strip_ref()
            .value()
            .is_some_and(|v| v.dtype().is_float());
        if differentiable && self.slot_augassign_error.is_none() {
            self.slot_augassign_error = Some(self.err(
                "Differentiable composite slot augmented assignments with this operator are not supported with backward code generation enabled. Write the result to a separate array, or use enable_backward=False for forward-only code.",
            ));
        }
    }

    /// warp's `lower_subscript_augassign`: load the current value, apply the
    /// operator, store it back (a slot whose type has the atomic is updated atomically).
    fn aug_assign_subscript_slow(
        &mut self,
        base: VarId,
        mut indices: Vars,
        op: BinOp,
        value: &Expr<'a>,
    ) -> LResult<()> {
        for i in indices.iter_mut() {
            *i = self.load(*i)?;
        }
        let slot = self.select_slot(base, SlotSel::Index(&indices))?;
        let user_op = self.has_user_operator(binop_builtin(op));
        if let (Some(slot), false) = (&slot, user_op) {
            if let Some(atomic) = slot_atomic(&slot.ty, op) {
                let rhs = self.expr(value)?;
                return self.emit_array_slot(slot, rhs, Some(atomic));
            }
        }
        let mut args = Vars::new();
        args.push(base);
        args.extend(indices.iter().copied());
        let read = match self.ty(base) {
            Type::Array { .. } | Type::ArrayRef { .. } => "address",
            _ => "extract",
        };
        let current = self.add_value_call(read, &args)?;
        let Some(result) =
            self.slot_update_after_read(slot.as_ref(), current, op, value, user_op)?
        else {
            return Ok(());
        };
        match slot {
            Some(slot) => self.emit_array_slot(&slot, result, None),
            None => self.store_subscript(base, &indices, result),
        }
    }

    /// warp's `_store_subscript` for arrays, vectors, matrices and quaternions.
    fn store_subscript(&mut self, base: VarId, indices: &[VarId], rhs: VarId) -> LResult<()> {
        let store = match self.ty(base) {
            // An array, or an array field of a struct (`s.arr[i] = v`).
            Type::Array { .. } | Type::ArrayRef { .. } => "array_store",
            Type::Vector(..) | Type::Quat(_) | Type::Transform(_) | Type::Matrix(..) => {
                "assign_inplace"
            }
            // A component of a value held by reference: through its address.
            Type::Ref(
                Value::Vector(..) | Value::Quat(_) | Value::Transform(_) | Value::Matrix(..),
            ) => {
                let r = self.index_ref(base, indices)?;
                return self.store_through(r, rhs);
            }
            t => {
                return Err(self.err(format!(
                    "Can only subscript assign array, vector, quaternion, transformation, and matrix types, got {t}"
                )));
            }
        };
        if let [slice] = indices[..] {
            if self.composite_slice_len(slice).is_some() {
                self.composite_slice_call(store, base, slice, Some(rhs))?;
                return Ok(());
            }
        }
        let mut args = Vars::new();
        args.push(base);
        args.extend(indices.iter().copied());
        args.push(rhs);
        self.add_call(store, &args)?;
        Ok(())
    }

    /// warp's `_store_attribute` for vector and quaternion components.
    fn store_attribute(&mut self, agg: VarId, attr: &str, rhs: VarId) -> LResult<()> {
        if let Type::Transform(_)
        | Type::Struct(_)
        | Type::Ref(Value::Transform(_) | Value::Struct(_)) = self.ty(agg)
        {
            return self.store_composite_attribute(agg, attr, rhs);
        }
        let idx = self.component_index(agg, attr)?;
        if self.ty(agg).is_ref() {
            let r = self.index_ref(agg, &[idx])?;
            return self.store_through(r, rhs);
        }
        self.add_call("assign_inplace", &[agg, idx, rhs])?;
        Ok(())
    }

    /// The constant index variable of component `attr` (`x`, `y`, `z`, `w`) of a vector or quaternion.
    fn component_index(&mut self, agg: VarId, attr: &str) -> LResult<VarId> {
        let len = match self.ty(agg).strip_ref() {
            Type::Vector(n, _) => n as i128,
            Type::Quat(_) => 4,
            t => return Err(self.err(format!("'{t}' has no attribute '{attr}'"))),
        };
        let idx = match attr {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            "w" => 3,
            _ => len,
        };
        if idx >= len {
            return Err(self.err(format!(
                "'{}' has no attribute '{attr}'",
                self.ty(agg).strip_ref()
            )));
        }
        Ok(self.add_constant(ConstVal::Int(idx)))
    }

    fn compare(&mut self, left: &Expr<'a>, comps: &[(CmpOp, Expr<'a>)]) -> LResult<VarId> {
        let l = self.expr(left)?;
        let mut rights = Vec::with_capacity(comps.len());
        for (op, e) in comps {
            let sym = match op {
                CmpOp::Lt => "<",
                CmpOp::LtE => "<=",
                CmpOp::Gt => ">",
                CmpOp::GtE => ">=",
                CmpOp::Eq => "==",
                CmpOp::NotEq => "!=",
                _ => return Err(self.err("'is' and 'in' comparisons are not supported in kernels")),
            };
            rights.push((sym, self.expr(e)?));
        }
        let output = self.add_var(Type::BOOL, None);
        let l = self.load(l)?;
        let mut s = self.new_line();
        s.put_all(&[self.emit(output), " = "]);
        s.extend(std::iter::repeat_n("(", rights.len()));
        s.put_all(&[self.emit(l), " "]);
        let mut prev: Option<VarId> = None;
        for (op, comp) in rights {
            if let Some(p) = prev {
                if self.ty(p) != self.ty(comp) {
                    return Err(self.err(format!(
                        "cannot chain comparisons of unequal types: {} {op} {}",
                        self.ty(p),
                        self.ty(comp)
                    )));
                }
                let p = self.load(p)?;
                let c = self.load(comp)?;
                s.put_all(&["&& (", self.emit(p), " ", op, " ", self.emit(c), ")) "]);
                prev = Some(c);
            } else {
                let c = self.load(comp)?;
                s.put_all(&[op, " ", self.emit(c), ") "]);
                prev = Some(c);
            }
        }
        s.truncate(s.trim_end().len());
        s.push(';');
        self.push_forward_line(s);
        Ok(output)
    }

    fn bool_op(&mut self, is_and: bool, values: &[Expr<'a>]) -> LResult<VarId> {
        let output = self.add_var(Type::BOOL, None);
        let first = self.expr(&values[0])?;
        let first = self.load(first)?;
        forward!(self, "{} = {};", self.emit(output), self.emit(first));
        let guard = format!(
            "if ({}{}) {{",
            if is_and { "" } else { "!" },
            self.emit(output)
        );
        for e in &values[1..] {
            self.add_forward_plain(&guard);
            self.add_reverse("}");
            self.indent();
            let v = self.expr(e)?;
            let v = self.load(v)?;
            forward!(
                self,
                "{o} = {o} {} {};",
                if is_and { "&&" } else { "||" },
                self.emit(v),
                o = self.emit(output)
            );
            self.dedent();
            self.add_forward_plain("}");
            self.add_reverse(&guard);
        }
        Ok(output)
    }

    fn if_exp(&mut self, test: &Expr<'a>, body: &Expr<'a>, orelse: &Expr<'a>) -> LResult<VarId> {
        let cond = self.expr(test)?;
        if let Some(c) = self.var(cond).constant {
            return self.expr(if c.truthy() { body } else { orelse });
        }
        self.begin_if(cond, "")?;
        let b = self.expr(body)?;
        let b = self.ifexp_branch(b)?;
        self.end_if(cond, "")?;
        self.begin_if(cond, "!")?;
        let o = self.expr(orelse)?;
        let o = self.ifexp_branch(o)?;
        self.end_if(cond, "!")?;
        self.add_value_call("where", &[cond, b, o])
    }

    fn ifexp_branch(&mut self, v: VarId) -> LResult<VarId> {
        if self.ty(v).is_ref() {
            self.add_value_call("copy", &[v])
        } else {
            Ok(v)
        }
    }

    /// The `@wp.func` an expression names, when it names one: a function, a
    /// local or module-level name bound to one, or `wp.static(...)` of one.
    fn function_value(&self, value: &Expr<'a>) -> LResult<Option<String>> {
        match &value.kind {
            ExprKind::Name(n) => {
                if let Some((_, f)) = self.func_aliases.iter().rev().find(|(a, _)| a == n) {
                    return Ok(Some(f.clone()));
                }
                if self.symbol(n).is_some() {
                    return Ok(None);
                }
                Ok(self.scope.module_function_alias(n))
            }
            ExprKind::Call(f, args, _) if self.scope.names_warp(f, "static") => {
                match args.first().and_then(|a| self.scope.eval(a)) {
                    Some(super::pyconst::PyVal::Function(f)) => Ok(Some(f)),
                    _ => Ok(None),
                }
            }
            // `wp.grad(f)`: the gradient of a function, written `grad:f`.
            ExprKind::Call(f, args, kwargs) if self.scope.names_warp(f, "grad") => {
                let ([arg], []) = (&args[..], &kwargs[..]) else {
                    return Err(self.err("grad() expects exactly one function argument"));
                };
                match self.function_value(arg)? {
                    Some(f) if !f.starts_with("grad:") => Ok(Some(format!("grad:{f}"))),
                    _ => Err(self.err("grad() expects a Warp function")),
                }
            }
            // `wp.sin` as a value: a builtin function.
            ExprKind::Attribute(base, _) => match &base.kind {
                ExprKind::Name(m) if self.symbol(m).is_none() && self.scope.is_warp_module(m) => {
                    match self.scope.eval(value) {
                        Some(super::pyconst::PyVal::Function(f)) => Ok(Some(f)),
                        _ => Ok(None),
                    }
                }
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// The callee a function value denotes: `wp.NAME` a builtin, else the
    /// `@wp.func` of that C++ name.
    fn function_callee(f: &str) -> Callee {
        if let Some(g) = f.strip_prefix("grad:") {
            return Callee::Grad(g.into());
        }
        match f.strip_prefix("wp.") {
            Some(b) => Callee::Builtin(b.into()),
            None => Callee::User(format!("={f}").as_str().into()),
        }
    }

    /// A type taken from a value, called as a constructor: `arr.dtype(0)` (an
    /// array's element type), or `type(x)(0)`, for which warp evaluates `x`
    /// (its code stays) and calls the constructor of its value type.
    fn value_type_callee(&mut self, func: &Expr<'a>) -> LResult<Option<Callee>> {
        if let ExprKind::Attribute(base, "dtype") = &func.kind {
            if let ExprKind::Name(n) = base.kind {
                if let Some(v) = self.symbol(n) {
                    if let Type::Array { dtype, .. } | Type::ArrayRef { dtype, .. } =
                        self.ty(v).strip_ref()
                    {
                        if !matches!(dtype, Value::Struct(_) | Value::Texture(_)) {
                            return Ok(Some(Callee::of_type(dtype)));
                        }
                    }
                }
            }
        }
        let ExprKind::Call(inner, [arg], []) = &func.kind else {
            return Ok(None);
        };
        if !matches!(inner.kind, ExprKind::Name("type")) || self.symbol("type").is_some() {
            return Ok(None);
        }
        let v = self.expr(arg)?;
        match self.ty(v).strip_ref().value() {
            Some(
                t @ (Value::Scalar(_)
                | Value::Vector(..)
                | Value::Matrix(..)
                | Value::Quat(_)
                | Value::Transform(_)),
            ) => Ok(Some(Callee::of_type(t))),
            _ => Err(self.err(format!(
                "type() of a value of type {} as a constructor is not supported by this version of the lowering",
                self.ty(v)
            ))),
        }
    }

    fn resolve_callee(&self, func: &Expr<'a>) -> LResult<Callee> {
        if let ExprKind::Call(..) = &func.kind {
            if let Some(f) = self.function_value(func)? {
                return Ok(Self::function_callee(&f));
            }
        }
        if let ExprKind::Name(name) = &func.kind {
            if let Some((_, f)) = self.func_aliases.iter().rev().find(|(a, _)| a == name) {
                return Ok(Self::function_callee(f));
            }
            if self.symbol(name).is_none() && self.scope.user_function(name).is_none() {
                if let Some(f) = self.scope.module_function_alias(name) {
                    return Ok(Self::function_callee(&f));
                }
            }
        }
        match &func.kind {
            ExprKind::Attribute(base, attr) => match &base.kind {
                // `wp.types.vector(...)`: warp finds the builtin of that name.
                ExprKind::Attribute(inner, "types")
                    if matches!(&inner.kind, ExprKind::Name(m)
                        if self.scope.is_warp_module(m) && self.symbol(m).is_none()) =>
                {
                    if let Some(g) = generic_constructor(attr) {
                        Ok(Callee::Generic(g))
                    } else if let Some(v) = super::types::composite_type(attr) {
                        Ok(Callee::Constructor(v))
                    } else {
                        Err(self.err(format!(
                            "wp.types.{attr}() is not supported in kernels by this version of the lowering"
                        )))
                    }
                }
                ExprKind::Name(module)
                    if self.scope.is_warp_module(module) && self.symbol(module).is_none() =>
                {
                    if let Some(g) = generic_constructor(attr) {
                        Ok(Callee::Generic(g))
                    } else if let Some(v) = super::types::composite_type(attr) {
                        Ok(Callee::Constructor(v))
                    } else if builtins::is_known(attr) || matches!(*attr, "zeros" | "array") {
                        Ok(Callee::Builtin((*attr).into()))
                    } else {
                        Err(self.err(format!(
                            "could not find function {module}.{attr} as a built-in or user-defined function"
                        )))
                    }
                }
                _ => {
                    Err(self.err("method calls are not supported by this version of the lowering"))
                }
            },
            ExprKind::Name(name) if self.symbol(name).is_none() => {
                if let Some(v) = self.scope.type_name(name) {
                    return Ok(Callee::of_type(v));
                }
                if self.scope.user_function(name).is_some() {
                    return Ok(Callee::User((*name).into()));
                }
                if let Some(builtin) = self.scope.imported_builtin(name) {
                    return Ok(Callee::Builtin(builtin.into()));
                }
                // warp looks a bare name up among its builtins too (`dot(a, b)`,
                // Python's `min`, `print`, ...).
                match *name {
                    "len" | "range" | "slice" => Ok(Callee::Builtin((*name).into())),
                    n if builtins::is_builtin(n) => Ok(Callee::Builtin((*name).into())),
                    // ... and then among the warp module's attributes (`vec3(...)`).
                    n if !self.scope.is_module_name(n) => {
                        match super::types::composite_type(n) {
                            Some(v) => Ok(Callee::Constructor(v)),
                            None => Err(self.err(format!(
                                "could not find function {name} as a built-in or user-defined function; user functions must be decorated with @wp.func (not supported by this version of the lowering)"
                            ))),
                        }
                    }
                    _ => Err(self.err(format!(
                        "could not find function {name} as a built-in or user-defined function; user functions must be decorated with @wp.func (not supported by this version of the lowering)"
                    ))),
                }
            }
            ExprKind::Name(name) => {
                Err(self.err(format!("'{name}' is a variable, not a function")))
            }
            _ => Err(self.err("unsupported call target")),
        }
    }

    /// A call whose results are unpacked into `n` names (`i, j = wp.tid()`).
    fn call_multi(
        &mut self,
        func: &Expr<'a>,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
        n: usize,
    ) -> LResult<Vec<VarId>> {
        let name = match self.resolve_callee(func)? {
            Callee::Grad(_) => {
                return Err(self.err(
                    "unpacking the gradients of wp.grad() is not supported by this version of the lowering",
                ));
            }
            Callee::User(name) => {
                let outs = self.call_user_exprs(&name, args, kwargs, false)?;
                if outs.len() != n {
                    return Err(self.err(format!("'{name}' does not return {n} values")));
                }
                return Ok(outs);
            }
            Callee::Builtin(name) => name,
            Callee::Constructor(v) => v.to_string().into(),
            Callee::Generic(g) => g.into(),
        };
        if name != "tid" && kwargs.is_empty() {
            // A builtin with several outputs: they are variables created
            // before the arguments are loaded, passed after them.
            let mut vals = Vec::with_capacity(args.len() + n);
            for a in args {
                vals.push(self.call_arg(a)?);
            }
            let types: Vec<Type> = vals.iter().map(|a| self.ty(*a).strip_ref()).collect();
            let (ov, outs) = builtins::resolve_multi(&name, &types, n).map_err(|m| self.err(m))?;
            self.use_builtin(&name);
            let outs: Vec<VarId> = outs.into_iter().map(|t| self.add_var(t, None)).collect();
            vals.extend(outs.iter().copied());
            self.emit_call(&ov, &vals)?;
            return Ok(outs);
        }
        if name != "tid" || !args.is_empty() || !kwargs.is_empty() || !(2..=4).contains(&n) {
            return Err(self.err(format!("'{name}' does not return {n} values")));
        }
        if self.is_function {
            return Err(self.err(TID_IN_FUNCTION));
        }
        self.use_builtin("tid");
        let outs: Vec<VarId> = (0..n).map(|_| self.add_var(Type::I32, None)).collect();
        let names: Vec<String> = outs.iter().map(|o| self.emit(*o).to_string()).collect();
        forward!(self, "builtin_tid{n}d({});", names.join(", "));
        Ok(outs)
    }

    /// `wp.static(expr)`: evaluated when the code is generated, from module
    /// values and the iteration values of enclosing unrolled loops; the value
    /// becomes a constant.
    fn static_expr(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<VarId> {
        let (value, _) = self.static_value(args, kwargs)?;
        let (ty, c) = value.typed_const().ok_or_else(|| {
            self.err("wp.static() values other than numbers and warp scalar, vector, matrix, quaternion and transform values are not supported by this version of the lowering")
        })?;
        Ok(self.add_var(ty, Some(c)))
    }

    /// The value of a `wp.static(expr)`, and whether warp computes it before
    /// generating code (its names are module values, loop constants of
    /// unrolled loops, and arguments whose length only is read), when the call
    /// becomes a literal.
    fn static_value(
        &self,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<(super::pyconst::PyVal, bool)> {
        let [arg] = args else {
            return Err(self.err("wp.static() takes exactly one argument"));
        };
        if !kwargs.is_empty() {
            return Err(self.err("wp.static() takes exactly one argument"));
        }
        use super::pyconst::PyVal;
        let mut names = BTreeSet::new();
        collect_names_expr(arg, &mut names);
        // warp first evaluates the expression before generating code, with the
        // module's values and the iteration values of unrolled loops; when it
        // names other kernel variables, it is evaluated where it stands, with
        // the kernel's constant variables, and `len(x)` of a variable is the
        // length of its type.
        let is_arg = |n: &str| self.symbol(n).is_some_and(|v| self.args.contains(&v));
        let at_codegen = names.iter().any(|n| {
            self.symbol(n).is_some() && !self.loop_const_iter_symbols.contains(n) && !is_arg(n)
        });
        let reads_args = names.iter().any(|n| is_arg(n));
        if at_codegen || reads_args {
            let mut outside = BTreeSet::new();
            names_outside_len(arg, &mut outside);
            if let Some(n) = outside.iter().find(|n| {
                self.symbol(n)
                    .is_some_and(|v| self.var(v).constant.is_none())
            }) {
                return Err(self.err(format!(
                    "wp.static() expression refers to the kernel variable '{n}', which has no value at code generation"
                )));
            }
        }
        let local = |name: &str| -> Option<PyVal> {
            let v = self.symbol(name)?;
            if !at_codegen && !self.loop_const_iter_symbols.contains(&name) && !is_arg(name) {
                return None;
            }
            if let Some(c) = self.var(v).constant {
                // A warp scalar constant (`wp.float64(...)`) keeps its type.
                let t = *self.ty(v);
                return Some(match t.value() {
                    Some(val) if t != c.literal_type() => PyVal::Typed(val, c),
                    _ => PyVal::from_const(c),
                });
            }
            // Only its length is read (`len(v)`).
            let n = match self.ty(v).strip_ref() {
                Type::Vector(n, _) | Type::Matrix(n, _, _) | Type::IntTuple(n) => n as usize,
                Type::Tuple(id) => id.elems().len(),
                Type::Quat(_) => 4,
                Type::Transform(_) => 7,
                _ => return None,
            };
            Some(PyVal::Tuple(vec![PyVal::None; n]))
        };
        let value = self.scope.eval_with(arg, &local).ok_or_else(|| {
            self.err(
                "this wp.static() expression cannot be evaluated by this version of the lowering",
            )
        })?;
        Ok((value, !at_codegen))
    }

    fn call(
        &mut self,
        func: &Expr<'a>,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<Option<VarId>> {
        if self.scope.names_warp(func, "static") {
            return self.static_expr(args, kwargs).map(Some);
        }
        if self.scope.names_warp(func, "address_of") {
            return self.address_of(args, kwargs).map(Some);
        }
        let callee = match self.value_type_callee(func)? {
            Some(c) => c,
            None => self.resolve_callee(func)?,
        };
        let name = match callee {
            Callee::Constructor(target) => {
                return self.construct(target, args, kwargs).map(Some);
            }
            Callee::Generic(kind) => {
                return self.construct_generic(kind, args, kwargs).map(Some);
            }
            Callee::Builtin(name)
                if name == "identity"
                    || name == "quat_identity"
                    || name == "transform_identity" =>
            {
                return self.templated_constant(&name, args, kwargs).map(Some);
            }
            Callee::Builtin(name)
                if (name.starts_with("tile_") && !is_tile_query(&name))
                    || name == "tile"
                    || name == "untile" =>
            {
                return self.tile_call(&name, args, kwargs);
            }
            Callee::Builtin(name) if name == "zeros" || name == "array" => {
                return self.array_constructor(&name, args, kwargs).map(Some);
            }
            Callee::Builtin(name) if name == "transformation" => {
                return self.transformation(args, kwargs).map(Some);
            }
            Callee::Builtin(name) if name == "cast" => return self.bit_cast(args, kwargs),
            Callee::Builtin(name) if builtins::dtype_argument(&name).is_some() => {
                return self.dtype_call(&name, args, kwargs).map(Some);
            }
            Callee::Builtin(name) => name,
            Callee::Grad(f) => {
                if f.starts_with("wp.") {
                    return Err(self.err(
                        "wp.grad() of a builtin is not supported by this version of the lowering",
                    ));
                }
                let outs = self.call_user_exprs(&format!("={f}"), args, kwargs, true)?;
                return Ok(outs.first().copied());
            }
            Callee::User(name) => {
                let outs = self.call_user_exprs(&name, args, kwargs, false)?;
                return match outs[..] {
                    [] => Ok(None),
                    [o] => Ok(Some(o)),
                    // Several values used as one: a tuple of them.
                    _ => self.tuple_from_vars(&outs).map(Some),
                };
            }
        };
        if name == "slice" {
            return self.slice_call(args, kwargs).map(Some);
        }
        let vals = self.builtin_args(&name, args, kwargs, None)?;
        let native = match name.as_str() {
            "select" => return Err(self.err(
                "wp.select() has been removed; use wp.where(cond, value_if_true, value_if_false)",
            )),
            n => n,
        };
        if let ("len", [v]) = (native, &vals[..]) {
            // warp folds the length of a vector, quaternion or matrix to a constant.
            let n = match self.ty(*v).strip_ref() {
                Type::Vector(n, _) | Type::Matrix(n, _, _) => Some(n),
                Type::Quat(_) => Some(4),
                _ => None,
            };
            if let Some(n) = n {
                self.use_builtin("len");
                return Ok(Some(self.add_constant(ConstVal::Int(n as i128))));
            }
        }
        if native == "tid" && !vals.is_empty() {
            return Err(self.err("tid() takes no arguments"));
        }
        if native == "tid" && self.is_function {
            return Err(self.err(TID_IN_FUNCTION));
        }
        // What a cast counts as is its target type's name.
        let used = builtins::cast_target(native).map_or(native, |s| s.name());
        self.use_builtin(used);
        if let ("len", [v]) = (native, &vals[..]) {
            // The length of a vector, quaternion or matrix is a compile-time constant.
            if let Some(n) = composite_length(&self.ty(*v).strip_ref()) {
                return Ok(Some(self.add_constant(ConstVal::Int(n))));
            }
        }
        match self.add_call(native, &vals) {
            Err(e) => self.multi_output_value(native, &vals).unwrap_or(Err(e)),
            done => done,
        }
    }

    /// The arguments of a call of builtin `name`, in the order of its
    /// parameters: the positional ones, then the keyword ones, evaluated in
    /// source order and bound to the parameters by name.
    /// `type_kw`: the keyword argument that names a type (a `dtype=` the
    /// caller reads itself): it is passed over, its line still reached in order.
    fn builtin_args(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
        type_kw: Option<usize>,
    ) -> LResult<Vars> {
        let mut vals = self.eval_args(args)?;
        let positional = vals.len();
        if kwargs.is_empty() {
            return Ok(vals);
        }
        let mut names = Vec::with_capacity(kwargs.len());
        for (i, kw) in kwargs.iter().enumerate() {
            let Some(n) = kw.arg else {
                return Err(self.err("'**' arguments are not supported in kernels"));
            };
            if type_kw == Some(i) {
                self.set_lineno(kw.value.pos);
                continue;
            }
            names.push(n);
            vals.push(self.call_arg(&kw.value)?);
        }
        let order = builtins::keyword_order(name, positional, &names).ok_or_else(|| {
            self.err(format!(
                "keyword arguments {names:?} do not match the parameters of '{name}'"
            ))
        })?;
        Ok(order.into_iter().map(|i| vals[i]).collect())
    }

    /// A builtin whose `dtype=` names the type it returns
    /// (`wp.texture_sample(tex, uv, dtype=wp.vec4f)`, `wp.volume_lookup(id, i,
    /// j, k, dtype=float)`): the other arguments pick the overload, and the
    /// type, left out of the call, is its C++ template argument (spelled as
    /// written: Python's `float` stays `float`) and its return type.
    fn dtype_call(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let allowed = builtins::dtype_argument(name).unwrap_or(&[]);
        let Some(at) = kwargs.iter().position(|k| k.arg == Some("dtype")) else {
            return Err(self.err(format!(
                "{name}() needs its dtype= by keyword (this version of the lowering)"
            )));
        };
        let dtype = &kwargs[at].value;
        let ty = self.scope.annotation_type(dtype)?;
        let spelled = match (&ty, self.scope.dtype_arg(dtype)) {
            (Type::Scalar(_), Some((spelled, _))) => spelled,
            _ => ty.ctype(false).into_owned(),
        };
        if !allowed.contains(&spelled.as_str()) && !allowed.contains(&ty.to_string().as_str()) {
            return Err(self.err(format!("{name}() does not support dtype={ty}")));
        }
        let vals = self.builtin_args(name, args, kwargs, Some(at))?;
        self.use_builtin(name);
        let types: Vec<Type> = vals.iter().map(|v| self.ty(*v).strip_ref()).collect();
        let mut ov = builtins::resolve(name, &types)
            .map_err(|m| self.err(m))?
            .as_ref()
            .clone();
        ov.native = Cow::Owned(format!("{name}<{spelled}>"));
        ov.ret = Some(ty);
        Ok(self
            .emit_call(&ov, &vals)?
            .expect("a call with a return type has an output"))
    }

    /// A builtin with several outputs used as one value (`t = wp.quat_to_axis_angle(q)`):
    /// the outputs are created and passed after the arguments, then made a tuple.
    fn multi_output_value(&mut self, name: &str, vals: &[VarId]) -> Option<LResult<Option<VarId>>> {
        let types: Vec<Type> = vals.iter().map(|a| self.ty(*a).strip_ref()).collect();
        let (ov, outs) = (2..=4).find_map(|n| builtins::resolve_multi(name, &types, n).ok())?;
        Some((|| {
            let outs: Vec<VarId> = outs.into_iter().map(|t| self.add_var(t, None)).collect();
            let mut all: Vec<VarId> = vals.to_vec();
            all.extend(outs.iter().copied());
            self.emit_call(&ov, &all)?;
            self.tuple_from_vars(&outs).map(Some)
        })())
    }

    /// `wp.transformation(p, q, dtype=...)`: the transform constructor under
    /// its builtin's name; `dtype` only names the component type.
    fn transformation(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<VarId> {
        let mut dtype = Scalar::Float32;
        let mut rest: Vec<Keyword<'a>> = Vec::with_capacity(kwargs.len());
        for kw in kwargs {
            if kw.arg == Some("dtype") {
                dtype = match self.scope.annotation_type(&kw.value)? {
                    Type::Scalar(s) if s.is_float() => s,
                    _ => return Err(self.err("transformation() needs a float dtype")),
                };
            } else {
                rest.push(kw.clone());
            }
        }
        self.construct(Value::Transform(dtype), args, &rest)
    }

    /// `wp.cast(a, dtype)`: `a`'s bits as a value of type `dtype`, which is a
    /// template argument of the call (warp's `cast_dispatch_func`).
    fn bit_cast(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<Option<VarId>> {
        let (value, dtype) = match (args, kwargs) {
            ([a, t], []) => (a, t),
            ([a], [kw]) if kw.arg == Some("dtype") => (a, &kw.value),
            _ => return Err(self.err("wp.cast() takes a value and a dtype")),
        };
        let a = self.expr(value)?;
        let target = self.scope.annotation_type(dtype)?;
        if target.value().is_none() {
            return Err(self.err(format!("wp.cast() cannot cast to {target}")));
        }
        self.use_builtin("cast");
        let ov = Overload {
            native: Cow::Owned(format!("cast<{}>", target.ctype(false))),
            adj_native: Cow::Borrowed("cast"),
            namespace: "wp::",
            ret: Some(target),
            require_original_output: false,
            differentiable: false,
            skip_replay: false,
            defaults: &[],
            initializer_list: false,
        };
        self.emit_call(&ov, &[a])
    }

    /// A call's positional arguments, in order; a starred one (`*v`,
    /// `*v[1:3]`, `*arr[0:3]`) becomes its elements (warp's `unpack_starred`).
    fn eval_args(&mut self, args: &[Expr<'a>]) -> LResult<Vars> {
        let mut vals = Vars::new();
        for a in args {
            match &a.kind {
                ExprKind::Starred(inner) => self.unpack_starred(inner, &mut vals)?,
                _ => vals.push(self.call_arg(a)?),
            }
        }
        Ok(vals)
    }

    /// A module attribute that is a constant, as warp resolves it statically:
    /// `wp.pi`, `math.pi`, `Flags.ONE`, or an enum member's `Task.LIFT.value`
    /// (see `Scope`); `None` for anything else.
    fn static_attribute(&self, e: &Expr<'a>) -> Option<ConstVal> {
        let ExprKind::Attribute(base, attr) = &e.kind else {
            return None;
        };
        match &base.kind {
            ExprKind::Name(m) if self.symbol(m).is_none() => {
                self.scope.module_attribute_constant(m, attr)
            }
            ExprKind::Attribute(class, member) => match &class.kind {
                ExprKind::Name(m) if self.symbol(m).is_none() => self
                    .scope
                    .module_attribute_constant(m, &format!("{member}.{attr}")),
                _ => None,
            },
            _ => None,
        }
    }

    /// One argument of a call (warp's `resolve_arg`): evaluated, and then a
    /// static attribute constant ([`Self::static_attribute`]) is looked up
    /// again as a static expression, which adds a second constant: the one passed.
    fn call_arg(&mut self, a: &Expr<'a>) -> LResult<VarId> {
        let v = self.expr(a)?;
        match self.static_attribute(a) {
            Some(c) => Ok(self.add_constant(c)),
            None => Ok(v),
        }
    }

    /// Python's `slice(start, stop, step)` in a kernel: warp's `slice`
    /// builtin, a `wp::slice_t` of the three ints (no adjoint); constant
    /// bounds are kept for a tile view's offset.
    fn slice_call(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<VarId> {
        let ([start, stop, step], []) = (args, kwargs) else {
            return Err(self.err("slice() takes start, stop and step in kernels"));
        };
        let mut parts = [start, stop, step].map(|_| VarId(0));
        for (p, e) in parts.iter_mut().zip([start, stop, step]) {
            *p = self.expr(e)?;
            if !self.ty(*p).strip_ref().scalar().is_some_and(Scalar::is_int) {
                return Err(self.err("slice() bounds must be integers"));
            }
        }
        let out = self.add_var(Type::Slice, None);
        let constants = parts.map(|p| match self.var(p).constant {
            Some(ConstVal::Int(c)) => Some(c),
            _ => None,
        });
        if let [Some(a), Some(b), Some(c)] = constants {
            self.slice_values.push((out, [a, b, c]));
        }
        for p in parts.iter_mut() {
            *p = self.load(*p)?;
        }
        self.emit_slice_t(out, parts);
        Ok(out)
    }

    /// `out = wp::slice_t(start, stop, step);` of loaded values.
    pub(super) fn emit_slice_t(&mut self, out: VarId, parts: [VarId; 3]) {
        forward!(
            self,
            "{} = wp::slice_t({}, {}, {});",
            self.emit(out),
            self.emit(parts[0]),
            self.emit(parts[1]),
            self.emit(parts[2])
        );
    }

    /// The constant bounds of a `slice(...)` value.
    pub(super) fn slice_value(&self, v: VarId) -> Option<[i128; 3]> {
        self.slice_values
            .iter()
            .find(|(s, _)| *s == v)
            .map(|(_, b)| *b)
    }

    /// A slice's step: a compile-time integer, 1 when omitted, never 0.
    pub(super) fn slice_step(&mut self, step: Option<&Expr<'a>>) -> LResult<i128> {
        let step = match step {
            Some(e) => self.const_slice_component(e)?,
            None => 1,
        };
        if step == 0 {
            return Err(self.err("Slice step cannot be zero."));
        }
        Ok(step)
    }

    /// A slice component that must be a compile-time integer.
    fn const_slice_component(&mut self, e: &Expr<'a>) -> LResult<i128> {
        let v = self.expr(e)?;
        match self.var(v).constant {
            Some(ConstVal::Int(i)) => Ok(i),
            Some(_) => Err(self.err("Slice component must be an integer.")),
            None => Err(self.err("Slice component must be a compile-time constant.")),
        }
    }

    fn unpack_starred(&mut self, value: &Expr<'a>, out: &mut Vars) -> LResult<()> {
        let (target, bounds) = match &value.kind {
            ExprKind::Subscript(vs) if matches!(vs[1].kind, ExprKind::Slice(..)) => {
                let ExprKind::Slice(lower, upper, step) = &vs[1].kind else {
                    unreachable!()
                };
                let target = self.expr(&vs[0])?;
                let t = self.ty(target).strip_ref();
                let step = self.slice_step(step.as_deref())?;
                let bounds = match t {
                    Type::Array { ndim, .. } => {
                        if ndim != 1 {
                            return Err(self.err(format!("Starred expressions with slices are only supported for 1D arrays, got {ndim}D array.")));
                        }
                        if step < 0 && (lower.is_none() || upper.is_none()) {
                            return Err(self.err("Reverse slices require explicit start and stop bounds when the sequence length is not known at compile time (e.g. slicing an array)."));
                        }
                        let start = match lower {
                            Some(l) => self.const_slice_component(l)?,
                            None => 0,
                        };
                        let Some(upper) = upper else {
                            return Err(self.err("Starred expression on arrays requires explicit upper bound (e.g., *array[0:3], not *array[0:])."));
                        };
                        let stop = self.const_slice_component(upper)?;
                        if start < 0 || stop < 0 {
                            return Err(self.err(
                                "Starred expression slice bounds cannot be negative for arrays.",
                            ));
                        }
                        if step < 0 {
                            return Err(self.err(
                                "Starred expression slice step cannot be negative for arrays.",
                            ));
                        }
                        (start, stop, step)
                    }
                    _ => {
                        let Some(length) = composite_length(&t) else {
                            return Err(self.err(format!("Starred expressions with slices are only supported for arrays, vectors, quaternions, and matrices. Got {t}.")));
                        };
                        // CPython's `slice.indices(length)`.
                        let (lo, hi) = if step > 0 {
                            (0, length)
                        } else {
                            (-1, length - 1)
                        };
                        let mut resolve = |c: &Option<&Expr<'a>>, default: i128| -> LResult<i128> {
                            let Some(c) = c else { return Ok(default) };
                            let v = self.const_slice_component(c)?;
                            Ok(if v < 0 {
                                (v + length).max(lo)
                            } else {
                                v.min(hi)
                            })
                        };
                        let start = resolve(&lower.as_deref(), if step > 0 { lo } else { hi })?;
                        let stop = resolve(&upper.as_deref(), if step > 0 { hi } else { lo })?;
                        (start, stop, step)
                    }
                };
                (target, bounds)
            }
            _ => {
                let target = self.expr(value)?;
                let t = self.ty(target).strip_ref();
                match composite_length(&t) {
                    Some(n) => (target, (0, n, 1)),
                    None if matches!(t, Type::Array { .. }) => {
                        return Err(self.err("Starred expressions apply to arrays only if they are sliced with bounds known at compile-time."));
                    }
                    None => {
                        return Err(self.err(format!("Starred expressions are only supported for arrays (with slice), vectors, quaternions, and matrices. Got {t}.")));
                    }
                }
            }
        };
        let read = if matches!(self.ty(target).strip_ref(), Type::Array { .. }) {
            "address"
        } else {
            "extract"
        };
        let (start, stop, step) = bounds;
        let count = range_len(start, stop, step).unwrap_or(0);
        if count <= 0 {
            return Err(self.err("Starred expression results in empty sequence."));
        }
        for k in 0..count {
            let i = self.add_constant(ConstVal::Int(start + k * step));
            out.push(self.add_value_call(read, &[target, i])?);
        }
        Ok(())
    }

    /// `wp.identity(n=N, dtype=T)` and `wp.quat_identity(dtype=T)`: the type
    /// arguments become C++ template arguments of an argument-less call.
    fn templated_constant(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let params: &[&str] = if name == "identity" {
            &["n", "dtype"]
        } else {
            &["dtype"]
        };
        if args.len() > params.len() {
            return Err(self.err(format!("too many arguments to {name}()")));
        }
        let bound = params
            .iter()
            .zip(args)
            .map(|(p, a)| (Some(*p), a))
            .chain(kwargs.iter().map(|k| (k.arg, &k.value)));
        let mut n = None;
        let mut dtype = Scalar::Float32;
        for (param, value) in bound {
            match param {
                Some("n") if name == "identity" => {
                    // warp evaluates the argument: a literal (or a wp.static()) becomes a constant.
                    let v = self.call_arg(value)?;
                    match self.var(v).constant {
                        Some(ConstVal::Int(k)) if (1..=255).contains(&k) => n = Some(k as u8),
                        _ => {
                            return Err(
                                self.err("identity(n=...) must be a positive constant integer")
                            );
                        }
                    }
                }
                Some("dtype") => {
                    dtype = match self.scope.annotation_type(value)? {
                        Type::Scalar(s) if s.is_float() => s,
                        _ => return Err(self.err(format!("{name}() needs a float dtype"))),
                    }
                }
                _ => return Err(self.err(format!("unsupported argument to {name}()"))),
            }
        }
        self.use_builtin(name);
        let (native, ret) = if name == "identity" {
            let n = n.ok_or_else(|| self.err("identity() needs n=2, 3 or 4"))?;
            (
                format!("identity<{n}, {}>", dtype.ctype()),
                Type::Matrix(n, n, dtype),
            )
        } else if name == "transform_identity" {
            (
                format!("transform_identity<{}>", dtype.ctype()),
                Type::Transform(dtype),
            )
        } else {
            (
                format!("quat_identity<{}>", dtype.ctype()),
                Type::Quat(dtype),
            )
        };
        let out = self.add_var(ret, None);
        forward!(self, "{} = wp::{native}();", self.emit(out));
        Ok(out)
    }

    /// The structs held by this function's tiles and tile stacks (warp's
    /// `_get_tile_helper_struct_hashes` of one function).
    pub fn tile_structs(&self) -> Vec<StructId> {
        let mut out = Vec::new();
        for v in &self.vars {
            let id = match v.ty.strip_ref() {
                Type::Tile(t) => match t.dtype {
                    Value::Struct(id) => id,
                    _ => continue,
                },
                Type::TileStack(Value::Struct(id), _) => id,
                _ => continue,
            };
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    }

    /// Adds to `distinct` the types this function uses (arguments and locals)
    /// that it lacks. A kernel has hundreds of variables but a handful of
    /// types, and a module's kernels share most: the caller spells the
    /// module's distinct types once (`float32`, `vec3f`, ...).
    pub fn dtypes(&self, distinct: &mut Vec<Type>) {
        // Most variables are scalars: one bit per scalar type listed finds
        // them without a search of `distinct`.
        let scalar_bit = |t: &Type| t.scalar().map_or(0, |s| 1u32 << s as u32);
        let mut listed = distinct.iter().fold(0, |bits, t| bits | scalar_bit(t));
        for v in &self.vars {
            let t = match v.ty {
                Type::Ref(x) | Type::Array { dtype: x, .. } | Type::ArrayRef { dtype: x, .. } => {
                    x.to_type()
                }
                Type::Range
                | Type::IntTuple(_)
                | Type::Tuple(_)
                | Type::StorageStr(_)
                | Type::Shape(_)
                | Type::Slice
                | Type::Str(_) => continue,
                Type::Tile(t) => t.dtype.to_type(),
                Type::TileStack(v, _) => v.to_type(),
                t => t,
            };
            let bit = scalar_bit(&t);
            if listed & bit != 0 {
                continue;
            }
            listed |= bit;
            if !distinct.contains(&t) {
                distinct.push(t);
            }
        }
    }
}

/// Whether an argument of type `arg` may be passed for a user function's
/// parameter of type `param`: equal types, or warp's array polymorphism (a
/// fixed-size array passed for an array of its element type).
fn arg_fits(arg: &Type, param: &Type) -> bool {
    match (arg, param) {
        (
            Type::Array {
                dtype: a, kind: k, ..
            },
            Type::Array {
                dtype: b, kind: l, ..
            },
        ) => a == b && k.fits(*l),
        // A concrete query passed for its erased kind (`wp.BvhQuery`).
        (Type::Query(a), Type::Query(p)) => a == p || a.erased() == *p,
        // A tile parameter is a C++ template: any tile of its element type
        // (warp's `types_equal` of tiles), whatever its shape and storage.
        (Type::Tile(a), Type::Tile(p)) => a.dtype == p.dtype,
        _ => arg.passes_as(param),
    }
}

/// The block-wide spatial queries and the tile stack's operations: builtins
/// of the table despite their `tile_` names.
fn is_tile_query(name: &str) -> bool {
    matches!(
        name,
        "tile_stack_push"
            | "tile_stack_pop"
            | "tile_stack_clear"
            | "tile_stack_count"
            | "tile_mesh_query_aabb"
            | "tile_mesh_query_aabb_next"
            | "tile_bvh_query_aabb"
            | "tile_bvh_query_ray"
            | "tile_bvh_query_next"
            | "tile_query_valid"
    )
}

/// warp's generic composite constructors, callable as `wp.types.NAME` or `wp.NAME`.
fn generic_constructor(name: &str) -> Option<&'static str> {
    ["vector", "matrix", "quaternion", "transformation"]
        .into_iter()
        .find(|g| *g == name)
}

/// warp's rule, checked after the call is resolved (so aliases of `wp.tid` count).
const TID_IN_FUNCTION: &str = "tid() may only be called from a Warp kernel, not a Warp function: obtain the indices in the @wp.kernel and pass them to the function";

/// warp's `types_equal` for reassignments: tiles match on element type only.
fn same_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Tile(x), Type::Tile(y)) => x.dtype == y.dtype,
        // Arrays match on element type: a view of another rank may rebind a name.
        (Type::Array { dtype: x, .. }, Type::Array { dtype: y, .. }) => x == y,
        _ => a == b,
    }
}

/// Python's `len(range(start, stop, step))` (None on overflow).
fn range_len(start: i128, stop: i128, step: i128) -> Option<i128> {
    let span = if step > 0 {
        stop.checked_sub(start)?
    } else {
        start.checked_sub(stop)?
    };
    if span <= 0 {
        return Some(0);
    }
    let step = step.checked_abs()?;
    Some((span - 1) / step + 1)
}

/// The largest number of names a `wp.tid()` result is unpacked into (1 if never).
fn tid_dimension(body: &[Stmt], is_tid: &dyn Fn(&Expr) -> bool) -> usize {
    let mut dim = 1;
    for s in body {
        match &s.kind {
            StmtKind::Assign(targets, value) => {
                if let (Some(ExprKind::Tuple(elts)), ExprKind::Call(func, ..)) =
                    (targets.first().map(|t| &t.kind), &value.kind)
                {
                    if matches!(&func.kind, ExprKind::Attribute(_, a) if *a == "tid")
                        || is_tid(func)
                    {
                        dim = dim.max(elts.len());
                    }
                }
            }
            StmtKind::If(_, b, o) | StmtKind::While(_, b, o) | StmtKind::For(_, _, b, o) => {
                dim = dim
                    .max(tid_dimension(b, is_tid))
                    .max(tid_dimension(o, is_tid));
            }
            _ => {}
        }
    }
    dim
}

/// The names a body assigns (warp's local variables), and those of them
/// bound to `wp.tid` (directly, or through other such locals).
fn tid_aliases<'a>(scope: &Scope<'_>, body: &[Stmt<'a>]) -> (Vec<&'a str>, Vec<&'a str>) {
    fn walk<'b, 'a>(
        body: &'b [Stmt<'a>],
        out: &mut Vec<(&'a str, &'b Expr<'a>)>,
        names: &mut Vec<&'a str>,
    ) {
        for s in body {
            match &s.kind {
                StmtKind::Assign(targets, value) => {
                    for t in targets.iter() {
                        if let ExprKind::Name(n) = t.kind {
                            names.push(n);
                            out.push((n, value));
                        } else if let ExprKind::Tuple(items) = &t.kind {
                            for i in items.iter() {
                                if let ExprKind::Name(n) = i.kind {
                                    names.push(n);
                                }
                            }
                        }
                    }
                }
                StmtKind::AugAssign(t, _, _) | StmtKind::AnnAssign(t, _, _) => {
                    if let ExprKind::Name(n) = t.kind {
                        names.push(n);
                    }
                }
                StmtKind::If(_, b, o) | StmtKind::While(_, b, o) => {
                    walk(b, out, names);
                    walk(o, out, names);
                }
                StmtKind::For(t, _, b, o) => {
                    if let ExprKind::Name(n) = t.kind {
                        names.push(n);
                    }
                    walk(b, out, names);
                    walk(o, out, names);
                }
                _ => {}
            }
        }
    }
    let mut binds = Vec::new();
    let mut locals = Vec::new();
    walk(body, &mut binds, &mut locals);
    let mut aliases: Vec<&'a str> = Vec::new();
    if binds.is_empty() {
        return (locals, aliases);
    }
    for (n, v) in &binds {
        let direct = match &v.kind {
            ExprKind::Name(m) => {
                !locals.contains(m) && scope.module_function_alias(m).as_deref() == Some("wp.tid")
            }
            ExprKind::Attribute(..) => scope.names_warp(v, "tid"),
            _ => false,
        };
        if direct && !aliases.contains(n) {
            aliases.push(n);
        }
    }
    loop {
        let before = aliases.len();
        for (n, v) in &binds {
            if let ExprKind::Name(m) = &v.kind {
                if aliases.contains(m) && !aliases.contains(n) {
                    aliases.push(n);
                }
            }
        }
        if aliases.len() == before {
            break;
        }
    }
    (locals, aliases)
}

/// Whether `body` (not nested loops) contains `break` (if `brk`) or `continue` (if `cont`).
fn contains_loop_control(body: &[Stmt], brk: bool, cont: bool) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Break => brk,
        StmtKind::Continue => cont,
        StmtKind::If(_, b, o) => {
            contains_loop_control(b, brk, cont) || contains_loop_control(o, brk, cont)
        }
        _ => false,
    })
}

/// Every name appearing in the statements (any context).
/// Lowers a user function into the table (`native` names the overload);
/// returns its index and the C++ name of its replay function, if it has one.
pub fn build_function<'a>(
    scope: &'a Scope<'a>,
    funcs: &'a RefCell<FuncTable>,
    def: &'a FunctionDef<'a>,
    pos: Pos,
    native: &str,
    max_unroll: usize,
    callables: &[(&'a str, String)],
    concrete: &[Type],
) -> LResult<(usize, Option<String>)> {
    if let Some(snippets) = scope.native_snippets(def) {
        let built = refs::native_function(scope, def, native, snippets?)?;
        let mut table = funcs.borrow_mut();
        table.built.push((native.to_string(), built));
        return Ok((table.built.len() - 1, None));
    }
    funcs.borrow_mut().building.push(native.to_string());
    let replay = scope.replay_function(def, native);
    let result = (|| {
        let mut adj = Adjoint::specialized(scope, funcs, def, true, concrete)?;
        adj.max_unroll = max_unroll;
        adj.closure = scope.closure_env(native);
        // A specialized copy (on functions passed to it, or on the argument
        // types of a generic call): warp re-parses it from the function's own
        // source, so lines count from its `def` and the file line is 0.
        let reparsed = !callables.is_empty() || !concrete.is_empty();
        if reparsed {
            adj.line_offset = pos.line.saturating_sub(1);
        }
        for arg in def.args {
            if arg
                .annotation
                .as_ref()
                .is_some_and(|a| scope.is_function_annotation(a))
            {
                match callables.iter().find(|(n, _)| *n == arg.name) {
                    Some((n, f)) => adj.func_aliases.push((n, f.clone())),
                    None => {
                        return Err(LowerError {
                            line: arg.pos.line,
                            col: arg.pos.col,
                            message: format!(
                                "the wp.Function parameter '{}' of '{}' is given no function",
                                arg.name, def.name
                            ),
                        });
                    }
                }
            }
        }
        adj.lower_function(def, pos)?;
        let mut built = super::module::built_function(adj, def, native);
        built.inline_attr = scope.inline_attr(def);
        built.custom_grad = scope.custom_grad_of(def).is_some();
        built.manual_ref_adjoint = built.custom_grad;
        if reparsed {
            built.first_line = 0;
        }
        built.replay = replay.map(|(_, _, _, n)| n.clone());
        Ok(built)
    })();
    funcs.borrow_mut().building.retain(|n| n != native);
    let built = result?;
    let mut table = funcs.borrow_mut();
    table.built.push((native.to_string(), built));
    Ok((table.built.len() - 1, replay.map(|(_, _, _, n)| n.clone())))
}

/// The names an expression reads.
fn collect_names_expr<'a>(e: &Expr<'a>, out: &mut BTreeSet<Ident<'a>>) {
    let stmt = Stmt {
        kind: StmtKind::Expr(e.clone()),
        pos: e.pos,
    };
    collect_names_stmts(std::slice::from_ref(&stmt), out);
}

/// Whether statements call `wp.static(...)` (warp unrolls such loops whatever their length).
fn contains_static_call(scope: &Scope<'_>, body: &[Stmt]) -> bool {
    fn expr(scope: &Scope<'_>, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call(f, args, kwargs) => {
                scope.names_warp(f, "static")
                    || expr(scope, f)
                    || args.iter().any(|a| expr(scope, a))
                    || kwargs.iter().any(|k| expr(scope, &k.value))
            }
            ExprKind::Attribute(b, _) | ExprKind::Starred(b) | ExprKind::UnaryOp(_, b) => {
                expr(scope, b)
            }
            ExprKind::Subscript(v) | ExprKind::BinOp(v, _) => v.iter().any(|x| expr(scope, x)),
            ExprKind::BoolOp(_, v) | ExprKind::Tuple(v) | ExprKind::List(v) => {
                v.iter().any(|x| expr(scope, x))
            }
            ExprKind::Compare(l, c) => expr(scope, l) || c.iter().any(|(_, x)| expr(scope, x)),
            ExprKind::IfExp(a, b, c) => expr(scope, a) || expr(scope, b) || expr(scope, c),
            ExprKind::Slice(a, b, c) => [a, b, c].iter().any(|x| x.is_some_and(|x| expr(scope, x))),
            ExprKind::Name(_) | ExprKind::Constant(_) | ExprKind::Other(_) => false,
        }
    }
    body.iter().any(|s| match &s.kind {
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr(scope, e),
        StmtKind::Assign(t, v) => t.iter().any(|x| expr(scope, x)) || expr(scope, v),
        StmtKind::AugAssign(t, _, v) => expr(scope, t) || expr(scope, v),
        StmtKind::AnnAssign(t, a, v) => {
            expr(scope, t) || expr(scope, a) || v.as_ref().is_some_and(|v| expr(scope, v))
        }
        StmtKind::If(c, b, o) | StmtKind::While(c, b, o) => {
            expr(scope, c) || contains_static_call(scope, b) || contains_static_call(scope, o)
        }
        StmtKind::For(t, i, b, o) => {
            expr(scope, t)
                || expr(scope, i)
                || contains_static_call(scope, b)
                || contains_static_call(scope, o)
        }
        StmtKind::Assert(a, b) => expr(scope, a) || b.as_ref().is_some_and(|b| expr(scope, b)),
        _ => false,
    })
}

fn collect_names_stmts<'a>(body: &[Stmt<'a>], out: &mut BTreeSet<Ident<'a>>) {
    fn expr<'a>(e: &Expr<'a>, out: &mut BTreeSet<Ident<'a>>) {
        match &e.kind {
            ExprKind::Name(n) => {
                out.insert(n);
            }
            ExprKind::Attribute(b, _) | ExprKind::Starred(b) | ExprKind::UnaryOp(_, b) => {
                expr(b, out)
            }
            ExprKind::Subscript(ab) | ExprKind::BinOp(ab, _) => {
                expr(&ab[0], out);
                expr(&ab[1], out);
            }
            ExprKind::Slice(a, b, c) => {
                for x in [a, b, c].into_iter().flatten() {
                    expr(x, out);
                }
            }
            ExprKind::Call(f, args, kws) => {
                expr(f, out);
                args.iter().for_each(|a| expr(a, out));
                kws.iter().for_each(|k| expr(&k.value, out));
            }
            ExprKind::BoolOp(_, v) | ExprKind::Tuple(v) | ExprKind::List(v) => {
                v.iter().for_each(|a| expr(a, out))
            }
            ExprKind::Compare(l, c) => {
                expr(l, out);
                c.iter().for_each(|(_, a)| expr(a, out));
            }
            ExprKind::IfExp(a, b, c) => {
                expr(a, out);
                expr(b, out);
                expr(c, out);
            }
            ExprKind::Constant(_) | ExprKind::Other(_) => {}
        }
    }
    for s in body {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr(e, out),
            StmtKind::Assign(t, v) => {
                t.iter().for_each(|a| expr(a, out));
                expr(v, out);
            }
            StmtKind::AugAssign(t, _, v) => {
                expr(t, out);
                expr(v, out);
            }
            StmtKind::If(t, b, o) | StmtKind::While(t, b, o) => {
                expr(t, out);
                collect_names_stmts(b, out);
                collect_names_stmts(o, out);
            }
            StmtKind::For(t, i, b, o) => {
                expr(t, out);
                expr(i, out);
                collect_names_stmts(b, out);
                collect_names_stmts(o, out);
            }
            _ => {}
        }
    }
}

/// The names an expression reads, except those it only passes to `len()`.
fn names_outside_len<'a>(e: &Expr<'a>, out: &mut BTreeSet<Ident<'a>>) {
    match &e.kind {
        ExprKind::Call(f, args, kws) => {
            if matches!(f.kind, ExprKind::Name("len"))
                && matches!(&args[..], [a] if matches!(a.kind, ExprKind::Name(_)))
                && kws.is_empty()
            {
                return;
            }
            names_outside_len(f, out);
            args.iter().for_each(|a| names_outside_len(a, out));
            kws.iter().for_each(|k| names_outside_len(&k.value, out));
        }
        ExprKind::Attribute(b, _) | ExprKind::Starred(b) | ExprKind::UnaryOp(_, b) => {
            names_outside_len(b, out)
        }
        ExprKind::Subscript(ab) | ExprKind::BinOp(ab, _) => {
            names_outside_len(&ab[0], out);
            names_outside_len(&ab[1], out);
        }
        ExprKind::BoolOp(_, v) | ExprKind::Tuple(v) | ExprKind::List(v) => {
            v.iter().for_each(|a| names_outside_len(a, out))
        }
        ExprKind::Compare(l, c) => {
            names_outside_len(l, out);
            c.iter().for_each(|(_, a)| names_outside_len(a, out));
        }
        _ => collect_names_expr(e, out),
    }
}

/// Names bound by assignments anywhere in the statements (Python's Store context).
fn collect_stored_names<'a>(body: &[Stmt<'a>], out: &mut BTreeSet<Ident<'a>>) {
    fn target<'a>(e: &Expr<'a>, out: &mut BTreeSet<Ident<'a>>) {
        match &e.kind {
            ExprKind::Name(n) => {
                out.insert(n);
            }
            ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().for_each(|a| target(a, out)),
            ExprKind::Starred(b) => target(b, out),
            _ => {}
        }
    }
    for s in body {
        match &s.kind {
            StmtKind::Assign(t, _) => t.iter().for_each(|a| target(a, out)),
            StmtKind::AugAssign(t, _, _) | StmtKind::AnnAssign(t, _, _) => target(t, out),
            StmtKind::If(_, b, o) | StmtKind::While(_, b, o) => {
                collect_stored_names(b, out);
                collect_stored_names(o, out);
            }
            StmtKind::For(t, _, b, o) => {
                target(t, out);
                collect_stored_names(b, out);
                collect_stored_names(o, out);
            }
            _ => {}
        }
    }
}

/// warp's `lower_unrolled_continues`: in an unrolled iteration, `continue`
/// becomes `active = False` and the statements after a possible continue run
/// under `if active:`.
fn lower_unrolled_continues<'a>(
    body: &[Stmt<'a>],
    active: &'a str,
    arena: &'a bumpalo::Bump,
) -> (&'a [Stmt<'a>], bool) {
    let mut result = bumpalo::collections::Vec::new_in(arena);
    for (index, stmt) in body.iter().enumerate() {
        if matches!(stmt.kind, StmtKind::Continue) {
            let target = Expr {
                kind: ExprKind::Name(active),
                pos: stmt.pos,
            };
            let value = Expr {
                kind: ExprKind::Constant(Constant::Bool(false)),
                pos: stmt.pos,
            };
            result.push(Stmt {
                kind: StmtKind::Assign(std::slice::from_ref(arena.alloc(target)), value),
                pos: stmt.pos,
            });
            return (result.into_bump_slice(), true);
        }
        let mut may_continue = false;
        if let StmtKind::If(test, b, o) = &stmt.kind {
            let (b2, bc) = lower_unrolled_continues(b, active, arena);
            let (o2, oc) = lower_unrolled_continues(o, active, arena);
            may_continue = bc || oc;
            result.push(Stmt {
                kind: StmtKind::If(test.clone(), b2, o2),
                pos: stmt.pos,
            });
        } else {
            result.push(stmt.clone());
        }
        if may_continue {
            let (tail, _) = lower_unrolled_continues(&body[index + 1..], active, arena);
            if !tail.is_empty() {
                let pos = body[index + 1].pos;
                let test = Expr {
                    kind: ExprKind::Name(active),
                    pos,
                };
                result.push(Stmt {
                    kind: StmtKind::If(test, tail, &[]),
                    pos,
                });
            }
            return (result.into_bump_slice(), true);
        }
    }
    (result.into_bump_slice(), false)
}

/// The source text of the simple statement `text` starts with, up to a
/// comment, a `;` or the end of the line (None if it goes on to the next line).
fn statement_segment(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    let mut end = bytes.len();
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'#' | b';' => {
                    end = i;
                    break;
                }
                _ => {}
            },
        }
        i += 1;
    }
    let segment = text[..end].trim_end();
    if depth > 0 || quote.is_some() || segment.ends_with('\\') {
        return None;
    }
    Some(segment)
}

/// The number of elements a starred vector, quaternion or matrix (rows) unpacks to.
fn composite_length(t: &Type) -> Option<i128> {
    match t {
        Type::Vector(n, _) | Type::Matrix(n, _, _) | Type::IntTuple(n) => Some(*n as i128),
        Type::Quat(_) => Some(4),
        Type::Tuple(id) => Some(id.elems().len() as i128),
        _ => None,
    }
}

/// Element types warp updates without atomics (`int8`, `uint8`, `int16`, `uint16`).
fn is_non_atomic(s: Scalar) -> bool {
    matches!(
        s,
        Scalar::Int8 | Scalar::UInt8 | Scalar::Int16 | Scalar::UInt16
    )
}

/// The native atomic for `op` on a slot of type `ty`, if it has one
/// (warp's `_is_supported_atomic_slot_type`).
fn slot_atomic(ty: &Type, op: BinOp) -> Option<&'static str> {
    let s = ty.value()?.dtype();
    let ints = matches!(
        s,
        Scalar::Int32 | Scalar::UInt32 | Scalar::Int64 | Scalar::UInt64
    );
    match op {
        BinOp::Add | BinOp::Sub if ints || s.is_float() => {
            Some(if op == BinOp::Add { "add" } else { "sub" })
        }
        BinOp::BitAnd if ints => Some("and"),
        BinOp::BitOr if ints => Some("or"),
        BinOp::BitXor if ints => Some("xor"),
        _ => None,
    }
}

fn binop_builtin(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mult => "mul",
        BinOp::Div => "div",
        BinOp::FloorDiv => "floordiv",
        BinOp::Mod => "mod",
        BinOp::Pow => "pow",
        // warp 1.19 spells `@` as its `mul` (codegen.py: builtin_operators).
        BinOp::MatMult => "mul",
        BinOp::LShift => "lshift",
        BinOp::RShift => "rshift",
        BinOp::BitAnd => "bit_and",
        BinOp::BitOr => "bit_or",
        BinOp::BitXor => "bit_xor",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_line_is_trim_and_char_count() {
        for line in [
            "",
            "   ",
            "    x = a[i] + 1.0  # c",
            "\t\x0b\x0c y \r",
            "\u{a0} z\u{2003}",
            "  é = 1  ",
        ] {
            let t = line.trim();
            assert_eq!(trim_line(line), (t, t.chars().count()), "{line:?}");
        }
    }

    #[test]
    fn symbols_rebind_in_place_and_tell_names_apart() {
        for (a, b) in [("i", "j"), ("ab", "ba"), ("x_1", "x_2"), ("value", "valve")] {
            assert_ne!(name_key(a), name_key(b), "{a} {b}");
        }
        let mut syms = vec![];
        for (i, n) in ["tid", "x", "acc", "a_long_name_here", "a_long_name_hers"]
            .iter()
            .enumerate()
        {
            syms.push(Symbol {
                key: name_key(n),
                name: n,
                var: VarId(i),
            });
        }
        assert_eq!(find_symbol(&syms, "acc"), Some(VarId(2)));
        assert_eq!(find_symbol(&syms, "a_long_name_hers"), Some(VarId(4)));
        assert_eq!(find_symbol(&syms, "wp"), None);
    }

    #[test]
    fn variable_names_from_the_table_and_beyond_it() {
        for index in [
            0,
            1,
            9,
            10,
            99,
            100,
            1234,
            NAMED_LOCALS - 1,
            NAMED_LOCALS,
            10_000,
        ] {
            let v = VarInfo::local(index, Type::Scalar(Scalar::Float32), None);
            let label = index.to_string();
            assert_eq!(v.label(), label);
            assert_eq!(v.name(), format!("var_{label}"));
            assert_eq!(v.adj(), format!("adj_{label}"));
            assert_eq!(
                matches!(v.names, Cow::Borrowed(_)),
                index < NAMED_LOCALS,
                "{index}"
            );
        }
        let arg = VarInfo::new("positions", Type::Scalar(Scalar::Int32), None);
        assert_eq!(
            (arg.name(), arg.adj(), arg.label()),
            ("var_positions", "adj_positions", "positions")
        );
    }
}
