//! The one builder of the synthesizer: a kernel under construction.
//!
//! A [`Kernel`] holds the launch shape (1-3 thread indices, or a tiled
//! launch), the parameters (each with a type, a *role* and a value range:
//! what the `launch_spec` tells a user to pass), helper `@wp.func`s and
//! `@wp.struct`s written before the kernel, module constants, the body lines
//! and the values motifs offer each other. Motifs (src/synth/motifs/) call it;
//! [`Kernel::finish`] writes the Python module and the launch spec JSON.
//!
//! Composition: a motif asks [`Kernel::input`] for a value of a type and
//! range; it gets either a value an earlier motif [`offer`](Kernel::offer)ed
//! (a local, which is then consumed) or a fresh input array read at the
//! thread's own element. Values still unconsumed at the end are stored to
//! fresh output arrays at the thread's own element, so every offered value
//! reaches an output.
//!
//! See /work/notes/synth_api.md (how to write a motif).

use super::knobs::Knobs;
use crate::lang::{NameSet, word};
use crate::text::{Put, same};
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use std::fmt::Write;

pub(crate) type Gen = Pcg64Mcg;

/// Uniform in `0..n` (multiply-shift).
#[inline]
pub(crate) fn below(rng: &mut Gen, n: usize) -> usize {
    debug_assert!(n > 0);
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// Uniform in `lo..=hi`.
#[inline]
pub(crate) fn between(rng: &mut Gen, lo: usize, hi: usize) -> usize {
    lo + below(rng, hi - lo + 1)
}

/// Uniform in `[0, 1)`.
#[inline]
pub(crate) fn unit(rng: &mut Gen) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// True with probability `p`.
#[inline]
pub(crate) fn chance(rng: &mut Gen, p: f64) -> bool {
    unit(rng) < p
}

/// A random element of a non-empty slice.
#[inline]
pub(crate) fn pick<'a, T>(rng: &mut Gen, xs: &'a [T]) -> &'a T {
    &xs[below(rng, xs.len())]
}

/// Index into `weights` drawn proportionally to them (their sum must be > 0).
pub(crate) fn weighted(rng: &mut Gen, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut r = below(rng, total as usize) as u32;
    for (n, &w) in weights.iter().enumerate() {
        if r < w {
            return n;
        }
        r -= w;
    }
    weights.len() - 1
}

/// A Python float literal for `x` (always with a `.` or an exponent):
/// `2.0`, `0.25`, `1.0e-06`, `-3.5`.
pub(crate) fn lit(x: f64) -> String {
    let mut s = String::with_capacity(24);
    push_lit(&mut s, x);
    s
}

/// Appends [`lit`] of `x` to `s`.
fn push_lit(s: &mut String, x: f64) {
    let a = x.abs();
    if a != 0.0 && !(1.0e-3..1.0e6).contains(&a) {
        let e = format!("{x:e}"); // 1e-6, 1.5e-7
        let (m, e) = e.split_once('e').unwrap();
        let e: i32 = e.parse().unwrap();
        s.push_str(m);
        if !m.contains('.') {
            s.push_str(".0");
        }
        s.push_str(if e < 0 { "e-" } else { "e+" });
        if e.abs() < 10 {
            s.push('0');
        }
        s.push_str(itoa::Buffer::new().format(e.abs()));
        return;
    }
    // Six decimals at most: computed constants print short (7.8, not 7.800000000000001).
    let x = if a >= 1.0e-3 {
        (x * 1.0e6).round() / 1.0e6
    } else {
        x
    };
    let start = s.len();
    if push_millionths(s, x) {
        if !s[start..].contains('.') {
            s.push_str(".0");
        }
        return;
    }
    // In this range ryu writes the shortest digits that read back as `x`
    // in positional notation, `.0` included for whole numbers: the text
    // `format!("{x}")` and a `.0` give, without the formatting machinery.
    s.push_str(ryu::Buffer::new().format_finite(x));
}

/// Appends `format!("{x}")` if `x` is a whole number of millionths (the
/// float nearest one) below 10^6 in magnitude, as the constants drawn
/// here nearly all are, and returns whether it did. Floats that close are
/// 10^-10 apart at most, so no other decimal of up to six places reads
/// back as `x`: its shortest digits are those millionths' without trailing
/// zeros, written from the integer. ryu or `{x}` search for them at ~600
/// instructions a number.
fn push_millionths(s: &mut String, x: f64) -> bool {
    if x.abs() >= 1.0e6 {
        return false; // (a NaN fails the test below)
    }
    let millionths = (x * 1.0e6).round();
    if millionths / 1.0e6 != x {
        return false;
    }
    if x.is_sign_negative() {
        s.push('-');
    }
    let n = (millionths as i64).unsigned_abs();
    s.put(itoa::Buffer::new().format(n / 1_000_000));
    let fraction = n % 1_000_000;
    if fraction != 0 {
        let mut digits = *b".000000";
        let mut rest = fraction;
        for d in digits[1..].iter_mut().rev() {
            *d = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let end = digits.iter().rposition(|&d| d != b'0').unwrap_or(0) + 1;
        s.put(std::str::from_utf8(&digits[..end]).expect("ASCII digits"));
    }
    true
}

/// Whether a line that opens a block opens a loop.
fn is_loop(line: &str) -> bool {
    line.starts_with("for ") || line.starts_with("while ")
}

/// `+ 2.5` or `- 2.5`: a literal term appended to an expression.
pub(crate) fn plus(x: f64) -> String {
    let x = if x == 0.0 { 0.0 } else { x }; // no `-0.0`
    let mut s = String::with_capacity(24);
    s.push_str(if x < 0.0 { "- " } else { "+ " });
    push_lit(&mut s, x.abs());
    s
}

impl Val {
    /// The point a fraction `f` of the way through the value's range.
    pub fn at(&self, f: f64) -> f64 {
        self.lo + (self.hi - self.lo) * f
    }

    /// A round constant between fractions `f0` and `f1` of the range.
    pub fn nice_between(&self, rng: &mut Gen, f0: f64, f1: f64) -> f64 {
        nice(rng, self.at(f0), self.at(f1))
    }
}

/// A "nice" constant in `[lo, hi]`: a multiple of a round step, as people
/// write them (0.25, 1.5, 9.81, 0.01...).
pub(crate) fn nice(rng: &mut Gen, lo: f64, hi: f64) -> f64 {
    let span = hi - lo;
    let step = if span >= 20.0 {
        1.0
    } else if span >= 2.0 {
        0.25
    } else if span >= 0.2 {
        0.05
    } else if span >= 0.02 {
        0.005
    } else {
        span / 8.0
    };
    let n = (span / step).floor().max(0.0) as usize;
    let v = lo + step * between(rng, 0, n) as f64;
    // Round away binary noise (0.1 + 0.2) so the literal prints short.
    let v = (v / step).round() * step;
    let v = (v * 1.0e6).round() / 1.0e6;
    v.clamp(lo, hi)
}

/// Value types motifs use. Floats are float32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// float32, spelled `float`.
    F,
    /// int32, spelled `int` (or `wp.int32` in array dtypes).
    I,
    /// `wp.vec2/3/4` (float32).
    V(u8),
    /// `wp.mat22/33/44` (float32).
    M(u8),
    Quat,
    Transform,
    SpatialVector,
    /// `wp.uint64` (mesh ids).
    U64,
}

impl Ty {
    /// The Python spelling in an annotation or a constructor call.
    pub fn py(self) -> &'static str {
        match self {
            Ty::F => "float",
            Ty::I => "int",
            Ty::V(2) => "wp.vec2",
            Ty::V(3) => "wp.vec3",
            Ty::V(_) => "wp.vec4",
            Ty::M(2) => "wp.mat22",
            Ty::M(3) => "wp.mat33",
            Ty::M(_) => "wp.mat44",
            Ty::Quat => "wp.quat",
            Ty::Transform => "wp.transform",
            Ty::SpatialVector => "wp.spatial_vector",
            Ty::U64 => "wp.uint64",
        }
    }

    /// The launch spec's dtype name (warp's attribute name).
    pub fn spec(self) -> &'static str {
        match self {
            Ty::F => "float32",
            Ty::I => "int32",
            Ty::U64 => "uint64",
            other => &other.py()[3..],
        }
    }

    /// Whether a `wp.vecN`/`wp.quat`-like value may be drawn normalized.
    pub fn is_vector_like(self) -> bool {
        matches!(self, Ty::V(_) | Ty::Quat | Ty::SpatialVector)
    }
}

/// What the kernel does with an array parameter (the launch spec's `role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read only.
    In,
    /// Every element written (at the thread's own element).
    Out,
    /// Read and written at the thread's own element.
    InOut,
    /// Updated only with atomics.
    Accum,
}

impl Role {
    fn spec(self) -> &'static str {
        match self {
            Role::In => "in",
            Role::Out => "out",
            Role::InOut => "inout",
            Role::Accum => "accum",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    Array {
        ty: Ty,
        shape: Vec<usize>,
        role: Role,
        /// Starting value of an `accum` array (0 when `None`).
        init: Option<f64>,
        unit: bool,
        /// Written at slots taken with `wp.atomic_add` on this parameter
        /// (its index: the counter of a stream compaction): which thread
        /// gets which slot is not fixed, so on a GPU the values land in any
        /// order (`"order": "any", "slots": COUNTER` in the spec; the arrays
        /// of one counter keep each slot's values together).
        slots: Option<usize>,
    },
    Scalar {
        ty: Ty,
    },
    /// A `@wp.struct` value; fields are (name, type, lo, hi).
    Struct {
        name: String,
        fields: Vec<(String, Ty, f64, f64)>,
    },
    /// A `wp.Mesh` id (`wp.uint64`).
    Mesh {
        points: usize,
        triangles: usize,
    },
}

/// A kernel parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    /// Range of every component (ints inclusive).
    pub lo: f64,
    pub hi: f64,
}

/// A value a motif computed or read: a Python expression that is an atom
/// (a name, a subscript or a call), its type and the range of each component.
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    pub expr: String,
    pub ty: Ty,
    pub lo: f64,
    pub hi: f64,
}

/// A value offered to later motifs.
#[derive(Debug, Clone)]
struct Offer {
    val: Val,
    /// Names for the output array it is stored to if nobody consumes it.
    out_names: &'static [&'static str],
    consumed: bool,
    /// Whether later motifs may consume it (false: a mask, a label, a
    /// count — only stored).
    chain: bool,
}

/// The launch: thread-index names (one per dimension) and sizes.
#[derive(Debug, Clone)]
pub struct Launch {
    pub tid: Vec<&'static str>,
    pub dim: Vec<usize>,
    pub tiled: bool,
    pub block_dim: usize,
}

/// Names never used for locals or parameters.
const RESERVED: &[&str] = &[
    "wp", "float", "int", "range", "len", "min", "max", "abs", "sum", "type", "print", "list",
    "tuple", "dict", "set", "str", "bool", "id", "input", "object", "pow", "round", "and", "or",
    "not", "in", "is", "if", "else", "elif", "for", "while", "def", "return", "class", "pass",
    "break", "continue", "import", "as", "from", "lambda", "True", "False", "None", "warp",
];

/// Thread-index name sets per launch dimension.
const TID_1D: &[&str] = &["i", "tid", "idx", "p", "gid"];
const TID_2D: &[[&str; 2]] = &[["i", "j"], ["x", "y"], ["row", "col"], ["py", "px"]];
const TID_3D: &[[&str; 3]] = &[["i", "j", "k"], ["x", "y", "z"], ["ix", "iy", "iz"]];

const TILE_1D: &[&[&str]] = &[&["i"], &["block"], &["tile"], &["b"]];
const TILE_2D: &[&[&str]] = &[&["i", "j"], &["bi", "bj"], &["tile_i", "tile_j"]];

/// A kernel under construction.
pub struct Kernel<'k> {
    pub knobs: &'k Knobs,
    pub category: &'static str,
    pub launch: Launch,
    pub params: Vec<Param>,
    /// Module constants (`NAME = wp.constant(...)` lines), in order.
    consts: Vec<(String, String)>,
    /// Helper definitions (`@wp.struct` classes and `@wp.func`s) by name, in order.
    helpers: Vec<(String, String)>,
    body: String,
    lines: usize,
    indent: usize,
    /// Open loops around the current line.
    loops: usize,
    /// Deepest loop nesting written.
    pub max_loops: usize,
    /// Names in use of up to 8 bytes (nearly all), packed by [`word`]: each
    /// candidate name is looked for among them, an integer compare per name
    /// where a string compare was the composer's largest cost.
    names: Vec<u64>,
    /// Names in use longer than 8 bytes.
    long_names: Vec<String>,
    offers: Vec<Offer>,
    pub motifs: Vec<&'static str>,
    /// Chance that [`Kernel::input`] consumes an offered value.
    pub p_chain: f64,
    /// Free for tile motifs: the tile size they agreed on.
    pub tile_len: usize,
}

/// A kernel's state before a motif, for [`Kernel::rollback`]: a motif only
/// appends (parameters, helpers, constants, lines, names, offers), consumes
/// offers and sets flags of array parameters, so the lengths, the counters
/// and those flags are all of it (a clone of the kernel before each motif
/// near the caps cost as much as some motifs).
pub struct Mark {
    params: usize,
    /// (`init`, `unit`, `slots`) of each parameter (arrays only).
    array_flags: smallvec::SmallVec<[(Option<f64>, bool, Option<usize>); 16]>,
    consts: usize,
    helpers: usize,
    body: usize,
    lines: usize,
    indent: usize,
    loops: usize,
    max_loops: usize,
    names: usize,
    long_names: usize,
    offers: usize,
    consumed: smallvec::SmallVec<[bool; 16]>,
    motifs: usize,
    p_chain: f64,
    tile_len: usize,
}

impl<'k> Kernel<'k> {
    /// A kernel with `dims` thread indices (1-3); `tiled` launches with
    /// `wp.launch_tiled` (`dims` then counts the tile grid's dimensions).
    pub fn new(
        rng: &mut Gen,
        knobs: &'k Knobs,
        category: &'static str,
        dims: usize,
        tiled: bool,
    ) -> Kernel<'k> {
        let (tid, dim): (Vec<&'static str>, Vec<usize>) = if tiled {
            let names: &[&str] = match dims {
                1 => *pick(rng, TILE_1D),
                _ => *pick(rng, TILE_2D),
            };
            let dim = (0..dims).map(|_| *pick(rng, &[1usize, 2, 4, 8])).collect();
            (names.to_vec(), dim)
        } else {
            match dims {
                1 => (
                    vec![*pick(rng, TID_1D)],
                    vec![*pick(rng, &[64usize, 100, 128, 256, 500, 512, 1000, 1024])],
                ),
                2 => (
                    pick(rng, TID_2D).to_vec(),
                    vec![
                        *pick(rng, &[8usize, 16, 32, 64]),
                        *pick(rng, &[8usize, 16, 32, 64]),
                    ],
                ),
                _ => (
                    pick(rng, TID_3D).to_vec(),
                    vec![
                        *pick(rng, &[4usize, 8, 16]),
                        *pick(rng, &[4usize, 8, 16]),
                        *pick(rng, &[4usize, 8, 16]),
                    ],
                ),
            }
        };
        let block_dim = if tiled {
            *pick(rng, &[32usize, 64, 128])
        } else {
            0
        };
        let mut body = String::with_capacity(1024);
        body.push_str("    ");
        body.push_str(&tid.join(", "));
        body.push_str(" = wp.tid()\n");
        // Room for the names of a kernel near the caps, not a doubling every few.
        let mut names = Vec::with_capacity(64);
        names.extend(tid.iter().map(|&s| word(s)));
        Kernel {
            knobs,
            category,
            launch: Launch {
                tid,
                dim,
                tiled,
                block_dim,
            },
            params: Vec::new(),
            consts: Vec::new(),
            helpers: Vec::new(),
            body,
            lines: 1,
            indent: 1,
            loops: 0,
            max_loops: 0,
            names,
            long_names: Vec::new(),
            offers: Vec::new(),
            motifs: Vec::new(),
            p_chain: 0.6,
            tile_len: 0,
        }
    }

    /// The state to go back to with [`Kernel::rollback`].
    pub fn mark(&self) -> Mark {
        Mark {
            params: self.params.len(),
            array_flags: self
                .params
                .iter()
                .map(|p| match p.kind {
                    ParamKind::Array {
                        init, unit, slots, ..
                    } => (init, unit, slots),
                    _ => (None, false, None),
                })
                .collect(),
            consts: self.consts.len(),
            helpers: self.helpers.len(),
            body: self.body.len(),
            lines: self.lines,
            indent: self.indent,
            loops: self.loops,
            max_loops: self.max_loops,
            names: self.names.len(),
            long_names: self.long_names.len(),
            offers: self.offers.len(),
            consumed: self.offers.iter().map(|o| o.consumed).collect(),
            motifs: self.motifs.len(),
            p_chain: self.p_chain,
            tile_len: self.tile_len,
        }
    }

    /// Undoes everything done since `m` was taken.
    pub fn rollback(&mut self, m: Mark) {
        self.params.truncate(m.params);
        for (p, flags) in self.params.iter_mut().zip(m.array_flags) {
            if let ParamKind::Array {
                init, unit, slots, ..
            } = &mut p.kind
            {
                (*init, *unit, *slots) = flags;
            }
        }
        self.consts.truncate(m.consts);
        self.helpers.truncate(m.helpers);
        self.body.truncate(m.body);
        self.lines = m.lines;
        self.indent = m.indent;
        self.loops = m.loops;
        self.max_loops = m.max_loops;
        self.names.truncate(m.names);
        self.long_names.truncate(m.long_names);
        self.offers.truncate(m.offers);
        for (o, consumed) in self.offers.iter_mut().zip(m.consumed) {
            o.consumed = consumed;
        }
        self.motifs.truncate(m.motifs);
        self.p_chain = m.p_chain;
        self.tile_len = m.tile_len;
    }

    // ------------------------------------------------------------ launch

    /// Number of thread indices.
    pub fn dims(&self) -> usize {
        self.launch.tid.len()
    }

    /// The thread index names joined: `i` or `i, j` — the index of the
    /// thread's own element of a launch-shaped array.
    pub fn own(&self) -> String {
        self.launch.tid.join(", ")
    }

    /// Thread index `d`.
    pub fn tid(&self, d: usize) -> &'static str {
        self.launch.tid[d]
    }

    /// The launch shape (the shape of "own element" arrays).
    pub fn shape(&self) -> Vec<usize> {
        self.launch.dim.clone()
    }

    // ------------------------------------------------------------ names

    /// A fresh identifier from `pool` (a random entry; `name_2`... when all
    /// are taken). Reserved words and names in use are skipped.
    pub fn fresh(&mut self, rng: &mut Gen, pool: &[&str]) -> String {
        debug_assert!(!pool.is_empty());
        let start = below(rng, pool.len());
        for n in 0..pool.len() {
            let cand = pool[(start + n) % pool.len()];
            if self.claim(cand) {
                return cand.to_string();
            }
        }
        let base = pool[start];
        for s in 2.. {
            let cand = format!("{base}_{s}");
            if self.claim(&cand) {
                return cand;
            }
        }
        unreachable!()
    }

    /// Whether `name`, packed to `w` by [`word`], is free.
    fn free(&self, name: &str, w: u64) -> bool {
        // Asked for every candidate name: the reserved words by hash, not
        // one `memcmp` each, and the names in use compared in line.
        const SET: NameSet<{ RESERVED.len() }> = NameSet::new(RESERVED);
        !SET.contains_word(w, name)
            && if w == u64::MAX {
                !self.long_names.iter().any(|n| same(n, name))
            } else {
                !self.names.contains(&w)
            }
            && !self.helpers.iter().any(|h| same(&h.0, name))
            && !self.consts.iter().any(|c| same(&c.0, name))
    }

    /// Reserve `name` (e.g. a helper's parameter or a loop variable you
    /// spell yourself) so `fresh` never returns it; false if already taken.
    pub fn claim(&mut self, name: &str) -> bool {
        let w = word(name);
        if !self.free(name, w) {
            return false;
        }
        match w {
            u64::MAX => self.long_names.push(name.to_string()),
            w => self.names.push(w),
        }
        true
    }

    // ------------------------------------------------------------ params

    fn push_param(&mut self, name: String, kind: ParamKind, lo: f64, hi: f64) -> String {
        self.params.push(Param {
            name: name.clone(),
            kind,
            lo,
            hi,
        });
        name
    }

    /// A new array parameter with a fresh name from `pool`.
    #[allow(clippy::too_many_arguments)]
    pub fn array(
        &mut self,
        rng: &mut Gen,
        pool: &[&str],
        ty: Ty,
        shape: Vec<usize>,
        role: Role,
        lo: f64,
        hi: f64,
    ) -> String {
        let name = self.fresh(rng, pool);
        let kind = ParamKind::Array {
            ty,
            shape,
            role,
            init: None,
            unit: false,
            slots: None,
        };
        self.push_param(name, kind, lo, hi)
    }

    /// The kind of parameter `name`, if it is an array.
    fn array_kind(&mut self, name: &str) -> Option<&mut ParamKind> {
        self.params
            .iter_mut()
            .find(|p| p.name == name)
            .map(|p| &mut p.kind)
            .filter(|k| matches!(k, ParamKind::Array { .. }))
    }

    /// Marks array `name` as written at slots taken from the counter array
    /// `counter` (see `slots`).
    pub fn set_slots(&mut self, name: &str, counter: &str) {
        let counter = self.params.iter().position(|p| p.name == counter);
        if let Some(ParamKind::Array { slots, .. }) = self.array_kind(name) {
            *slots = counter;
        }
    }

    /// Marks array `name` as drawn normalized (unit vectors / quaternions).
    pub fn set_unit(&mut self, name: &str) {
        if let Some(ParamKind::Array { unit, .. }) = self.array_kind(name) {
            *unit = true;
        }
    }

    /// Sets the starting value of `accum` array `name` (e.g. a large value
    /// for an `atomic_min`).
    pub fn set_init(&mut self, name: &str, value: f64) {
        if let Some(ParamKind::Array { init, .. }) = self.array_kind(name) {
            *init = Some(value);
        }
    }

    /// A launch-shaped input array; returns its read at the thread's own
    /// element (`vel[i]`) as a value.
    pub fn load(&mut self, rng: &mut Gen, pool: &[&str], ty: Ty, lo: f64, hi: f64) -> Val {
        let shape = self.shape();
        let name = self.array(rng, pool, ty, shape, Role::In, lo, hi);
        // `name[i, j]` in place of `format!` of `own()`'s joined string.
        let mut expr = String::with_capacity(name.len() + 16);
        expr.push_str(&name);
        expr.push('[');
        for (d, t) in self.launch.tid.iter().enumerate() {
            if d > 0 {
                expr.push_str(", ");
            }
            expr.push_str(t);
        }
        expr.push(']');
        Val { expr, ty, lo, hi }
    }

    /// A launch-shaped output array (every element written by this thread
    /// at its own element: write `name[own] = ...` exactly once, outside
    /// any `if`, or in every branch).
    pub fn output(&mut self, rng: &mut Gen, pool: &[&str], ty: Ty) -> String {
        let shape = self.shape();
        self.array(rng, pool, ty, shape, Role::Out, 0.0, 0.0)
    }

    /// A scalar parameter drawn in `[lo, hi]` (ints: inclusive).
    pub fn scalar(&mut self, rng: &mut Gen, pool: &[&str], ty: Ty, lo: f64, hi: f64) -> String {
        let name = self.fresh(rng, pool);
        self.push_param(name, ParamKind::Scalar { ty }, lo, hi)
    }

    /// An int parameter with one value (a size, e.g. an array length).
    pub fn size_param(&mut self, rng: &mut Gen, pool: &[&str], value: usize) -> String {
        self.scalar(rng, pool, Ty::I, value as f64, value as f64)
    }

    /// A `wp.Mesh` id parameter.
    pub fn mesh_param(&mut self, rng: &mut Gen, pool: &[&str]) -> String {
        let name = self.fresh(rng, pool);
        let kind = ParamKind::Mesh {
            points: 64,
            triangles: 124,
        };
        self.push_param(name, kind, 0.0, 0.0)
    }

    /// A `@wp.struct` parameter: defines the struct `struct_name` (fields:
    /// name, type, range) if not yet defined, and a parameter of that type.
    /// Read fields as `param.field`.
    pub fn struct_param(
        &mut self,
        rng: &mut Gen,
        struct_name: &str,
        pool: &[&str],
        fields: &[(&str, Ty, f64, f64)],
    ) -> String {
        if !self.has_helper(struct_name) {
            let mut text = format!("@wp.struct\nclass {struct_name}:\n");
            for (f, ty, _, _) in fields {
                let _ = writeln!(text, "    {f}: {}", ty.py());
            }
            text.pop();
            self.helper(struct_name, &text);
        }
        let name = self.fresh(rng, pool);
        let fields = fields
            .iter()
            .map(|&(f, ty, lo, hi)| (f.to_string(), ty, lo, hi))
            .collect();
        let kind = ParamKind::Struct {
            name: struct_name.to_string(),
            fields,
        };
        self.push_param(name, kind, 0.0, 0.0)
    }

    /// Whether a parameter `name` exists.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    // ------------------------------------------------------------ helpers

    /// Whether a helper (func or struct) or constant called `name` exists.
    pub fn has_helper(&self, name: &str) -> bool {
        self.helpers.iter().any(|h| h.0 == name) || self.consts.iter().any(|c| c.0 == name)
    }

    /// Adds a helper definition (a whole `@wp.func` or `@wp.struct` text,
    /// without trailing newline) once, by name; helpers are written before
    /// the kernel in the order added (add a func's callees first).
    pub fn helper(&mut self, name: &str, text: &str) {
        if !self.has_helper(name) {
            self.helpers.push((name.to_string(), text.to_string()));
        }
    }

    /// A module constant `NAME = wp.constant(value)` (once, by name).
    pub fn constant(&mut self, name: &str, value: &str) {
        if !self.has_helper(name) {
            self.consts.push((name.to_string(), value.to_string()));
        }
    }

    // ------------------------------------------------------------ body

    /// Appends one body line at the current indentation.
    pub fn line(&mut self, text: &str) {
        self.line_of(&[text]);
    }

    /// [`Kernel::line`] of `format_args!(...)`, written in place (no
    /// `format!` of the line first: an allocation, a copy and a free per line).
    pub fn line_fmt(&mut self, text: std::fmt::Arguments) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        let _ = self.body.write_fmt(text);
        self.body.push('\n');
        self.lines += 1;
    }

    /// [`Kernel::line`] of `parts` joined, written in place: one reserve
    /// and a copy per part, where `format_args!` cost a line ~700
    /// instructions of formatting machinery.
    pub fn line_of(&mut self, parts: &[&str]) {
        self.line_of_groups(&[parts]);
    }

    /// [`Kernel::line_of`] of several lists of parts, one after the other
    /// (a local's name and `=`, then its expression's parts).
    fn line_of_groups(&mut self, groups: &[&[&str]]) {
        for _ in 0..self.indent {
            self.body.put("    ");
        }
        for parts in groups {
            self.body.put_all(parts);
        }
        self.body.push('\n');
        self.lines += 1;
    }

    /// `name = wp.tile_load(array, shape=SHAPE, offset=OFFSET)`, the offset
    /// given as parts (`b * TS`).
    pub fn tile_load(&mut self, name: &str, array: &str, shape: &str, offset: &[&str]) {
        self.line_of_groups(&[
            &[
                name,
                " = wp.tile_load(",
                array,
                ", shape=",
                shape,
                ", offset=",
            ],
            offset,
            &[")"],
        ]);
    }

    /// Appends a line that opens a block (`if ...:`, `for ...:`); the
    /// following lines are indented until [`close`](Kernel::close).
    /// `for`/`while` lines count as loops.
    pub fn open(&mut self, text: &str) {
        self.line(text);
        self.enter(is_loop(text));
    }

    /// [`Kernel::open`] of `parts` joined, written in place.
    pub fn open_of(&mut self, parts: &[&str]) {
        let start = self.body.len() + 4 * self.indent;
        self.line_of(parts);
        self.enter(is_loop(&self.body[start..]));
    }

    /// [`Kernel::open`] of `format_args!(...)`, written in place.
    pub fn open_fmt(&mut self, text: std::fmt::Arguments) {
        let start = self.body.len() + 4 * self.indent;
        self.line_fmt(text);
        self.enter(is_loop(&self.body[start..]));
    }

    /// Indents the lines after one that opens a block (a loop if `is_loop`).
    fn enter(&mut self, is_loop: bool) {
        self.indent += 1;
        if is_loop {
            self.loops += 1;
            self.max_loops = self.max_loops.max(self.loops);
        }
    }

    /// Closes the innermost block opened by [`open`](Kernel::open).
    /// `was_loop` must say whether it was a `for`/`while`.
    pub fn close(&mut self, was_loop: bool) {
        self.indent -= 1;
        if was_loop {
            self.loops -= 1;
        }
    }

    /// `name = expr` with a fresh name from `pool`; returns the value.
    /// `expr` must not be a bare name or literal (warp would alias it or
    /// make it a constant): write `float(0.0)`, `wp.vec3()`, ...
    pub fn local(
        &mut self,
        rng: &mut Gen,
        pool: &[&str],
        ty: Ty,
        expr: &str,
        lo: f64,
        hi: f64,
    ) -> Val {
        let name = self.fresh(rng, pool);
        self.line_of_groups(&[&[&name, " = "], &[expr]]);
        Val {
            expr: name,
            ty,
            lo,
            hi,
        }
    }

    /// [`Kernel::local`] of `parts` joined, written in place.
    pub fn local_of(
        &mut self,
        rng: &mut Gen,
        pool: &[&str],
        ty: Ty,
        parts: &[&str],
        lo: f64,
        hi: f64,
    ) -> Val {
        let name = self.fresh(rng, pool);
        self.line_of_groups(&[&[&name, " = "], parts]);
        Val {
            expr: name,
            ty,
            lo,
            hi,
        }
    }

    /// [`Kernel::local`] of `format_args!(...)`, written in place.
    pub fn local_fmt(
        &mut self,
        rng: &mut Gen,
        pool: &[&str],
        ty: Ty,
        expr: std::fmt::Arguments,
        lo: f64,
        hi: f64,
    ) -> Val {
        let name = self.fresh(rng, pool);
        self.line_fmt(format_args!("{name} = {expr}"));
        Val {
            expr: name,
            ty,
            lo,
            hi,
        }
    }

    /// Body lines written so far (the `wp.tid()` line included).
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Current block depth (1 = the kernel's top level).
    pub fn depth(&self) -> usize {
        self.indent
    }

    /// Whether one more loop may be opened here (the `loop_depth` knob).
    pub fn can_loop(&self) -> bool {
        self.loops < self.knobs.loop_depth
    }

    /// Whether `ty` may appear (the `dtypes` knob).
    pub fn allows(&self, ty: Ty) -> bool {
        self.knobs.allows(ty)
    }

    /// Whether int *data* arrays (index arrays, labels) may appear.
    pub fn int_arrays(&self) -> bool {
        self.knobs.int_arrays()
    }

    /// An expression depth in `lo..=hi` within the `expr_depth` knob.
    pub fn expr_depth(&self, rng: &mut Gen, lo: u32, hi: u32) -> u32 {
        self.knobs.depth(rng, lo, hi)
    }

    // ------------------------------------------------------------ composition

    /// An input value of type `ty` whose every component lies in
    /// `[lo, hi]` (what the motif handles safely). With chance `p_chain`
    /// an unconsumed value offered by an earlier motif that fits is taken
    /// (and consumed); otherwise a fresh launch-shaped input array named from
    /// `pool` is declared with range `[lo, hi]` and read at the own element.
    /// The result is an atom (`name` or `arr[i]`), safe to use several times.
    pub fn input(&mut self, rng: &mut Gen, pool: &[&str], ty: Ty, lo: f64, hi: f64) -> Val {
        self.input_covering(rng, pool, ty, lo, hi, hi, lo)
    }

    /// Like [`input`](Kernel::input), but an offered value is taken only if
    /// its range also covers `[clo, chi]`: for a motif whose thresholds or
    /// edges are fixed numbers (a leaky ReLU's kink at 0, a query box), a
    /// value confined to a sliver of `[lo, hi]` would never reach them and
    /// the motif's parameters would change nothing. (`clo > chi`: any fits.)
    #[allow(clippy::too_many_arguments)]
    pub fn input_covering(
        &mut self,
        rng: &mut Gen,
        pool: &[&str],
        ty: Ty,
        lo: f64,
        hi: f64,
        clo: f64,
        chi: f64,
    ) -> Val {
        if self.indent == 1 && chance(rng, self.p_chain) {
            let fits: Vec<usize> = (0..self.offers.len())
                .filter(|&n| {
                    let o = &self.offers[n];
                    o.chain
                        && !o.consumed
                        && o.val.ty == ty
                        && o.val.lo >= lo
                        && o.val.hi <= hi
                        && (clo > chi || (o.val.lo <= clo && o.val.hi >= chi))
                })
                .collect();
            if !fits.is_empty() {
                let n = *pick(rng, &fits);
                self.offers[n].consumed = true;
                return self.offers[n].val.clone();
            }
        }
        self.load(rng, pool, ty, lo, hi)
    }

    /// Offers `val` (a local at the kernel's top level) to later motifs.
    /// If no motif consumes it, `finish` stores it to a new launch-shaped
    /// output array named from `out_names`. Offers made inside a block are
    /// stored by the motif itself instead: don't offer them.
    pub fn offer(&mut self, val: Val, out_names: &'static [&'static str]) {
        debug_assert_eq!(self.indent, 1, "offer at the kernel's top level only");
        self.offers.push(Offer {
            val,
            out_names,
            consumed: false,
            chain: true,
        });
    }

    /// Like [`offer`](Kernel::offer), but no later motif consumes it: it is
    /// only stored at the end (masks, labels, counts: values that make no
    /// sense as another motif's continuous input).
    pub fn result(&mut self, val: Val, out_names: &'static [&'static str]) {
        self.offer(val, out_names);
        self.offers.last_mut().unwrap().chain = false;
    }

    /// Unconsumed offered values.
    pub fn open_offers(&self) -> usize {
        self.offers.iter().filter(|o| !o.consumed).count()
    }

    // ------------------------------------------------------------ output

    /// Stores every unconsumed offer, then writes the module. Returns
    /// (module source, launch spec JSON).
    pub fn finish(&mut self, rng: &mut Gen, kernel_name: &str) -> (String, String) {
        debug_assert_eq!(self.indent, 1);
        let offers = std::mem::take(&mut self.offers);
        for o in offers.into_iter().filter(|o| !o.consumed) {
            let out = self.output(rng, o.out_names, o.val.ty);
            let own = self.own();
            self.line_of(&[&out, "[", &own, "] = ", &o.val.expr]);
        }
        let mut src = String::with_capacity(self.body.len() + 512);
        src.put("import warp as wp\n");
        if !self.consts.is_empty() {
            src.push('\n');
            for (name, value) in &self.consts {
                src.put(name);
                src.put(" = wp.constant(");
                src.put(value);
                src.put(")\n");
            }
        }
        for (_, text) in &self.helpers {
            src.put("\n\n");
            src.put(text);
            src.push('\n');
        }
        src.put("\n\n@wp.kernel\ndef ");
        src.put(kernel_name);
        src.push('(');
        for (n, p) in self.params.iter().enumerate() {
            if n > 0 {
                src.put(", ");
            }
            src.put(&p.name);
            src.put(": ");
            match &p.kind {
                ParamKind::Array { ty, shape, .. } => {
                    let dt = match ty {
                        Ty::I => "wp.int32",
                        other => other.py(),
                    };
                    match shape.len() {
                        1 => src.put("wp.array(dtype="),
                        n => {
                            src.put("wp.array");
                            src.put(itoa::Buffer::new().format(n));
                            src.put("d(dtype=");
                        }
                    }
                    src.put(dt);
                    src.push(')');
                }
                ParamKind::Scalar { ty } => src.put(ty.py()),
                ParamKind::Struct { name, .. } => src.put(name),
                ParamKind::Mesh { .. } => src.put("wp.uint64"),
            }
        }
        src.put("):\n");
        src.put(&self.body);
        (src, self.launch_spec())
    }

    /// The launch spec JSON (schema in /work/notes/synth_design.md).
    pub fn launch_spec(&self) -> String {
        let mut s = String::with_capacity(256 + 96 * self.params.len());
        s.put("{\"dim\": ");
        push_dims(&mut s, &self.launch.dim);
        s.put(if self.launch.tiled {
            ", \"tiled\": true"
        } else {
            ", \"tiled\": false"
        });
        if self.launch.tiled {
            s.put(", \"block_dim\": ");
            s.put(itoa::Buffer::new().format(self.launch.block_dim));
        }
        s.put(", \"params\": [");
        for (n, p) in self.params.iter().enumerate() {
            if n > 0 {
                s.put(", ");
            }
            s.put("{\"name\": \"");
            s.put(&p.name);
            s.put("\", ");
            match &p.kind {
                ParamKind::Array {
                    ty,
                    shape,
                    role,
                    init,
                    unit,
                    slots,
                } => {
                    s.put("\"kind\": \"array\", \"dtype\": \"");
                    s.put(ty.spec());
                    s.put("\", \"shape\": ");
                    push_dims(&mut s, shape);
                    s.put(", \"role\": \"");
                    s.put(role.spec());
                    s.push('"');
                    if matches!(role, Role::In | Role::InOut) {
                        s.put(", \"range\": ");
                        push_range(&mut s, *ty, p.lo, p.hi);
                    }
                    if *unit {
                        s.put(", \"unit\": true");
                    }
                    if let Some(counter) = slots {
                        s.put(", \"order\": \"any\", \"slots\": \"");
                        s.put(&self.params[*counter].name);
                        s.push('"');
                    }
                    if let Some(v) = init {
                        s.put(", \"init\": ");
                        push_json_num(&mut s, *v);
                    }
                }
                ParamKind::Scalar { ty } => {
                    s.put("\"kind\": \"scalar\", \"dtype\": \"");
                    s.put(ty.spec());
                    s.put("\", \"range\": ");
                    push_range(&mut s, *ty, p.lo, p.hi);
                }
                ParamKind::Struct { name, fields } => {
                    s.put("\"kind\": \"struct\", \"struct\": \"");
                    s.put(name);
                    s.put("\", \"fields\": [");
                    for (m, (f, ty, lo, hi)) in fields.iter().enumerate() {
                        if m > 0 {
                            s.put(", ");
                        }
                        s.put("{\"name\": \"");
                        s.put(f);
                        s.put("\", \"kind\": \"scalar\", \"dtype\": \"");
                        s.put(ty.spec());
                        s.put("\", \"range\": ");
                        push_range(&mut s, *ty, *lo, *hi);
                        s.push('}');
                    }
                    s.push(']');
                }
                ParamKind::Mesh { points, triangles } => {
                    s.put("\"kind\": \"mesh\", \"points\": ");
                    s.put(itoa::Buffer::new().format(*points));
                    s.put(", \"triangles\": ");
                    s.put(itoa::Buffer::new().format(*triangles));
                }
            }
            s.push('}');
        }
        s.put("]}");
        s
    }
}

fn push_dims(s: &mut String, dims: &[usize]) {
    s.push('[');
    for (n, d) in dims.iter().enumerate() {
        if n > 0 {
            s.put(", ");
        }
        s.put(itoa::Buffer::new().format(*d));
    }
    s.push(']');
}

/// `x` as JSON: an integral value without a fraction.
fn push_json_num(s: &mut String, x: f64) {
    if x == x.trunc() && x.abs() < 1.0e15 {
        s.put(itoa::Buffer::new().format(x as i64));
    } else if !push_millionths(s, x) {
        let _ = write!(s, "{x}");
    }
}

// Written piece by piece: `write!` with its formatting machinery and a
// `String` per number cost more than the digits (a few per parameter, on
// every draw).
fn push_range(s: &mut String, ty: Ty, lo: f64, hi: f64) {
    s.push('[');
    if ty == Ty::I {
        s.put(itoa::Buffer::new().format(lo as i64));
        s.put(", ");
        s.put(itoa::Buffer::new().format(hi as i64));
    } else {
        push_json_num(s, lo);
        s.put(", ");
        push_json_num(s, hi);
    }
    s.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_read_as_python_floats() {
        assert_eq!(lit(2.0), "2.0");
        assert_eq!(lit(0.25), "0.25");
        assert_eq!(lit(-3.5), "-3.5");
        assert_eq!(lit(1.0e-6), "1.0e-06");
        assert_eq!(lit(0.0), "0.0");
        assert_eq!(lit(9.81), "9.81");
        assert_eq!(lit(-0.0), "-0.0");
        assert_eq!(lit(7.800000000000001), "7.8");
        assert_eq!(lit(2.5e6), "2.5e+06");
        assert_eq!(lit(-1.5e-7), "-1.5e-07");
        assert_eq!(lit(1.0e20), "1.0e+20");
        assert_eq!(plus(-2.5), "- 2.5");
        assert_eq!(plus(-0.0), "+ 0.0");
    }

    #[test]
    fn millionths_are_written_as_display_writes_them() {
        let mut rng = Gen::new(0x5eed);
        let check = |x: f64| {
            let mut s = String::new();
            if push_millionths(&mut s, x) {
                assert_eq!(s, format!("{x}"), "{x:e}");
            }
            // As `push_lit` wrote it before.
            let (mut lit_now, a) = (String::new(), x.abs());
            push_lit(&mut lit_now, x);
            if a == 0.0 || (1.0e-3..1.0e6).contains(&a) {
                let r = if a >= 1.0e-3 {
                    (x * 1.0e6).round() / 1.0e6
                } else {
                    x
                };
                assert_eq!(lit_now, ryu::Buffer::new().format_finite(r), "{x:e}");
            }
        };
        for n in -3_000_000i64..3_000_000 {
            check(n as f64 / 1.0e6);
            check(n as f64 * 0.37);
        }
        for _ in 0..3_000_000 {
            let u = unit(&mut rng);
            check(nice(&mut rng, -u * 100.0, u * 1000.0));
            check((u - 0.5) * 10f64.powi(below(&mut rng, 16) as i32 - 6));
        }
        for x in [
            0.0,
            -0.0,
            1.0e-6,
            -1.0e-6,
            999_999.999_999,
            1.0e6,
            0.1 + 0.2,
        ] {
            check(x);
        }
    }
}
