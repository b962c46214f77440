//! Syntax tree for Python, shaped like CPython's `ast` where the lowering looks
//! (so warp's visitor order can be followed node for node); constructs the
//! lowering never supports are kept as `Other` with their name and position.
//!
//! A tree lives in an arena (`bumpalo::Bump`, see [`with_arena`]): its nodes
//! and lists are references into it and its names borrow the source, so
//! parsing a kernel is bump allocation and dropping its tree is free. A box
//! and a vector per node were ~120 allocations a sample and a recursive drop.

use bumpalo::Bump;
use std::cell::RefCell;

/// An identifier, borrowed from the source.
pub type Ident<'a> = &'a str;

thread_local! {
    static ARENA: RefCell<Bump> = RefCell::new(Bump::with_capacity(64 << 10));
}

/// Runs `f` with this thread's syntax-tree arena, emptied first (its memory is
/// kept for the next tree). Not reentrant: `f` must not call it again.
pub fn with_arena<R>(f: impl FnOnce(&Bump) -> R) -> R {
    ARENA.with_borrow_mut(|arena| {
        arena.reset();
        f(arena)
    })
}

/// A 1-based source position (column in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mult,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMult,
    LShift,
    RShift,
    BitAnd,
    BitOr,
    BitXor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    LtE,
    Gt,
    GtE,
    Eq,
    NotEq,
    Is,
    IsNot,
    In,
    NotIn,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Constant<'a> {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(&'a str),
    None,
    Ellipsis,
    /// Imaginary and bytes literals: parsed, never lowered.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Keyword<'a> {
    /// `None` for `**kwargs`.
    pub arg: Option<&'a str>,
    pub value: Expr<'a>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind<'a> {
    Name(Ident<'a>),
    Constant(Constant<'a>),
    Attribute(&'a Expr<'a>, Ident<'a>),
    /// `value[slice]`; a multi-index `a[i, j]` has a `Tuple` slice as in CPython.
    Subscript(&'a [Expr<'a>; 2]),
    Slice(
        Option<&'a Expr<'a>>,
        Option<&'a Expr<'a>>,
        Option<&'a Expr<'a>>,
    ),
    Call(&'a Expr<'a>, &'a [Expr<'a>], &'a [Keyword<'a>]),
    Starred(&'a Expr<'a>),
    /// (left, right)
    BinOp(&'a [Expr<'a>; 2], BinOp),
    UnaryOp(UnaryOp, &'a Expr<'a>),
    /// `true` for `and`.
    BoolOp(bool, &'a [Expr<'a>]),
    Compare(&'a Expr<'a>, &'a [(CmpOp, Expr<'a>)]),
    /// test, body, orelse
    IfExp(&'a Expr<'a>, &'a Expr<'a>, &'a Expr<'a>),
    Tuple(&'a [Expr<'a>]),
    List(&'a [Expr<'a>]),
    /// Dicts, sets, comprehensions, lambdas, f-strings, await, yield, walrus: the
    /// CPython node name, for "not supported" messages.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr<'a> {
    pub kind: ExprKind<'a>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Arg<'a> {
    pub name: &'a str,
    pub annotation: Option<Expr<'a>>,
    /// The default value (`x: float = 1.0`).
    pub default: Option<Expr<'a>>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef<'a> {
    pub name: &'a str,
    pub args: &'a [Arg<'a>],
    /// True when the signature has `*args`, `**kwargs`, `/` or keyword-only parameters.
    pub has_complex_args: bool,
    /// True when a parameter has a default value.
    pub has_defaults: bool,
    pub returns: Option<Expr<'a>>,
    pub decorators: &'a [Expr<'a>],
    pub body: &'a [Stmt<'a>],
    /// Line of the first decorator (or of `def` without decorators): where
    /// Python's `inspect` starts the function's source.
    pub first_line: usize,
    /// One past the last line of the body.
    pub end_line: usize,
}

/// A class definition (`@wp.struct class Name: ...`, or a plain class).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef<'a> {
    pub name: &'a str,
    /// The base classes (`IntEnum`, `enum.IntFlag`, ...).
    pub bases: &'a [Expr<'a>],
    pub decorators: &'a [Expr<'a>],
    pub body: &'a [Stmt<'a>],
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind<'a> {
    Expr(Expr<'a>),
    Assign(&'a [Expr<'a>], Expr<'a>),
    AugAssign(Expr<'a>, BinOp, Expr<'a>),
    AnnAssign(Expr<'a>, Expr<'a>, Option<Expr<'a>>),
    If(Expr<'a>, &'a [Stmt<'a>], &'a [Stmt<'a>]),
    While(Expr<'a>, &'a [Stmt<'a>], &'a [Stmt<'a>]),
    For(Expr<'a>, Expr<'a>, &'a [Stmt<'a>], &'a [Stmt<'a>]),
    Return(Option<Expr<'a>>),
    Pass,
    Break,
    Continue,
    Assert(Expr<'a>, Option<Expr<'a>>),
    FunctionDef(&'a FunctionDef<'a>),
    /// A class whose decorator ends in `.struct` / `struct` (a `@wp.struct`),
    /// or an undecorated top-level class whose body parses (kernels read its
    /// attributes as constants): its body is parsed; other classes are
    /// `Other("ClassDef")`.
    ClassDef(&'a ClassDef<'a>),
    /// `import a.b as c, d`: (dotted module, alias) pairs.
    Import(&'a [(&'a str, Option<&'a str>)]),
    /// `from a.b import c as d, e`: module and (name, alias) pairs.
    ImportFrom(&'a str, &'a [(&'a str, Option<&'a str>)]),
    /// Import, class, try, with, raise, global, del, match, ...: the CPython node name.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt<'a> {
    pub kind: StmtKind<'a>,
    pub pos: Pos,
}

/// A parsed file: its top-level statements and the source lines (for comments).
#[derive(Debug, Clone, PartialEq)]
pub struct Module<'a> {
    pub body: &'a [Stmt<'a>],
}
