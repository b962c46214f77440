//! Syntax tree for Python, shaped like CPython's `ast` where the lowering looks
//! (so warp's visitor order can be followed node for node); constructs the
//! lowering never supports are kept as `Other` with their name and position.

/// An identifier: stored inline up to 24 bytes (every name the generator
/// writes, and nearly every one people do), so the parser allocates nothing
/// for the many names of a kernel.
pub type Ident = compact_str::CompactString;

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
pub enum Constant {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
    Ellipsis,
    /// Imaginary and bytes literals: parsed, never lowered.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Keyword {
    /// `None` for `**kwargs`.
    pub arg: Option<String>,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Name(Ident),
    Constant(Constant),
    Attribute(Box<Expr>, Ident),
    /// `value[slice]`; a multi-index `a[i, j]` has a `Tuple` slice as in CPython.
    /// (value, slice) in one allocation.
    Subscript(Box<[Expr; 2]>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Expr>, Vec<Expr>, Vec<Keyword>),
    Starred(Box<Expr>),
    /// (left, right) in one allocation: a binary operation is the most
    /// frequent node, and one box for both operands halves its allocations.
    BinOp(Box<[Expr; 2]>, BinOp),
    UnaryOp(UnaryOp, Box<Expr>),
    /// `true` for `and`.
    BoolOp(bool, Vec<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// test, body, orelse
    IfExp(Box<Expr>, Box<Expr>, Box<Expr>),
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// Dicts, sets, comprehensions, lambdas, f-strings, await, yield, walrus: the
    /// CPython node name, for "not supported" messages.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: String,
    pub annotation: Option<Expr>,
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    pub args: Vec<Arg>,
    /// True when the signature has defaults, `*args`, `**kwargs` or keyword-only parameters.
    pub has_complex_args: bool,
    pub returns: Option<Expr>,
    pub decorators: Vec<Expr>,
    pub body: Vec<Stmt>,
    /// Line of the first decorator (or of `def` without decorators): where
    /// Python's `inspect` starts the function's source.
    pub first_line: usize,
    /// One past the last line of the body.
    pub end_line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    Assign(Vec<Expr>, Expr),
    AugAssign(Expr, BinOp, Expr),
    AnnAssign(Expr, Expr, Option<Expr>),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>, Vec<Stmt>),
    For(Expr, Expr, Vec<Stmt>, Vec<Stmt>),
    Return(Option<Expr>),
    Pass,
    Break,
    Continue,
    Assert(Expr, Option<Expr>),
    FunctionDef(Box<FunctionDef>),
    /// `import a.b as c, d`: (dotted module, alias) pairs.
    Import(Vec<(String, Option<String>)>),
    /// `from a.b import c as d, e`: module and (name, alias) pairs.
    ImportFrom(String, Vec<(String, Option<String>)>),
    /// Import, class, try, with, raise, global, del, match, ...: the CPython node name.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub pos: Pos,
}

/// A parsed file: its top-level statements and the source lines (for comments).
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub body: Vec<Stmt>,
}
