//! The guarantees of synthesized kernels, checked on the *parsed* module
//! (src/lang), not on the builder's bookkeeping:
//!
//! - `dead_value`: every parameter, thread index and local of the kernel
//!   (and every parameter and local of a `@wp.func`) influences an output: an
//!   array write, an atomic, a tile store, a `return` of a func, or the
//!   control flow around one. Loop variables are exempt (`for _ in range(n)`).
//! - `known_condition`: no comparison or condition whose value is known
//!   before running: one side the same expression as the other, no variable
//!   at all, or decided by the value ranges (interval arithmetic from the
//!   parameter ranges of the launch spec).
//! - `race`: a non-atomic array write goes to the thread's own element (the
//!   index is exactly the thread indices, or a slot returned by an
//!   `atomic_add` on a counter); an array written that way is read only at
//!   the own element and is not also updated atomically; tile stores use an
//!   offset made from the thread (tile) indices; funcs never write arrays.
//! - `domain`: a divisor (`/`, `//`, `%`) is never zero, `wp.sqrt` args never
//!   negative, `wp.log` args and `wp.pow` bases positive, `wp.acos`/`wp.asin`
//!   args within [-1, 1], `wp.exp` args at most 80 — on the declared ranges.
//!
//! Ranges are intervals per component, computed flow-insensitively (a local
//! ranges over every value assigned to it anywhere; loops widen to the whole
//! line), so they over-approximate and never refuse a kernel by mistake on
//! the domain rule; a helper func is evaluated with its call's argument ranges.

use super::kernel::{Param, ParamKind, Role};
// `a == b` for names, without a call of `memcmp`: the range and liveness
// passes compare names of one to a few bytes (`i`, `acc`) many times a
// statement.
use crate::lang::ast::{
    BinOp, CmpOp, Constant, Expr, ExprKind, FunctionDef, Stmt, StmtKind, UnaryOp,
};
use crate::text::same as eq;

/// Number of rules.
pub const RULES: usize = 5;
/// Rule names, by [`Rule`] number.
pub const RULE_NAMES: [&str; RULES] = [
    "unparsed",
    "dead_value",
    "known_condition",
    "race",
    "domain",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Unparsed = 0,
    Dead = 1,
    Known = 2,
    Race = 3,
    Domain = 4,
}

/// An interval (per component for vectors and matrices).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Iv {
    lo: f64,
    hi: f64,
}

const TOP: Iv = Iv {
    lo: f64::NEG_INFINITY,
    hi: f64::INFINITY,
};

impl Iv {
    fn c(x: f64) -> Iv {
        Iv { lo: x, hi: x }
    }
    fn new(lo: f64, hi: f64) -> Iv {
        if lo.is_nan() || hi.is_nan() {
            TOP
        } else {
            Iv { lo, hi }
        }
    }
    fn union(self, o: Iv) -> Iv {
        Iv::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }
    fn add(self, o: Iv) -> Iv {
        Iv::new(self.lo + o.lo, self.hi + o.hi)
    }
    fn neg(self) -> Iv {
        Iv::new(-self.hi, -self.lo)
    }
    fn mul(self, o: Iv) -> Iv {
        let ps = [
            mulz(self.lo, o.lo),
            mulz(self.lo, o.hi),
            mulz(self.hi, o.lo),
            mulz(self.hi, o.hi),
        ];
        Iv::new(
            ps.iter().copied().fold(f64::INFINITY, f64::min),
            ps.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    fn square(self) -> Iv {
        let m = self.lo.abs().max(self.hi.abs());
        let lo = if self.lo <= 0.0 && self.hi >= 0.0 {
            0.0
        } else {
            self.lo.abs().min(self.hi.abs())
        };
        Iv::new(lo * lo, m * m)
    }
    fn nonzero(self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }
    fn div(self, o: Iv) -> Iv {
        if !o.nonzero() {
            return TOP;
        }
        self.mul(Iv::new(1.0 / o.hi, 1.0 / o.lo))
    }
    fn abs(self) -> Iv {
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            Iv::new(0.0, self.hi.max(-self.lo))
        }
    }
    fn mag(self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }
    fn min(self, o: Iv) -> Iv {
        Iv::new(self.lo.min(o.lo), self.hi.min(o.hi))
    }
    fn max(self, o: Iv) -> Iv {
        Iv::new(self.lo.max(o.lo), self.hi.max(o.hi))
    }
    fn widen1(self) -> Iv {
        Iv::new(self.lo - 1.0, self.hi + 1.0)
    }
}

/// `0 * inf = 0` (a zero factor stays zero).
fn mulz(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 { 0.0 } else { a * b }
}

/// [`check`] with the parameters and launch sizes read back from a sample's
/// `launch_spec` JSON (what a user of the data sees).
pub fn check_spec(src: &str, spec: &str) -> Result<(), Rule> {
    use super::kernel::Ty;
    let v: serde_json::Value = serde_json::from_str(spec).map_err(|_| Rule::Unparsed)?;
    let dim: Vec<usize> = v["dim"]
        .as_array()
        .ok_or(Rule::Unparsed)?
        .iter()
        .map(|d| d.as_u64().unwrap_or(1) as usize)
        .collect();
    let range = |p: &serde_json::Value| {
        let r = p["range"].as_array();
        let g = |n: usize| {
            r.and_then(|r| r.get(n))
                .and_then(|x| x.as_f64())
                .unwrap_or(0.0)
        };
        (g(0), g(1))
    };
    let ty = |d: &str| if d == "int32" { Ty::I } else { Ty::F };
    let mut params = Vec::new();
    for p in v["params"].as_array().ok_or(Rule::Unparsed)? {
        let name = p["name"].as_str().unwrap_or("").to_string();
        let (lo, hi) = range(p);
        let kind = match p["kind"].as_str().unwrap_or("") {
            "array" => ParamKind::Array {
                ty: ty(p["dtype"].as_str().unwrap_or("")),
                shape: Vec::new(),
                role: match p["role"].as_str().unwrap_or("") {
                    "in" => Role::In,
                    "inout" => Role::InOut,
                    "out" => Role::Out,
                    _ => Role::Accum,
                },
                init: None,
                unit: false,
                slots: None,
            },
            "scalar" => ParamKind::Scalar {
                ty: ty(p["dtype"].as_str().unwrap_or("")),
            },
            "struct" => ParamKind::Struct {
                name: p["struct"].as_str().unwrap_or("").to_string(),
                fields: p["fields"]
                    .as_array()
                    .map(|fs| {
                        fs.iter()
                            .map(|f| {
                                let (lo, hi) = range(f);
                                let n = f["name"].as_str().unwrap_or("").to_string();
                                (n, ty(f["dtype"].as_str().unwrap_or("")), lo, hi)
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            _ => ParamKind::Mesh {
                points: 0,
                triangles: 0,
            },
        };
        params.push(Param { name, kind, lo, hi });
    }
    check(src, &params, &dim)
}

/// Checks the module `src` (one `@wp.kernel`, helpers before it) against
/// the rules, with the kernel's parameters (ranges, roles) and launch sizes.
pub fn check(src: &str, params: &[Param], dim: &[usize]) -> Result<(), Rule> {
    crate::lang::ast::with_arena(|arena| {
        let module = crate::lang::parse_module(src, arena).map_err(|_| Rule::Unparsed)?;
        check_module(&module, params, dim)
    })
}

/// [`check`] on a module already parsed (the synthesizer hands the same tree
/// to the lowering afterwards).
pub fn check_module<'a>(
    module: &crate::lang::ast::Module<'a>,
    params: &[Param],
    dim: &[usize],
) -> Result<(), Rule> {
    {
        let mut cx = Cx {
            params,
            // Parameter names are distinct (Python refuses a repeated one).
            arrays: params
                .iter()
                .filter(|p| matches!(p.kind, ParamKind::Array { .. }))
                .map(|p| p.name.as_str())
                .collect(),
            dim,
            funcs: Vec::new(),
            consts: Vec::new(),
            tid: Vec::new(),
            ids: Ids::default(),
            env: Vec::new(),
            checking: false,
            err: None,
            depth: 0,
            returns: Vec::new(),
            reads: None,
        };
        let mut kernel = None;
        for s in module.body {
            match &s.kind {
                StmtKind::FunctionDef(f) => {
                    if decorator_is(f, "kernel") {
                        kernel = Some(*f);
                    } else {
                        cx.funcs.push(*f);
                    }
                }
                StmtKind::Assign(targets, value) => {
                    if let (ExprKind::Name(n), ExprKind::Call(_, args, _)) =
                        (&targets[0].kind, &value.kind)
                        && let Some(v) = args.first().and_then(const_value)
                    {
                        cx.consts.push((n, v));
                    }
                }
                _ => {}
            }
        }
        let kernel = kernel.ok_or(Rule::Unparsed)?;
        let mut stmts = Vec::new();
        for n in 0..cx.funcs.len() {
            let f = cx.funcs[n];
            stmts.clear();
            walk(f.body, &mut stmts);
            let args: Vec<&str> = f.args.iter().map(|a| a.name).collect();
            cx.liveness(&stmts, &args, false)?;
        }
        cx.kernel(kernel)
    }
}

fn decorator_is(f: &FunctionDef, what: &str) -> bool {
    f.decorators.iter().any(|d| match &d.kind {
        ExprKind::Attribute(_, a) => *a == what,
        ExprKind::Call(c, _, _) => matches!(&c.kind, ExprKind::Attribute(_, a) if *a == what),
        _ => false,
    })
}

fn const_value(e: &Expr) -> Option<f64> {
    match &e.kind {
        ExprKind::Constant(Constant::Int(v)) => Some(*v as f64),
        ExprKind::Constant(Constant::Float(v)) => Some(*v),
        ExprKind::UnaryOp(UnaryOp::Neg, x) => const_value(x).map(|v| -v),
        _ => None,
    }
}

struct Cx<'p, 'a> {
    params: &'p [Param],
    /// The names of the array parameters: the passes ask of a name at every
    /// assignment and array access whether it is one (a search of `params`
    /// compared every parameter's name).
    arrays: Names<'p>,
    dim: &'p [usize],
    funcs: Vec<&'a FunctionDef<'a>>,
    consts: Vec<(&'a str, f64)>,
    tid: Vec<&'a str>,
    /// The names of the module, numbered for [`Cx::liveness`] and [`Env`].
    ids: Ids<'a>,
    /// Ranges of the names in scope (params, tid, locals) of the function
    /// being evaluated.
    env: Env,
    checking: bool,
    err: Option<Rule>,
    depth: u32,
    /// Return ranges of helper funcs worked out outside the checking pass,
    /// by (func, call depth, argument ranges bit for bit): the range
    /// fixpoint evaluates each call once per round, and each evaluation
    /// ran the func's own fixpoint again. Nothing else a call reads changes
    /// during a check, and outside the checking pass it has no effect.
    returns: Vec<(&'a FunctionDef<'a>, u32, ArgBits, Iv)>,
    /// While [`Cx::ranges`] evaluates a statement: the names the
    /// evaluation looked up in the env.
    reads: Option<Reads>,
}

/// The names (by [`Ids`] number) one evaluation read, found or not: a
/// statement reads a few, kept in line rather than in an allocation per
/// statement per fixpoint.
type Reads = smallvec::SmallVec<[u32; 8]>;

/// A list of names a pass collects from a statement or an expression (a
/// few at most): on the stack, where a `Vec` grew by reallocating at its
/// first, fifth and ninth name, for each list of each check.
type Names<'a> = smallvec::SmallVec<[&'a str; 16]>;

/// The arrays a statement reads, each with its index (see [`Cx::scan`]).
type ArrayReads<'a> = smallvec::SmallVec<[(&'a str, &'a Expr<'a>); 16]>;

/// The (name, range) pairs one statement assigns (see [`Cx::assigns`]).
type Assigned<'a> = smallvec::SmallVec<[(&'a str, Iv); 8]>;

/// The range of each name in scope, by [`Ids`] number (`None`: not in
/// scope). Found by number, not by a compare of each name in scope: the
/// range passes look up a name at every use.
type Env = Vec<Option<Iv>>;

/// Sets `n`'s range in `env`.
fn bind(env: &mut Env, n: usize, iv: Iv) {
    if env.len() <= n {
        env.resize(n + 1, None);
    }
    env[n] = Some(iv);
}

/// `list.contains(&n)` by [`eq`].
#[inline]
fn has(list: &[&str], n: &str) -> bool {
    list.iter().any(|m| eq(m, n))
}

/// A call's argument ranges as bits (so `-0.0` and `0.0` differ).
type ArgBits = smallvec::SmallVec<[u64; 8]>;

/// Structural equality of two expressions (positions ignored).
fn same(a: &Expr, b: &Expr) -> bool {
    use ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Name(x), K::Name(y)) => eq(x, y),
        (K::Constant(x), K::Constant(y)) => x == y,
        (K::Attribute(x, n), K::Attribute(y, m)) => eq(n, m) && same(x, y),
        (K::Subscript(x), K::Subscript(y)) => same(&x[0], &y[0]) && same(&x[1], &y[1]),
        (K::Call(f, xs, kx), K::Call(g, ys, ky)) => {
            same(f, g)
                && xs.len() == ys.len()
                && xs.iter().zip(ys.iter()).all(|(x, y)| same(x, y))
                && kx.len() == ky.len()
                && kx
                    .iter()
                    .zip(ky.iter())
                    .all(|(x, y)| x.arg == y.arg && same(&x.value, &y.value))
        }
        (K::BinOp(x, o), K::BinOp(y, p)) => o == p && same(&x[0], &y[0]) && same(&x[1], &y[1]),
        (K::UnaryOp(o, x), K::UnaryOp(p, y)) => o == p && same(x, y),
        (K::Tuple(xs), K::Tuple(ys)) | (K::List(xs), K::List(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| same(x, y))
        }
        (K::IfExp(a1, b1, c1), K::IfExp(a2, b2, c2)) => {
            same(a1, a2) && same(b1, b2) && same(c1, c2)
        }
        _ => false,
    }
}

/// Every name read in `e` (not attribute names, not `wp`).
fn names<'a>(e: &Expr<'a>, out: &mut Names<'a>) {
    use ExprKind as K;
    match &e.kind {
        K::Name(n) => {
            if *n != "wp" {
                out.push(n)
            }
        }
        K::Attribute(x, _) => names(x, out),
        K::Subscript(x) => {
            names(&x[0], out);
            names(&x[1], out);
        }
        K::Call(f, args, kws) => {
            // The callee's name is not a value (wp.sin, a helper func).
            if !matches!(f.kind, K::Name(_) | K::Attribute(..)) {
                names(f, out);
            }
            for a in args.iter() {
                names(a, out);
            }
            for k in kws.iter() {
                names(&k.value, out);
            }
        }
        K::BinOp(x, _) => {
            names(&x[0], out);
            names(&x[1], out);
        }
        K::UnaryOp(_, x) | K::Starred(x) => names(x, out),
        K::BoolOp(_, xs) | K::Tuple(xs) | K::List(xs) => {
            for x in xs.iter() {
                names(x, out);
            }
        }
        K::Compare(l, cs) => {
            names(l, out);
            for (_, r) in cs.iter() {
                names(r, out);
            }
        }
        K::IfExp(a, b, c) => {
            names(a, out);
            names(b, out);
            names(c, out);
        }
        K::Slice(a, b, c) => {
            for x in [a, b, c].into_iter().flatten() {
                names(x, out);
            }
        }
        K::Constant(_) | K::Other(_) => {}
    }
}

/// The name at the root of an assignment target (`v`, `v[0]`, `v.x`, `m[i][j]`).
fn root<'a>(e: &Expr<'a>) -> Option<&'a str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        ExprKind::Subscript(x) => root(&x[0]),
        ExprKind::Attribute(x, _) => root(x),
        _ => None,
    }
}

fn call_name<'a>(f: &Expr<'a>) -> Option<(&'a str, bool)> {
    match &f.kind {
        ExprKind::Attribute(m, n) if matches!(m.kind, ExprKind::Name("wp")) => Some((n, true)),
        ExprKind::Name(n) => Some((n, false)),
        _ => None,
    }
}

/// Whether callee `f` is `name` (`wp.name` if `wp`), by [`eq`] (`==` on
/// the pair calls `memcmp`).
fn is_call(f: &Expr, name: &str, wp: bool) -> bool {
    matches!(call_name(f), Some((n, w)) if w == wp && eq(n, name))
}

const ATOMICS: &[&str] = &[
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_exch",
    "atomic_cas",
];

/// Statements of a body, recursively, in order (blocks after their header).
fn walk<'a, 'b>(body: &'b [Stmt<'a>], out: &mut Vec<&'b Stmt<'a>>) {
    walk_spans(body, out, &mut Vec::new());
}

/// [`walk`], also listing each loop's span: (index of the loop statement,
/// one past its last body statement).
fn walk_spans<'a, 'b>(
    body: &'b [Stmt<'a>],
    out: &mut Vec<&'b Stmt<'a>>,
    spans: &mut Vec<(usize, usize)>,
) {
    for s in body {
        let at = out.len();
        out.push(s);
        match &s.kind {
            StmtKind::If(_, b, e) => {
                walk_spans(b, out, spans);
                walk_spans(e, out, spans);
            }
            StmtKind::While(_, b, e) | StmtKind::For(_, _, b, e) => {
                walk_spans(b, out, spans);
                walk_spans(e, out, spans);
                spans.push((at, out.len()));
            }
            _ => {}
        }
    }
}

/// The statements whose assignments can reach statement `p` — those before
/// it, and those of every loop around it — are a prefix of the walk: loop
/// spans nest, so the loops around `p` cover the outermost one's span, which
/// starts at or before `p`. Returns the prefix's length.
fn reaching_end(spans: &[(usize, usize)], p: usize) -> usize {
    spans
        .iter()
        .filter(|&&(ls, le)| ls <= p && p < le)
        .fold(p, |end, &(_, le)| end.max(le))
}

/// Whether a statement (block) has an effect — a store, a call statement,
/// a return/break/continue, or an assignment to a live name — as what
/// decides it: `true` if it always has one, else the roots it assigns
/// (pushed to `watch`), of which a live one gives it one.
fn effect_watch<'a>(s: &Stmt<'a>, watch: &mut Names<'a>, arrays: &[&str]) -> bool {
    match &s.kind {
        StmtKind::Expr(_)
        | StmtKind::Return(_)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Assert(..) => true,
        StmtKind::Assign(ts, _) => {
            let mut always = false;
            for t in ts.iter() {
                always |= target_watch(t, watch, arrays);
            }
            always
        }
        StmtKind::AugAssign(t, _, _) | StmtKind::AnnAssign(t, _, _) => {
            target_watch(t, watch, arrays)
        }
        StmtKind::If(_, b, e) | StmtKind::While(_, b, e) | StmtKind::For(_, _, b, e) => {
            let mut always = false;
            for s in b.iter().chain(e.iter()) {
                always |= effect_watch(s, watch, arrays);
            }
            always
        }
        _ => false,
    }
}

/// [`effect_watch`] of an assignment target: `true` if it stores to an
/// array (one of `arrays`), else its roots into `watch` (an assignment to a
/// live one counts).
fn target_watch<'a>(t: &Expr<'a>, watch: &mut Names<'a>, arrays: &[&str]) -> bool {
    match &t.kind {
        ExprKind::Tuple(xs) => {
            let mut always = false;
            for x in xs.iter() {
                always |= target_watch(x, watch, arrays);
            }
            always
        }
        _ => match root(t) {
            Some(r) if has(arrays, r) => true,
            Some(r) => {
                watch.push(r);
                false
            }
            None => false,
        },
    }
}

/// Names numbered in order of first sight, so that sets of them are flags
/// and an env is a list by number. Found through a small open-addressing
/// table of [`key`]s: no general string hash, and for names of up to 8
/// bytes no compare of the texts at all (the range and liveness passes look
/// up a name at every use; a scan of the list cost more once a kernel had
/// a few dozen names).
struct Ids<'a> {
    names: Vec<&'a str>,
    /// (key, length, id + 1) of the name in each slot, id 0 for none; a
    /// power of two long, at most half full.
    slots: Vec<(u64, u32, u32)>,
}

impl Default for Ids<'_> {
    fn default() -> Self {
        Ids {
            names: Vec::with_capacity(64),
            slots: vec![(0, 0, 0); 128],
        }
    }
}

/// A name's key in [`Ids`]: a name of up to 8 bytes packed whole,
/// little-endian (the key and the length are the name), a longer one mixed
/// from its first and last 8 bytes (its text is compared too).
#[inline(always)]
fn key(n: &str) -> u64 {
    let b = n.as_bytes();
    let len = b.len();
    let u32_at =
        |at: usize| u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]));
    match len {
        0 => 0,
        // The first, middle and last byte are every byte.
        1..=3 => {
            u64::from(b[0])
                | u64::from(b[len / 2]) << (8 * (len / 2))
                | u64::from(b[len - 1]) << (8 * (len - 1))
        }
        // The first and last 4 bytes cover every byte (overlapping ones are equal).
        4..=8 => u32_at(0) | u32_at(len - 4) << (8 * (len - 4)),
        _ => {
            let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            u64_at(0) ^ u64_at(len - 8).rotate_left(29) ^ len as u64
        }
    }
}

impl<'a> Ids<'a> {
    /// The slot holding `n` (with key `k`), or the empty one where it would go.
    #[inline(always)]
    fn probe(&self, n: &str, k: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut s = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask;
        loop {
            let (sk, len, i) = self.slots[s];
            if i == 0
                || (sk == k
                    && len as usize == n.len()
                    && (n.len() <= 8 || eq(self.names[i as usize - 1], n)))
            {
                return s;
            }
            s = (s + 1) & mask;
        }
    }

    /// In line: a call saved and restored more registers than a lookup takes.
    #[inline(always)]
    fn id(&mut self, n: &'a str) -> usize {
        let k = key(n);
        let s = self.probe(n, k);
        match self.slots[s].2 {
            0 => self.add(n, k, s),
            i => i as usize - 1,
        }
    }

    /// Numbers `n` (key `k`, not in the table) in empty slot `s`.
    #[cold]
    fn add(&mut self, n: &'a str, k: u64, s: usize) -> usize {
        self.names.push(n);
        self.slots[s] = (k, n.len() as u32, self.names.len() as u32);
        if 2 * self.names.len() > self.slots.len() {
            self.slots = vec![(0, 0, 0); 2 * self.slots.len()];
            for i in 0..self.names.len() {
                let (n, k) = (self.names[i], key(self.names[i]));
                let s = self.probe(n, k);
                self.slots[s] = (k, n.len() as u32, i as u32 + 1);
            }
        }
        self.names.len() - 1
    }

    /// `n`'s id if it has one.
    fn find(&self, n: &str) -> Option<usize> {
        match self.slots[self.probe(n, key(n))].2 {
            0 => None,
            i => Some(i as usize - 1),
        }
    }
}

fn param<'p>(params: &'p [Param], name: &str) -> Option<&'p Param> {
    params.iter().find(|p| eq(&p.name, name))
}

/// What [`Cx::liveness`] needs of a statement, worked out once for all its
/// rounds: the names it reads (`reads`) when it has an effect, and whether
/// it has one (`always`, or one of `watch` live). Ranges index flat lists.
struct LiveStmt {
    always: bool,
    /// An assignment (not the `wp.tid()` line) whose locals in `watch`, the
    /// roots it assigns, must all end up live.
    assigns: bool,
    watch: std::ops::Range<usize>,
    reads: std::ops::Range<usize>,
}

impl<'p, 'a> Cx<'p, 'a> {
    fn param(&self, name: &str) -> Option<&'p Param> {
        param(self.params, name)
    }

    fn is_array(&self, name: &str) -> bool {
        has(&self.arrays, name)
    }

    fn kernel(&mut self, k: &'a FunctionDef<'a>) -> Result<(), Rule> {
        // Thread indices.
        if let Some(StmtKind::Assign(ts, v)) = k.body.first().map(|s| &s.kind)
            && matches!(&v.kind, ExprKind::Call(f, _, _) if is_call(f, "tid", true))
        {
            match &ts[0].kind {
                ExprKind::Name(n) => self.tid.push(n),
                ExprKind::Tuple(xs) => {
                    for x in xs.iter() {
                        if let ExprKind::Name(n) = x.kind {
                            self.tid.push(n);
                        }
                    }
                }
                _ => {}
            }
        }
        // Room for a typical kernel's statements, not a doubling every few.
        let mut stmts = Vec::with_capacity(64);
        let mut spans = Vec::new();
        walk_spans(k.body, &mut stmts, &mut spans);
        // Liveness over the kernel: params and tid must be live too.
        let arg_names: Vec<&'a str> = k.args.iter().map(|a| a.name).collect();
        self.liveness(&stmts, &arg_names, true)?;
        self.races(&stmts)?;
        // Ranges: params and thread indices. The liveness pass numbered
        // the body's names: room for all of them at once, where each
        // binding of a higher number grew the env again.
        self.env.clear();
        self.env.reserve(self.ids.names.len() + self.params.len());
        for p in self.params {
            let iv = match &p.kind {
                ParamKind::Array { role, .. } => {
                    if matches!(role, Role::In | Role::InOut) {
                        Iv::new(p.lo, p.hi)
                    } else {
                        TOP
                    }
                }
                ParamKind::Scalar { .. } => Iv::new(p.lo, p.hi),
                _ => TOP,
            };
            let id = self.ids.id(leak(&p.name, &arg_names));
            bind(&mut self.env, id, iv);
        }
        for (d, &t) in self.tid.clone().iter().enumerate() {
            let n = self.dim.get(d).copied().unwrap_or(1).max(1);
            let id = self.ids.id(t);
            bind(&mut self.env, id, Iv::new(0.0, (n - 1) as f64));
        }
        let base = self.env.clone();
        self.checking = true;
        let mut broken = vec![None; stmts.len()];
        let reached = self.ranges(&stmts, Some(&mut broken));
        self.final_pass(&stmts, &spans, &base, reached.then_some(&broken));
        match self.err {
            Some(r) => Err(r),
            None => Ok(()),
        }
    }

    /// Liveness fixpoint over `stmts` (every statement of a body); every name
    /// in `must` and every assigned local must end up live.
    fn liveness(
        &mut self,
        stmts: &[&Stmt<'a>],
        must: &[&'a str],
        kernel: bool,
    ) -> Result<(), Rule> {
        // In a func, a name is the func's own parameter or local, never one
        // of the kernel's arrays.
        let arrays: &[&str] = if kernel { &self.arrays } else { &[] };
        // Each statement's reads and effect are the same every round: they
        // are listed once, as name ids, and the rounds only flip flags (they
        // walked the expressions and scanned the live list anew each time).
        let ids = &mut self.ids;
        // A statement names a few (kernels average under 8): room for them
        // up front, not a doubling every few statements.
        let mut flat: Vec<usize> = Vec::with_capacity(8 * stmts.len());
        let mut info: Vec<LiveStmt> = Vec::with_capacity(stmts.len());
        let mut buf = Names::new();
        let mut watch = Names::new();
        for s in stmts {
            buf.clear();
            watch.clear();
            let assigns = match &s.kind {
                // The tid line is checked with `must`.
                StmtKind::Assign(_, v) => {
                    !matches!(&v.kind, ExprKind::Call(f, _, _) if is_call(f, "tid", true))
                }
                StmtKind::AugAssign(..) => true,
                _ => false,
            };
            let always = match &s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Assert(e, _) => {
                    names(e, &mut buf);
                    true
                }
                StmtKind::Assign(ts, v) => {
                    let mut always = false;
                    for t in ts.iter() {
                        always |= target_watch(t, &mut watch, arrays);
                    }
                    names(v, &mut buf);
                    for t in ts.iter() {
                        target_reads(t, &mut buf);
                    }
                    always
                }
                StmtKind::AugAssign(t, _, v) => {
                    let always = target_watch(t, &mut watch, arrays);
                    names(v, &mut buf);
                    target_reads(t, &mut buf);
                    always
                }
                StmtKind::If(c, _, _) | StmtKind::While(c, _, _) => {
                    let always = effect_watch(s, &mut watch, arrays);
                    names(c, &mut buf);
                    always
                }
                StmtKind::For(_, it, _, _) => {
                    let always = effect_watch(s, &mut watch, arrays);
                    names(it, &mut buf);
                    always
                }
                _ => false,
            };
            let w = flat.len();
            flat.extend(watch.iter().map(|&n| ids.id(n)));
            let r = flat.len();
            flat.extend(buf.iter().map(|&n| ids.id(n)));
            info.push(LiveStmt {
                always,
                assigns,
                watch: w..r,
                reads: r..flat.len(),
            });
        }
        let mut is_live = vec![false; ids.names.len()];
        // Liveness flows backwards, so the statements are visited last to
        // first: the least fixpoint is the same in any order, and this one
        // reaches it in a round or two (first to last took a round per link
        // of a dependency chain).
        loop {
            let mut changed = false;
            for st in info.iter().rev() {
                if st.always || flat[st.watch.clone()].iter().any(|&i| is_live[i]) {
                    for &i in &flat[st.reads.clone()] {
                        changed |= !is_live[i];
                        is_live[i] = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let live = |n: &str| ids.find(n).is_some_and(|i| is_live[i]);
        if !must.iter().all(|n| live(n)) || (kernel && !self.tid.iter().all(|t| live(t))) {
            return Err(Rule::Dead);
        }
        // Every local an assignment's targets assign is live: the roots
        // listed as its `watch` (arrays are not listed).
        let all_live = |st: &LiveStmt| flat[st.watch.clone()].iter().all(|&i| is_live[i]);
        if !info.iter().filter(|st| st.assigns).all(all_live) {
            return Err(Rule::Dead);
        }
        Ok(())
    }

    fn own(&self, idx: &Expr) -> bool {
        match &idx.kind {
            ExprKind::Name(n) => self.tid.len() == 1 && self.tid[0] == *n,
            ExprKind::Tuple(xs) => {
                xs.len() == self.tid.len()
                    && xs
                        .iter()
                        .zip(self.tid.iter())
                        .all(|(x, t)| matches!(x.kind, ExprKind::Name(n) if n == *t))
            }
            _ => false,
        }
    }

    fn races(&self, stmts: &[&Stmt<'a>]) -> Result<(), Rule> {
        // Locals that hold a unique slot (`slot = wp.atomic_add(count, 0, 1)`).
        let mut slots = Names::new();
        let mut plain = Names::new(); // written non-atomically
        let mut atomic = Names::new();
        let mut tile_stored = Names::new();
        for s in stmts {
            if let StmtKind::Assign(ts, v) = &s.kind
                && let (ExprKind::Name(n), ExprKind::Call(f, _, _)) = (&ts[0].kind, &v.kind)
                && is_call(f, "atomic_add", true)
            {
                slots.push(n);
            }
        }
        let mut exprs: Vec<&Expr<'a>> = Vec::with_capacity(stmts.len());
        for s in stmts {
            match &s.kind {
                StmtKind::Assign(ts, v) => {
                    for t in ts.iter() {
                        if let ExprKind::Subscript(x) = &t.kind
                            && let ExprKind::Name(a) = x[0].kind
                            && self.is_array(a)
                        {
                            let slot = matches!(x[1].kind, ExprKind::Name(n) if has(&slots, n));
                            if !self.own(&x[1]) && !slot {
                                return Err(Rule::Race);
                            }
                            plain.push(a);
                        }
                    }
                    exprs.push(v);
                }
                StmtKind::AugAssign(t, _, v) => {
                    if let ExprKind::Subscript(x) = &t.kind
                        && let ExprKind::Name(a) = x[0].kind
                        && self.is_array(a)
                    {
                        if self.own(&x[1]) {
                            plain.push(a);
                        } else {
                            atomic.push(a);
                        }
                    }
                    exprs.push(v);
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => exprs.push(e),
                StmtKind::If(c, _, _) | StmtKind::While(c, _, _) => exprs.push(c),
                StmtKind::For(_, it, _, _) => exprs.push(it),
                _ => {}
            }
        }
        // Atomics and tile stores, reads.
        let mut reads = ArrayReads::new();
        let mut passed = Names::new();
        for e in &exprs {
            self.scan(e, &mut atomic, &mut tile_stored, &mut reads, &mut passed)?;
        }
        for a in &plain {
            if has(&atomic, a) || has(&tile_stored, a) || has(&passed, a) {
                return Err(Rule::Race);
            }
        }
        for (a, idx) in &reads {
            if has(&plain, a) && !self.own(idx) {
                return Err(Rule::Race);
            }
            if has(&atomic, a) || has(&tile_stored, a) {
                return Err(Rule::Race);
            }
        }
        Ok(())
    }

    /// Collects atomics, tile stores, array reads and arrays passed to funcs in `e`.
    fn scan(
        &self,
        e: &Expr<'a>,
        atomic: &mut Names<'a>,
        tile_stored: &mut Names<'a>,
        reads: &mut ArrayReads<'a>,
        passed: &mut Names<'a>,
    ) -> Result<(), Rule> {
        use ExprKind as K;
        match &e.kind {
            K::Subscript(x) => {
                let x: &'a [Expr<'a>; 2] = x;
                if let K::Name(a) = x[0].kind
                    && self.is_array(a)
                {
                    reads.push((a, &x[1]));
                } else {
                    self.scan(&x[0], atomic, tile_stored, reads, passed)?;
                }
                self.scan(&x[1], atomic, tile_stored, reads, passed)?;
            }
            K::Call(f, args, kws) => {
                let name = call_name(f);
                let first_array = args.first().and_then(|a| match a.kind {
                    K::Name(n) if self.is_array(n) => Some(n),
                    _ => None,
                });
                match name {
                    Some((n, true)) if has(ATOMICS, n) => {
                        if let Some(a) = first_array {
                            atomic.push(a);
                        }
                        for a in args.iter().skip(1) {
                            self.scan(a, atomic, tile_stored, reads, passed)?;
                        }
                        return Ok(());
                    }
                    Some(("tile_store", true)) | Some(("tile_atomic_add", true)) => {
                        let Some(a) = first_array else {
                            return Err(Rule::Race);
                        };
                        if name == Some(("tile_store", true)) {
                            // The block's own tile: the offset uses every tile index.
                            let off = kws
                                .iter()
                                .find(|k| k.arg == Some("offset"))
                                .map(|k| &k.value)
                                .or(args.get(2));
                            let Some(off) = off else {
                                return Err(Rule::Race);
                            };
                            let mut ns = Names::new();
                            names(off, &mut ns);
                            if !self.tid.iter().all(|t| has(&ns, t)) {
                                return Err(Rule::Race);
                            }
                            tile_stored.push(a);
                        } else {
                            atomic.push(a);
                        }
                        for a in args.iter().skip(1) {
                            self.scan(a, atomic, tile_stored, reads, passed)?;
                        }
                        for k in kws.iter() {
                            self.scan(&k.value, atomic, tile_stored, reads, passed)?;
                        }
                        return Ok(());
                    }
                    Some((n, false)) => {
                        // A helper func: arrays passed to it are read anywhere.
                        let _ = n;
                        for a in args.iter() {
                            if let K::Name(x) = a.kind
                                && self.is_array(x)
                            {
                                passed.push(x);
                            }
                        }
                    }
                    Some((_, true)) => {
                        // wp.tile_load(a, ...), wp.mesh_query..., reads of whole arrays.
                        for a in args.iter() {
                            if let K::Name(x) = a.kind
                                && self.is_array(x)
                            {
                                passed.push(x);
                            }
                        }
                    }
                    None => {}
                }
                for a in args.iter() {
                    self.scan(a, atomic, tile_stored, reads, passed)?;
                }
                for k in kws.iter() {
                    self.scan(&k.value, atomic, tile_stored, reads, passed)?;
                }
            }
            K::Attribute(x, _) | K::UnaryOp(_, x) | K::Starred(x) => {
                self.scan(x, atomic, tile_stored, reads, passed)?
            }
            K::BinOp(x, _) => {
                self.scan(&x[0], atomic, tile_stored, reads, passed)?;
                self.scan(&x[1], atomic, tile_stored, reads, passed)?;
            }
            K::BoolOp(_, xs) | K::Tuple(xs) | K::List(xs) => {
                for x in xs.iter() {
                    self.scan(x, atomic, tile_stored, reads, passed)?;
                }
            }
            K::Compare(l, cs) => {
                self.scan(l, atomic, tile_stored, reads, passed)?;
                for (_, r) in cs.iter() {
                    self.scan(r, atomic, tile_stored, reads, passed)?;
                }
            }
            K::IfExp(a, b, c) => {
                for x in [a, b, c] {
                    self.scan(x, atomic, tile_stored, reads, passed)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    // ---------------------------------------------------------------- ranges

    fn get(&mut self, n: &'a str) -> Option<Iv> {
        let id = self.ids.id(n);
        if let Some(reads) = &mut self.reads {
            reads.push(id as u32);
        }
        self.env.get(id).copied().flatten()
    }

    /// The fixpoint of local ranges over `stmts`; after a few rounds a bound
    /// that still moves goes to infinity (widening).
    ///
    /// A statement's assignments depend only on the env entries its
    /// evaluation reads (helper funcs see only their arguments, and nothing
    /// else an evaluation reads changes here). One whose entries have not
    /// changed since it was last evaluated would assign the same ranges
    /// again, which change nothing, so it is skipped: after the first
    /// round only the statements a change reaches are evaluated, and the
    /// env of every round is the one evaluating them all gives.
    ///
    /// With `broken` (the kernel's fixpoint, in the checking pass), each
    /// evaluation also evaluates all that [`Cx::final_pass`] evaluates of
    /// the statement, and `broken[k]` keeps the first rule statement `k`'s
    /// last evaluation broke. Once the fixpoint is reached, every entry a
    /// last evaluation read has kept its value, so that is the rule the
    /// final pass would find in the statement (as the range is the one it
    /// would work out). Returns whether the fixpoint was reached before the
    /// round limit.
    fn ranges(&mut self, stmts: &[&Stmt<'a>], mut broken: Option<&mut [Option<Rule>]>) -> bool {
        let outer = self.reads.take();
        let mut assigned = Assigned::new();
        // Steps number the evaluations from 1: the step each statement was
        // last evaluated at (0: never), and each name's entry last changed
        // or was added at (a read that missed may now find it).
        let mut step = 0u32;
        let mut seen = vec![0u32; stmts.len()];
        // Made, not cloned: `vec!` clones an empty `Reads` per statement.
        let mut deps: Vec<Reads> = std::iter::repeat_with(Reads::new)
            .take(stmts.len())
            .collect();
        let mut changed_at = vec![0u32; self.ids.names.len()];
        for round in 0..16 {
            let mut changed = false;
            for (k, s) in stmts.iter().enumerate() {
                let since = seen[k];
                if since != 0
                    && !deps[k]
                        .iter()
                        .any(|&i| changed_at.get(i as usize).is_some_and(|&c| c >= since))
                {
                    continue;
                }
                step += 1;
                seen[k] = step;
                let mut reads = std::mem::take(&mut deps[k]);
                reads.clear();
                self.reads = Some(reads);
                assigned.clear();
                match broken.as_deref_mut() {
                    Some(broken) => {
                        let first = self.err.take();
                        self.assigns(s, &mut assigned, true);
                        broken[k] = std::mem::replace(&mut self.err, first);
                    }
                    None => self.assigns(s, &mut assigned, false),
                }
                deps[k] = self.reads.take().unwrap_or_default();
                for &(n, iv) in &assigned {
                    let id = self.ids.id(n);
                    if changed_at.len() <= id {
                        changed_at.resize(id + 1, 0);
                    }
                    match self.env.get(id).copied().flatten() {
                        Some(cur) => {
                            let u = cur.union(iv);
                            if u != cur {
                                changed = true;
                                changed_at[id] = step;
                                let mut w = u;
                                if round >= 3 {
                                    if u.lo < cur.lo {
                                        w.lo = f64::NEG_INFINITY;
                                    }
                                    if u.hi > cur.hi {
                                        w.hi = f64::INFINITY;
                                    }
                                }
                                self.env[id] = Some(w);
                            }
                        }
                        None => {
                            changed = true;
                            bind(&mut self.env, id, iv);
                            changed_at[id] = step;
                        }
                    }
                }
            }
            if !changed {
                self.reads = outer;
                return true;
            }
        }
        self.reads = outer;
        false
    }

    /// The (name, range) pairs statement `s` assigns, into `out`. With
    /// `checked`, also evaluates in the final pass's order all else it does
    /// of an assignment, expression or `return` statement (values stored to
    /// arrays, indices, divisors).
    fn assigns(&mut self, s: &Stmt<'a>, out: &mut Assigned<'a>, checked: bool) {
        match &s.kind {
            StmtKind::Assign(ts, v) => {
                // The value is evaluated only for a name it is assigned to:
                // a store to an array (or a tuple target, which takes TOP)
                // needs none, and evaluating has no other effect here.
                let mut value = checked.then(|| self.eval(v));
                for t in ts.iter() {
                    let to = match &t.kind {
                        ExprKind::Name(n) => *n,
                        ExprKind::Tuple(xs) => {
                            for x in xs.iter() {
                                if let ExprKind::Name(n) = x.kind
                                    && !has(&self.tid, n)
                                {
                                    out.push((n, TOP));
                                }
                            }
                            continue;
                        }
                        _ => match root(t) {
                            Some(r) if !self.is_array(r) => r,
                            _ => continue,
                        },
                    };
                    let iv = *value.get_or_insert_with(|| self.eval(v));
                    out.push((to, iv));
                }
                if checked {
                    for t in ts.iter() {
                        self.eval_target(t);
                    }
                }
            }
            StmtKind::AugAssign(t, op, v) => {
                let local = root(t).filter(|r| !self.is_array(r));
                if local.is_none() && !checked {
                    return;
                }
                let cur = local.map(|r| self.get(r).unwrap_or(TOP));
                let d = self.eval(v);
                if let (Some(r), Some(cur)) = (local, cur) {
                    let iv = match op {
                        BinOp::Add => cur.add(d),
                        BinOp::Sub => cur.add(d.neg()),
                        BinOp::Mult => cur.mul(d),
                        BinOp::Div => cur.div(d),
                        _ => TOP,
                    };
                    out.push((r, iv));
                }
                if checked {
                    self.check_divisor(*op, d);
                    self.eval_target(t);
                }
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) if checked => {
                self.eval(e);
            }
            StmtKind::For(t, it, _, _) => {
                if let ExprKind::Name(n) = t.kind {
                    out.push((n, self.range_iv(it)));
                }
            }
            _ => {}
        }
    }

    /// Whether [`Cx::assigns`] can give statement `s` a (name, range) pair,
    /// whatever the env: `false` only for statements that assign no local.
    fn assigns_local(&self, s: &Stmt<'a>) -> bool {
        match &s.kind {
            StmtKind::Assign(ts, _) => ts.iter().any(|t| match &t.kind {
                ExprKind::Name(_) | ExprKind::Tuple(_) => true,
                _ => root(t).is_some_and(|r| !self.is_array(r)),
            }),
            StmtKind::AugAssign(t, _, _) => root(t).is_some_and(|r| !self.is_array(r)),
            StmtKind::For(t, _, _, _) => matches!(t.kind, ExprKind::Name(_)),
            _ => false,
        }
    }

    fn range_iv(&mut self, it: &Expr<'a>) -> Iv {
        if let ExprKind::Call(f, args, _) = &it.kind
            && is_call(f, "range", false)
        {
            let a: smallvec::SmallVec<[Iv; 4]> = args.iter().map(|a| self.eval(a)).collect();
            return match a.len() {
                1 => Iv::new(0.0, (a[0].hi - 1.0).max(0.0)),
                2 => Iv::new(a[0].lo, (a[1].hi - 1.0).max(a[0].lo)),
                3 if a[2].lo > 0.0 => Iv::new(a[0].lo, (a[1].hi - 1.0).max(a[0].lo)),
                3 if a[2].hi < 0.0 => Iv::new((a[1].lo + 1.0).min(a[0].hi), a[0].hi),
                _ => TOP,
            };
        }
        TOP
    }

    /// Evaluates every expression once more with the final ranges, checking
    /// domains and conditions; with `broken` (see [`Cx::ranges`]), the
    /// assignment, expression and `return` statements are not evaluated
    /// again: the rule each broke is in it.
    fn final_pass(
        &mut self,
        stmts: &[&Stmt<'a>],
        spans: &[(usize, usize)],
        base: &Env,
        broken: Option<&[Option<Rule>]>,
    ) {
        // The ranges of the last reaching prefix worked out: (its length,
        // the env). Conditions in one loop body share their prefix (the
        // whole loop reaches each), and the prefix only grows along `stmts`.
        let mut memo: Option<(usize, Env)> = None;
        // A prefix that reaches every statement assigning a local has the
        // fixpoint of the whole body (the statements after it change no
        // range), which is the env already in place.
        let assigning_end = stmts
            .iter()
            .rposition(|s| self.assigns_local(s))
            .map_or(0, |l| l + 1);
        for (p, s) in stmts.iter().enumerate() {
            if self.err.is_some() {
                return;
            }
            match &s.kind {
                StmtKind::Assign(..)
                | StmtKind::AugAssign(..)
                | StmtKind::Expr(_)
                | StmtKind::Return(Some(_))
                    if let Some(broken) = broken =>
                {
                    if let Some(r) = broken[p] {
                        self.fail(r);
                    }
                }
                StmtKind::Assign(ts, v) => {
                    self.eval(v);
                    for t in ts.iter() {
                        self.eval_target(t);
                    }
                }
                StmtKind::AugAssign(t, op, v) => {
                    let d = self.eval(v);
                    self.check_divisor(*op, d);
                    self.eval_target(t);
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => {
                    self.eval(e);
                }
                StmtKind::If(c, _, _) | StmtKind::While(c, _, _) => {
                    // The condition with only the assignments that reach it.
                    let end = reaching_end(spans, p);
                    if end >= assigning_end {
                        // The fixpoint from `base` over every statement
                        // assigning a local is the env already in place.
                        self.condition(c);
                        continue;
                    }
                    let env = match memo.take() {
                        Some((e, env)) if e == end => env,
                        _ => {
                            // Outside the checking pass the fixpoint has no
                            // effect but the env (and the helpers' return
                            // ranges it remembers).
                            let all = std::mem::replace(&mut self.env, base.clone());
                            let checking = std::mem::replace(&mut self.checking, false);
                            self.ranges(&stmts[..end], None);
                            self.checking = checking;
                            std::mem::replace(&mut self.env, all)
                        }
                    };
                    let all = std::mem::replace(&mut self.env, env);
                    self.condition(c);
                    memo = Some((end, std::mem::replace(&mut self.env, all)));
                }
                StmtKind::For(_, it, _, _) => {
                    self.eval(it);
                }
                _ => {}
            }
        }
    }

    /// `x /= d`, `x //= d`, `x %= d`: `d` is never zero.
    fn check_divisor(&mut self, op: BinOp, d: Iv) {
        if matches!(op, BinOp::Div | BinOp::FloorDiv | BinOp::Mod) && !d.nonzero() {
            self.fail(Rule::Domain);
        }
    }

    fn eval_target(&mut self, t: &Expr<'a>) {
        if let ExprKind::Subscript(x) = &t.kind {
            self.eval(&x[1]);
        }
    }

    fn fail(&mut self, r: Rule) {
        if self.checking && self.err.is_none() {
            self.err = Some(r);
        }
    }

    /// A branch or loop condition: must read a variable and not be decided.
    fn condition(&mut self, c: &Expr<'a>) {
        let mut ns = Names::new();
        names(c, &mut ns);
        if !ns.iter().any(|n| !self.consts.iter().any(|c| eq(c.0, n))) {
            self.fail(Rule::Known);
        }
        let iv = self.eval(c);
        if iv.lo == iv.hi && matches!(c.kind, ExprKind::Compare(..) | ExprKind::BoolOp(..)) {
            self.fail(Rule::Known);
        }
    }

    /// The range of `e`. Leaves (about half the nodes) in line, the rest by
    /// [`Cx::eval_node`]: its call saves and restores more registers than a
    /// leaf takes to evaluate.
    #[inline(always)]
    fn eval(&mut self, e: &Expr<'a>) -> Iv {
        use ExprKind as K;
        match &e.kind {
            K::Constant(Constant::Int(v)) => Iv::c(*v as f64),
            K::Constant(Constant::Float(v)) => Iv::c(*v),
            K::Name(n) => {
                if let Some(iv) = self.get(n) {
                    iv
                } else if let Some(c) = self.consts.iter().find(|c| eq(c.0, n)) {
                    Iv::c(c.1)
                } else {
                    TOP
                }
            }
            _ => self.eval_node(e),
        }
    }

    fn eval_node(&mut self, e: &Expr<'a>) -> Iv {
        use ExprKind as K;
        match &e.kind {
            K::Constant(Constant::Bool(b)) => Iv::c(*b as u8 as f64),
            K::Constant(_) => TOP,
            K::Attribute(x, attr) => {
                if let K::Name(n) = x.kind {
                    if n == "wp" {
                        return match *attr {
                            "pi" => Iv::c(std::f64::consts::PI),
                            "tau" => Iv::c(std::f64::consts::TAU),
                            "e" => Iv::c(std::f64::consts::E),
                            _ => TOP,
                        };
                    }
                    if let Some(p) = self.param(n)
                        && let ParamKind::Struct { fields, .. } = &p.kind
                    {
                        return fields
                            .iter()
                            .find(|f| f.0 == *attr)
                            .map_or(TOP, |f| Iv::new(f.2, f.3));
                    }
                }
                self.eval(x)
            }
            K::Subscript(x) => {
                self.eval(&x[1]);
                self.eval(&x[0])
            }
            K::BinOp(x, op) => {
                let a = self.eval(&x[0]);
                let b = self.eval(&x[1]);
                match op {
                    BinOp::Add => a.add(b),
                    BinOp::Sub => a.add(b.neg()),
                    BinOp::Mult => {
                        if same(&x[0], &x[1]) {
                            a.square()
                        } else {
                            a.mul(b)
                        }
                    }
                    BinOp::Div => {
                        if !b.nonzero() {
                            self.fail(Rule::Domain);
                        }
                        a.div(b)
                    }
                    BinOp::FloorDiv => {
                        if !b.nonzero() {
                            self.fail(Rule::Domain);
                        }
                        a.div(b).widen1()
                    }
                    BinOp::Mod => {
                        if !b.nonzero() {
                            self.fail(Rule::Domain);
                        }
                        let m = b.mag();
                        if a.lo >= 0.0 {
                            Iv::new(0.0, m.min(a.hi.max(0.0) + 1.0))
                        } else {
                            Iv::new(-m, m)
                        }
                    }
                    BinOp::Pow => {
                        if !(a.lo > 0.0 || (a.lo >= 0.0 && b.lo > 0.0)) {
                            if matches!(x[1].kind, K::Constant(Constant::Int(_))) {
                                return a.square().union(a.mul(a.square()));
                            }
                            self.fail(Rule::Domain);
                        }
                        TOP
                    }
                    _ => TOP,
                }
            }
            K::UnaryOp(op, x) => {
                let a = self.eval(x);
                match op {
                    UnaryOp::Neg => a.neg(),
                    UnaryOp::Pos => a,
                    UnaryOp::Not => Iv::new(0.0, 1.0),
                    UnaryOp::Invert => TOP,
                }
            }
            K::BoolOp(_, xs) => {
                let mut lo_all = true;
                let mut decided = Vec::new();
                for x in xs.iter() {
                    let iv = self.eval(x);
                    decided.push(iv);
                    lo_all &= iv.lo == iv.hi;
                }
                if lo_all {
                    // Every operand decided: the whole is.
                    let v = decided[0].lo;
                    return Iv::c(v);
                }
                Iv::new(0.0, 1.0)
            }
            K::Compare(l, cs) => {
                let mut left = self.eval(l);
                let mut lexpr: &Expr = l;
                let mut all_known = true;
                let mut any_false = false;
                for (op, r) in cs.iter() {
                    let right = self.eval(r);
                    if same(lexpr, r) {
                        self.fail(Rule::Known);
                    }
                    let decided = match op {
                        CmpOp::Lt => decide(left.hi < right.lo, left.lo >= right.hi),
                        CmpOp::LtE => decide(left.hi <= right.lo, left.lo > right.hi),
                        CmpOp::Gt => decide(left.lo > right.hi, left.hi <= right.lo),
                        CmpOp::GtE => decide(left.lo >= right.hi, left.hi < right.lo),
                        CmpOp::Eq => decide(
                            left.lo == left.hi && right.lo == right.hi && left.lo == right.lo,
                            left.hi < right.lo || left.lo > right.hi,
                        ),
                        CmpOp::NotEq => decide(
                            left.hi < right.lo || left.lo > right.hi,
                            left.lo == left.hi && right.lo == right.hi && left.lo == right.lo,
                        ),
                        _ => None,
                    };
                    match decided {
                        Some(v) => {
                            self.fail(Rule::Known);
                            any_false |= !v;
                        }
                        None => all_known = false,
                    }
                    left = right;
                    lexpr = r;
                }
                if any_false {
                    Iv::c(0.0)
                } else if all_known {
                    Iv::c(1.0)
                } else {
                    Iv::new(0.0, 1.0)
                }
            }
            K::IfExp(c, a, b) => {
                self.condition(c);
                let a = self.eval(a);
                let b = self.eval(b);
                a.union(b)
            }
            K::Tuple(xs) | K::List(xs) => {
                let mut iv: Option<Iv> = None;
                for x in xs.iter() {
                    let v = self.eval(x);
                    iv = Some(iv.map_or(v, |u| u.union(v)));
                }
                iv.unwrap_or(TOP)
            }
            K::Call(f, args, kws) => self.call(f, args, kws),
            _ => TOP,
        }
    }

    fn call(
        &mut self,
        f: &Expr<'a>,
        args: &'a [Expr<'a>],
        kws: &'a [crate::lang::ast::Keyword<'a>],
    ) -> Iv {
        // On the stack: a call has a few arguments, and one is evaluated per call
        // per round of the range fixpoint.
        let a: smallvec::SmallVec<[Iv; 4]> = args.iter().map(|x| self.eval(x)).collect();
        for k in kws.iter() {
            self.eval(&k.value);
        }
        let Some((name, wp)) = call_name(f) else {
            return TOP;
        };
        if !wp {
            return match name {
                "float" | "int" => {
                    let v = a.first().copied().unwrap_or(TOP);
                    if name == "int" { v.widen1() } else { v }
                }
                "range" => TOP,
                _ => self.user_func(name, &a),
            };
        }
        let arg = |n: usize| a.get(n).copied().unwrap_or(TOP);
        let unit = Iv::new(-1.0, 1.0);
        match name {
            "float32" | "float64" | "float16" => arg(0),
            "int32" | "int" | "uint32" | "int64" => arg(0).widen1(),
            "sin" | "cos" | "tanh" => unit,
            "sign" => unit,
            "exp" => {
                let x = arg(0);
                if x.hi > 80.0 {
                    self.fail(Rule::Domain);
                }
                Iv::new(x.lo.exp(), x.hi.min(80.0).exp())
            }
            "sqrt" => {
                let x = arg(0);
                if x.lo < 0.0 {
                    self.fail(Rule::Domain);
                }
                Iv::new(x.lo.max(0.0).sqrt(), x.hi.max(0.0).sqrt())
            }
            "cbrt" => arg(0),
            "log" | "log2" | "log10" => {
                let x = arg(0);
                if x.lo <= 0.0 {
                    self.fail(Rule::Domain);
                    return TOP;
                }
                let l = match name {
                    "log" => f64::ln,
                    "log2" => f64::log2,
                    _ => f64::log10,
                };
                Iv::new(l(x.lo), l(x.hi))
            }
            "pow" => {
                let (b, e) = (arg(0), arg(1));
                if !(b.lo > 0.0 || (b.lo >= 0.0 && e.lo > 0.0)) {
                    self.fail(Rule::Domain);
                }
                TOP
            }
            "acos" | "asin" => {
                let x = arg(0);
                if x.lo < -1.0 || x.hi > 1.0 {
                    self.fail(Rule::Domain);
                }
                if name == "acos" {
                    Iv::new(0.0, std::f64::consts::PI)
                } else {
                    Iv::new(-std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2)
                }
            }
            "atan" => Iv::new(-std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2),
            "atan2" => Iv::new(-std::f64::consts::PI, std::f64::consts::PI),
            "abs" => arg(0).abs(),
            "min" if a.len() == 2 => arg(0).min(arg(1)),
            "max" if a.len() == 2 => arg(0).max(arg(1)),
            "clamp" => arg(0).max(arg(1)).min(arg(2)),
            "floor" | "ceil" | "round" | "rint" | "trunc" => arg(0).widen1(),
            "step" | "nonzero" | "smoothstep" => Iv::new(0.0, 1.0),
            "lerp" => {
                let t = arg(2);
                if t.lo >= 0.0 && t.hi <= 1.0 {
                    arg(0).union(arg(1))
                } else {
                    TOP
                }
            }
            "where" | "select" => {
                if let Some(c) = args.first() {
                    self.condition(c);
                }
                arg(1).union(arg(2))
            }
            "vec2" | "vec3" | "vec4" | "mat22" | "mat33" | "mat44" | "quat" | "spatial_vector" => {
                if a.is_empty() {
                    Iv::c(0.0)
                } else {
                    a.iter().copied().reduce(Iv::union).unwrap()
                }
            }
            "identity" => Iv::new(0.0, 1.0),
            "length" => Iv::new(0.0, 2.5 * arg(0).mag()),
            "length_sq" => Iv::new(0.0, 6.0 * arg(0).mag() * arg(0).mag()),
            "dot" => {
                let m = arg(0).mag() * arg(1).mag() * 6.0;
                if same(&args[0], &args[1]) {
                    Iv::new(0.0, m)
                } else {
                    Iv::new(-m, m)
                }
            }
            "cross" => {
                let m = 2.0 * arg(0).mag() * arg(1).mag();
                Iv::new(-m, m)
            }
            "normalize" | "quat_identity" => unit,
            "randf" => {
                if a.len() == 3 {
                    arg(1).union(arg(2))
                } else {
                    Iv::new(0.0, 1.0)
                }
            }
            "noise" | "pnoise" => Iv::new(-1.5, 1.5),
            _ => TOP,
        }
    }

    /// A helper func's return range with parameters bound to `args`
    /// (checked on the way when checking).
    fn user_func(&mut self, name: &str, args: &[Iv]) -> Iv {
        let Some(f) = self.funcs.iter().copied().find(|f| eq(f.name, name)) else {
            return TOP;
        };
        if self.depth > 4 {
            return TOP;
        }
        let key = (!self.checking).then(|| {
            args.iter()
                .flat_map(|a| [a.lo.to_bits(), a.hi.to_bits()])
                .collect::<ArgBits>()
        });
        if let Some(key) = &key
            && let Some(r) = self
                .returns
                .iter()
                .find(|r| std::ptr::eq(r.0, f) && r.1 == self.depth && r.2 == *key)
        {
            return r.3;
        }
        let depth = self.depth;
        self.depth += 1;
        // The func's own env is not the caller's: its reads are no
        // dependency of the caller's statement (the arguments are).
        let caller_reads = self.reads.take();
        // Hide the caller's names: the parameters, then locals.
        let saved = std::mem::replace(&mut self.env, Vec::with_capacity(self.ids.names.len()));
        for (p, iv) in f.args.iter().zip(args.iter()) {
            let id = self.ids.id(p.name);
            bind(&mut self.env, id, *iv);
        }
        let mut stmts = Vec::new();
        let mut spans = Vec::new();
        walk_spans(f.body, &mut stmts, &mut spans);
        let base = self.env.clone();
        let checking = self.checking;
        self.checking = false;
        self.ranges(&stmts, None);
        self.checking = checking;
        let mut ret: Option<Iv> = None;
        for s in &stmts {
            if let StmtKind::Return(Some(e)) = &s.kind {
                let v = self.eval(e);
                ret = Some(ret.map_or(v, |r| r.union(v)));
            }
        }
        if self.checking {
            self.final_pass(&stmts, &spans, &base, None);
        }
        self.env = saved;
        self.reads = caller_reads;
        self.depth -= 1;
        let ret = ret.unwrap_or(TOP);
        if let Some(key) = key {
            self.returns.push((f, depth, key, ret));
        }
        ret
    }
}

fn decide(t: bool, f: bool) -> Option<bool> {
    if t {
        Some(true)
    } else if f {
        Some(false)
    } else {
        None
    }
}

/// Names read by an assignment target (`a[idx]` reads idx; `v[0]` reads v).
fn target_reads<'a>(t: &Expr<'a>, out: &mut Names<'a>) {
    match &t.kind {
        ExprKind::Subscript(x) => {
            names(&x[1], out);
            target_reads(&x[0], out);
        }
        ExprKind::Attribute(x, _) => target_reads(x, out),
        ExprKind::Name(n) => out.push(n),
        _ => {}
    }
}

/// The parameter's name as it appears in the kernel's signature (borrowed
/// from the tree, so it lives as long as the other names).
fn leak<'a>(name: &str, args: &[&'a str]) -> &'a str {
    args.iter().copied().find(|a| *a == name).unwrap_or("")
}
