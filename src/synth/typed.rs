//! The v2 builder: [`Body`] writes typed expressions over `float`, `int`,
//! `wp.vec2/3/4` and `wp.mat22/33/44` and block-structured statements
//! (`if`/`elif`/`else`, `for` over `range()`, `while`, `break`, `continue`,
//! `return`) straight into a pre-sized `String`, for kernels launched in one
//! to three dimensions and for the `@wp.func` helpers they call.
//!
//! As in v1 ([`super::builder`]) there is no AST: each node is chosen before
//! it is written, so parentheses go in only where Python needs them, and
//! types are tracked while writing so that warp's strict typing holds
//! (float32 and int32 never meet, vectors and matrices only meet their own
//! size, `wp.cross` is vec3-only).
//!
//! Rules that keep every sample valid for warp:
//! - names are never reused within a function, so no name changes type;
//! - a local is never initialised or reassigned to a bare name or literal
//!   (`x = y`, `x = 2.0`): a literal makes a compile-time constant, which warp
//!   refuses to mutate in a dynamic loop, and a name makes an alias;
//!   accumulators start as `float(0.0)`, `int(0)`, `wp.vec3()`...;
//! - locals defined in a block go out of scope when it closes;
//! - loop counters and thread indices are read-only; `while` loops count
//!   up to a bound, before any `continue`;
//! - vector components and matrix elements are indexed by literals or by
//!   the iterator of a constant `range()` that stays in bounds.

use super::builder::{
    self as b1, FLOAT_CLAMPS, FLOAT_LITERALS, Gen, INT_CLAMPS, INT_LITERALS, SUFFIXES, below,
    between, chance, pick, weighted, word,
};

/// Indices of variables that satisfy some test (see `Body::find`).
pub type Found = smallvec::SmallVec<[usize; 16]>;

// ---------------------------------------------------------------- types

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum T {
    F,
    I,
    /// `wp.vecN` of float32, N in 2..=4.
    V(u8),
    /// `wp.matNN` of float32, N in 2..=4.
    M(u8),
}

const VEC_CTORS: [&str; 3] = ["wp.vec2", "wp.vec3", "wp.vec4"];
const MAT_CTORS: [&str; 3] = ["wp.mat22", "wp.mat33", "wp.mat44"];
const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

impl T {
    /// The constructor / annotation name of a vector or matrix type.
    pub fn ctor(self) -> &'static str {
        match self {
            T::V(n) => VEC_CTORS[n as usize - 2],
            T::M(n) => MAT_CTORS[n as usize - 2],
            T::F => "float",
            T::I => "int",
        }
    }

    fn dim(self) -> u8 {
        match self {
            T::V(n) | T::M(n) => n,
            _ => 1,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    In,
    Out,
    InOut,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A scalar (or vector/matrix) parameter, read-only.
    Scalar,
    /// An array parameter with its number of dimensions.
    Array(u8, Role),
    /// A local the generator may reassign and update.
    Local,
    /// Read-only ints: thread indices, loop iterators and counters.
    Fixed,
}

pub(crate) struct Var {
    pub name: String,
    pub ty: T,
    pub kind: Kind,
    pub uses: u32,
    /// For iterators of constant ranges: the values they take, `lo..=hi`.
    pub range: Option<(i32, i32)>,
}

impl Var {
    fn readable(&self) -> bool {
        !matches!(self.kind, Kind::Array(_, Role::Out))
    }

    fn is_array(&self) -> bool {
        matches!(self.kind, Kind::Array(..))
    }

    /// A value that can be named in an expression (not an array).
    fn is_value(&self) -> bool {
        !self.is_array()
    }
}

/// The index of one array dimension in [`Body::grid_ref`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ix {
    Tid,
    /// The thread index plus a constant.
    Off(i32),
    /// An iterator.
    Var(usize),
    /// The thread index plus an iterator.
    AddVar(usize),
}

/// How [`Body::grid_ref`] keeps offset indices in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrap {
    /// `i + 1`: the thread is an interior one.
    Raw,
    /// `wp.clamp(i + 1, 0, nx - 1)`.
    Clamp,
    /// `wp.min(i + 1, nx - 1)`, `wp.max(i - 1, 0)`.
    MinMax,
    /// `(i + 1) % nx`, `(i + nx - 1) % nx`.
    Modulo,
}

/// Weights of [`Body::stmt`]'s statement kinds.
#[derive(Clone, Copy)]
pub(crate) struct Mix {
    pub new_local: u32,
    pub assign: u32,
    pub update: u32,
    pub component: u32,
    pub store: u32,
    pub accumulate: u32,
}

/// A `@wp.func` the kernel may call.
pub(crate) struct Helper {
    pub name: String,
    pub params: Vec<T>,
    pub ret: T,
    pub uses: u32,
}

// ---------------------------------------------------------------- names

#[rustfmt::skip]
pub(crate) const VEC_ARRAYS: &[&str] = &[
    "pos", "vel", "points", "normals", "dirs", "forces", "verts", "colors", "disp", "tangents",
    "centers", "origins", "rays", "grads", "omega_v", "field_v", "u_v", "x_v", "p_in", "q_in",
    "acc_in", "targets_in", "axes", "samples_v", "coords", "uvs", "wind_v", "spins",
];
#[rustfmt::skip]
pub(crate) const VEC_OUTS: &[&str] = &[
    "out", "out_v", "result", "dst", "new_pos", "new_vel", "forces_out", "normals_out", "accum",
    "res", "dirs_out", "f_out", "grad_out", "sums", "out_dir", "moved", "pos_out", "vel_out",
];
#[rustfmt::skip]
pub(crate) const VEC_LOCALS: &[&str] = &[
    "v", "w", "p", "q", "d", "nrm", "t", "r", "e", "u", "axis", "delta", "off", "vel_l", "acc",
    "f", "g", "h", "dp", "mid", "c", "tan_v", "lo", "hi", "ray", "edge", "e1", "e2", "pa", "pb",
    "rel", "perp", "dirn", "fv", "xv", "yv", "n_v", "bin_v", "up_l", "side",
];
#[rustfmt::skip]
pub(crate) const VEC_SCALARS: &[&str] = &[
    "gravity", "wind", "center", "origin", "axis_p", "light_dir", "up", "offset_v", "color",
    "target", "anchor", "dir_p",
];
#[rustfmt::skip]
pub(crate) const MAT_ARRAYS: &[&str] = &[
    "mats", "rot", "R", "A", "B", "M", "xforms", "frames", "F", "stress", "strain", "K", "cov",
    "jac", "basis", "inertia", "H", "tensors", "Ms",
];
#[rustfmt::skip]
pub(crate) const MAT_OUTS: &[&str] = &[
    "out_m", "result_m", "mats_out", "C", "prod", "dst_m", "inv_out", "cov_out", "stress_out", "Q",
    "frames_out", "xf_out",
];
#[rustfmt::skip]
pub(crate) const MAT_LOCALS: &[&str] = &[
    "m", "A0", "B0", "R0", "Rt", "S", "T0", "Minv", "J", "P", "G", "L", "U", "W", "Mt", "rot_l",
    "xf", "K0", "C0", "D", "E0", "H0", "N0", "Q0", "Z", "mm", "At", "Sm",
];
#[rustfmt::skip]
pub(crate) const MAT_SCALARS: &[&str] = &[
    "xform", "rot_p", "basis_p", "Mp", "proj", "view", "T_p",
];
#[rustfmt::skip]
pub(crate) const LOOP_VARS: &[&str] = &[
    "k", "j", "m", "p", "q", "s", "t", "l", "kk", "jj", "ii", "it", "c", "r", "a", "b", "n_it",
    "step", "o", "u", "e", "d", "tap", "lag_i",
];
#[rustfmt::skip]
pub(crate) const COUNTERS: &[&str] = &[
    "it", "n_steps", "count", "steps_done", "n_iter", "tries", "pass_i", "rounds", "cnt", "guard",
];
#[rustfmt::skip]
pub(crate) const HELPER_VERBS: &[&str] = &[
    "eval", "calc", "apply", "compute", "blend", "smooth", "safe", "project", "reflect", "scale",
    "shade", "weigh", "mix", "fold", "bend", "limit", "wrap", "remap", "soft", "damp", "get",
];
#[rustfmt::skip]
pub(crate) const HELPER_NOUNS: &[&str] = &[
    "term", "energy", "force", "dist", "weight", "falloff", "kernel", "step", "spring", "field",
    "density", "offset", "direction", "basis", "frame", "value", "score", "coeff", "response", "sample",
    "potential", "gain", "profile",
];
/// 2-D and 3-D thread index names.
#[rustfmt::skip]
const TID2: &[[&str; 2]] = &[
    ["i", "j"], ["i", "j"], ["i", "j"], ["x", "y"], ["row", "col"], ["r", "c"], ["ix", "iy"],
    ["tx", "ty"], ["y", "x"],
];
#[rustfmt::skip]
const TID3: &[[&str; 3]] = &[
    ["i", "j", "k"], ["i", "j", "k"], ["i", "j", "k"], ["x", "y", "z"], ["ix", "iy", "iz"],
    ["i0", "i1", "i2"], ["tx", "ty", "tz"],
];

/// `{verb}_{noun}`: never a warp builtin.
pub(crate) fn helper_name(rng: &mut Gen) -> String {
    let mut s = String::with_capacity(20);
    s.push_str(word(rng, HELPER_VERBS));
    s.push('_');
    s.push_str(word(rng, HELPER_NOUNS));
    s
}

fn local_pool(ty: T) -> &'static [&'static str] {
    match ty {
        T::F => b1::FLOAT_LOCALS,
        T::I => b1::INT_LOCALS,
        T::V(_) => VEC_LOCALS,
        T::M(_) => MAT_LOCALS,
    }
}

fn param_pool(ty: T, kind: Kind) -> &'static [&'static str] {
    match (kind, ty) {
        (Kind::Array(_, Role::Out), T::V(_)) => VEC_OUTS,
        (Kind::Array(_, Role::Out), T::M(_)) => MAT_OUTS,
        (Kind::Array(_, Role::Out), _) => b1::OUT_ARRAYS,
        (Kind::Array(..), T::F) => b1::FLOAT_ARRAYS,
        (Kind::Array(..), T::I) => b1::INT_ARRAYS,
        (Kind::Array(..), T::V(_)) => VEC_ARRAYS,
        (Kind::Array(..), T::M(_)) => MAT_ARRAYS,
        (_, T::F) => b1::FLOAT_SCALARS,
        (_, T::I) => b1::INT_SCALARS,
        (_, T::V(_)) => VEC_SCALARS,
        (_, T::M(_)) => MAT_SCALARS,
    }
}

/// A bare name or literal (`x`, `-x`, `2.0`, `-1`): never the whole value of
/// a local (see the module docs).
fn trivial(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let b = s.as_bytes();
    if b.is_empty() {
        return true;
    }
    if b[0].is_ascii_digit() {
        b.iter().all(|c| c.is_ascii_digit() || *c == b'.')
    } else {
        b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    }
}

// ---------------------------------------------------------------- style

/// Per-category weights of what the expression generator writes.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    /// Probability of a leaf at an interior node.
    pub p_leaf: f64,
    /// Float productions: arithmetic, unary minus, `wp.sin`-like call,
    /// min/max/pow, clamp, dot, length, length_sq, determinant, trace,
    /// lerp, helper call.
    pub wf: [u32; 12],
    /// Vector productions: `+ -`, scaling (`v * s`, `s * v`, `v / s`), unary
    /// minus, normalize, cross, lerp, min/max, `m * v` / `v * m`, constructor,
    /// helper call, `wp.abs` / `wp.cw_mul`.
    pub wv: [u32; 11],
    /// Matrix productions: `+ -`, scaling, unary minus, `m * m`, transpose,
    /// inverse, outer, diag, constructor, helper call, identity.
    pub wm: [u32; 11],
    /// Int productions: arithmetic, min/max/abs/clamp, unary minus.
    pub wi: [u32; 3],
    /// Leaves: local, scalar parameter, array read, literal, component or
    /// element of a vector/matrix (a row for vectors), cast from the other scalar type.
    pub leaf: [u32; 6],
    /// Transcendental calls the float generator may write.
    pub unary_calls: &'static [&'static str],
    /// Keep sqrt/log/pow arguments in their domain.
    pub p_guard: f64,
    /// Array indices: weights of the thread index, a loop iterator, a shifted
    /// or neighbour index.
    pub idx: [u32; 3],
    /// Probability of `a if c else b` / `wp.where(c, a, b)` at an interior node.
    pub p_select: f64,
    /// Deepest operator nesting of one expression (the `expr_depth` knob).
    pub max_depth: u32,
}

impl Style {
    /// This style with expressions capped at the knobs' `expr_depth`.
    pub fn within(self, knobs: &super::Knobs) -> Style {
        Style {
            max_depth: knobs.expr_depth,
            ..self
        }
    }
}

#[rustfmt::skip]
pub(crate) const MATH_CALLS: &[&str] = &[
    "wp.sin", "wp.cos", "wp.exp", "wp.sqrt", "wp.abs", "wp.tanh", "wp.log", "wp.floor", "wp.tan",
    "wp.ceil", "wp.sinh", "wp.cosh", "wp.atan", "wp.abs",
];
pub(crate) const SIMPLE_CALLS: &[&str] = &["wp.abs", "wp.sqrt", "wp.sin", "wp.cos", "wp.exp"];

pub(crate) const BASE: Style = Style {
    p_leaf: 0.15,
    wf: [30, 4, 6, 4, 2, 0, 0, 0, 0, 0, 1, 6],
    wv: [10, 10, 2, 3, 3, 2, 2, 2, 3, 6, 1],
    wm: [6, 6, 1, 6, 3, 2, 2, 2, 2, 6, 1],
    wi: [10, 2, 1],
    leaf: [8, 3, 6, 4, 3, 1],
    unary_calls: SIMPLE_CALLS,
    p_guard: 0.7,
    idx: [10, 4, 1],
    p_select: 0.03,
    max_depth: u32::MAX,
};

// Python precedence of what an expression writes.
const P_ADD: u8 = 1;
const P_MUL: u8 = 2;
const P_UNARY: u8 = 3;
const P_ATOM: u8 = 4;

struct Block {
    mark: usize,
    /// A loop block: index into `loops`.
    is_loop: bool,
}

struct Loop {
    /// Trip count of a constant loop (1 for a dynamic one).
    trips: u32,
    dynamic: bool,
    /// `continue` is allowed (false in `while` loops whose counter is
    /// incremented at the end of the body).
    allow_continue: bool,
    /// The counter a `while` loop increments at the end of its body.
    end_increment: Option<usize>,
    /// A dynamic loop inside a constant one: warp emits its body once per
    /// unrolled iteration, and from the second one on demotes the leftover
    /// iterators of constant loops inside it with `wp::copy`, in the order
    /// of a Python set (it changes with PYTHONHASHSEED). With at most one
    /// constant loop inside there is a single such copy.
    limit_consts: bool,
    /// Constant loops opened inside this one so far.
    consts_inside: u32,
}

/// One function body (kernel or helper) under construction.
pub(crate) struct Body {
    pub vars: Vec<Var>,
    /// Every name bound in this function so far (never reused).
    names: Vec<String>,
    body: String,
    indent: usize,
    lines: usize,
    blocks: Vec<Block>,
    loops: Vec<Loop>,
    pub helpers: Vec<Helper>,
    pub style: Style,
    /// Leaves prefer values not read yet, and stores fold unread locals in.
    pub drain: bool,
    /// Thread indices (var indices), one per launch dimension.
    pub tids: Vec<usize>,
    /// Per launch dimension, the int parameter holding its size.
    pub sizes: Vec<usize>,
    /// The thread is known to be at least one cell from every border.
    pub interior: bool,
    /// Product of the trip counts of the enclosing constant loops.
    pub unroll: u32,
    /// Dynamic loops enclosing the current line.
    pub dyn_loops: u32,
    /// Every counted use (var index, or helper index | HELPER_USE), so that
    /// [`Body::rollback`] can undo them.
    use_log: Vec<usize>,
    /// The next component index written is this iterator.
    force_index: Option<usize>,
}

const HELPER_USE: usize = 1 << 40;

impl Body {
    pub fn new(style: Style) -> Body {
        Body {
            vars: Vec::with_capacity(24),
            names: Vec::with_capacity(24),
            body: String::with_capacity(2048),
            indent: 1,
            lines: 0,
            blocks: Vec::with_capacity(8),
            loops: Vec::with_capacity(4),
            helpers: Vec::new(),
            style,
            drain: false,
            tids: Vec::new(),
            sizes: Vec::new(),
            interior: false,
            unroll: 1,
            dyn_loops: 0,
            use_log: Vec::with_capacity(256),
            force_index: None,
        }
    }

    /// Lines written so far.
    pub fn lines(&self) -> usize {
        self.lines
    }

    pub fn loop_depth(&self) -> usize {
        self.loops.len()
    }

    /// Reserve a name (a helper's) so that no local takes it.
    pub fn reserve(&mut self, name: &str) {
        self.names.push(name.to_string());
    }

    /// Reserves `base` (with digits appended while it is taken) and returns it.
    pub fn reserve_fresh(&mut self, rng: &mut Gen, base: &str) -> String {
        let mut s = base.to_string();
        while self.taken(&s) {
            s.push((b'0' + below(rng, 10) as u8) as char);
        }
        self.names.push(s.clone());
        s
    }

    fn taken(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn fresh_name(&mut self, rng: &mut Gen, pool: &[&'static str]) -> String {
        let mut s = String::with_capacity(16);
        s.push_str(word(rng, pool));
        match below(rng, 12) {
            0..=8 => {}
            9 | 10 => s.push((b'0' + below(rng, 10) as u8) as char),
            _ => {
                s.push('_');
                s.push_str(word(rng, SUFFIXES));
            }
        }
        while self.taken(&s) {
            s.push((b'0' + below(rng, 10) as u8) as char);
        }
        self.names.push(s.clone());
        s
    }

    fn push_var(&mut self, name: String, ty: T, kind: Kind, range: Option<(i32, i32)>) -> usize {
        self.vars.push(Var {
            name,
            ty,
            kind,
            uses: 0,
            range,
        });
        self.vars.len() - 1
    }

    // ------------------------------------------------------------ parameters

    /// Adds a parameter named from the pool that fits its type and kind.
    pub fn param(&mut self, rng: &mut Gen, ty: T, kind: Kind) -> usize {
        let name = self.fresh_name(rng, param_pool(ty, kind));
        self.push_var(name, ty, kind, None)
    }

    /// Adds a parameter with a given name (grid sizes: `nx`, `ny`).
    pub fn param_named(&mut self, rng: &mut Gen, name: &str, ty: T, kind: Kind) -> usize {
        let mut s = name.to_string();
        while self.taken(&s) {
            s.push((b'0' + below(rng, 10) as u8) as char);
        }
        self.names.push(s.clone());
        self.push_var(s, ty, kind, None)
    }

    /// The thread indices of an `nd`-dimensional launch.
    pub fn launch(&mut self, rng: &mut Gen, nd: usize) {
        let names: &[&str] = match nd {
            1 => &[word(rng, b1::TID_NAMES)],
            2 => &pick(rng, TID2)[..],
            _ => &pick(rng, TID3)[..],
        };
        for &n in names {
            self.names.push(n.to_string());
            let v = self.push_var(n.to_string(), T::I, Kind::Fixed, None);
            self.tids.push(v);
        }
    }

    /// Variables that satisfy `f`, as indices (inline up to 16: this runs
    /// for nearly every expression the generator writes).
    fn find(&self, f: impl Fn(&Var) -> bool) -> Found {
        let mut v = Found::new();
        v.extend(
            self.vars
                .iter()
                .enumerate()
                .filter(|(_, x)| f(x))
                .map(|(n, _)| n),
        );
        v
    }

    fn count(&self, f: impl Fn(&Var) -> bool) -> usize {
        self.vars.iter().filter(|x| f(x)).count()
    }

    /// Writable arrays (outputs and in-place arrays).
    pub fn writable(&self) -> Found {
        self.find(|x| matches!(x.kind, Kind::Array(_, Role::Out | Role::InOut)))
    }

    pub fn locals(&self, ty: Option<T>) -> Found {
        self.find(|x| x.kind == Kind::Local && ty.is_none_or(|t| x.ty == t))
    }

    /// Locals that are vectors or matrices (component updates).
    pub fn composite_locals(&self) -> Found {
        self.find(|x| x.kind == Kind::Local && matches!(x.ty, T::V(_) | T::M(_)))
    }

    /// Some readable value or array of `ty` exists.
    pub fn has_source(&self, ty: T) -> bool {
        self.vars.iter().any(|x| x.ty == ty && x.readable())
    }

    /// Readable arrays of `ty` (any number of dimensions).
    pub fn inputs(&self, ty: T) -> Found {
        self.find(|x| x.is_array() && x.readable() && x.ty == ty)
    }

    /// Kernel parameters so far.
    pub fn n_params(&self) -> usize {
        self.count(|x| matches!(x.kind, Kind::Scalar | Kind::Array(..)))
    }

    /// Float scalar parameters added until there are `min` parameters (the
    /// `params` knob); call at the top level only.
    pub fn pad_params(&mut self, rng: &mut Gen, min: usize) {
        while self.n_params() < min {
            self.param(rng, T::F, Kind::Scalar);
        }
    }

    pub fn int_scalars(&self) -> Found {
        self.find(|x| x.kind == Kind::Scalar && x.ty == T::I)
    }

    /// Loop iterators and counters in scope (not the thread indices).
    fn iterators(&self) -> Found {
        self.find(|x| x.kind == Kind::Fixed)
            .into_iter()
            .filter(|n| !self.tids.contains(n))
            .collect()
    }

    // ------------------------------------------------------------ lines

    fn start_line(&mut self) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.lines += 1;
    }

    fn end_line(&mut self) {
        self.body.push('\n');
    }

    fn use_var(&mut self, n: usize) {
        self.vars[n].uses += 1;
        self.use_log.push(n);
        self.body.push_str(&self.vars[n].name);
    }

    /// Writes a value of `ty` for a local, again (up to three times, one
    /// level deeper) while it comes out as a bare name or literal.
    fn value(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        let m = self.mark();
        let mut d = depth.max(1);
        for _ in 0..4 {
            self.expr(rng, ty, d);
            if !trivial(&self.body[m.0..]) {
                return;
            }
            self.rollback(m);
            d += 1;
        }
        // A product with a literal is never trivial.
        self.ex_var(rng, ty, d, P_MUL);
        self.body
            .push_str(if ty == T::I { " * 1" } else { " * 1.0" });
    }

    /// `name = expr` for a new local of `ty`; returns its index.
    pub fn let_(&mut self, rng: &mut Gen, ty: T, depth: u32) -> usize {
        let name = self.fresh_name(rng, local_pool(ty));
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        self.value(rng, ty, depth);
        self.end_line();
        self.push_var(name, ty, Kind::Local, None)
    }

    /// `name = arr[idx]` for a readable array of `ty` nobody read yet, if any.
    pub fn let_load(&mut self, rng: &mut Gen, ty: T) -> Option<usize> {
        let unread = self.find(|x| x.is_array() && x.readable() && x.ty == ty && x.uses == 0);
        if unread.is_empty() {
            return None;
        }
        let arr = *pick(rng, &unread);
        let name = self.fresh_name(rng, local_pool(ty));
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        self.array_read(rng, arr);
        self.end_line();
        Some(self.push_var(name, ty, Kind::Local, None))
    }

    /// `name = helper(args)`.
    pub fn let_call(&mut self, rng: &mut Gen, h: usize, depth: u32) -> usize {
        let ty = self.helpers[h].ret;
        let name = self.fresh_name(rng, local_pool(ty));
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        self.call_helper(rng, h, depth);
        self.end_line();
        self.push_var(name, ty, Kind::Local, None)
    }

    /// An accumulator that starts at zero (or one), declared dynamic:
    /// `float(0.0)`, `int(0)`, `wp.vec3()`, `wp.identity(n=3, dtype=float)`...
    pub fn let_acc(&mut self, rng: &mut Gen, ty: T) -> usize {
        let name = self.fresh_name(rng, local_pool(ty));
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        match ty {
            T::F => self.body.push_str(*pick(
                rng,
                &[
                    "float(0.0)",
                    "float(0.0)",
                    "float(0.0)",
                    "float(1.0)",
                    "wp.float32(0.0)",
                ],
            )),
            T::I => self.body.push_str(*pick(
                rng,
                &["int(0)", "int(0)", "int(0)", "wp.int32(0)", "int(1)"],
            )),
            T::V(n) => {
                self.body.push_str(ty.ctor());
                match below(rng, 3) {
                    0 => self.body.push_str("()"),
                    1 => self.body.push_str("(0.0)"),
                    _ => {
                        self.body.push('(');
                        for c in 0..n {
                            if c > 0 {
                                self.body.push_str(", ");
                            }
                            self.body.push_str("0.0");
                        }
                        self.body.push(')');
                    }
                }
            }
            T::M(n) => {
                if chance(rng, 0.5) {
                    self.body.push_str(ty.ctor());
                    self.body.push_str("()");
                } else {
                    self.identity(rng, n);
                }
            }
        }
        self.end_line();
        self.push_var(name, ty, Kind::Local, None)
    }

    /// `name = expr` (the expression may read `name` itself).
    pub fn assign(&mut self, rng: &mut Gen, local: usize, depth: u32) {
        let ty = self.vars[local].ty;
        self.start_line();
        self.body.push_str(&self.vars[local].name);
        self.body.push_str(" = ");
        self.value(rng, ty, depth);
        self.end_line();
    }

    /// `x += expr` and the like, with the operand type the operator takes
    /// (`v *= s`, `m *= m2`).
    pub fn aug(&mut self, rng: &mut Gen, local: usize, depth: u32) {
        let ty = self.vars[local].ty;
        self.start_line();
        let start = self.body.len();
        self.body.push_str(&self.vars[local].name);
        let end = self.body.len();
        let (op, rhs) = match ty {
            T::F => (*pick(rng, &[" += ", " += ", " -= ", " *= "]), T::F),
            T::I => (*pick(rng, &[" += ", " += ", " -= ", " *= "]), T::I),
            T::V(_) => match weighted(rng, &[5, 3, 3, 1]) {
                0 => (" += ", ty),
                1 => (" -= ", ty),
                2 => (" *= ", T::F),
                _ => (" /= ", T::F),
            },
            T::M(_) => match weighted(rng, &[4, 2, 3, 3]) {
                0 => (" += ", ty),
                1 => (" -= ", ty),
                2 => (" *= ", T::F),
                _ => (" *= ", ty),
            },
        };
        self.body.push_str(op);
        if ty == T::I && op != " *= " && chance(rng, 0.3) {
            self.body.push('1');
        } else {
            self.distinct_operand(start, end, |k| {
                k.expr(rng, rhs, depth);
            });
        }
        self.end_line();
    }

    /// A component update of a vector or matrix local: `v[1] = x`,
    /// `v.x += y`, `m[0, 2] *= s`, `m[1] = row`, `m[2][0] -= t`.
    pub fn component_update(&mut self, rng: &mut Gen, local: usize, depth: u32) {
        let ty = self.vars[local].ty;
        let n = ty.dim();
        self.start_line();
        self.use_var(local);
        self.vars[local].uses -= 1;
        let op = *pick(rng, &[" = ", " = ", " += ", " += ", " -= ", " *= "]);
        match ty {
            T::V(_) => {
                if chance(rng, 0.35) {
                    self.body.push('.');
                    self.body.push_str(COMPONENTS[below(rng, n as usize)]);
                } else {
                    self.body.push('[');
                    self.component_index(rng, n);
                    self.body.push(']');
                }
                self.body.push_str(op);
                self.expr(rng, T::F, depth);
            }
            T::M(_) => {
                if chance(rng, 0.2) {
                    // A whole row.
                    self.body.push('[');
                    self.component_index(rng, n);
                    self.body.push(']');
                    self.body.push_str(if op == " *= " { " = " } else { op });
                    self.expr(rng, T::V(n), depth);
                } else {
                    if chance(rng, 0.2) {
                        self.body.push('[');
                        self.component_index(rng, n);
                        self.body.push_str("][");
                    } else {
                        self.body.push('[');
                        self.component_index(rng, n);
                        self.body.push_str(", ");
                    }
                    self.component_index(rng, n);
                    self.body.push(']');
                    self.body.push_str(op);
                    self.expr(rng, T::F, depth);
                }
            }
            _ => unreachable!("component update of a scalar"),
        }
        self.end_line();
    }

    /// A component update indexed by the iterator `it` (`v[c] = ...`,
    /// `m[r, 1] += ...`, `m[r] = row`).
    pub fn component_update_at(&mut self, rng: &mut Gen, local: usize, it: usize, depth: u32) {
        let ty = self.vars[local].ty;
        self.start_line();
        self.use_var(local);
        self.body.push('[');
        let op = *pick(rng, &[" = ", " = ", " += ", " -= ", " *= "]);
        match ty {
            T::M(n) if chance(rng, 0.3) => {
                self.use_var(it);
                self.body.push_str("] = ");
                self.expr(rng, T::V(n), depth);
            }
            T::M(n) => {
                if chance(rng, 0.5) {
                    self.use_var(it);
                    self.body.push_str(", ");
                    self.component_index(rng, n);
                } else {
                    self.component_index(rng, n);
                    self.body.push_str(", ");
                    self.use_var(it);
                }
                self.body.push(']');
                self.body.push_str(op);
                self.expr(rng, T::F, depth);
            }
            _ => {
                self.use_var(it);
                self.body.push(']');
                self.body.push_str(op);
                self.expr(rng, T::F, depth);
            }
        }
        self.end_line();
    }

    /// Folds locals of the current block that nothing read into a local
    /// declared before the block (`acc += x + float(n)`), so that no value
    /// is computed for nothing. Call right before `close`.
    pub fn flush_block(&mut self, rng: &mut Gen) {
        let Some(b) = self.blocks.last() else {
            return;
        };
        let mark = b.mark;
        let Some(first) = (mark..self.vars.len())
            .find(|&n| self.vars[n].kind == Kind::Local && self.vars[n].uses == 0)
        else {
            return;
        };
        let ft = self.vars[first].ty;
        let outer: Vec<usize> = (0..mark)
            .filter(|&n| {
                let v = &self.vars[n];
                v.kind == Kind::Local && (v.ty == ft || v.ty == T::F)
            })
            .collect();
        if outer.is_empty() {
            return;
        }
        let o = *pick(rng, &outer);
        let ot = self.vars[o].ty;
        self.start_line();
        self.use_var(o);
        self.body
            .push_str(if chance(rng, 0.8) { " += " } else { " -= " });
        let (pre, post) = match (ot, ft) {
            (a, b) if a == b => ("", ""),
            (_, T::I) => ("float(", ")"),
            (_, T::V(_)) => ("wp.length(", ")"),
            _ => ("wp.trace(", ")"),
        };
        self.body.push_str(pre);
        self.use_var(first);
        self.body.push_str(post);
        let drain = self.drain;
        self.drain = true;
        self.fold_unused(rng, ot);
        self.drain = drain;
        self.end_line();
    }

    /// `arr[idx] = expr`.
    pub fn store(&mut self, rng: &mut Gen, arr: usize, depth: u32) {
        let ty = self.vars[arr].ty;
        self.start_line();
        self.array_ref(rng, arr, true);
        self.body.push_str(" = ");
        self.expr_folded(rng, ty, depth);
        self.end_line();
    }

    /// `arr[idx] += expr`, `-=`, or `wp.atomic_add(arr, idx, expr)` (sub, and
    /// min/max for scalar arrays). With `cell`, the index is `0` in every
    /// dimension (one shared accumulator).
    pub fn accumulate(&mut self, rng: &mut Gen, arr: usize, depth: u32, cell: bool) {
        let ty = self.vars[arr].ty;
        let nd = match self.vars[arr].kind {
            Kind::Array(nd, _) => nd,
            _ => 1,
        };
        let scalar = matches!(ty, T::F | T::I);
        self.start_line();
        let op = weighted(
            rng,
            &[
                10,
                3,
                6,
                2,
                if scalar { 2 } else { 0 },
                if scalar { 2 } else { 0 },
            ],
        );
        if op >= 2 {
            self.body.push_str(
                [
                    "wp.atomic_add(",
                    "wp.atomic_sub(",
                    "wp.atomic_min(",
                    "wp.atomic_max(",
                ][op - 2],
            );
            self.use_var(arr);
            self.body.push_str(", ");
            for d in 0..nd {
                if d > 0 {
                    self.body.push_str(", ");
                }
                if cell {
                    self.body.push('0');
                } else {
                    self.index(rng, arr, d, true);
                }
            }
            self.body.push_str(", ");
        } else {
            self.use_var(arr);
            self.body.push('[');
            for d in 0..nd {
                if d > 0 {
                    self.body.push_str(", ");
                }
                if cell {
                    self.body.push('0');
                } else {
                    self.index(rng, arr, d, true);
                }
            }
            self.body.push_str(if op == 0 { "] += " } else { "] -= " });
        }
        if ty == T::I && op != 4 && op != 5 && chance(rng, 0.4) {
            self.body.push('1');
        } else {
            self.expr_folded(rng, ty, depth);
        }
        if op >= 2 {
            self.body.push(')');
        }
        self.end_line();
    }

    /// In drain mode, appends locals nothing read yet to an expression of
    /// `ty` (converted: `float(n)`, `wp.length(v)`, `wp.trace(m)`, `* s`).
    /// Valid after any expression: `+`, `-` and `*` associate left and the
    /// last term of a vector or matrix sum is itself a vector or matrix.
    fn fold_unused(&mut self, rng: &mut Gen, ty: T) {
        if !self.drain {
            return;
        }
        let mut folded = 0;
        for n in 0..self.vars.len() {
            if folded == 5 {
                return;
            }
            let v = &self.vars[n];
            if v.kind != Kind::Local || v.uses > 0 {
                continue;
            }
            let vt = v.ty;
            match (ty, vt) {
                (T::F, T::F) | (T::I, T::I) => {
                    self.body
                        .push_str(if chance(rng, 0.7) { " + " } else { " - " });
                    self.use_var(n);
                }
                (T::F, T::I) => {
                    self.body.push_str(" + float(");
                    self.use_var(n);
                    self.body.push(')');
                }
                (T::I, T::F) => {
                    self.body.push_str(" + int(");
                    self.use_var(n);
                    self.body.push(')');
                }
                (T::F, T::V(c)) => {
                    match below(rng, 3) {
                        0 => self.body.push_str(" + wp.length("),
                        1 => self.body.push_str(" - wp.length_sq("),
                        _ => {
                            self.body.push_str(" + ");
                            self.use_var(n);
                            self.body.push('[');
                            self.body
                                .push((b'0' + below(rng, c as usize) as u8) as char);
                            self.body.push(']');
                            folded += 1;
                            continue;
                        }
                    }
                    self.use_var(n);
                    self.body.push(')');
                }
                (T::F, T::M(_)) => {
                    self.body.push_str(if chance(rng, 0.5) {
                        " + wp.trace("
                    } else {
                        " + wp.determinant("
                    });
                    self.use_var(n);
                    self.body.push(')');
                }
                (T::V(a), T::V(b)) | (T::M(a), T::M(b)) if a == b => {
                    self.body
                        .push_str(if chance(rng, 0.7) { " + " } else { " - " });
                    self.use_var(n);
                }
                (T::V(_) | T::M(_), T::F) => {
                    self.body.push_str(" * ");
                    self.use_var(n);
                }
                (T::V(a), T::M(b)) if a == b => {
                    self.body.push_str(" + ");
                    self.use_var(n);
                    self.body.push_str(" * ");
                    self.array_or_vec(rng, a);
                }
                _ => continue,
            }
            folded += 1;
        }
    }

    /// Some vector of size `n` (a source, or a constructor).
    fn array_or_vec(&mut self, rng: &mut Gen, n: u8) {
        self.leaf(rng, T::V(n));
    }

    // ------------------------------------------------------------ blocks

    fn open_block(&mut self, is_loop: bool) {
        self.indent += 1;
        self.blocks.push(Block {
            mark: self.vars.len(),
            is_loop,
        });
    }

    /// Closes the innermost block; its locals (and iterator) go out of scope.
    pub fn close(&mut self) {
        let b = self.blocks.pop().expect("close without a block");
        if b.is_loop {
            let l = self.loops.pop().expect("loop block without a loop");
            if let Some(c) = l.end_increment {
                self.start_line();
                self.use_var(c);
                self.body.push_str(" += 1\n");
            }
            self.unroll /= l.trips;
            self.dyn_loops -= l.dynamic as u32;
        }
        self.vars.truncate(b.mark);
        self.indent -= 1;
    }

    pub fn open_if(&mut self, rng: &mut Gen) {
        self.start_line();
        self.body.push_str("if ");
        self.cond(rng);
        self.body.push_str(":\n");
        self.open_block(false);
    }

    /// `elif cond:`, after the previous branch was closed.
    pub fn open_elif(&mut self, rng: &mut Gen) {
        self.start_line();
        self.body.push_str("elif ");
        self.cond(rng);
        self.body.push_str(":\n");
        self.open_block(false);
    }

    pub fn open_else(&mut self) {
        self.start_line();
        self.body.push_str("else:\n");
        self.open_block(false);
    }

    /// `for it in range(lo, hi, step):` over constants (the iterator's range is
    /// known); warp unrolls it when it runs at most 16 times without `break`.
    pub fn open_for_const(&mut self, rng: &mut Gen, lo: i32, hi: i32, step: i32) -> usize {
        let name = self.fresh_name(rng, LOOP_VARS);
        self.start_line();
        self.body.push_str("for ");
        self.body.push_str(&name);
        self.body.push_str(" in range(");
        if lo == 0 && step == 1 && chance(rng, 0.85) {
            push_int(&mut self.body, hi);
        } else {
            push_int(&mut self.body, lo);
            self.body.push_str(", ");
            push_int(&mut self.body, hi);
            if step != 1 {
                self.body.push_str(", ");
                push_int(&mut self.body, step);
            }
        }
        self.body.push_str("):\n");
        let trips = if step > 0 {
            ((hi - lo).max(0) + step - 1) / step
        } else {
            ((lo - hi).max(0) - step - 1) / -step
        };
        let last = lo + (trips - 1).max(0) * step;
        let range = (lo.min(last), lo.max(last));
        let trips = trips.max(1) as u32;
        debug_assert!(self.can_open_const());
        for l in &mut self.loops {
            l.consts_inside += 1;
        }
        self.unroll *= trips;
        self.open_block(true);
        self.loops.push(Loop {
            trips,
            dynamic: false,
            allow_continue: true,
            end_increment: None,
            limit_consts: false,
            consts_inside: 0,
        });
        self.push_var(name, T::I, Kind::Fixed, Some(range))
    }

    /// `for it in range(...)` with a dynamic bound: `range(n)`, `range(1, n)`,
    /// `range(0, n, 2)`, `range(n - 1, -1, -1)`, `range(k + 1, n)` (after an
    /// enclosing iterator `k`), `range(i, n)`. `bound` is an int parameter.
    pub fn open_for_dyn(&mut self, rng: &mut Gen, bound: usize) -> usize {
        let outer = self.iterators();
        let name = self.fresh_name(rng, LOOP_VARS);
        self.start_line();
        self.body.push_str("for ");
        self.body.push_str(&name);
        self.body.push_str(" in range(");
        match weighted(
            rng,
            &[12, 2, 2, 2, if outer.is_empty() { 0 } else { 3 }, 1, 1],
        ) {
            0 => self.use_var(bound),
            1 => {
                self.body.push_str("1, ");
                self.use_var(bound);
            }
            2 => {
                self.body.push_str("0, ");
                self.use_var(bound);
                self.body
                    .push_str(if chance(rng, 0.7) { ", 2" } else { ", 3" });
            }
            3 => {
                self.use_var(bound);
                self.body.push_str(" - 1, -1, -1");
            }
            4 => {
                let k = *pick(rng, &outer);
                self.use_var(k);
                self.body.push_str(" + 1, ");
                self.use_var(bound);
            }
            5 => {
                let t = self.tids[0];
                self.use_var(t);
                self.body.push_str(", ");
                self.use_var(bound);
            }
            _ => {
                self.body.push_str("0, ");
                self.use_var(bound);
                self.body.push_str(" - 1");
            }
        }
        self.body.push_str("):\n");
        self.dyn_loops += 1;
        self.open_block(true);
        self.loops.push(Loop {
            trips: 1,
            dynamic: true,
            allow_continue: true,
            end_increment: None,
            limit_consts: self.unroll > 1,
            consts_inside: 0,
        });
        self.push_var(name, T::I, Kind::Fixed, None)
    }

    /// A counted `while` loop: writes `it = int(0)` and `while it < bound:`
    /// (sometimes with a second condition, or `while True:` and a guarded
    /// `break`). The counter goes up first thing in the body, or last (then
    /// the body may not `continue`).
    pub fn open_while(&mut self, rng: &mut Gen, bound: Option<usize>) -> usize {
        let name = self.fresh_name(rng, COUNTERS);
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(if chance(rng, 0.85) {
            " = int(0)\n"
        } else {
            " = wp.int32(0)\n"
        });
        let c = self.push_var(name, T::I, Kind::Fixed, None);
        let forever = chance(rng, 0.15);
        self.start_line();
        let limit: &'static str = word(rng, &["4", "8", "10", "16", "20", "32", "64"]);
        let write_bound = |k: &mut Body, rng: &mut Gen| match bound {
            Some(b) if chance(rng, 0.7) => k.use_var(b),
            _ => k.body.push_str(limit),
        };
        if forever {
            self.body.push_str("while True:\n");
        } else {
            self.body.push_str("while ");
            self.use_var(c);
            self.body.push_str(" < ");
            write_bound(self, rng);
            if chance(rng, 0.25) {
                self.body.push_str(" and ");
                self.compare(rng);
            }
            self.body.push_str(":\n");
        }
        self.dyn_loops += 1;
        self.open_block(true);
        let inc_first = forever || chance(rng, 0.5);
        if inc_first {
            self.start_line();
            self.use_var(c);
            self.body.push_str(" += 1\n");
        }
        if forever {
            self.start_line();
            self.body.push_str("if ");
            self.use_var(c);
            self.body.push_str(" >= ");
            write_bound(self, rng);
            self.body.push_str(":\n");
            self.indent += 1;
            self.start_line();
            self.body.push_str("break\n");
            self.indent -= 1;
        }
        self.loops.push(Loop {
            trips: 1,
            dynamic: true,
            allow_continue: inc_first,
            end_increment: (!inc_first).then_some(c),
            limit_consts: self.unroll > 1,
            consts_inside: 0,
        });
        c
    }

    /// A constant loop may open here (see `Loop::limit_consts`).
    pub fn can_open_const(&self) -> bool {
        !self
            .loops
            .iter()
            .any(|l| l.limit_consts && l.consts_inside >= 1)
    }

    /// `continue` is allowed in the innermost loop.
    pub fn can_continue(&self) -> bool {
        self.loops.last().is_some_and(|l| l.allow_continue)
    }

    /// `if cond:` [a statement] `break` / `continue` (`cont`).
    pub fn guarded_exit(
        &mut self,
        rng: &mut Gen,
        cont: bool,
        pre: impl FnOnce(&mut Body, &mut Gen),
    ) {
        self.open_if(rng);
        pre(self, rng);
        self.flush_block(rng);
        self.start_line();
        self.body
            .push_str(if cont { "continue\n" } else { "break\n" });
        self.close();
    }

    /// `return` (in a kernel) as the last line of the current block.
    pub fn ret_void(&mut self) {
        self.start_line();
        self.body.push_str("return\n");
    }

    /// `return expr` (in a helper).
    pub fn ret(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        self.start_line();
        self.body.push_str("return ");
        self.expr_folded(rng, ty, depth);
        self.end_line();
    }

    // ------------------------------------------------------------ conditions

    /// Comparisons joined by `and` / `or`, sometimes negated.
    pub fn cond(&mut self, rng: &mut Gen) {
        match weighted(rng, &[50, 8, 18, 14, 6]) {
            0 => self.compare(rng),
            1 => {
                self.body.push_str("not (");
                self.compare(rng);
                self.body.push(')');
            }
            2 => {
                self.compare(rng);
                self.body.push_str(" and ");
                self.compare(rng);
            }
            3 => {
                self.compare(rng);
                self.body.push_str(" or ");
                self.compare(rng);
            }
            _ => {
                self.body.push('(');
                self.compare(rng);
                self.body.push_str(" or ");
                self.compare(rng);
                self.body.push_str(") and ");
                self.compare(rng);
            }
        }
    }

    /// A condition of `terms` comparisons (at least one) joined by `and` /
    /// `or`, groups in parentheses, some negated with `not`, and (with
    /// `chained`) range tests `lo < x < hi` / `a <= b <= c`.
    pub fn cond_terms(&mut self, rng: &mut Gen, terms: usize, chained: bool) {
        if terms <= 1 {
            if chained && chance(rng, 0.3) {
                self.chained_compare(rng);
            } else if chance(rng, 0.15) {
                self.body.push_str("not (");
                self.compare(rng);
                self.body.push(')');
            } else {
                self.compare(rng);
            }
            return;
        }
        let left = between(rng, 1, terms - 1);
        let op = if chance(rng, 0.5) { " and " } else { " or " };
        for (n, part) in [left, terms - left].into_iter().enumerate() {
            if n > 0 {
                self.body.push_str(op);
            }
            let negate = part > 1 && chance(rng, 0.2);
            let group = part > 1 && (negate || chance(rng, 0.6));
            if negate {
                self.body.push_str("not ");
            }
            if group {
                self.body.push('(');
            }
            self.cond_terms(rng, part, chained);
            if group {
                self.body.push(')');
            }
        }
    }

    /// `lo < x < hi` (literal bounds) or `a <= b <= c` (three operands).
    fn chained_compare(&mut self, rng: &mut Gen) {
        let ty = if self.has_source(T::I) && chance(rng, 0.25) {
            T::I
        } else {
            T::F
        };
        let ops: &[&str] = &[" < ", " <= "];
        if chance(rng, 0.6) {
            let (lo, hi) = if ty == T::F {
                *pick(
                    rng,
                    &[
                        ("0.0", "1.0"),
                        ("-1.0", "1.0"),
                        ("0.5", "2.0"),
                        ("-2.0", "0.0"),
                    ],
                )
            } else {
                *pick(rng, &[("0", "10"), ("-4", "4"), ("1", "8"), ("0", "100")])
            };
            self.body.push_str(lo);
            self.body.push_str(word(rng, ops));
            let d = below(rng, 3) as u32;
            self.chain_operand(rng, ty, d);
            self.body.push_str(word(rng, ops));
            self.body.push_str(hi);
        } else {
            for n in 0..3 {
                if n > 0 {
                    self.body.push_str(word(rng, ops));
                }
                let d = below(rng, 2) as u32;
                self.chain_operand(rng, ty, d);
            }
        }
    }

    /// An operand of a chained comparison. warp refuses to chain an array
    /// element (a reference) with values, so a bare `a[i]` (or a
    /// conditional expression, which may pick one) goes through a cast.
    fn chain_operand(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        let start = self.body.len();
        self.ex_var(rng, ty, depth, P_ADD);
        let text = &self.body[start..];
        let name_end = text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        let element = name_end > 0 && text[name_end..].starts_with('[') && text.ends_with(']') && {
            // The first `[` closes at the very end.
            let mut depth = 0i32;
            let mut close = 0;
            for (n, c) in text[name_end..].char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            close = name_end + n;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            close + 1 == text.len()
        };
        let select = text.starts_with('(') && text.contains(" if ");
        if element || select {
            self.body
                .insert_str(start, if ty == T::I { "int(" } else { "float(" });
            self.body.push(')');
        }
    }

    fn compare(&mut self, rng: &mut Gen) {
        // Iterators: `k == 2`, `k % 2 == 1`, `k > n // 2`.
        let its = self.iterators();
        if !its.is_empty() && chance(rng, 0.25) {
            let k = *pick(rng, &its);
            self.use_var(k);
            if chance(rng, 0.3) {
                self.body.push_str(" % ");
                self.body.push_str(word(rng, &["2", "3", "4"]));
                self.body.push_str(" == ");
                self.body.push_str(word(rng, &["0", "1"]));
            } else {
                self.body
                    .push_str(word(rng, &[" == ", " > ", " < ", " >= ", " != "]));
                self.body.push_str(word(rng, &["0", "1", "2", "3", "4"]));
            }
            return;
        }
        let ty = if self.has_source(T::I) && chance(rng, 0.3) {
            T::I
        } else {
            T::F
        };
        let depth = weighted(rng, &[4, 4, 2]) as u32;
        // Comparison operands bind tighter than `a if c else b`.
        self.ex_var(rng, ty, depth, P_ADD);
        self.body.push_str(word(
            rng,
            &[" < ", " <= ", " > ", " >= ", " == ", " != ", " > ", " < "],
        ));
        if chance(rng, 0.25) {
            self.body.push_str(if ty == T::F { "0.0" } else { "0" });
        } else if chance(rng, 0.4) {
            self.literal(rng, ty);
        } else {
            let d = below(rng, 2) as u32;
            self.ex_var(rng, ty, d, P_ADD);
        }
    }

    // ------------------------------------------------------------ expressions

    /// An expression of `ty`, at most `depth` operators deep, that reads a
    /// variable (when the scope has one of a usable type).
    pub fn expr(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        self.ex_var(rng, ty, depth, 0);
    }

    /// An expression to write right after a binary operator: it binds
    /// tighter than `*` (parenthesized where Python needs it).
    pub fn operand(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        self.ex_var(rng, ty, depth, P_MUL);
    }

    /// An expression with, in drain mode, the locals nothing read folded in
    /// (` + x`): then a conditional expression gets parentheses.
    fn expr_folded(&mut self, rng: &mut Gen, ty: T, depth: u32) {
        let p = if self.drain { P_ADD } else { 0 };
        self.ex_var(rng, ty, depth, p);
        self.fold_unused(rng, ty);
    }

    /// Where the text and the use counts stand, for [`Body::rollback`].
    fn mark(&self) -> (usize, usize) {
        (self.body.len(), self.use_log.len())
    }

    /// Drops what was written since `m`, and the uses it counted.
    fn rollback(&mut self, m: (usize, usize)) {
        self.body.truncate(m.0);
        while self.use_log.len() > m.1 {
            let u = self.use_log.pop().unwrap_or_default();
            if u & HELPER_USE != 0 {
                self.helpers[u & !HELPER_USE].uses -= 1;
            } else if u < self.vars.len() {
                self.vars[u].uses -= 1;
            }
        }
    }

    /// `ex`, retried while it reads no variable, then a plain variable.
    fn ex_var(&mut self, rng: &mut Gen, ty: T, depth: u32, min_prec: u8) -> bool {
        let depth = depth.min(self.style.max_depth);
        let m = self.mark();
        for _ in 0..2 {
            if self.ex(rng, ty, depth, min_prec) {
                return true;
            }
            self.rollback(m);
        }
        self.leaf_var(rng, ty)
    }

    /// Writes an expression; returns whether it reads a variable.
    fn ex(&mut self, rng: &mut Gen, ty: T, depth: u32, min_prec: u8) -> bool {
        if depth == 0 || chance(rng, self.style.p_leaf) {
            return self.leaf(rng, ty);
        }
        if !matches!(ty, T::M(_)) && chance(rng, self.style.p_select) {
            return self.select(rng, ty, depth, min_prec);
        }
        match ty {
            T::F => self.ex_f(rng, depth, min_prec),
            T::I => self.ex_i(rng, depth, min_prec),
            T::V(n) => self.ex_v(rng, n, depth, min_prec),
            T::M(n) => self.ex_m(rng, n, depth, min_prec),
        }
    }

    /// A vector size with a source in scope, if any.
    fn vec_dim(&self, rng: &mut Gen) -> Option<u8> {
        let mut dims = [0u8; 3];
        let mut n = 0;
        for d in 2..=4 {
            if self.has_source(T::V(d)) {
                dims[n] = d;
                n += 1;
            }
        }
        (n > 0).then(|| dims[below(rng, n)])
    }

    fn mat_dim(&self, rng: &mut Gen) -> Option<u8> {
        let mut dims = [0u8; 3];
        let mut n = 0;
        for d in 2..=4 {
            if self.has_source(T::M(d)) {
                dims[n] = d;
                n += 1;
            }
        }
        (n > 0).then(|| dims[below(rng, n)])
    }

    fn helpers_returning(&self, ty: T) -> Vec<usize> {
        (0..self.helpers.len())
            .filter(|&h| self.helpers[h].ret == ty)
            .collect()
    }

    fn ex_f(&mut self, rng: &mut Gen, depth: u32, min_prec: u8) -> bool {
        let vd = self.vec_dim(rng);
        let md = self.mat_dim(rng);
        let hs = self.helpers_returning(T::F);
        let mut w = self.style.wf;
        if vd.is_none() {
            w[5] = 0;
            w[6] = 0;
            w[7] = 0;
        }
        if md.is_none() {
            w[8] = 0;
            w[9] = 0;
        }
        if hs.is_empty() {
            w[11] = 0;
        }
        match weighted(rng, &w) {
            0 => {
                let op = *pick(rng, &[" + ", " - ", " * ", " / ", " + ", " * "]);
                self.bin(rng, T::F, op, T::F, depth, min_prec)
            }
            1 => self.neg(rng, T::F, depth, min_prec),
            2 => {
                let f = *pick(rng, self.style.unary_calls);
                let guard = chance(rng, self.style.p_guard);
                self.body.push_str(f);
                self.body.push('(');
                let v;
                if guard && f == "wp.sqrt" {
                    self.body.push_str("wp.abs(");
                    v = self.ex_var(rng, T::F, depth - 1, 0);
                    self.body.push(')');
                } else if guard && f == "wp.log" {
                    self.body.push_str("wp.abs(");
                    v = self.ex_var(rng, T::F, depth - 1, 0);
                    self.body.push_str(") + 1.0");
                } else {
                    v = self.ex_var(rng, T::F, depth - 1, 0);
                }
                self.body.push(')');
                v
            }
            3 => {
                let f = *pick(rng, &["wp.min(", "wp.max(", "wp.pow("]);
                if f == "wp.pow(" {
                    self.body.push_str("wp.pow(wp.abs(");
                    let v = self.ex_var(rng, T::F, depth - 1, 0);
                    self.body.push_str("), ");
                    self.body.push_str(word(rng, &["2.0", "3.0", "0.5", "1.5"]));
                    self.body.push(')');
                    v
                } else {
                    self.call2(rng, f, T::F, T::F, depth)
                }
            }
            4 => self.clamp(rng, T::F, depth),
            5..=7 => {
                let n = vd.unwrap_or(3);
                match weighted(rng, &self.style.wf[5..8]) {
                    0 => self.call2(rng, "wp.dot(", T::V(n), T::V(n), depth),
                    1 => self.call1(rng, "wp.length(", T::V(n), depth),
                    _ => self.call1(rng, "wp.length_sq(", T::V(n), depth),
                }
            }
            8 | 9 => {
                let n = md.unwrap_or(3);
                let f = if chance(rng, 0.5) {
                    "wp.determinant("
                } else {
                    "wp.trace("
                };
                self.call1(rng, f, T::M(n), depth)
            }
            10 => {
                self.body.push_str("wp.lerp(");
                let start = self.body.len();
                let v = self.ex_var(rng, T::F, depth - 1, 0);
                let end = self.body.len();
                self.body.push_str(", ");
                self.distinct_operand(start, end, |k| {
                    k.ex(rng, T::F, depth - 1, 0);
                });
                self.body.push_str(", ");
                self.blend_factor(rng, depth);
                self.body.push(')');
                v
            }
            _ => {
                let h = *pick(rng, &hs);
                self.call_helper(rng, h, depth)
            }
        }
    }

    fn ex_i(&mut self, rng: &mut Gen, depth: u32, min_prec: u8) -> bool {
        match weighted(rng, &self.style.wi) {
            0 => {
                let op = *pick(rng, &[" + ", " - ", " * ", " // ", " % ", " + "]);
                if op == " // " || op == " % " {
                    let paren = P_MUL < min_prec;
                    if paren {
                        self.body.push('(');
                    }
                    let start = self.body.len();
                    let v = self.ex_var(rng, T::I, depth - 1, P_MUL);
                    let end = self.body.len();
                    self.body.push_str(op);
                    self.distinct_operand(start, end, |k| k.modulus(rng));
                    if paren {
                        self.body.push(')');
                    }
                    v
                } else {
                    self.bin(rng, T::I, op, T::I, depth, min_prec)
                }
            }
            1 => match below(rng, 4) {
                0 => self.call1(rng, "wp.abs(", T::I, depth),
                1 => self.clamp(rng, T::I, depth),
                _ => {
                    let f = if chance(rng, 0.5) {
                        "wp.min("
                    } else {
                        "wp.max("
                    };
                    self.call2(rng, f, T::I, T::I, depth)
                }
            },
            _ => self.neg(rng, T::I, depth, min_prec),
        }
    }

    fn ex_v(&mut self, rng: &mut Gen, n: u8, depth: u32, min_prec: u8) -> bool {
        let ty = T::V(n);
        let hs = self.helpers_returning(ty);
        let mut w = self.style.wv;
        if n != 3 {
            w[4] = 0;
        }
        if !self.has_source(T::M(n)) {
            w[7] = 0;
        }
        if hs.is_empty() {
            w[9] = 0;
        }
        match weighted(rng, &w) {
            0 => {
                let op = if chance(rng, 0.6) { " + " } else { " - " };
                self.bin(rng, ty, op, ty, depth, min_prec)
            }
            1 => match weighted(rng, &[4, 3, 2]) {
                0 => self.bin(rng, ty, " * ", T::F, depth, min_prec),
                1 => self.bin(rng, T::F, " * ", ty, depth, min_prec),
                _ => self.bin(rng, ty, " / ", T::F, depth, min_prec),
            },
            2 => self.neg(rng, ty, depth, min_prec),
            3 => self.call1(rng, "wp.normalize(", ty, depth),
            4 => self.call2(rng, "wp.cross(", ty, ty, depth),
            5 => {
                self.body.push_str("wp.lerp(");
                let start = self.body.len();
                let v = self.ex_var(rng, ty, depth - 1, 0);
                let end = self.body.len();
                self.body.push_str(", ");
                self.distinct_operand(start, end, |k| {
                    k.ex(rng, ty, depth - 1, 0);
                });
                self.body.push_str(", ");
                self.blend_factor(rng, depth);
                self.body.push(')');
                v
            }
            6 => {
                let f = if chance(rng, 0.5) {
                    "wp.min("
                } else {
                    "wp.max("
                };
                self.call2(rng, f, ty, ty, depth)
            }
            7 => {
                if chance(rng, 0.8) {
                    self.bin(rng, T::M(n), " * ", ty, depth, min_prec)
                } else {
                    self.bin(rng, ty, " * ", T::M(n), depth, min_prec)
                }
            }
            8 => self.ctor(rng, ty, depth),
            9 => {
                let h = *pick(rng, &hs);
                self.call_helper(rng, h, depth)
            }
            _ => {
                if chance(rng, 0.5) {
                    self.call1(rng, "wp.abs(", ty, depth)
                } else {
                    self.call2(rng, "wp.cw_mul(", ty, ty, depth)
                }
            }
        }
    }

    fn ex_m(&mut self, rng: &mut Gen, n: u8, depth: u32, min_prec: u8) -> bool {
        let ty = T::M(n);
        let hs = self.helpers_returning(ty);
        let mut w = self.style.wm;
        if hs.is_empty() {
            w[9] = 0;
        }
        if !self.has_source(T::V(n)) {
            w[6] /= 3;
            w[7] /= 3;
        }
        match weighted(rng, &w) {
            0 => {
                let op = if chance(rng, 0.6) { " + " } else { " - " };
                self.bin(rng, ty, op, ty, depth, min_prec)
            }
            1 => match weighted(rng, &[4, 3, 1]) {
                0 => self.bin(rng, ty, " * ", T::F, depth, min_prec),
                1 => self.bin(rng, T::F, " * ", ty, depth, min_prec),
                _ => self.bin(rng, ty, " / ", T::F, depth, min_prec),
            },
            2 => self.neg(rng, ty, depth, min_prec),
            3 => self.bin(rng, ty, " * ", ty, depth, min_prec),
            4 => self.call1(rng, "wp.transpose(", ty, depth),
            5 => self.call1(rng, "wp.inverse(", ty, depth),
            6 => self.call2(rng, "wp.outer(", T::V(n), T::V(n), depth),
            7 => self.call1(rng, "wp.diag(", T::V(n), depth),
            8 => self.ctor(rng, ty, depth),
            9 => {
                let h = *pick(rng, &hs);
                self.call_helper(rng, h, depth)
            }
            _ => {
                self.identity(rng, n);
                false
            }
        }
    }

    /// `a if cond else b` (parenthesized inside another expression) or
    /// `wp.where(cond, a, b)`.
    fn select(&mut self, rng: &mut Gen, ty: T, depth: u32, min_prec: u8) -> bool {
        let ternary = chance(rng, 0.6);
        let paren = ternary && min_prec > 0;
        if paren {
            self.body.push('(');
        }
        if !ternary {
            self.body.push_str("wp.where(");
            self.cond(rng);
            self.body.push_str(", ");
        }
        let start = self.body.len();
        let v = self.ex_var(rng, ty, depth - 1, P_ADD);
        let end = self.body.len();
        if ternary {
            self.body.push_str(" if ");
            self.cond(rng);
            self.body.push_str(" else ");
        } else {
            self.body.push_str(", ");
        }
        self.distinct_operand(start, end, |k| {
            k.ex(rng, ty, depth - 1, P_ADD);
        });
        if !ternary || paren {
            self.body.push(')');
        }
        v
    }

    /// `f(x)` with an argument of `arg` that reads a variable.
    fn call1(&mut self, rng: &mut Gen, f: &str, arg: T, depth: u32) -> bool {
        self.body.push_str(f);
        let v = self.ex_var(rng, arg, depth - 1, 0);
        self.body.push(')');
        v
    }

    /// `f(x, y)`, `x` reading a variable, `y` not the same text as `x`.
    fn call2(&mut self, rng: &mut Gen, f: &str, a: T, b: T, depth: u32) -> bool {
        self.body.push_str(f);
        let start = self.body.len();
        let v = self.ex_var(rng, a, depth - 1, 0);
        let end = self.body.len();
        self.body.push_str(", ");
        if a == b {
            self.distinct_operand(start, end, |k| {
                k.ex(rng, b, depth - 1, 0);
            });
        } else {
            self.ex(rng, b, depth - 1, 0);
        }
        self.body.push(')');
        v
    }

    /// `lhs op rhs` of the given operand types at `op`'s precedence; the
    /// right side reads a variable when the left does not.
    fn bin(&mut self, rng: &mut Gen, lt: T, op: &str, rt: T, depth: u32, min_prec: u8) -> bool {
        let prec = if op == " + " || op == " - " {
            P_ADD
        } else {
            P_MUL
        };
        let paren = prec < min_prec;
        if paren {
            self.body.push('(');
        }
        let start = self.body.len();
        let left = self.ex(rng, lt, depth - 1, prec);
        let end = self.body.len();
        self.body.push_str(op);
        // Lopsided trees: the right operand is often shallower.
        let rd = if chance(rng, 0.5) {
            below(rng, depth as usize) as u32
        } else {
            depth - 1
        };
        // Left-associative: a same-level right operand needs parentheses.
        let mut right = false;
        if lt == rt {
            self.distinct_operand(start, end, |k| {
                right = if left {
                    k.ex(rng, rt, rd, prec + 1)
                } else {
                    k.ex_var(rng, rt, rd, prec + 1)
                };
            });
        } else if left {
            right = self.ex(rng, rt, rd, prec + 1);
        } else {
            right = self.ex_var(rng, rt, rd, prec + 1);
        }
        if paren {
            self.body.push(')');
        }
        left || right
    }

    fn neg(&mut self, rng: &mut Gen, ty: T, depth: u32, min_prec: u8) -> bool {
        let paren = P_UNARY < min_prec;
        if paren {
            self.body.push('(');
        }
        self.body.push('-');
        let v = self.ex_var(rng, ty, depth - 1, P_ATOM);
        if paren {
            self.body.push(')');
        }
        v
    }

    /// `wp.clamp(x, lo, hi)` with literal bounds or two scalar parameters.
    fn clamp(&mut self, rng: &mut Gen, ty: T, depth: u32) -> bool {
        self.body.push_str("wp.clamp(");
        let v = self.ex_var(rng, ty, depth - 1, 0);
        let scalars = self.find(|x| x.kind == Kind::Scalar && x.ty == ty);
        if scalars.len() >= 2 && chance(rng, 0.4) {
            let a = below(rng, scalars.len());
            let b = (a + 1 + below(rng, scalars.len() - 1)) % scalars.len();
            self.body.push_str(", ");
            self.use_var(scalars[a]);
            self.body.push_str(", ");
            self.use_var(scalars[b]);
        } else {
            let (lo, hi) = *pick(rng, if ty == T::F { FLOAT_CLAMPS } else { INT_CLAMPS });
            self.body.push_str(", ");
            self.body.push_str(lo);
            self.body.push_str(", ");
            self.body.push_str(hi);
        }
        self.body.push(')');
        v
    }

    /// The `t` of a lerp: a literal, a scalar, or an expression.
    fn blend_factor(&mut self, rng: &mut Gen, depth: u32) {
        match below(rng, 3) {
            0 => self
                .body
                .push_str(word(rng, &["0.5", "0.25", "0.75", "0.1", "0.9", "0.3"])),
            1 => {
                self.leaf(rng, T::F);
            }
            _ => {
                self.ex(rng, T::F, depth.saturating_sub(1).min(2), 0);
            }
        }
    }

    /// `wp.vecN(...)` / `wp.matNN(...)` from float expressions; vectors also
    /// broadcast one value (`wp.vec3(s)`).
    fn ctor(&mut self, rng: &mut Gen, ty: T, depth: u32) -> bool {
        let n = ty.dim() as usize;
        self.body.push_str(ty.ctor());
        self.body.push('(');
        let count = match ty {
            T::V(_) if chance(rng, 0.15) => 1,
            T::V(_) => n,
            _ => n * n,
        };
        // Big matrices get mostly literals and leaves.
        let arg_depth = if count > 9 { 0 } else { (depth - 1).min(2) };
        let mut v = false;
        for c in 0..count {
            if c > 0 {
                self.body.push_str(", ");
            }
            v |= if count > 4 && chance(rng, 0.5) {
                self.literal(rng, T::F);
                false
            } else if chance(rng, 0.5) {
                self.leaf(rng, T::F)
            } else {
                self.ex(rng, T::F, arg_depth, 0)
            };
        }
        self.body.push(')');
        v
    }

    fn identity(&mut self, rng: &mut Gen, n: u8) {
        self.body.push_str("wp.identity(n=");
        self.body.push((b'0' + n) as char);
        self.body.push_str(match below(rng, 4) {
            0 => ", dtype=wp.float32)",
            _ => ", dtype=float)",
        });
    }

    /// `helper(args)`, the first argument reading a variable.
    fn call_helper(&mut self, rng: &mut Gen, h: usize, depth: u32) -> bool {
        self.helpers[h].uses += 1;
        self.use_log.push(HELPER_USE | h);
        self.body.push_str(&self.helpers[h].name);
        self.body.push('(');
        let mut v = false;
        for a in 0..self.helpers[h].params.len() {
            if a > 0 {
                self.body.push_str(", ");
            }
            let t = self.helpers[h].params[a];
            let d = depth.saturating_sub(1).min(2);
            v |= if a == 0 {
                self.ex_var(rng, t, d, 0)
            } else {
                self.ex(rng, t, d, 0)
            };
        }
        self.body.push(')');
        v
    }

    /// Writes a second operand with `write`, again (up to three times) while
    /// it comes out the same as the first one at `start..end` (`x - x`).
    fn distinct_operand(&mut self, start: usize, end: usize, mut write: impl FnMut(&mut Body)) {
        let m = self.mark();
        for _ in 0..3 {
            write(self);
            if self.body[m.0..] != self.body[start..end] {
                return;
            }
            self.rollback(m);
        }
        write(self);
    }

    /// A positive int literal or an int scalar parameter (divisors, moduli).
    fn modulus(&mut self, rng: &mut Gen) {
        let scalars = self.int_scalars();
        if !scalars.is_empty() && chance(rng, 0.4) {
            let n = *pick(rng, &scalars);
            self.use_var(n);
        } else {
            self.body
                .push_str(word(rng, &["2", "3", "4", "5", "7", "8", "10", "16"]));
        }
    }

    fn literal(&mut self, rng: &mut Gen, ty: T) {
        match ty {
            T::F if chance(rng, 0.75) => self.body.push_str(word(rng, FLOAT_LITERALS)),
            T::F => {
                self.body.push((b'0' + below(rng, 10) as u8) as char);
                self.body.push('.');
                self.body.push((b'1' + below(rng, 9) as u8) as char);
            }
            _ => self.body.push_str(word(rng, INT_LITERALS)),
        }
    }

    /// A variable of `ty` (a value or an array read), else something built
    /// from one (`float(n)`, `wp.vec3(x, 0.0, 1.0)`, `wp.diag(v)`), else a
    /// literal. Returns whether it reads a variable.
    fn leaf_var(&mut self, rng: &mut Gen, ty: T) -> bool {
        if let Some(n) = self.pick_fresh(rng, |x| x.ty == ty && x.readable()) {
            if self.vars[n].is_array() {
                self.array_read(rng, n);
            } else {
                self.use_var(n);
            }
            return true;
        }
        match ty {
            T::F if self.has_source(T::I) => {
                self.body.push_str("float(");
                self.leaf_var(rng, T::I);
                self.body.push(')');
                true
            }
            T::I if self.has_source(T::F) => {
                self.body.push_str("int(");
                self.leaf_var(rng, T::F);
                self.body.push(')');
                true
            }
            T::V(n) => {
                self.body.push_str(ty.ctor());
                self.body.push('(');
                let v = self.leaf_var(rng, T::F);
                for _ in 1..n {
                    self.body.push_str(", ");
                    self.literal(rng, T::F);
                }
                self.body.push(')');
                v
            }
            T::M(n) => {
                self.body.push_str("wp.diag(");
                let v = self.leaf_var(rng, T::V(n));
                self.body.push(')');
                v
            }
            _ => {
                self.literal(rng, ty);
                false
            }
        }
    }

    /// Among the variables that `fits`, an unread one with probability 0.6
    /// (0.9 in drain mode) when there is one, else any.
    fn pick_fresh(&self, rng: &mut Gen, fits: impl Fn(&Var) -> bool) -> Option<usize> {
        let (mut na, mut nu) = (0usize, 0usize);
        for v in &self.vars {
            if fits(v) {
                na += 1;
                nu += (v.uses == 0) as usize;
            }
        }
        if na == 0 {
            return None;
        }
        let p = if self.drain { 0.9 } else { 0.6 };
        let unread_only = nu > 0 && chance(rng, p);
        let mut nth = below(rng, if unread_only { nu } else { na });
        for (n, v) in self.vars.iter().enumerate() {
            if fits(v) && (!unread_only || v.uses == 0) {
                if nth == 0 {
                    return Some(n);
                }
                nth -= 1;
            }
        }
        None
    }

    /// A leaf of `ty`: a local, parameter, array read, literal, component,
    /// or cast; falls back to a constructor for vectors and matrices.
    /// Returns whether it reads a variable.
    fn leaf(&mut self, rng: &mut Gen, ty: T) -> bool {
        let st = self.style;
        let scalar = matches!(ty, T::F | T::I);
        // One pass over the variables for every count the weights need.
        let (mut n_local, mut n_param, mut n_array, mut comp_ok) = (0, 0, 0, false);
        for x in &self.vars {
            if x.ty == ty {
                match x.kind {
                    Kind::Local | Kind::Fixed => n_local += 1,
                    Kind::Scalar => n_param += 1,
                    Kind::Array(..) if x.readable() => n_array += 1,
                    _ => {}
                }
            }
            comp_ok |= x.readable()
                && match ty {
                    T::F => matches!(x.ty, T::V(_) | T::M(_)),
                    T::V(n) => x.ty == T::M(n),
                    _ => false,
                };
        }
        let cast_ok = match ty {
            T::F => self.has_source(T::I),
            T::I => self.has_source(T::F),
            _ => false,
        };
        let weights = [
            if n_local > 0 { st.leaf[0] } else { 0 },
            if n_param > 0 { st.leaf[1] } else { 0 },
            if n_array > 0 { st.leaf[2] } else { 0 },
            if scalar { st.leaf[3] } else { 1 },
            if comp_ok { st.leaf[4] } else { 0 },
            if cast_ok { st.leaf[5] } else { 0 },
        ];
        let kind = if weights.iter().all(|&w| w == 0) {
            3
        } else {
            weighted(rng, &weights)
        };
        match kind {
            0 => {
                let n = self
                    .pick_fresh(rng, |x| {
                        x.ty == ty && matches!(x.kind, Kind::Local | Kind::Fixed)
                    })
                    .expect("counted");
                self.use_var(n);
                true
            }
            1 => {
                let n = self
                    .pick_fresh(rng, |x| x.ty == ty && x.kind == Kind::Scalar)
                    .expect("counted");
                self.use_var(n);
                true
            }
            2 => {
                let n = self
                    .pick_fresh(rng, |x| x.ty == ty && x.is_array() && x.readable())
                    .expect("counted");
                self.array_read(rng, n);
                true
            }
            3 => match ty {
                T::F | T::I => {
                    self.literal(rng, ty);
                    false
                }
                T::V(n) => {
                    self.body.push_str(ty.ctor());
                    self.body.push('(');
                    let k = if chance(rng, 0.4) { 1 } else { n };
                    let mut v = false;
                    for c in 0..k {
                        if c > 0 {
                            self.body.push_str(", ");
                        }
                        if chance(rng, 0.6) {
                            self.literal(rng, T::F);
                        } else {
                            v |= self.leaf(rng, T::F);
                        }
                    }
                    self.body.push(')');
                    v
                }
                T::M(n) => {
                    if chance(rng, 0.5) {
                        self.identity(rng, n);
                        false
                    } else if self.has_source(T::V(n)) {
                        self.body.push_str("wp.diag(");
                        let v = self.leaf(rng, T::V(n));
                        self.body.push(')');
                        v
                    } else {
                        self.ctor(rng, ty, 1)
                    }
                }
            },
            4 => {
                // Values first; array elements (`a[i].y`, `R[i][0, 1]`) now and then.
                let of_type = move |x: &Var| match ty {
                    T::V(n) => x.ty == T::M(n),
                    _ => matches!(x.ty, T::V(_) | T::M(_)),
                };
                let values = self.count(|x| of_type(x) && x.is_value());
                let arrays = values == 0 || chance(rng, 0.3);
                let fits = |x: &Var| x.readable() && (x.is_value() || arrays) && of_type(x);
                let c = self
                    .pick_fresh(rng, fits)
                    .expect("a readable vector or matrix (comp_ok)");
                if self.vars[c].is_array() {
                    self.array_read(rng, c);
                } else {
                    self.use_var(c);
                }
                if let T::V(n) = ty {
                    // A row of a matrix.
                    self.body.push('[');
                    self.component_index(rng, n);
                    self.body.push(']');
                } else {
                    self.component_suffix(rng, self.vars[c].ty);
                }
                true
            }
            _ => {
                let other = if ty == T::F { T::I } else { T::F };
                self.body
                    .push_str(if ty == T::F { "float(" } else { "int(" });
                let d = below(rng, 2) as u32;
                let v = self.ex_var(rng, other, d, 0);
                self.body.push(')');
                v
            }
        }
    }

    /// `[1]`, `.y` (vectors), `[0, 2]`, `[1][0]` (matrices) after a value of `ty`.
    fn component_suffix(&mut self, rng: &mut Gen, ty: T) {
        let n = ty.dim();
        match ty {
            T::V(_) => {
                if chance(rng, 0.4) {
                    self.body.push('.');
                    self.body.push_str(COMPONENTS[below(rng, n as usize)]);
                } else {
                    self.body.push('[');
                    self.component_index(rng, n);
                    self.body.push(']');
                }
            }
            _ => {
                self.body.push('[');
                self.component_index(rng, n);
                self.body
                    .push_str(if chance(rng, 0.2) { "][" } else { ", " });
                self.component_index(rng, n);
                self.body.push(']');
            }
        }
    }

    /// A literal in `0..n`, or an iterator whose values stay in it.
    fn component_index(&mut self, rng: &mut Gen, n: u8) {
        if let Some(k) = self.force_index.take() {
            self.use_var(k);
            return;
        }
        let its = self.find(|x| {
            x.kind == Kind::Fixed && x.range.is_some_and(|(lo, hi)| lo >= 0 && hi < n as i32)
        });
        if !its.is_empty() && chance(rng, 0.5) {
            let k = *pick(rng, &its);
            self.use_var(k);
        } else {
            self.body
                .push((b'0' + below(rng, n as usize) as u8) as char);
        }
    }

    // ------------------------------------------------------------ arrays

    /// `arr[i, j]`: a read.
    fn array_read(&mut self, rng: &mut Gen, arr: usize) {
        self.array_ref(rng, arr, false);
    }

    /// `arr[..]`; a write (`write`) to a grid goes to the thread's own cell
    /// almost always.
    fn array_ref(&mut self, rng: &mut Gen, arr: usize, write: bool) {
        let nd = match self.vars[arr].kind {
            Kind::Array(nd, _) => nd,
            _ => 1,
        };
        self.use_var(arr);
        self.body.push('[');
        for d in 0..nd {
            if d > 0 {
                self.body.push_str(", ");
            }
            self.index(rng, arr, d, write);
        }
        self.body.push(']');
    }

    /// The index of dimension `d` of `arr`.
    fn index(&mut self, rng: &mut Gen, arr: usize, d: u8, write: bool) {
        let nd = match self.vars[arr].kind {
            Kind::Array(nd, _) => nd as usize,
            _ => 1,
        };
        let grid = nd == self.tids.len() && nd > 1;
        if grid && write && chance(rng, 0.92) {
            self.use_var(self.tids[d as usize]);
            return;
        }
        let its = self.iterators();
        let w = self.style.idx;
        let has_loop = its
            .iter()
            .any(|&k| self.vars[k].range.is_none_or(|(lo, _)| lo >= 0));
        let choice = weighted(
            rng,
            &[
                w[0],
                if has_loop { w[1] } else { 0 },
                if grid || !self.int_scalars().is_empty() {
                    w[2]
                } else {
                    0
                },
            ],
        );
        // The launch dimension this array dimension follows.
        let td = if grid {
            d as usize
        } else {
            (d as usize).min(self.tids.len().saturating_sub(1))
        };
        match choice {
            1 => {
                let usable: Vec<usize> = its
                    .into_iter()
                    .filter(|&k| self.vars[k].range.is_none_or(|(lo, _)| lo >= 0))
                    .collect();
                let k = *pick(rng, &usable);
                if self.tids.len() == 1
                    && nd == 1
                    && chance(rng, 0.2)
                    && !self.int_scalars().is_empty()
                {
                    // `(i + k) % n`
                    let n = *pick(rng, &self.int_scalars());
                    self.body.push('(');
                    self.use_var(self.tids[0]);
                    self.body.push_str(" + ");
                    self.use_var(k);
                    self.body.push_str(") % ");
                    self.use_var(n);
                } else {
                    self.use_var(k);
                }
            }
            2 if grid => self.neighbour(rng, td),
            2 => {
                let ns = self.int_scalars();
                let n = *pick(rng, &ns);
                self.body.push('(');
                self.use_var(self.tids[td]);
                self.body
                    .push_str(word(rng, &[" + 1", " + 1", " + 2", " + 3", " - 1"]));
                self.body.push_str(") % ");
                self.use_var(n);
            }
            _ => {
                if nd == 1
                    && self.tids.len() > 1
                    && self.sizes.len() == self.tids.len()
                    && chance(rng, 0.3)
                {
                    // Flattened: `i * ny + j`, `(i * ny + j) * nz + k`.
                    if self.tids.len() == 3 {
                        self.body.push('(');
                    }
                    self.use_var(self.tids[0]);
                    self.body.push_str(" * ");
                    self.use_var(self.sizes[1]);
                    self.body.push_str(" + ");
                    self.use_var(self.tids[1]);
                    if self.tids.len() == 3 {
                        self.body.push_str(") * ");
                        self.use_var(self.sizes[2]);
                        self.body.push_str(" + ");
                        self.use_var(self.tids[2]);
                    }
                } else {
                    self.use_var(self.tids[td]);
                }
            }
        }
    }

    /// A neighbour of the thread's cell along launch dimension `d`:
    /// `i + 1` (interior threads only), `wp.clamp(i + 1, 0, nx - 1)`,
    /// `wp.min(i + 1, nx - 1)`, `wp.max(i - 1, 0)`, `(i + 1) % nx`.
    pub fn neighbour(&mut self, rng: &mut Gen, d: usize) {
        let t = self.tids[d];
        let s = self.sizes.get(d).copied();
        let up = chance(rng, 0.5);
        let Some(s) = s else {
            self.use_var(t);
            return;
        };
        let form = weighted(rng, &[if self.interior { 8 } else { 0 }, 5, 2, 2]);
        match form {
            0 => {
                self.use_var(t);
                self.body.push_str(if up { " + 1" } else { " - 1" });
            }
            1 => {
                self.body.push_str("wp.clamp(");
                self.use_var(t);
                self.body.push_str(if up { " + 1" } else { " - 1" });
                self.body.push_str(", 0, ");
                self.use_var(s);
                self.body.push_str(" - 1)");
            }
            2 => {
                if up {
                    self.body.push_str("wp.min(");
                    self.use_var(t);
                    self.body.push_str(" + 1, ");
                    self.use_var(s);
                    self.body.push_str(" - 1)");
                } else {
                    self.body.push_str("wp.max(");
                    self.use_var(t);
                    self.body.push_str(" - 1, 0)");
                }
            }
            _ => {
                self.body.push('(');
                self.use_var(t);
                if up {
                    self.body.push_str(" + 1) % ");
                } else {
                    self.body.push_str(" + ");
                    self.use_var(s);
                    self.body.push_str(" - 1) % ");
                }
                self.use_var(s);
            }
        }
    }

    /// Characters of the last line written (without indentation).
    pub fn last_line_len(&self) -> usize {
        let b = self.body.trim_end_matches('\n');
        let line = &b[b.rfind('\n').map_or(0, |p| p + 1)..];
        line.trim_start().len()
    }

    /// Writes raw text as a line (category-specific statements).
    pub fn raw_line(&mut self, text: &str) {
        self.start_line();
        self.body.push_str(text);
        self.end_line();
    }

    /// Starts a line the caller fills with `push`/`push_var`/`expr_into`.
    pub fn begin(&mut self) {
        self.start_line();
    }

    pub fn push(&mut self, s: &str) {
        self.body.push_str(s);
    }

    pub fn push_use(&mut self, v: usize) {
        self.use_var(v);
    }

    pub fn end(&mut self) {
        self.end_line();
    }

    /// Opens a block after a line the caller wrote (`if ...:`).
    pub fn open_raw(&mut self) {
        self.open_block(false);
    }

    /// Declares a local the caller initialised on a raw line.
    pub fn declare(&mut self, name: String, ty: T) -> usize {
        self.push_var(name, ty, Kind::Local, None)
    }

    pub fn fresh(&mut self, rng: &mut Gen, ty: T) -> String {
        self.fresh_name(rng, local_pool(ty))
    }

    // ------------------------------------------------------------ grids

    /// `arr[..]` with each dimension's index given: the thread index, an
    /// offset from it, an iterator, or the thread index plus an iterator.
    /// Offsets and sums are kept in range the way `wrap` says (raw offsets
    /// only for interior threads).
    pub fn grid_ref(&mut self, arr: usize, ix: &[Ix], wrap: Wrap) {
        self.use_var(arr);
        self.body.push('[');
        for (d, &x) in ix.iter().enumerate() {
            if d > 0 {
                self.body.push_str(", ");
            }
            self.grid_index(d, x, wrap);
        }
        self.body.push(']');
    }

    fn grid_index(&mut self, d: usize, x: Ix, wrap: Wrap) {
        let t = self.tids[d.min(self.tids.len() - 1)];
        let size = self.sizes.get(d).copied();
        let (off, var) = match x {
            Ix::Tid => {
                self.use_var(t);
                return;
            }
            Ix::Var(k) => {
                self.use_var(k);
                return;
            }
            Ix::Off(o) => (o, None),
            Ix::AddVar(k) => (0, Some(k)),
        };
        let wrap = match size {
            None => Wrap::Raw,
            Some(_) if wrap == Wrap::MinMax && var.is_some() => Wrap::Clamp,
            Some(_) => wrap,
        };
        let s = size.unwrap_or(t);
        let shifted = |k: &mut Body| {
            k.use_var(t);
            match var {
                Some(v) => {
                    k.body.push_str(" + ");
                    k.use_var(v);
                }
                None => {
                    k.body.push_str(if off > 0 { " + " } else { " - " });
                    push_int(&mut k.body, off.abs());
                }
            }
        };
        match wrap {
            Wrap::Raw => shifted(self),
            Wrap::Clamp => {
                self.body.push_str("wp.clamp(");
                shifted(self);
                self.body.push_str(", 0, ");
                self.use_var(s);
                self.body.push_str(" - 1)");
            }
            Wrap::MinMax => {
                if off > 0 {
                    self.body.push_str("wp.min(");
                    shifted(self);
                    self.body.push_str(", ");
                    self.use_var(s);
                    self.body.push_str(" - 1)");
                } else {
                    self.body.push_str("wp.max(");
                    shifted(self);
                    self.body.push_str(", 0)");
                }
            }
            Wrap::Modulo => {
                self.body.push('(');
                self.use_var(t);
                match var {
                    Some(v) => {
                        self.body.push_str(" + ");
                        self.use_var(v);
                        self.body.push_str(" + ");
                        self.use_var(s);
                    }
                    None if off > 0 => {
                        self.body.push_str(" + ");
                        push_int(&mut self.body, off);
                    }
                    None => {
                        self.body.push_str(" + ");
                        self.use_var(s);
                        self.body.push_str(" - ");
                        push_int(&mut self.body, -off);
                    }
                }
                self.body.push_str(") % ");
                self.use_var(s);
            }
        }
    }

    /// Writes index `x` of dimension `d` as is (`i + 1`, `i + di`): for
    /// helpers that keep coordinates in range themselves.
    pub fn raw_index(&mut self, d: usize, x: Ix) {
        self.grid_index(d, x, Wrap::Raw);
    }

    /// The thread index of launch dimension `d`.
    pub fn tid_var(&self, d: usize) -> usize {
        self.tids[d]
    }

    // ------------------------------------------------------------ statement mixes

    /// One random statement: a new local of one of `types`, a reassignment,
    /// an update (`+=`...), a component update, a store or an accumulation.
    pub fn stmt(&mut self, rng: &mut Gen, types: &[T], mix: &Mix) {
        let locals = self.locals(None);
        let comps = self.composite_locals();
        let outs = self.writable();
        let w = [
            mix.new_local,
            if locals.is_empty() { 0 } else { mix.assign },
            if locals.is_empty() { 0 } else { mix.update },
            if comps.is_empty() { 0 } else { mix.component },
            if outs.is_empty() { 0 } else { mix.store },
            if outs.is_empty() { 0 } else { mix.accumulate },
        ];
        let depth = 1 + weighted(rng, &[3, 4, 2]) as u32;
        match weighted(rng, &w) {
            0 => {
                let t = *pick(rng, types);
                self.let_(rng, t, depth);
            }
            1 => {
                let l = *pick(rng, &locals);
                self.assign(rng, l, depth);
            }
            2 => {
                let l = *pick(rng, &locals);
                self.aug(rng, l, depth);
            }
            3 => {
                let l = *pick(rng, &comps);
                let d = between(rng, 0, 2) as u32;
                self.component_update(rng, l, d);
            }
            4 => {
                let a = *pick(rng, &outs);
                self.store(rng, a, depth);
            }
            _ => {
                let a = *pick(rng, &outs);
                let cell = chance(rng, 0.15);
                self.accumulate(rng, a, depth, cell);
            }
        }
    }

    /// `if` (maybe `elif`s and `else`) whose branches hold one to three
    /// statements that update what exists before the `if`.
    pub fn if_block(&mut self, rng: &mut Gen, types: &[T], mix: &Mix) {
        let inner = Mix {
            new_local: mix.new_local / 3,
            ..*mix
        };
        self.open_if(rng);
        for _ in 0..between(rng, 1, 3) {
            self.stmt(rng, types, &inner);
        }
        self.flush_block(rng);
        self.close();
        for _ in 0..weighted(rng, &[6, 2, 1]) {
            self.open_elif(rng);
            for _ in 0..between(rng, 1, 2) {
                self.stmt(rng, types, &inner);
            }
            self.flush_block(rng);
            self.close();
        }
        if chance(rng, 0.45) {
            self.open_else();
            for _ in 0..between(rng, 1, 2) {
                self.stmt(rng, types, &inner);
            }
            self.flush_block(rng);
            self.close();
        }
    }

    /// Calls every helper the kernel did not call yet (`x = helper(..)`).
    pub fn call_unused_helpers(&mut self, rng: &mut Gen) {
        for h in 0..self.helpers.len() {
            if self.helpers[h].uses == 0 {
                let d = between(rng, 1, 2) as u32;
                self.let_call(rng, h, d);
            }
        }
    }

    /// One store per writable array, in drain mode; vector and matrix
    /// outputs sometimes accumulate (`out[i] += v`).
    pub fn store_all(&mut self, rng: &mut Gen, p_accumulate: f64) {
        self.store_all_depth(rng, p_accumulate, 1, 3);
    }

    /// [`Body::store_all`] with the stores' expression depth in `lo..=hi`.
    pub fn store_all_depth(&mut self, rng: &mut Gen, p_accumulate: f64, lo: usize, hi: usize) {
        self.drain = true;
        let outs = self.writable();
        for &a in &outs {
            let depth = between(rng, lo, hi) as u32;
            if chance(rng, p_accumulate) {
                self.accumulate(rng, a, depth, false);
            } else {
                self.store(rng, a, depth);
            }
        }
        // Locals still unread go into one more accumulation.
        if self
            .vars
            .iter()
            .any(|v| v.kind == Kind::Local && v.uses == 0)
        {
            let a = *pick(rng, &outs);
            let depth = between(rng, 0, 1) as u32;
            self.accumulate(rng, a, depth, false);
        }
    }

    // ------------------------------------------------------------ finishing

    fn annotation(s: &mut String, ty: T, wp_names: bool) {
        s.push_str(match (ty, wp_names) {
            (T::F, false) => "float",
            (T::F, true) => "wp.float32",
            (T::I, false) => "int",
            (T::I, true) => "wp.int32",
            _ => ty.ctor(),
        });
    }

    fn signature(&self, rng: &mut Gen, s: &mut String) {
        let p_wp = *pick(rng, &[0.0, 0.0, 0.0, 0.3, 1.0]);
        let p_ndim = *pick(rng, &[0.0, 0.0, 0.5, 1.0]);
        let mut first = true;
        for v in &self.vars {
            let nd = match v.kind {
                Kind::Array(nd, _) => Some(nd),
                Kind::Scalar => None,
                _ => continue,
            };
            if !first {
                s.push_str(", ");
            }
            first = false;
            s.push_str(&v.name);
            s.push_str(": ");
            let wp_names = chance(rng, p_wp);
            match nd {
                None => Self::annotation(s, v.ty, wp_names),
                Some(nd) => {
                    let ndim_kw = nd > 1 && chance(rng, p_ndim);
                    s.push_str(match nd {
                        1 => "wp.array(dtype=",
                        _ if ndim_kw => "wp.array(dtype=",
                        2 => "wp.array2d(dtype=",
                        _ => "wp.array3d(dtype=",
                    });
                    Self::annotation(s, v.ty, wp_names);
                    if ndim_kw {
                        s.push_str(", ndim=");
                        s.push((b'0' + nd) as char);
                    }
                    s.push(')');
                }
            }
        }
    }

    /// The kernel: decorator, signature, `wp.tid()` line, body. `helpers`
    /// is the source of the `@wp.func`s it calls.
    pub fn finish_kernel(self, rng: &mut Gen, name: &str, helpers: &str) -> String {
        let mut s =
            String::with_capacity(self.body.len() + helpers.len() + 128 + 40 * self.vars.len());
        s.push_str("import warp as wp\n\n\n");
        s.push_str(helpers);
        s.push_str("@wp.kernel\ndef ");
        s.push_str(name);
        s.push('(');
        self.signature(rng, &mut s);
        s.push_str("):\n    ");
        for (n, &t) in self.tids.iter().enumerate() {
            if n > 0 {
                s.push_str(", ");
            }
            s.push_str(&self.vars[t].name);
        }
        s.push_str(" = wp.tid()\n");
        s.push_str(&self.body);
        s
    }

    /// A `@wp.func` (followed by two blank lines) appended to `out`.
    pub fn finish_helper(self, rng: &mut Gen, name: &str, ret: T, out: &mut String) {
        out.push_str("@wp.func\ndef ");
        out.push_str(name);
        out.push('(');
        self.signature(rng, out);
        out.push_str(") -> ");
        Self::annotation(out, ret, chance(rng, 0.2));
        out.push_str(":\n");
        out.push_str(&self.body);
        out.push_str("\n\n");
    }
}

fn push_int(s: &mut String, v: i32) {
    if v < 0 {
        s.push('-');
    }
    let mut buf = [0u8; 12];
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &c in &buf[at..] {
        s.push(c as char);
    }
}

// ---------------------------------------------------------------- helpers (@wp.func)

/// Writes one to `max` `@wp.func` helpers over the types in `types` into
/// `out` and returns their signatures, for the kernel to call.
/// A 1-D kernel body over one to three float input arrays.
pub(crate) fn kernel_1d(rng: &mut Gen, style: Style) -> Body {
    let mut k = Body::new(style);
    k.launch(rng, 1);
    for _ in 0..between(rng, 1, 3) {
        k.param(rng, T::F, Kind::Array(1, Role::In));
    }
    k
}

/// Writes `feature` again and again until the body is `goal` lines long
/// counting `reserve` lines still to come (one feature at least), with a
/// plain statement after a feature now and then (`p_stmt`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill(
    k: &mut Body,
    rng: &mut Gen,
    goal: usize,
    reserve: usize,
    p_stmt: f64,
    types: &[T],
    mix: &Mix,
    mut feature: impl FnMut(&mut Body, &mut Gen),
) {
    loop {
        feature(k, rng);
        if k.lines() + reserve >= goal {
            return;
        }
        if chance(rng, p_stmt) {
            k.stmt(rng, types, mix);
        }
    }
}

pub(crate) fn helpers(
    rng: &mut Gen,
    types: &[T],
    max: usize,
    style: Style,
    out: &mut String,
) -> Vec<Helper> {
    let n = between(rng, 1, max);
    let mut hs: Vec<Helper> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut name = helper_name(rng);
        while hs.iter().any(|h| h.name == name) {
            name.push((b'0' + below(rng, 10) as u8) as char);
        }
        let ret = *pick(rng, types);
        let mut b = Body::new(style);
        // Earlier helpers may be called from later ones.
        for h in &hs {
            b.reserve(&h.name);
            b.helpers.push(Helper {
                name: h.name.clone(),
                params: h.params.clone(),
                ret: h.ret,
                uses: 0,
            });
        }
        b.reserve(&name);
        let n_params = between(rng, 1, 4);
        let mut params = Vec::with_capacity(n_params);
        for p in 0..n_params {
            let t = if p == 0 || chance(rng, 0.5) {
                ret
            } else {
                *pick(rng, types)
            };
            let t = if chance(rng, 0.25) { T::F } else { t };
            b.param(rng, t, Kind::Scalar);
            params.push(t);
        }
        let stmts = between(rng, 0, 3);
        for _ in 0..stmts {
            let t = *pick(rng, types);
            let d = between(rng, 1, 2) as u32;
            b.let_(rng, t, d);
        }
        if chance(rng, 0.3) {
            // An early exit.
            b.open_if(rng);
            let d = between(rng, 0, 2) as u32;
            b.ret(rng, ret, d);
            b.close();
        }
        b.drain = true;
        let d = between(rng, 1, 3) as u32;
        b.ret(rng, ret, d);
        let used: Vec<bool> = b.helpers.iter().map(|h| h.uses > 0).collect();
        b.finish_helper(rng, &name, ret, out);
        for (h, u) in hs.iter_mut().zip(used) {
            h.uses += u as u32;
        }
        hs.push(Helper {
            name,
            params,
            ret,
            uses: 0,
        });
    }
    hs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python keywords and builtins, C++ keywords (parameter names become
    /// struct fields in warp's generated code), and names kernels use.
    #[rustfmt::skip]
    const RESERVED: &[&str] = &[
        "False", "None", "True", "and", "as", "assert", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "for", "from", "global", "if", "import", "in", "is", "lambda",
        "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "abs", "all",
        "any", "bin", "bool", "dir", "float", "hash", "id", "int", "iter", "len", "list", "map",
        "max", "min", "next", "pow", "print", "range", "round", "sum", "type", "zip", "auto",
        "char", "const", "default", "delete", "do", "double", "enum", "goto", "long", "new",
        "operator", "register", "short", "signed", "sizeof", "static", "struct", "switch",
        "template", "this", "typedef", "union", "unsigned", "void", "volatile", "wp", "warp",
        "dim", "task_index",
    ];

    fn is_identifier(s: &str) -> bool {
        let mut b = s.bytes();
        b.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
    }

    #[test]
    fn name_pools_hold_safe_identifiers() {
        let pools = [
            VEC_ARRAYS,
            VEC_OUTS,
            VEC_LOCALS,
            VEC_SCALARS,
            MAT_ARRAYS,
            MAT_OUTS,
            MAT_LOCALS,
            MAT_SCALARS,
            LOOP_VARS,
            COUNTERS,
            HELPER_VERBS,
            HELPER_NOUNS,
        ];
        for pool in pools {
            for (n, &name) in pool.iter().enumerate() {
                assert!(is_identifier(name), "{name}");
                assert!(!RESERVED.contains(&name), "{name} is reserved");
                assert!(!pool[..n].contains(&name), "{name} twice in one pool");
            }
        }
        for names in TID2
            .iter()
            .map(|t| &t[..])
            .chain(TID3.iter().map(|t| &t[..]))
        {
            for name in names {
                assert!(is_identifier(name) && !RESERVED.contains(name), "{name}");
            }
        }
    }

    #[test]
    fn trivial_values_are_detected() {
        for s in ["x", "-x", "2.0", "-1", "acc_f", "12"] {
            assert!(trivial(s), "{s}");
        }
        for s in ["v.x", "a[i]", "x + 1.0", "float(0.0)", "-a[i]", "wp.vec3()"] {
            assert!(!trivial(s), "{s}");
        }
    }

    #[test]
    fn ints_print_like_python() {
        for v in [0, 7, -1, 16, -32, 120] {
            let mut s = String::new();
            push_int(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }
}
