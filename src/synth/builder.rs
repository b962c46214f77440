//! Shared machinery of every category: random helpers, identifier pools and
//! [`Kernel`], a builder that writes typed expression trees and statements
//! straight into a pre-sized `String`.
//!
//! There is no intermediate AST (speed matters at millions of samples): each
//! node kind is chosen before it is written, so its precedence is known up
//! front and parentheses go in only where Python needs them. Types are tracked
//! while writing, so float32 and int32 never meet in one operation (warp is
//! strictly typed); the other type comes in only through `float(..)`/`int(..)`.

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

pub(crate) type Gen = Pcg64Mcg;

/// Uniform in `0..n` (multiply-shift; the bias is below 2^-58 for our `n`).
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

#[inline]
pub(crate) fn pick<'a, T>(rng: &mut Gen, xs: &'a [T]) -> &'a T {
    &xs[below(rng, xs.len())]
}

/// A random entry of a word list.
#[inline]
pub(crate) fn word(rng: &mut Gen, words: &[&'static str]) -> &'static str {
    words[below(rng, words.len())]
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

// ---------------------------------------------------------------- identifiers

/// Float input arrays.
#[rustfmt::skip]
pub(crate) const FLOAT_ARRAYS: &[&str] = &[
    "a", "b", "c", "x", "y", "z", "u", "v", "w", "src", "inp", "data", "vals", "values", "weights",
    "coeffs", "samples", "field", "pos", "vel", "mass", "rho", "temp", "pressure", "lhs", "rhs",
    "xs", "ys", "grid", "density", "energy", "charge", "height", "signal", "radius", "speed",
    "alpha_in", "scores", "prices", "heat", "flux", "depth", "noise", "amps", "points",
];
/// Int input arrays.
#[rustfmt::skip]
pub(crate) const INT_ARRAYS: &[&str] = &[
    "labels", "keys", "ids", "flags", "bins_in", "counts_in", "mask", "offsets", "cells",
    "indices", "tags", "states", "codes", "levels", "ranks", "classes", "votes", "hits", "parts",
];
/// Output arrays (written, or accumulated into).
#[rustfmt::skip]
pub(crate) const OUT_ARRAYS: &[&str] = &[
    "out", "dst", "res", "result", "output", "y_out", "target", "acc", "accum", "total", "sums",
    "hist", "counts", "norms", "grad", "partial", "dest", "outputs", "buf", "store", "sink",
    "tally", "bins", "mins", "maxs", "score", "energy_out", "out_vals", "results",
];
/// Float scalar parameters.
#[rustfmt::skip]
pub(crate) const FLOAT_SCALARS: &[&str] = &[
    "s", "alpha", "beta", "gamma", "scale", "dt", "k", "factor", "offset", "gain", "bias", "eps",
    "threshold", "limit", "damping", "rate", "decay", "weight", "lo", "hi", "shift", "coef", "c0",
    "c1", "mu", "sigma", "tau", "omega", "freq", "amp", "cutoff", "inv_h", "lam", "kappa",
    "strength", "radius_s", "period_f", "t0", "vmax", "vmin",
];
/// Int scalar parameters.
#[rustfmt::skip]
pub(crate) const INT_SCALARS: &[&str] = &[
    "n", "m", "count", "stride", "width", "period", "nbins", "modulus", "steps", "size", "lag",
    "num", "span", "cols", "rows", "cap", "base", "seed", "phase", "window", "n_cells", "dim_n",
];
/// Float locals.
#[rustfmt::skip]
pub(crate) const FLOAT_LOCALS: &[&str] = &[
    "t", "tmp", "val", "r", "p", "q", "x0", "x1", "y0", "y1", "d", "diff", "prod", "ratio", "mag",
    "norm", "mid", "term", "e", "f", "g", "h", "u0", "v0", "w0", "force", "damp", "theta", "phi",
    "ang", "s0", "s1", "num_f", "den", "avg", "mix", "blend", "fx", "gx", "dx", "dy", "z0",
    "scaled", "shifted", "clipped", "delta", "corr", "err", "eta", "psi", "xi", "lerp", "acc_f",
    "partial_f", "energy_l", "wave", "decay_f", "sig", "smooth", "peak", "step_f", "a0", "b0", "c2",
    "m1", "m2", "res_f", "tot", "level_f", "grad_f", "score_f", "bias_f", "gain_f",
];
/// Int locals.
#[rustfmt::skip]
pub(crate) const INT_LOCALS: &[&str] = &[
    "j", "k", "m", "cnt", "slot", "step", "code", "row", "col", "lane", "q", "rem", "quo", "off",
    "bucket", "tag", "lvl", "ki", "ni", "pos_i", "idx_i", "sel", "hop", "flag", "nb", "parity",
];
/// Index locals (`j = (i + 1) % n`, ...).
#[rustfmt::skip]
pub(crate) const INDEX_LOCALS: &[&str] = &[
    "j", "nbr", "nxt", "prev", "src_i", "dst_i", "ii", "jj", "b", "cell", "slot", "target_i",
    "home", "lane", "bucket", "pos", "k",
];
/// Names for the thread index, `i` most of the time.
#[rustfmt::skip]
pub(crate) const TID_NAMES: &[&str] = &["i", "i", "i", "i", "i", "i", "i", "tid", "idx", "gid"];
/// Suffixes for compound names (`x_new`, `acc_sq`, ...).
#[rustfmt::skip]
pub(crate) const SUFFIXES: &[&str] = &[
    "new", "old", "tmp", "sq", "abs", "pos", "neg", "lo", "hi", "in", "out", "val", "v", "s", "f",
    "a", "b", "next", "prev", "sum", "mid", "max", "min", "c", "n",
];
/// Words after a kernel's category prefix.
#[rustfmt::skip]
const KERNEL_WORDS: &[&str] = &[
    "blend", "saxpy", "scale", "mix", "accum", "update", "step", "norm", "combine", "filter",
    "shade", "apply", "eval", "compute", "fuse", "transform", "reduce", "advect", "integrate",
    "relax", "smooth", "splat", "gather", "project", "clip", "remap", "warp", "bias", "decay",
    "wave", "diffuse", "solve", "sample", "map", "tally", "count", "bin", "score", "mask", "shift",
    "select", "branch", "kernel", "op", "pass", "stage", "damp", "lerp", "sigmoid", "energy",
    "force", "flux", "heat", "gain", "ramp", "pulse", "fold", "scan", "poly", "taylor", "spline",
];
#[rustfmt::skip]
const HEX: &[u8; 16] = b"0123456789abcdef";

/// `{prefix}_{word}`, `{prefix}_{word}_{word}`, `{prefix}_{word}{digit}` or `{prefix}_{hex6}`.
pub(crate) fn kernel_name(rng: &mut Gen, prefix: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + 20);
    s.push_str(prefix);
    s.push('_');
    match below(rng, 10) {
        0..=3 => s.push_str(word(rng, KERNEL_WORDS)),
        4..=5 => {
            s.push_str(word(rng, KERNEL_WORDS));
            s.push('_');
            s.push_str(word(rng, KERNEL_WORDS));
        }
        6 => {
            s.push_str(word(rng, KERNEL_WORDS));
            s.push((b'0' + below(rng, 10) as u8) as char);
        }
        _ => {
            for _ in 0..6 {
                s.push(HEX[below(rng, 16)] as char);
            }
        }
    }
    s
}

// ---------------------------------------------------------------- types

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Float,
    Int,
}

/// How a kernel parameter is used. Outputs are only written (or accumulated
/// into); `InOut` arrays are read and written (in-place updates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Input,
    Output,
    InOut,
    Scalar,
}

pub(crate) struct Param {
    pub name: String,
    pub ty: Ty,
    pub role: Role,
    uses: u32,
}

impl Param {
    fn readable_array(&self) -> bool {
        matches!(self.role, Role::Input | Role::InOut)
    }
}

struct Local {
    name: String,
    ty: Ty,
    /// Index locals (`j = (i + 1) % n`) appear only inside `arr[..]`.
    index: bool,
    uses: u32,
}

/// A builtin call the expression generator may write.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Call {
    /// `f(x)`
    Unary(&'static str),
    /// `f(x, y)`
    Binary(&'static str),
    /// `wp.clamp(x, lo, hi)`
    Clamp,
}

#[rustfmt::skip]
pub(crate) const ALL_FLOAT_CALLS: &[Call] = &[
    Call::Unary("wp.sin"), Call::Unary("wp.cos"), Call::Unary("wp.tan"), Call::Unary("wp.exp"),
    Call::Unary("wp.log"), Call::Unary("wp.sqrt"), Call::Unary("wp.abs"), Call::Unary("wp.tanh"),
    Call::Unary("wp.floor"), Call::Unary("wp.ceil"), Call::Unary("wp.sinh"), Call::Unary("wp.cosh"),
    Call::Binary("wp.min"), Call::Binary("wp.max"), Call::Binary("wp.pow"), Call::Clamp,
];
#[rustfmt::skip]
pub(crate) const SIMPLE_FLOAT_CALLS: &[Call] = &[
    Call::Unary("wp.abs"), Call::Binary("wp.min"), Call::Binary("wp.max"), Call::Clamp,
];
#[rustfmt::skip]
pub(crate) const INT_CALLS: &[Call] = &[
    Call::Unary("wp.abs"), Call::Binary("wp.min"), Call::Binary("wp.max"), Call::Clamp,
];

/// Per-category knobs of the expression generator.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    /// At an interior node: probability of a builtin call / unary minus / an
    /// early leaf; the rest are binary operators.
    pub p_call: f64,
    pub p_neg: f64,
    pub p_leaf: f64,
    pub float_calls: &'static [Call],
    pub int_calls: &'static [Call],
    /// Leaf weights: local, scalar parameter, array read, thread index (int
    /// only), literal, cast from the other type.
    pub w_local: u32,
    pub w_scalar: u32,
    pub w_array: u32,
    pub w_tid: u32,
    pub w_lit: u32,
    pub w_cast: u32,
    /// Probability that an array read uses `(i + c) % n` when an int scalar exists.
    pub p_shift_index: f64,
    /// Keep sqrt/log/pow arguments in their domain (`wp.sqrt(wp.abs(x))`).
    pub p_guard: f64,
}

pub(crate) const BASE_STYLE: Style = Style {
    p_call: 0.08,
    p_neg: 0.05,
    p_leaf: 0.15,
    float_calls: SIMPLE_FLOAT_CALLS,
    int_calls: INT_CALLS,
    w_local: 5,
    w_scalar: 2,
    w_array: 5,
    w_tid: 2,
    w_lit: 3,
    w_cast: 1,
    p_shift_index: 0.1,
    p_guard: 0.6,
};

// Python precedence levels of what an expression node writes.
const P_ADD: u8 = 1;
const P_MUL: u8 = 2;
const P_UNARY: u8 = 3;
const P_ATOM: u8 = 4;

#[rustfmt::skip]
pub(crate) const FLOAT_LITERALS: &[&str] = &[
    "0.5", "2.0", "1.0", "0.25", "3.0", "0.1", "1.5", "0.75", "4.0", "10.0", "0.01", "0.2", "0.3",
    "2.5", "5.0", "0.125", "0.001", "8.0", "100.0", "0.9", "0.99", "1.25", "0.05", "6.0", "0.4",
    "3.5", "0.6", "1.75", "0.8", "7.0", "9.81", "3.14159", "6.28318", "0.333", "1.1",
];
#[rustfmt::skip]
pub(crate) const FLOAT_CLAMPS: &[(&str, &str)] = &[
    ("0.0", "1.0"), ("-1.0", "1.0"), ("0.0", "10.0"), ("-0.5", "0.5"), ("0.1", "0.9"),
    ("-2.0", "2.0"), ("0.0", "100.0"), ("0.01", "1.0"),
];
#[rustfmt::skip]
pub(crate) const INT_CLAMPS: &[(&str, &str)] = &[
    ("0", "1"), ("0", "7"), ("-4", "4"), ("0", "255"), ("1", "16"), ("0", "15"), ("-1", "1"),
];
#[rustfmt::skip]
pub(crate) const INT_LITERALS: &[&str] = &[
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "16", "32", "100", "255", "1024", "3", "2",
    "1", "12",
];

// ---------------------------------------------------------------- builder

/// One kernel under construction: its parameters, the locals in scope, and
/// the body text written so far (without the `i = wp.tid()` line).
pub(crate) struct Kernel {
    params: Vec<Param>,
    locals: Vec<Local>,
    body: String,
    indent: usize,
    lines: usize,
    tid: &'static str,
    pub style: Style,
    /// While set, leaves prefer inputs, scalars and locals not read yet, so
    /// the final stores tie up what the kernel computed.
    pub drain: bool,
    /// Write scalar parameters before the arrays in the signature.
    pub scalars_first: bool,
}

impl Kernel {
    pub fn new(rng: &mut Gen, style: Style) -> Kernel {
        Kernel {
            params: Vec::with_capacity(8),
            locals: Vec::with_capacity(12),
            body: String::with_capacity(1024),
            indent: 1,
            lines: 1,
            tid: word(rng, TID_NAMES),
            style,
            drain: false,
            scalars_first: false,
        }
    }

    /// Body lines so far, the `wp.tid()` line included.
    pub fn lines(&self) -> usize {
        self.lines
    }

    fn taken(&self, name: &str) -> bool {
        name == self.tid
            || self.params.iter().any(|p| p.name == name)
            || self.locals.iter().any(|l| l.name == name)
    }

    /// A fresh identifier from `pool`, sometimes with a digit or a suffix.
    fn fresh_name(&self, rng: &mut Gen, pool: &[&'static str]) -> String {
        let mut s = String::with_capacity(16);
        s.push_str(word(rng, pool));
        match below(rng, 10) {
            0..=6 => {}
            7 | 8 => s.push((b'0' + below(rng, 10) as u8) as char),
            _ => {
                s.push('_');
                s.push_str(word(rng, SUFFIXES));
            }
        }
        while self.taken(&s) {
            s.push((b'0' + below(rng, 10) as u8) as char);
        }
        s
    }

    /// Adds a parameter named from the pool that fits its role and type.
    pub fn param(&mut self, rng: &mut Gen, role: Role, ty: Ty) -> usize {
        let pool = match (role, ty) {
            (Role::Input | Role::InOut, Ty::Float) => FLOAT_ARRAYS,
            (Role::Input | Role::InOut, Ty::Int) => INT_ARRAYS,
            (Role::Output, _) => OUT_ARRAYS,
            (Role::Scalar, Ty::Float) => FLOAT_SCALARS,
            (Role::Scalar, Ty::Int) => INT_SCALARS,
        };
        let name = self.fresh_name(rng, pool);
        self.params.push(Param {
            name,
            ty,
            role,
            uses: 0,
        });
        self.params.len() - 1
    }

    /// Parameters with the role (and type, when given), as indices.
    pub fn with_role(&self, role: Role, ty: Option<Ty>) -> impl Iterator<Item = usize> + '_ {
        self.params
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.role == role && ty.is_none_or(|t| p.ty == t))
            .map(|(n, _)| n)
    }

    /// Writable arrays (outputs and in-place arrays).
    pub fn writable(&self) -> Vec<usize> {
        let mut v = Vec::with_capacity(4);
        v.extend(
            self.params
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p.role, Role::Output | Role::InOut))
                .map(|(n, _)| n),
        );
        v
    }

    pub fn has_int_scalar(&self) -> bool {
        self.with_role(Role::Scalar, Some(Ty::Int)).next().is_some()
    }

    pub fn has_int_input(&self) -> bool {
        self.params
            .iter()
            .any(|p| p.ty == Ty::Int && p.readable_array())
    }

    /// Locals of `ty` that hold values (not indices).
    pub fn value_locals(&self, ty: Option<Ty>) -> Vec<usize> {
        let mut v = Vec::with_capacity(self.locals.len());
        v.extend(
            self.locals
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.index && ty.is_none_or(|t| l.ty == t))
                .map(|(n, _)| n),
        );
        v
    }

    /// Some value local (or none yet).
    pub fn random_value_local(&self, rng: &mut Gen, ty: Option<Ty>) -> Option<usize> {
        let v = self.value_locals(ty);
        (!v.is_empty()).then(|| *pick(rng, &v))
    }

    fn has_index_local(&self) -> bool {
        self.locals.iter().any(|l| l.index)
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

    /// `name = expr` for a new local of `ty`; returns its index.
    pub fn new_local(&mut self, rng: &mut Gen, ty: Ty, depth: u32) -> usize {
        self.new_local_with(rng, ty, |k, rng| {
            k.expr(rng, ty, depth, true);
        })
    }

    /// `name = <literal>`: a local initialised by a constant (`acc = 0.0`).
    pub fn new_local_literal(&mut self, rng: &mut Gen, ty: Ty) -> usize {
        self.new_local_with(rng, ty, |k, rng| k.literal(rng, ty))
    }

    /// `name = arr[idx]` for a readable array of `ty`, if there is one.
    pub fn new_local_load(&mut self, rng: &mut Gen, ty: Ty) -> Option<usize> {
        let unread: Vec<usize> = (0..self.params.len())
            .filter(|&n| {
                let p = &self.params[n];
                p.ty == ty && p.readable_array() && p.uses == 0
            })
            .collect();
        if unread.is_empty() {
            return None;
        }
        let arr = *pick(rng, &unread);
        Some(self.new_local_with(rng, ty, |k, rng| k.array_read(rng, arr)))
    }

    fn new_local_with(
        &mut self,
        rng: &mut Gen,
        ty: Ty,
        write: impl FnOnce(&mut Kernel, &mut Gen),
    ) -> usize {
        let name = self.fresh_name(
            rng,
            if ty == Ty::Float {
                FLOAT_LOCALS
            } else {
                INT_LOCALS
            },
        );
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        // The value is written before the local exists, so it cannot read itself.
        write(self, rng);
        self.end_line();
        self.locals.push(Local {
            name,
            ty,
            index: false,
            uses: 0,
        });
        self.locals.len() - 1
    }

    /// An index local: `j = (i + 1) % n`, `j = i % 4`, `j = labels[i] % n`, ...
    pub fn new_index_local(&mut self, rng: &mut Gen) -> usize {
        let name = self.fresh_name(rng, INDEX_LOCALS);
        self.start_line();
        self.body.push_str(&name);
        self.body.push_str(" = ");
        let int_scalars: Vec<usize> = self.with_role(Role::Scalar, Some(Ty::Int)).collect();
        let int_inputs: Vec<usize> = (0..self.params.len())
            .filter(|&n| self.params[n].ty == Ty::Int && self.params[n].readable_array())
            .collect();
        match below(rng, 4) {
            0 | 1 if !int_scalars.is_empty() => {
                let n = *pick(rng, &int_scalars);
                self.body.push('(');
                self.body.push_str(self.tid);
                self.body
                    .push_str(if chance(rng, 0.8) { " + " } else { " * " });
                self.body
                    .push_str(word(rng, &["1", "1", "2", "3", "7", "16"]));
                self.body.push_str(") % ");
                self.use_param(n);
            }
            2 if !int_inputs.is_empty() => {
                let arr = *pick(rng, &int_inputs);
                self.array_read(rng, arr);
                self.body.push_str(" % ");
                self.modulus(rng);
            }
            _ => {
                self.body.push_str(self.tid);
                self.body.push_str(" % ");
                self.modulus(rng);
            }
        }
        self.end_line();
        self.locals.push(Local {
            name,
            ty: Ty::Int,
            index: true,
            uses: 0,
        });
        self.locals.len() - 1
    }

    /// `name = expr` (the expression may read `name` itself).
    pub fn assign(&mut self, rng: &mut Gen, local: usize, depth: u32) {
        let ty = self.locals[local].ty;
        self.start_line();
        self.body.push_str(&self.locals[local].name);
        self.body.push_str(" = ");
        self.expr(rng, ty, depth, true);
        self.end_line();
    }

    /// `name += expr`, `-=` or `*=`.
    pub fn aug_assign(&mut self, rng: &mut Gen, local: usize, depth: u32) {
        let ty = self.locals[local].ty;
        self.start_line();
        let start = self.body.len();
        self.body.push_str(&self.locals[local].name);
        let end = self.body.len();
        self.body
            .push_str(word(rng, &[" += ", " += ", " -= ", " *= "]));
        // Not `x -= x`.
        self.distinct_operand(start, end, |k| k.expr(rng, ty, depth, true));
        self.end_line();
    }

    /// `arr[idx] = expr`.
    pub fn store(&mut self, rng: &mut Gen, arr: usize, depth: u32) {
        let ty = self.params[arr].ty;
        self.start_line();
        self.body.push_str(&self.params[arr].name);
        self.body.push('[');
        self.index(rng);
        self.body.push_str("] = ");
        self.expr(rng, ty, depth, true);
        self.fold_unused(rng, ty);
        self.end_line();
    }

    /// In drain mode, appends ` + x` / ` - x` for up to two locals that
    /// nothing read yet (cast to `ty` when they are of the other type), so results are not computed for nothing. Valid
    /// after any arithmetic expression: `+`/`-` bind loosest and associate left.
    fn fold_unused(&mut self, rng: &mut Gen, ty: Ty) {
        if !self.drain {
            return;
        }
        for _ in 0..2 {
            let Some(n) = self.locals.iter().position(|l| !l.index && l.uses == 0) else {
                return;
            };
            self.body
                .push_str(if chance(rng, 0.7) { " + " } else { " - " });
            let cast = self.locals[n].ty != ty;
            if cast {
                self.body
                    .push_str(if ty == Ty::Float { "float(" } else { "int(" });
            }
            self.use_local(n);
            if cast {
                self.body.push(')');
            }
        }
    }

    /// One store per writable array, in drain mode (depth in `lo..=hi`).
    pub fn store_all(&mut self, rng: &mut Gen, lo: usize, hi: usize) {
        self.drain = true;
        for arr in self.writable() {
            let depth = between(rng, lo, hi) as u32;
            self.store(rng, arr, depth);
        }
    }

    /// `wp.atomic_add(arr, idx, expr)` (or sub/min/max), or `arr[idx] += expr` / `-=`.
    /// The index is the thread index, `0` (a single accumulator) or an index local.
    pub fn atomic(&mut self, rng: &mut Gen, arr: usize, depth: u32) {
        let ty = self.params[arr].ty;
        self.start_line();
        let op = weighted(rng, &[40, 14, 12, 12, 15, 7]);
        if op < 4 {
            self.body.push_str(
                [
                    "wp.atomic_add(",
                    "wp.atomic_sub(",
                    "wp.atomic_min(",
                    "wp.atomic_max(",
                ][op],
            );
            self.body.push_str(&self.params[arr].name);
            self.body.push_str(", ");
            self.atomic_index(rng);
            self.body.push_str(", ");
        } else {
            self.body.push_str(&self.params[arr].name);
            self.body.push('[');
            self.atomic_index(rng);
            self.body.push_str(if op == 4 { "] += " } else { "] -= " });
        }
        // Counting (`+ 1`) is the common integer case.
        if ty == Ty::Int && op != 2 && op != 3 && chance(rng, 0.3) {
            self.body.push('1');
        } else {
            self.expr(rng, ty, depth, true);
            self.fold_unused(rng, ty);
        }
        if op < 4 {
            self.body.push(')');
        }
        self.end_line();
    }

    fn atomic_index(&mut self, rng: &mut Gen) {
        let has_local = self.has_index_local();
        match weighted(rng, &[40, 25, if has_local { 35 } else { 0 }]) {
            0 => self.body.push_str(self.tid),
            1 => self.body.push('0'),
            _ => self.index_local(rng),
        }
    }

    /// `if cond:` or `elif cond:`; the caller writes the block and closes it.
    pub fn open_if(&mut self, rng: &mut Gen, elif: bool) {
        self.start_line();
        self.body.push_str(if elif { "elif " } else { "if " });
        self.cond(rng);
        self.body.push(':');
        self.end_line();
        self.indent += 1;
    }

    pub fn open_else(&mut self) {
        self.start_line();
        self.body.push_str("else:");
        self.end_line();
        self.indent += 1;
    }

    pub fn close_block(&mut self) {
        self.indent -= 1;
    }

    // ------------------------------------------------------------ expressions

    /// A condition: comparisons joined by `and` / `or`, sometimes negated.
    fn cond(&mut self, rng: &mut Gen) {
        match weighted(rng, &[45, 10, 20, 12, 13]) {
            0 => self.compare(rng),
            1 => {
                self.body.push_str("not ");
                let paren = chance(rng, 0.7);
                if paren {
                    self.body.push('(');
                }
                self.compare(rng);
                if paren {
                    self.body.push(')');
                }
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
                // `(A or B) and C`, `A and B or C` or `A and not B`.
                match below(rng, 3) {
                    0 => {
                        self.body.push('(');
                        self.compare(rng);
                        self.body.push_str(" or ");
                        self.compare(rng);
                        self.body.push_str(") and ");
                        self.compare(rng);
                    }
                    1 => {
                        self.compare(rng);
                        self.body.push_str(" and ");
                        self.compare(rng);
                        self.body.push_str(" or ");
                        self.compare(rng);
                    }
                    _ => {
                        self.compare(rng);
                        self.body.push_str(" and not ");
                        self.compare(rng);
                    }
                }
            }
        }
    }

    fn compare(&mut self, rng: &mut Gen) {
        let ty = if chance(rng, 0.6) { Ty::Float } else { Ty::Int };
        let depth = weighted(rng, &[4, 4, 2]) as u32;
        self.expr(rng, ty, depth, true);
        self.body.push_str(word(
            rng,
            &[" < ", " <= ", " > ", " >= ", " == ", " != ", " > ", " < "],
        ));
        if chance(rng, 0.2) {
            self.body
                .push_str(if ty == Ty::Float { "0.0" } else { "0" });
        } else if chance(rng, 0.45) {
            self.literal(rng, ty);
        } else {
            let arg = below(rng, 2) as u32;
            self.expr(rng, ty, arg, false);
        }
    }

    /// An expression of `ty` nested at most `depth` operators deep. With
    /// `need_var` it reads at least one variable (never a bare literal).
    pub fn expr(&mut self, rng: &mut Gen, ty: Ty, depth: u32, need_var: bool) {
        self.expr_p(rng, ty, depth, need_var, 0);
    }

    /// Writes an expression that binds at least as tightly as `min_prec`
    /// (parenthesized otherwise). Returns whether it reads a variable.
    fn expr_p(&mut self, rng: &mut Gen, ty: Ty, depth: u32, need_var: bool, min_prec: u8) -> bool {
        if depth == 0 {
            return self.leaf(rng, ty, need_var);
        }
        let st = self.style;
        let r = unit(rng);
        if r < st.p_leaf {
            self.leaf(rng, ty, need_var)
        } else if r < st.p_leaf + st.p_call {
            self.call(rng, ty, depth)
        } else if r < st.p_leaf + st.p_call + st.p_neg && min_prec < P_ATOM {
            // (Never directly under another minus: no `-(-x)`.)
            // Unary minus; a compound operand gets parentheses (`-(a + b)`).
            let paren = P_UNARY < min_prec;
            if paren {
                self.body.push('(');
            }
            self.body.push('-');
            let v = self.expr_p(rng, ty, depth - 1, need_var, P_ATOM);
            if paren {
                self.body.push(')');
            }
            v
        } else {
            self.binary(rng, ty, depth, min_prec)
        }
    }

    fn binary(&mut self, rng: &mut Gen, ty: Ty, depth: u32, min_prec: u8) -> bool {
        let (op, prec) = match ty {
            Ty::Float => {
                let n = weighted(rng, &[4, 3, 4, 2]);
                (
                    [" + ", " - ", " * ", " / "][n],
                    if n < 2 { P_ADD } else { P_MUL },
                )
            }
            Ty::Int => {
                let n = weighted(rng, &[4, 3, 3, 1, 2]);
                (
                    [" + ", " - ", " * ", " // ", " % "][n],
                    if n < 2 { P_ADD } else { P_MUL },
                )
            }
        };
        let paren = prec < min_prec;
        if paren {
            self.body.push('(');
        }
        let start = self.body.len();
        if op == " // " || op == " % " {
            // Divisor: a positive literal or an int scalar, never an arbitrary expression.
            self.expr_p(rng, ty, depth - 1, true, prec);
            let end = self.body.len();
            self.body.push_str(op);
            self.distinct_operand(start, end, |k| k.modulus(rng));
        } else {
            let left = self.expr_p(rng, ty, depth - 1, false, prec);
            let end = self.body.len();
            self.body.push_str(op);
            // Lopsided trees: the right operand is often shallower.
            let right_depth = if chance(rng, 0.5) {
                below(rng, depth as usize) as u32
            } else {
                depth - 1
            };
            // Left-associative: a same-level right operand needs parentheses.
            self.distinct_operand(start, end, |k| {
                k.expr_p(rng, ty, right_depth, !left, prec + 1);
            });
        }
        if paren {
            self.body.push(')');
        }
        true
    }

    /// Writes a second operand with `write`, again (up to three times) while
    /// it comes out the same as the first one at `start..end` (`x - x`, `n % n`).
    fn distinct_operand(&mut self, start: usize, end: usize, mut write: impl FnMut(&mut Kernel)) {
        let at = self.body.len();
        for _ in 0..3 {
            write(self);
            if self.body[at..] != self.body[start..end] {
                return;
            }
            self.body.truncate(at);
        }
        write(self);
    }

    /// A positive int literal or an int scalar parameter (divisors, moduli).
    fn modulus(&mut self, rng: &mut Gen) {
        let scalars: Vec<usize> = self.with_role(Role::Scalar, Some(Ty::Int)).collect();
        if !scalars.is_empty() && chance(rng, 0.4) {
            let n = *pick(rng, &scalars);
            self.use_param(n);
        } else {
            self.body.push_str(word(
                rng,
                &["2", "3", "4", "5", "7", "8", "10", "16", "32", "64"],
            ));
        }
    }

    fn call(&mut self, rng: &mut Gen, ty: Ty, depth: u32) -> bool {
        let st = self.style;
        let calls = if ty == Ty::Float {
            st.float_calls
        } else {
            st.int_calls
        };
        match *pick(rng, calls) {
            Call::Unary(f) => {
                let guard = ty == Ty::Float && chance(rng, st.p_guard);
                self.body.push_str(f);
                self.body.push('(');
                if guard && f == "wp.sqrt" {
                    self.body.push_str("wp.abs(");
                    self.expr(rng, ty, depth - 1, true);
                    self.body.push(')');
                } else if guard && f == "wp.log" {
                    self.body.push_str("wp.abs(");
                    self.expr(rng, ty, depth - 1, true);
                    self.body.push_str(") + ");
                    self.body.push_str(word(rng, &["1.0", "1.0", "0.001"]));
                } else {
                    self.expr(rng, ty, depth - 1, true);
                }
                self.body.push(')');
            }
            Call::Binary(f) => {
                self.body.push_str(f);
                self.body.push('(');
                if f == "wp.pow" && chance(rng, st.p_guard) {
                    self.body.push_str("wp.abs(");
                    self.expr(rng, ty, depth - 1, true);
                    self.body.push_str("), ");
                    self.body
                        .push_str(word(rng, &["2.0", "3.0", "0.5", "1.5", "2.2", "0.333"]));
                } else {
                    let start = self.body.len();
                    self.expr(rng, ty, depth - 1, true);
                    let end = self.body.len();
                    self.body.push_str(", ");
                    self.distinct_operand(start, end, |k| k.expr(rng, ty, depth - 1, false));
                }
                self.body.push(')');
            }
            Call::Clamp => {
                self.body.push_str("wp.clamp(");
                self.expr(rng, ty, depth - 1, true);
                let scalars: Vec<usize> = self.with_role(Role::Scalar, Some(ty)).collect();
                if scalars.len() >= 2 && chance(rng, 0.5) {
                    // Bounds from two scalar parameters (`lo`, `hi`).
                    let a = below(rng, scalars.len());
                    let b = (a + 1 + below(rng, scalars.len() - 1)) % scalars.len();
                    self.body.push_str(", ");
                    self.use_param(scalars[a]);
                    self.body.push_str(", ");
                    self.use_param(scalars[b]);
                } else {
                    let (lo, hi) = *pick(
                        rng,
                        if ty == Ty::Float {
                            FLOAT_CLAMPS
                        } else {
                            INT_CLAMPS
                        },
                    );
                    self.body.push_str(", ");
                    self.body.push_str(lo);
                    self.body.push_str(", ");
                    self.body.push_str(hi);
                }
                self.body.push(')');
            }
        }
        true
    }

    fn literal(&mut self, rng: &mut Gen, ty: Ty) {
        match ty {
            Ty::Float if chance(rng, 0.7) => self.body.push_str(word(rng, FLOAT_LITERALS)),
            Ty::Float => {
                // `d.d`: a plain decimal, printed the way Python's repr prints it.
                self.body.push((b'0' + below(rng, 10) as u8) as char);
                self.body.push('.');
                self.body.push((b'1' + below(rng, 9) as u8) as char);
            }
            Ty::Int => self.body.push_str(word(rng, INT_LITERALS)),
        }
    }

    fn use_param(&mut self, n: usize) {
        self.params[n].uses += 1;
        self.body.push_str(&self.params[n].name);
    }

    fn use_local(&mut self, n: usize) {
        self.locals[n].uses += 1;
        self.body.push_str(&self.locals[n].name);
    }

    /// `arr[idx]`.
    fn array_read(&mut self, rng: &mut Gen, arr: usize) {
        self.use_param(arr);
        self.body.push('[');
        self.index(rng);
        self.body.push(']');
    }

    /// An array index: the thread index, an index local, or `(i + c) % n`.
    fn index(&mut self, rng: &mut Gen) {
        let unused_index = self.locals.iter().any(|l| l.index && l.uses == 0);
        if self.has_index_local() && chance(rng, if unused_index { 0.8 } else { 0.35 }) {
            self.index_local(rng);
            return;
        }
        if chance(rng, self.style.p_shift_index) {
            let scalars: Vec<usize> = self.with_role(Role::Scalar, Some(Ty::Int)).collect();
            if !scalars.is_empty() {
                self.body.push('(');
                self.body.push_str(self.tid);
                self.body
                    .push_str(word(rng, &[" + 1", " + 1", " + 2", " + 3", " - 1"]));
                self.body.push_str(") % ");
                let n = *pick(rng, &scalars);
                self.use_param(n);
                return;
            }
        }
        self.body.push_str(self.tid);
    }

    fn index_local(&mut self, rng: &mut Gen) {
        let v: Vec<usize> = (0..self.locals.len())
            .filter(|&n| self.locals[n].index)
            .collect();
        let unused: Vec<usize> = v
            .iter()
            .copied()
            .filter(|&n| self.locals[n].uses == 0)
            .collect();
        let n = if unused.is_empty() {
            *pick(rng, &v)
        } else {
            *pick(rng, &unused)
        };
        self.use_local(n);
    }

    /// A leaf: a local, scalar, array read, the thread index, a literal or a
    /// cast of a small expression of the other type. Returns whether it reads a variable.
    fn leaf(&mut self, rng: &mut Gen, ty: Ty, need_var: bool) -> bool {
        if self.drain && chance(rng, 0.85) && self.unread_leaf(rng, ty, true) {
            return true;
        }
        let st = self.style;
        let n_local = self
            .locals
            .iter()
            .filter(|l| l.ty == ty && !l.index)
            .count();
        let n_scalar = self
            .params
            .iter()
            .filter(|p| p.ty == ty && p.role == Role::Scalar)
            .count();
        let n_array = self
            .params
            .iter()
            .filter(|p| p.ty == ty && p.readable_array())
            .count();
        let other_sources = ty == Ty::Float
            || self
                .params
                .iter()
                .any(|p| p.ty == Ty::Float && p.role != Role::Output)
            || self.locals.iter().any(|l| l.ty == Ty::Float);
        let weights = [
            if n_local > 0 { st.w_local } else { 0 },
            if n_scalar > 0 { st.w_scalar } else { 0 },
            if n_array > 0 { st.w_array } else { 0 },
            if ty == Ty::Int { st.w_tid } else { 0 },
            if need_var { 0 } else { st.w_lit },
            if other_sources { st.w_cast } else { 0 },
        ];
        let kind = if weights.iter().all(|&w| w == 0) {
            5
        } else {
            weighted(rng, &weights)
        };
        match kind {
            0 => {
                let n = self.pick_fresh(
                    rng,
                    |k, n| {
                        let l = &k.locals[n];
                        (l.ty == ty && !l.index).then_some(l.uses == 0)
                    },
                    self.locals.len(),
                );
                self.use_local(n);
            }
            1 | 2 => {
                let role_ok = move |p: &Param| {
                    if kind == 1 {
                        p.role == Role::Scalar
                    } else {
                        p.readable_array()
                    }
                };
                let n = self.pick_fresh(
                    rng,
                    |k, n| {
                        let p = &k.params[n];
                        (p.ty == ty && role_ok(p)).then_some(p.uses == 0)
                    },
                    self.params.len(),
                );
                if kind == 1 {
                    self.use_param(n);
                } else {
                    self.array_read(rng, n);
                }
            }
            3 => self.body.push_str(self.tid),
            4 => {
                self.literal(rng, ty);
                return false;
            }
            _ => {
                let other = if ty == Ty::Float { Ty::Int } else { Ty::Float };
                self.body
                    .push_str(if ty == Ty::Float { "float(" } else { "int(" });
                let arg = below(rng, 2) as u32;
                self.expr(rng, other, arg, true);
                self.body.push(')');
            }
        }
        true
    }

    /// Among `0..len` items that `fits` (Some(is_unused)), an unused one with
    /// probability 0.6 when there is one, else any.
    fn pick_fresh(
        &self,
        rng: &mut Gen,
        fits: impl Fn(&Kernel, usize) -> Option<bool>,
        len: usize,
    ) -> usize {
        let mut all = [0usize; 32];
        let mut unused = [0usize; 32];
        let (mut na, mut nu) = (0, 0);
        for n in 0..len.min(32) {
            if let Some(fresh) = fits(self, n) {
                all[na] = n;
                na += 1;
                if fresh {
                    unused[nu] = n;
                    nu += 1;
                }
            }
        }
        if nu > 0 && chance(rng, 0.6) {
            unused[below(rng, nu)]
        } else {
            all[below(rng, na)]
        }
    }

    /// Writes a not-yet-read local, input or scalar of `ty`, if any (or, with
    /// `cast_ok`, one of the other type inside `float(..)`/`int(..)`).
    fn unread_leaf(&mut self, rng: &mut Gen, ty: Ty, cast_ok: bool) -> bool {
        let locals = self
            .locals
            .iter()
            .filter(|l| l.ty == ty && !l.index && l.uses == 0)
            .count();
        let params = self
            .params
            .iter()
            .filter(|p| p.ty == ty && p.uses == 0 && p.role != Role::Output)
            .count();
        if locals + params == 0 {
            // An input of the other type nobody read yet comes in through a cast.
            let other = if ty == Ty::Float { Ty::Int } else { Ty::Float };
            let unread_other = self
                .params
                .iter()
                .any(|p| p.ty == other && p.uses == 0 && p.role != Role::Output);
            if !cast_ok || !unread_other {
                return false;
            }
            self.body
                .push_str(if ty == Ty::Float { "float(" } else { "int(" });
            self.unread_leaf(rng, other, false);
            self.body.push(')');
            return true;
        }
        let mut nth = below(rng, locals + params);
        if nth < locals {
            let n = (0..self.locals.len())
                .filter(|&n| {
                    let l = &self.locals[n];
                    l.ty == ty && !l.index && l.uses == 0
                })
                .nth(nth)
                .unwrap_or_default();
            self.use_local(n);
        } else {
            nth -= locals;
            let n = (0..self.params.len())
                .filter(|&n| {
                    let p = &self.params[n];
                    p.ty == ty && p.uses == 0 && p.role != Role::Output
                })
                .nth(nth)
                .unwrap_or_default();
            if self.params[n].role == Role::Scalar {
                self.use_param(n);
            } else {
                self.array_read(rng, n);
            }
        }
        true
    }

    // ------------------------------------------------------------ module

    /// The complete module: import, decorator, signature, `tid` line, body.
    pub fn finish(self, rng: &mut Gen, kernel_name: &str) -> String {
        let mut s = String::with_capacity(self.body.len() + 96 + 40 * self.params.len());
        s.push_str("import warp as wp\n\n\n@wp.kernel\ndef ");
        s.push_str(kernel_name);
        s.push('(');
        // Some kernels spell dtypes `float`/`int`, some `wp.float32`/`wp.int32`, some mix.
        let p_wp = *pick(rng, &[0.0, 0.0, 0.3, 1.0, 1.0]);
        let scalars = self.params.iter().filter(|p| p.role == Role::Scalar);
        let arrays = self.params.iter().filter(|p| p.role != Role::Scalar);
        let ordered: Vec<&Param> = if self.scalars_first {
            scalars.chain(arrays).collect()
        } else {
            arrays.chain(scalars).collect()
        };
        for (n, p) in ordered.into_iter().enumerate() {
            if n > 0 {
                s.push_str(", ");
            }
            s.push_str(&p.name);
            s.push_str(": ");
            let array = p.role != Role::Scalar;
            if array {
                s.push_str("wp.array(dtype=");
            }
            s.push_str(match (p.ty, chance(rng, p_wp)) {
                (Ty::Float, false) => "float",
                (Ty::Float, true) => "wp.float32",
                (Ty::Int, false) => "int",
                (Ty::Int, true) => "wp.int32",
            });
            if array {
                s.push(')');
            }
        }
        s.push_str("):\n    ");
        s.push_str(self.tid);
        s.push_str(" = wp.tid()\n");
        s.push_str(&self.body);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python keywords and builtins, C++/CUDA keywords (parameter names become
    /// struct fields in warp's generated code) and names warp's kernels use.
    const RESERVED: &[&str] = &[
        "False",
        "None",
        "True",
        "and",
        "as",
        "assert",
        "async",
        "await",
        "break",
        "class",
        "continue",
        "def",
        "del",
        "elif",
        "else",
        "except",
        "finally",
        "for",
        "from",
        "global",
        "if",
        "import",
        "in",
        "is",
        "lambda",
        "nonlocal",
        "not",
        "or",
        "pass",
        "raise",
        "return",
        "try",
        "while",
        "with",
        "yield",
        "abs",
        "all",
        "any",
        "bin",
        "bool",
        "chr",
        "dict",
        "dir",
        "divmod",
        "enumerate",
        "eval",
        "exec",
        "filter",
        "float",
        "format",
        "hash",
        "hex",
        "id",
        "input",
        "int",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "open",
        "ord",
        "pow",
        "print",
        "range",
        "repr",
        "round",
        "set",
        "slice",
        "sorted",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "vars",
        "zip",
        "auto",
        "char",
        "const",
        "default",
        "delete",
        "do",
        "double",
        "enum",
        "extern",
        "goto",
        "inline",
        "long",
        "new",
        "operator",
        "private",
        "public",
        "register",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "typedef",
        "typename",
        "union",
        "unsigned",
        "void",
        "volatile",
        "dim",
        "task_index",
        "wp",
        "warp",
        "tid",
        "i",
        "idx",
        "gid",
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
            FLOAT_ARRAYS,
            INT_ARRAYS,
            OUT_ARRAYS,
            FLOAT_SCALARS,
            INT_SCALARS,
            FLOAT_LOCALS,
            INT_LOCALS,
            INDEX_LOCALS,
        ];
        for pool in pools {
            for (n, &name) in pool.iter().enumerate() {
                assert!(is_identifier(name), "{name}");
                assert!(!RESERVED.contains(&name), "{name} is reserved");
                assert!(!pool[..n].contains(&name), "{name} twice in one pool");
            }
        }
        // These only ever follow `name_`.
        for word in SUFFIXES.iter().chain(KERNEL_WORDS) {
            assert!(is_identifier(word), "{word}");
        }
    }

    #[test]
    fn helpers_stay_in_range() {
        let mut rng = Gen::new(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = between(&mut rng, 3, 7);
            assert!((3..=7).contains(&x));
            seen[x - 3] = true;
            let u = unit(&mut rng);
            assert!((0.0..1.0).contains(&u));
        }
        assert!(
            seen.iter().all(|&s| s),
            "between() never drew some values: {seen:?}"
        );
        assert_eq!(weighted(&mut rng, &[0, 5, 0]), 1);
    }

    #[test]
    fn fresh_names_never_collide() {
        let mut rng = Gen::new(3);
        let mut k = Kernel::new(&mut rng, BASE_STYLE);
        // A tiny pool forces the digit fallback.
        for _ in 0..40 {
            k.param(&mut rng, Role::Input, Ty::Float);
        }
        let mut names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        names.push(k.tid);
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn expressions_are_tidy() {
        // No doubled signs, no stray spaces inside parentheses.
        let mut rng = Gen::new(11);
        for _ in 0..2000 {
            let mut k = Kernel::new(&mut rng, BASE_STYLE);
            k.param(&mut rng, Role::Input, Ty::Float);
            k.param(&mut rng, Role::Scalar, Ty::Int);
            k.new_local(&mut rng, Ty::Float, 5);
            k.new_local(&mut rng, Ty::Int, 4);
            for line in k.body.lines() {
                for bad in ["--", "+ +", "( ", " )", "  "] {
                    assert!(!line.trim_start().contains(bad), "{bad:?} in {line}");
                }
            }
        }
    }
}
