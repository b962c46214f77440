//! Warp's tile API (`wp.tile_load`, `wp.tile_store`, tile arithmetic, maps and
//! reductions) as warp 1.19.0's code generator lowers it.
//!
//! The builtins here take keyword arguments, compile-time shapes and function
//! arguments (`wp.tile_map(wp.sin, t)`), so they are bound by parameter name
//! instead of going through `builtins::resolve`. What shapes the output, as in
//! warp's `add_call` with a `dispatch_func`:
//! - arguments are evaluated positional first, then keywords in source order;
//!   a tuple argument (`shape=(M, N)`, `offset=(i * M, j * N)`) is a `wp::tuple`
//!   variable whose elements are passed one by one;
//! - the output variable is allocated before the zero offsets of an omitted
//!   `offset=` (warp registers those Python ints as constants while dispatching);
//! - shapes and dtypes become C++ template arguments (`tile_load<wp::float32,
//!   true, false, 16>`); a Python builtin dtype keeps its name (`float`);
//! - stores and atomic adds are commented out when the backward pass replays the
//!   forward one; `tile_max`, `tile_min`, `tile_reduce`, `tile_zeros` and
//!   `tile_ones` have no adjoint;
//! - reading an element (`t[0]`, `t[i, j]`) makes the tile's type shared
//!   memory, after the fact: its declaration changes wherever it was made.

use super::*;
use crate::lower::types::{ArrayKind, Tile};
use std::fmt::Write;

/// One argument of a tile builtin call, after evaluation.
#[derive(Clone)]
pub(super) enum TileArg {
    Var(VarId),
    /// A warp builtin passed as a function (`wp.sin`): its name.
    Func(Name),
    /// A module-level `@wp.func` passed as a function: its Python name.
    UserFunc(Name),
    /// A type (`dtype=float`, `dtype=wp.vec3`): C++ template spelling and value type.
    Dtype(String, Value),
}

/// The extents of `t` without axis `k`; `(1,)` for a 1-D tile (warp's reductions along an axis).
fn without_axis(t: &Tile, k: usize) -> Vec<u32> {
    let mut rest: Vec<u32> = t.dims().to_vec();
    rest.remove(k);
    if rest.is_empty() {
        rest.push(1);
    }
    rest
}

/// One of warp's tile solvers (see `Adjoint::tile_solver`).
struct Solver {
    name: &'static str,
    /// The C++ namespace of the call (`tile_lower_solve` has none).
    namespace: &'static str,
    /// The matrix, a right-hand side, and a `fill_mode="lower" | "upper"`
    /// (a template argument of the call) where it takes one.
    params: &'static [&'static str],
    /// The null solver handles passed first (the zeros of warp's CPU dispatch).
    handles: usize,
    /// A new tile is returned (and passed last).
    returns: bool,
    differentiable: bool,
    /// `tile_diag_add`: any dtype; the second operand is the diagonal.
    diagonal: bool,
}

const fn solver(
    name: &'static str,
    namespace: &'static str,
    params: &'static [&'static str],
    handles: usize,
    returns: bool,
    differentiable: bool,
) -> Solver {
    Solver {
        name,
        namespace,
        params,
        handles,
        returns,
        differentiable,
        diagonal: false,
    }
}

const FACTOR: &[&str] = &["A", "fill_mode"];
const FACTOR_SOLVE: &[&str] = &["L", "y", "fill_mode"];

/// warp's tile solvers, as its dispatch functions call them without MathDx.
const SOLVERS: [Solver; 9] = [
    solver("tile_cholesky", "wp::", FACTOR, 3, true, true),
    solver("tile_cholesky_inplace", "wp::", FACTOR, 1, false, false),
    solver("tile_cholesky_solve", "wp::", FACTOR_SOLVE, 1, true, false),
    solver(
        "tile_cholesky_solve_inplace",
        "wp::",
        FACTOR_SOLVE,
        1,
        false,
        false,
    ),
    solver("tile_lower_solve", "", &["L", "y"], 2, true, true),
    solver("tile_lower_solve_inplace", "", &["L", "y"], 1, false, false),
    solver("tile_upper_solve", "", &["U", "z"], 1, true, false),
    solver("tile_upper_solve_inplace", "", &["U", "z"], 1, false, false),
    Solver {
        diagonal: true,
        ..solver("tile_diag_add", "wp::", &["a", "d"], 0, true, false)
    },
];

/// The C++ function a tile call names: most are `wp::` functions whose
/// adjoint takes no template arguments; warp's solver dispatches name some
/// without a namespace, and some adjoints with the forward's template arguments.
struct TileNative<'n> {
    namespace: &'static str,
    name: &'n str,
    adjoint_templates: bool,
}

impl<'n> From<&'n str> for TileNative<'n> {
    fn from(name: &'n str) -> Self {
        TileNative {
            namespace: "wp::",
            name,
            adjoint_templates: false,
        }
    }
}

/// An argument of the generated call.
#[derive(Clone)]
enum CallArg {
    Var(VarId),
    Func(Name),
    /// A built `@wp.func`, by its C++ name (its adjoint is `adj_` + it).
    UserFunc(String),
    /// A Python int warp registers as a new constant while dispatching (after the
    /// output variable): the zeros of an omitted offset, and the constant elements
    /// of a tuple (a `tuple_t` keeps the values of constant elements, not their variables).
    Const(i128),
    /// A Python float warp registers as a new constant while dispatching.
    ConstF(f64),
    /// The call's own output variable (`tile_matmul` writes into it).
    Output,
    /// A constant of the given type warp registers while dispatching, its
    /// value as written (`const wp::float32 var_4 = 8;`).
    Typed(Scalar, ConstVal),
}

impl<'a> Adjoint<'a> {
    fn tile_of(&self, id: VarId) -> Option<Tile> {
        match self.ty(id) {
            Type::Tile(t) => Some(*t),
            _ => None,
        }
    }

    /// Evaluates one argument of a tile builtin as warp's `resolve_arg` does:
    /// functions and types create no variable.
    fn tile_arg(&mut self, e: &Expr<'a>) -> LResult<TileArg> {
        if let ExprKind::Attribute(base, attr) = &e.kind {
            if let ExprKind::Name(m) = &base.kind {
                if self.scope.is_warp_module(m) && self.symbol(m).is_none() {
                    // A type or a function is no variable, but warp's
                    // evaluation of it still reaches its line.
                    if let Some(d) = self.scope.dtype_arg(e) {
                        self.set_lineno(e.pos);
                        return Ok(TileArg::Dtype(d.0, Value::Scalar(d.1)));
                    }
                    if let Some(v) = self.scope.value_type(e).filter(|v| {
                        matches!(v, Value::Vector(..) | Value::Matrix(..) | Value::Quat(_))
                    }) {
                        self.set_lineno(e.pos);
                        return Ok(TileArg::Dtype(v.ctype(), v));
                    }
                    if builtins::is_known(attr) {
                        self.set_lineno(e.pos);
                        return Ok(TileArg::Func((*attr).into()));
                    }
                }
            }
        }
        if let ExprKind::Name(n) = &e.kind {
            if self.symbol(n).is_none() && self.scope.user_function(n).is_some() {
                self.set_lineno(e.pos);
                return Ok(TileArg::UserFunc((*n).into()));
            }
            if self.symbol(n).is_none() && self.scope.module_constant(n).is_none() {
                if let Some(d) = self.scope.dtype_arg(e) {
                    self.set_lineno(e.pos);
                    return Ok(TileArg::Dtype(d.0, Value::Scalar(d.1)));
                }
                // A `@wp.struct` (or a vector type imported by name) as a dtype.
                if let Some(v) = self.scope.value_type(e) {
                    self.set_lineno(e.pos);
                    return Ok(TileArg::Dtype(v.ctype(), v));
                }
            }
        }
        if let ExprKind::Constant(Constant::Str(text)) = &e.kind {
            // warp keeps a string argument as a `wp::str` constant.
            let shared = match *text {
                "shared" => true,
                "register" => false,
                other => {
                    return Err(self.err(format!(
                        "Invalid value for 'storage': '{other}'. Expected 'shared' or 'register'."
                    )));
                }
            };
            self.set_lineno(e.pos);
            return Ok(TileArg::Var(self.add_var(Type::StorageStr(shared), None)));
        }
        Ok(TileArg::Var(self.expr(e)?))
    }

    /// The storage a `storage=` argument asks for (register when omitted).
    fn tile_storage(&self, arg: Option<&TileArg>) -> LResult<bool> {
        match arg {
            None => Ok(false),
            Some(TileArg::Var(v)) => match self.ty(*v) {
                Type::StorageStr(shared) => Ok(*shared),
                _ => Err(self.err("storage must be the string 'shared' or 'register'")),
            },
            Some(_) => Err(self.err("storage must be the string 'shared' or 'register'")),
        }
    }

    /// The compile-time shape a `shape=` argument holds.
    fn tile_shape(&self, arg: Option<&TileArg>, what: &str) -> LResult<Vec<u32>> {
        let Some(arg @ TileArg::Var(_)) = arg else {
            return Err(self.err(format!("{what}() needs shape=...")));
        };
        const NOT_CONSTANT: &str = "Tile functions require shape to be a compile time constant.";
        let mut shape = Vec::new();
        for n in self.tile_int_tuple(arg, NOT_CONSTANT)? {
            if n > i128::from(Tile::MAX_EXTENT) {
                return Err(self.err(format!(
                    "a tile extent of {n} is beyond the {} this version of the lowering supports",
                    Tile::MAX_EXTENT
                )));
            }
            if n <= 0 {
                return Err(self.err(NOT_CONSTANT));
            }
            shape.push(n as u32);
        }
        if shape.is_empty() || shape.len() > 4 {
            return Err(self.err("tiles of 1 to 4 dimensions are supported"));
        }
        Ok(shape)
    }

    /// The compile-time ints a tuple (or a lone int) argument holds, as
    /// warp's `extract_tuple(..., as_constant=True)` gives them; `what` is the
    /// error where one is not a constant.
    fn tile_int_tuple(&self, arg: &TileArg, what: &str) -> LResult<Vec<i128>> {
        let TileArg::Var(v) = arg else {
            return Err(self.err(what.to_string()));
        };
        let elems = match self.tuples.iter().find(|(t, _)| t == v) {
            Some((_, e)) => e.clone(),
            None => vec![*v],
        };
        elems
            .iter()
            .map(|&e| match self.var(e).constant {
                Some(ConstVal::Int(n)) => Ok(n),
                _ => Err(self.err(what.to_string())),
            })
            .collect()
    }

    /// The offsets an `offset=` argument holds (zeros when it is omitted).
    fn tile_offsets(&self, arg: Option<&TileArg>, ndim: usize) -> LResult<Vec<CallArg>> {
        let Some(arg) = arg else {
            return Ok((0..ndim).map(|_| CallArg::Const(0)).collect());
        };
        let TileArg::Var(v) = arg else {
            return Err(self.err("offset must be an int or a tuple of ints"));
        };
        let (elems, is_tuple) = match self.tuples.iter().find(|(t, _)| t == v) {
            Some((_, e)) => (e.clone(), true),
            None => (vec![*v], false),
        };
        if elems.len() != ndim {
            return Err(self.err(format!(
                "offset has {} dimension(s), the array {ndim}",
                elems.len()
            )));
        }
        for &e in &elems {
            if !matches!(self.ty(e).strip_ref(), Type::Scalar(s) if s.is_int()) {
                return Err(self.err("tile offsets must be integers"));
            }
        }
        Ok(elems
            .into_iter()
            .map(|e| match (is_tuple, self.var(e).constant) {
                (true, Some(ConstVal::Int(c))) => CallArg::Const(c),
                _ => CallArg::Var(e),
            })
            .collect())
    }

    /// A `(a, b)` tuple expression: warp's `tuple` builtin (no adjoint).
    pub(super) fn tuple_expr(&mut self, elts: &[Expr<'a>]) -> LResult<VarId> {
        let mut vals = Vec::with_capacity(elts.len());
        for e in elts {
            vals.push(self.expr(e)?);
        }
        self.tuple_from_vars(&vals)
    }

    /// warp's `tuple` builtin on evaluated values (a tuple expression, or the
    /// outputs of a call used as one value): no adjoint.
    pub(super) fn tuple_from_vars(&mut self, vals: &[VarId]) -> LResult<VarId> {
        if vals.is_empty() {
            return Err(self.err("empty tuples are not supported in kernels"));
        }
        let mut types = Vec::with_capacity(vals.len());
        for v in vals {
            match self.ty(*v).strip_ref() {
                t @ (Type::Scalar(_)
                | Type::Vector(..)
                | Type::Matrix(..)
                | Type::Quat(_)
                | Type::Transform(_)
                | Type::Struct(_)
                | Type::IntTuple(_)
                | Type::Tuple(_)
                | Type::Slice) => types.push(t),
                t => {
                    return Err(self.err(format!(
                        "tuples of {t} values are not supported by this version of the lowering"
                    )));
                }
            }
        }
        let out = self.add_var(Type::tuple_of(&types), None);
        let mut loaded = Vec::with_capacity(vals.len());
        for v in vals {
            loaded.push(self.load(*v)?);
        }
        let names: Vec<&str> = loaded.iter().map(|v| self.emit(*v)).collect();
        let s = format!("{} = wp::tuple({});", self.emit(out), names.join(", "));
        self.add_forward_plain(&s);
        // warp's `tuple_t.values`: the elements as evaluated (an array
        // element is loaded again where a call passes it).
        self.tuples.push((out, vals.to_vec()));
        Ok(out)
    }

    /// `wp.tile_scatter_add(a, i[, j, k, l], value, has_value, atomic=True)`:
    /// adds `value` to one element of a shared tile where `has_value`; one
    /// index per dimension of `a` (warp's overload by count); `atomic=False`
    /// (a compile-time bool) is the template argument `<false>`.
    fn tile_scatter_add(
        &mut self,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<Option<VarId>> {
        const WHAT: &str = "tile_scatter_add";
        let mut positional = Vec::with_capacity(args.len());
        for a in args {
            match self.tile_arg(a)? {
                TileArg::Var(v) => positional.push(v),
                _ => return Err(self.err("tile_scatter_add() arguments must be values")),
            }
        }
        let mut named: Vec<(&str, VarId)> = Vec::new();
        for kw in kwargs {
            let Some(key) = kw.arg else {
                return Err(self.err("**kwargs are not supported in kernels"));
            };
            let TileArg::Var(v) = self.tile_arg(&kw.value)? else {
                return Err(self.err("tile_scatter_add() arguments must be values"));
            };
            named.push((key, v));
        }
        let Some((&a, rest)) = positional.split_first() else {
            return Err(self.err("tile_scatter_add() needs a tile"));
        };
        let Some(t) = self.tile_of(a) else {
            return Err(self.err(format!(
                "tile_scatter_add() 'a' argument must be a tile, got {}",
                self.ty(a).strip_ref()
            )));
        };
        let ndim = t.ndim as usize;
        let count_error = |s: &Self, n: usize| {
            s.err(format!(
                "tile_scatter_add: incorrect number of indices ({n}) for tile shape {:?}",
                &*t.dims()
            ))
        };
        // The indices, then value, has_value and atomic, positional or named.
        let mut slots: Vec<Option<VarId>> = rest.iter().map(|&v| Some(v)).collect();
        let named_tail = ["value", "has_value", "atomic"];
        let keyword = |k: &str| named.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let given_tail = named_tail.iter().filter(|k| keyword(k).is_some()).count();
        if slots.len() < ndim || slots.len() + given_tail < ndim + 2 {
            return Err(count_error(self, slots.len().min(ndim)));
        }
        if slots.len() > ndim + 3 {
            return Err(count_error(self, slots.len() - 2));
        }
        slots.resize(ndim + 3, None);
        for (k, name) in named_tail.iter().enumerate() {
            if let Some(v) = keyword(name) {
                if slots[ndim + k].is_some() {
                    return Err(self.err(format!(
                        "tile_scatter_add() got multiple values for argument '{name}'"
                    )));
                }
                slots[ndim + k] = Some(v);
            }
        }
        if let Some((k, _)) = named.iter().find(|(k, _)| !named_tail.contains(k)) {
            return Err(self.err(format!(
                "tile_scatter_add() got an unexpected keyword argument '{k}'"
            )));
        }
        let indices = &slots[..ndim];
        let (Some(value), Some(has_value)) = (slots[ndim], slots[ndim + 1]) else {
            return Err(self.err("tile_scatter_add() needs value and has_value"));
        };
        for i in indices.iter().flatten() {
            if !matches!(self.ty(*i).strip_ref(), Type::Scalar(s) if s.is_int()) {
                return Err(self.err("tile_scatter_add() indices must be ints"));
            }
        }
        if self.ty(value).strip_ref() != t.dtype.to_type() {
            return Err(self.err(format!(
                "tile_scatter_add() 'value' type must match tile dtype, got {} and tile dtype {}",
                self.ty(value).strip_ref(),
                t.dtype
            )));
        }
        if self.ty(has_value).strip_ref() != Type::BOOL {
            return Err(self.err("tile_scatter_add() 'has_value' must be a bool"));
        }
        let templates: Vec<String> = match slots[ndim + 2] {
            None => Vec::new(),
            Some(v) => match self.var(v).constant {
                Some(ConstVal::Bool(true)) => Vec::new(),
                Some(ConstVal::Bool(false)) => vec!["false".into()],
                _ => {
                    return Err(self.err(
                        "tile_scatter_add() 'atomic' must be a compile-time constant (True or False), not a runtime variable",
                    ));
                }
            },
        };
        self.promote_shared(a);
        self.use_builtin(WHAT);
        let mut call = vec![CallArg::Var(a)];
        call.extend(indices.iter().flatten().map(|&i| CallArg::Var(i)));
        call.push(CallArg::Var(value));
        call.push(CallArg::Var(has_value));
        self.emit_tile_call(WHAT, &templates, None, call, true, false)
    }

    /// `wp.tile_map(op, a, *args)`: `op` (a warp builtin or a `@wp.func`)
    /// applied element-wise. `a` is a tile; each other argument a tile of its
    /// shape or a plain value; the overload of `op` for the element types
    /// gives the result's element type. One, two and three to eight arguments
    /// call `tile_unary_map`, `tile_binary_map` and `tile_map`.
    fn tile_map(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<VarId> {
        if !kwargs.is_empty() {
            return Err(self
                .err("tile_map() takes positional arguments only (this version of the lowering)"));
        }
        if args.len() < 2 || args.len() > 9 {
            return Err(self.err("tile_map() takes an operator and one to eight arguments"));
        }
        let op = self.tile_arg(&args[0])?;
        let mut operands = Vec::with_capacity(args.len() - 1);
        let mut types = Vec::with_capacity(args.len() - 1);
        let mut first: Option<Tile> = None;
        for (k, a) in args[1..].iter().enumerate() {
            let TileArg::Var(v) = self.tile_arg(a)? else {
                return Err(self.err("tile_map() arguments must be tiles or values"));
            };
            let ty = match (self.tile_of(v), first) {
                (Some(t), None) => {
                    first = Some(t);
                    t.dtype.to_type()
                }
                (Some(t), Some(f)) if t.dims() == f.dims() => t.dtype.to_type(),
                (Some(_), Some(_)) => {
                    return Err(self.err("tile_map() tiles must have the same shape"));
                }
                (None, _) if k == 0 => {
                    return Err(self.err("tile_map() argument 'a' must be a tile"));
                }
                (None, _) => match self.ty(v).strip_ref() {
                    t @ (Type::Scalar(_)
                    | Type::Vector(..)
                    | Type::Matrix(..)
                    | Type::Struct(_)) => t,
                    t => return Err(self.err(format!("tile_map() cannot map over a {t}"))),
                },
            };
            operands.push(v);
            types.push(ty);
        }
        let shape = first.expect("the first argument is a tile");
        // The operator for these element types, and what it returns.
        let (callee, ret, differentiable) = match op {
            TileArg::Func(op) => {
                let ov = builtins::resolve(&op, &types).map_err(|m| self.err(m))?;
                if ov.native != *op || ov.namespace != "wp::" {
                    return Err(self.err(format!(
                        "tile_map() operator {op} is not supported by this version of the lowering"
                    )));
                }
                (CallArg::Func(op.clone()), ov.ret, ov.differentiable)
            }
            TileArg::UserFunc(f) => {
                let (native, ret) = self.tile_operator_func(&f, &types)?;
                (CallArg::UserFunc(native), ret, true)
            }
            _ => return Err(self.err("tile_map() needs a warp builtin or a @wp.func as op")),
        };
        let dtype = match ret.and_then(|t| t.value()) {
            Some(
                v @ (Value::Scalar(_) | Value::Vector(..) | Value::Matrix(..) | Value::Struct(_)),
            ) => v,
            _ => {
                return Err(
                    self.err("tile_map() operator must return a scalar, vector, matrix or struct")
                );
            }
        };
        self.use_builtin("tile_map");
        let native = match operands.len() {
            1 => "tile_unary_map",
            2 => "tile_binary_map",
            _ => "tile_map",
        };
        let mut call = vec![callee];
        call.extend(operands.into_iter().map(CallArg::Var));
        let ret = Type::Tile(Tile::new(dtype, &shape.dims()));
        let out = self.emit_tile_call(native, &[], Some(ret), call, differentiable, false)?;
        Ok(out.expect("tile_map() returns a tile"))
    }

    /// The axis a reduction of `t` runs along: a constant below its rank.
    fn tile_axis(&self, name: &str, axis: VarId, t: &Tile) -> LResult<usize> {
        let ndim = usize::from(t.ndim);
        match self.var(axis).constant {
            Some(ConstVal::Int(k)) if (0..ndim as i128).contains(&k) => Ok(k as usize),
            Some(ConstVal::Int(k)) => Err(self.err(format!(
                "{name}() axis {k} is out of bounds for tile with {ndim} dimensions"
            ))),
            _ => Err(self.err(format!("{name}() axis must be a compile-time constant"))),
        }
    }

    /// The `@wp.func` called `f` as a tile operator on elements of `types`:
    /// built (once per signature for a generic one), called by the kernel
    /// (so its adjoint is emitted), its C++ name and return type.
    fn tile_operator_func(&mut self, f: &str, types: &[Type]) -> LResult<(String, Option<Type>)> {
        let (def, pos, native) = self
            .scope
            .user_overload(f, types)
            .ok_or_else(|| self.err(format!("could not find function {f}")))?;
        let concrete = self.scope.build_types(def, types);
        let idx = self.ensure_built(def, pos, native, &[], concrete)?;
        let (native, params, ret, several) = {
            let t = self.funcs.borrow();
            let b = &t.built[idx].1;
            (
                b.native.clone(),
                b.params.clone(),
                b.ret,
                !b.outputs.is_empty(),
            )
        };
        if several || params.iter().map(Type::strip_ref).ne(types.iter().copied()) {
            return Err(self.err(format!(
                "tile operator {f} does not take the element types of its arguments"
            )));
        }
        if !self.called.contains(&idx) {
            self.called.push(idx);
        }
        Ok((native, ret))
    }

    /// `wp.tile_arange([start,] stop[, step], dtype=float, storage="register")`:
    /// a 1-D tile of the range, its length worked out at compile time from
    /// the constant arguments as warp's `value_func` does (in the element
    /// type's precision, the last partial step kept).
    fn tile_arange(&mut self, args: &[Expr<'a>], kwargs: &[Keyword<'a>]) -> LResult<VarId> {
        if args.is_empty() || args.len() > 3 {
            return Err(self.err(format!(
                "tile_arange() takes 1 to 3 positional arguments, got {}",
                args.len()
            )));
        }
        let mut range = Vec::with_capacity(3);
        for a in args {
            match self.tile_arg(a)? {
                TileArg::Var(v) => range.push(v),
                _ => return Err(self.err("tile_arange() arguments must be numbers")),
            }
        }
        let (mut dtype, mut shared) = (Scalar::Float32, false);
        for kw in kwargs {
            match (kw.arg, self.tile_arg(&kw.value)?) {
                (Some("dtype"), TileArg::Dtype(_, Value::Scalar(s))) => dtype = s,
                (Some("storage"), arg) => shared = self.tile_storage(Some(&arg))?,
                (k, _) => {
                    return Err(self.err(format!(
                        "tile_arange() argument '{}' is not supported by this version of the lowering",
                        k.unwrap_or("**")
                    )));
                }
            }
        }
        if !(dtype.is_int() || matches!(dtype, Scalar::Float32 | Scalar::Float64)) {
            return Err(self.err(format!(
                "tile_arange() dtype {} is not supported by this version of the lowering",
                dtype.name()
            )));
        }
        // start, stop, step: the arguments given, 0 and 1 for the others.
        let given: Vec<Option<VarId>> = match range[..] {
            [stop] => vec![None, Some(stop), None],
            [start, stop] => vec![Some(start), Some(stop), None],
            _ => range.iter().map(|v| Some(*v)).collect(),
        };
        let mut values = [0.0f64, 0.0, 1.0];
        let mut ints = [0i128, 0, 1];
        for (i, v) in given.iter().enumerate() {
            let Some(v) = v else { continue };
            // Each value as the element type represents it (an integer
            // rounded straight to a float type, not through a double).
            match self.var(*v).constant {
                Some(ConstVal::Int(n)) => {
                    ints[i] = n;
                    values[i] = if dtype == Scalar::Float32 {
                        n as f32 as f64
                    } else {
                        n as f64
                    };
                }
                Some(ConstVal::Float(x)) if !dtype.is_int() => values[i] = x,
                // An integral float bound for an integer type keeps its value.
                Some(ConstVal::Float(x)) if x.fract() == 0.0 && x.abs() < 2f64.powi(100) => {
                    ints[i] = x as i128;
                }
                _ => {
                    return Err(self.err(
                        "tile_arange() arguments must be compile time constants (integers for an integer dtype)",
                    ));
                }
            }
        }
        let n = if dtype.is_int() {
            let (lo, hi) = dtype.int_range();
            if ints.iter().any(|v| *v < lo || *v > hi) {
                return Err(self.err(format!(
                    "tile_arange() range is out of range for the output type {}",
                    dtype.name()
                )));
            }
            let [start, stop, step] = ints;
            if step == 0 {
                return Err(self.err("tile_arange() step cannot be zero"));
            }
            if (step > 0 && start >= stop) || (step < 0 && start <= stop) {
                return Err(self.err("tile_arange() requires a non-empty range"));
            }
            // Python's -((stop - start) // -step): the ceiling of an exact division.
            let (a, b) = (stop - start, -step);
            let floor = a / b - i128::from(a % b != 0 && (a < 0) != (b < 0));
            -floor
        } else {
            let at = |x: f64| {
                if dtype == Scalar::Float32 {
                    x as f32 as f64
                } else {
                    x
                }
            };
            let [start, stop, step] = values.map(at);
            if step == 0.0 {
                return Err(self.err("tile_arange() step cannot be zero"));
            }
            if (step > 0.0 && start >= stop) || (step < 0.0 && start <= stop) {
                return Err(self.err("tile_arange() requires a non-empty range"));
            }
            let quotient = at((stop - start) / step);
            if !quotient.is_finite() || quotient > f64::from(Tile::MAX_EXTENT) {
                return Err(self.err("tile_arange() spans too many elements"));
            }
            quotient.ceil() as i128
        }
        .max(1);
        if n > i128::from(Tile::MAX_EXTENT) {
            return Err(self.err("tile_arange() spans too many elements"));
        }
        self.use_builtin("tile_arange");
        let mut t = Tile::new(Value::Scalar(dtype), &[n as u32]);
        t.shared = shared;
        // After the output, warp registers the range's new constants: 0 and 1
        // where start or step were left out, and each constant argument not
        // of the element type cast to it (keeping the value as written).
        let call: Vec<CallArg> = given
            .iter()
            .zip([0i128, 0, 1])
            .map(|(v, default)| match v {
                None => CallArg::Typed(dtype, ConstVal::Int(default)),
                Some(v) if self.ty(*v).strip_ref() == Type::Scalar(dtype) => CallArg::Var(*v),
                Some(v) => CallArg::Typed(dtype, self.var(*v).constant.expect("checked constant")),
            })
            .collect();
        let templates = [dtype.ctype().to_string(), n.to_string()];
        let out = self.emit_tile_call(
            "tile_arange",
            &templates,
            Some(Type::Tile(t)),
            call,
            false,
            false,
        )?;
        Ok(out.expect("tile_arange() returns a tile"))
    }

    /// The tile linear algebra of warp's solver dispatches (`wp.tile_cholesky`,
    /// `wp.tile_lower_solve`, ...), as warp generates it without MathDx (the
    /// code generator's own output, `output_arch` unset): the operands move to
    /// shared memory, a result is a new shared tile shaped like the right-hand
    /// side, and the call takes the solver's null handles (zeros) first.
    fn tile_solver(
        &mut self,
        solver: &Solver,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<Option<VarId>> {
        let (name, params) = (solver.name, solver.params);
        if args.len() > params.len() {
            return Err(self.err(format!("{name}() takes at most {} arguments", params.len())));
        }
        let mut bound: Vec<(&str, VarId)> = Vec::with_capacity(params.len());
        let named = args
            .iter()
            .zip(params.iter().copied())
            .map(|(a, p)| (Some(p), a));
        for (key, value) in named.chain(kwargs.iter().map(|k| (k.arg, &k.value))) {
            let Some(p) = key.and_then(|k| params.iter().find(|p| **p == k)) else {
                return Err(self.err(format!(
                    "{name}() argument '{}' is not supported by this version of the lowering",
                    key.unwrap_or("**")
                )));
            };
            if bound.iter().any(|(b, _)| b == p) {
                return Err(self.err(format!("{name}() got multiple values for argument '{p}'")));
            }
            bound.push((p, self.expr(value)?));
        }
        let mut upper = false;
        let mut operands: Vec<(VarId, Tile)> = Vec::with_capacity(2);
        for p in params {
            let found = bound.iter().find(|(b, _)| b == p).map(|(_, v)| *v);
            if *p == "fill_mode" {
                upper = match found.map(|v| self.string_constant(v)) {
                    None => false,
                    Some(Some("lower")) => false,
                    Some(Some("upper")) => true,
                    Some(_) => {
                        return Err(
                            self.err(format!("{name}() fill_mode must be \"lower\" or \"upper\""))
                        );
                    }
                };
                continue;
            }
            let Some(v) = found else {
                return Err(self.err(format!("{name}() needs a value for '{p}'")));
            };
            match self.tile_of(v) {
                Some(t) => operands.push((v, t)),
                None => return Err(self.err(format!("{name}() argument '{p}' must be a tile"))),
            }
        }
        // warp's value function: a square matrix, then a right-hand side of
        // its rows (a vector or a matrix), of the same dtype.
        let (_, ta) = operands[0];
        if ta.ndim != 2 || ta.extent(0) != ta.extent(1) {
            return Err(self.err(format!("{name}() needs a square 2-D tile")));
        }
        let rhs = operands.get(1).copied();
        if let Some((_, tb)) = rhs {
            let rows_ok = if solver.diagonal {
                tb.ndim == 1
            } else {
                matches!(tb.ndim, 1 | 2)
            };
            if tb.dtype != ta.dtype || !rows_ok || tb.extent(0) != ta.extent(0) {
                return Err(self.err(format!(
                    "{name}() operands must be tiles of one dtype, the second of the first's rows"
                )));
            }
        }
        let floats = matches!(ta.dtype, Value::Scalar(Scalar::Float32 | Scalar::Float64));
        if !solver.diagonal && !floats {
            return Err(self.err(format!(
                "{name}() arguments must be tiles of float32 or float64 entries"
            )));
        }
        self.use_builtin(name);
        // The result: shaped (and laid out) like the right-hand side, or like
        // the matrix for a factorization, in shared memory.
        let ret = solver.returns.then(|| {
            let like = match (solver.diagonal, rhs) {
                (false, Some((_, tb))) => tb,
                _ => ta,
            };
            let mut t = Tile::new(like.dtype, &like.dims());
            t.strides = like.strides;
            t.shared = true;
            Type::Tile(t)
        });
        for (v, _) in &operands {
            self.promote_shared(*v);
        }
        let mut call: Vec<CallArg> = (0..solver.handles).map(|_| CallArg::Const(0)).collect();
        call.extend(operands.iter().map(|(v, _)| CallArg::Var(*v)));
        if solver.returns {
            call.push(CallArg::Output);
        }
        let templates: Vec<String> = if params.contains(&"fill_mode") {
            vec![upper.to_string()]
        } else {
            Vec::new()
        };
        let native = TileNative {
            namespace: solver.namespace,
            name,
            adjoint_templates: true,
        };
        self.emit_tile_call(native, &templates, ret, call, solver.differentiable, false)
    }

    /// Emits a tile builtin call: output first, then dispatch constants, the
    /// forward call (and its replay) and the adjoint.
    fn emit_tile_call<'n>(
        &mut self,
        native: impl Into<TileNative<'n>>,
        templates: &[String],
        ret: Option<Type>,
        args: Vec<CallArg>,
        differentiable: bool,
        skip_replay: bool,
    ) -> LResult<Option<VarId>> {
        let TileNative {
            namespace,
            name: native,
            adjoint_templates,
        } = native.into();
        let output = ret.map(|t| self.add_var(t, None));
        // warp registers the Python values among the arguments as constants
        // first (`register_var`), then loads the array elements among them.
        let args: Vec<CallArg> = args
            .into_iter()
            .map(|a| match a {
                CallArg::Const(c) => CallArg::Var(self.add_constant(ConstVal::Int(c))),
                CallArg::ConstF(c) => CallArg::Var(self.add_constant(ConstVal::Float(c))),
                CallArg::Typed(ty, c) => CallArg::Var(self.add_var(Type::Scalar(ty), Some(c))),
                a => a,
            })
            .collect();
        let mut fwd = Vec::with_capacity(args.len());
        let mut adjs = Vec::with_capacity(args.len());
        for a in args {
            match a {
                CallArg::Var(v) => {
                    let l = self.load(v)?;
                    fwd.push(self.emit(l).to_string());
                    adjs.push(self.emit_adj(v));
                }
                CallArg::Const(_) | CallArg::ConstF(_) | CallArg::Typed(..) => {
                    unreachable!("registered above")
                }
                CallArg::Output => {
                    let o = output.expect("a call passing its output returns a value");
                    fwd.push(self.emit(o).to_string());
                    adjs.push(self.emit_adj(o));
                }
                CallArg::Func(f) => {
                    fwd.push(format!("wp::{f}"));
                    adjs.push(format!("wp::adj_{f}"));
                }
                CallArg::UserFunc(f) => {
                    adjs.push(format!("adj_{f}"));
                    fwd.push(f);
                }
            }
        }
        // The line put together in one string: a `format!` and a `join` per
        // piece cost more than the text.
        let mut forward = String::with_capacity(64 + 16 * fwd.len());
        if let Some(o) = output {
            forward.put_all(&[self.emit(o), " = "]);
        }
        forward.put_all(&[namespace, native]);
        let mut spelled_templates = String::new();
        for (i, t) in templates.iter().enumerate() {
            spelled_templates.put_all(&[if i == 0 { "<" } else { ", " }, t]);
        }
        if !templates.is_empty() {
            spelled_templates.put(">");
        }
        forward.put_all(&[&spelled_templates, "("]);
        for (i, a) in fwd.iter().enumerate() {
            forward.put_all(&[if i == 0 { "" } else { ", " }, a]);
        }
        forward.put(");");
        if skip_replay {
            let replay = format!("// {forward}");
            self.add_forward(&forward, Some(&replay), false);
        } else {
            self.add_forward_plain(&forward);
        }
        if differentiable && !fwd.is_empty() {
            // `wp::adj_f(args, adj_args, adj_ret);`, written in place.
            let mut line = self.new_line();
            line.put_all(&[namespace, "adj_", native]);
            if adjoint_templates {
                line.put(&spelled_templates);
            }
            line.put("(");
            for (i, a) in fwd.iter().chain(&adjs).enumerate() {
                line.put_all(&[if i == 0 { "" } else { ", " }, a]);
            }
            if let Some(o) = output {
                line.put_all(&[", ", self.vars[o.0].adj()]);
            }
            line.put(");");
            self.push_reverse_line(line);
        }
        Ok(output)
    }

    /// `wp.tile_*(...)` calls.
    pub(super) fn tile_call(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<Option<VarId>> {
        if name == "tile_arange" {
            return self.tile_arange(args, kwargs).map(Some);
        }
        if let Some(solver) = SOLVERS.iter().find(|s| s.name == name) {
            return self.tile_solver(solver, args, kwargs);
        }
        if name == "tile_map" {
            return self.tile_map(args, kwargs).map(Some);
        }
        if name == "tile_scatter_add" {
            return self.tile_scatter_add(args, kwargs);
        }
        if name == "tile_extract" {
            // `wp.tile_extract(t, i, j)` is `t[i, j]`.
            let ([tile, indices @ ..], []) = (args, kwargs) else {
                return Err(self.err("tile_extract() takes a tile and its indices"));
            };
            let target = self.expr(tile)?;
            if self.tile_of(target).is_none() {
                return Err(self.err("tile_extract() argument 'a' must be a tile"));
            }
            let nodes: Vec<&Expr<'a>> = indices.iter().collect();
            return self.tile_extract_as(target, &nodes, false).map(Some);
        }
        let params: &[&str] = match name {
            "tile_load" => &["a", "shape", "offset", "storage", "bounds_check", "aligned"],
            "tile_store" => &["a", "t", "offset", "bounds_check", "aligned"],
            "tile_atomic_add" => &["a", "t", "offset"],
            "tile_zeros" | "tile_ones" | "tile_empty" => &["shape", "dtype", "storage"],
            "tile_stack" => &["capacity", "dtype"],
            "tile_sort" => &["keys", "values"],
            "tile_full" => &["shape", "value", "dtype", "storage"],
            "tile_randi" | "tile_randf" => &["shape", "rng", "min", "max", "storage"],
            "tile_from_thread" => &["shape", "value", "thread_idx", "storage"],
            "tile_load_indexed" => &["a", "indices", "shape", "offset", "axis", "storage"],
            "tile_store_indexed" | "tile_atomic_add_indexed" => {
                &["a", "indices", "t", "offset", "axis"]
            }
            "tile_transpose" | "untile" => &["a"],
            "tile_view" => &["t", "offset", "shape"],
            "tile_squeeze" => &["t", "axis"],
            "tile_reshape" => &["t", "shape"],
            "tile_broadcast" => &["a", "shape"],
            "tile_assign" => &["dst", "src", "offset"],
            "tile" => &["x", "preserve_type"],
            "tile_sum" => &["a", "axis"],
            "tile_max" | "tile_min" | "tile_argmax" | "tile_argmin" => &["a"],
            "tile_scan_inclusive"
            | "tile_scan_exclusive"
            | "tile_scan_max_inclusive"
            | "tile_scan_min_inclusive" => &["a"],
            "tile_reduce" => &["op", "a", "axis"],
            "tile_matmul" => &["a", "b", "out", "alpha", "beta"],
            "tile_fft" | "tile_ifft" => &["inout"],
            _ => {
                return Err(self.err(format!(
                    "{name}() is not supported by this version of the lowering"
                )));
            }
        };
        if args.len() > params.len() {
            return Err(self.err(format!("{name}() takes at most {} arguments", params.len())));
        }
        let mut bound: Vec<(&str, TileArg)> = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if matches!(a.kind, ExprKind::Starred(_)) {
                return Err(
                    self.err("starred arguments are not supported by this version of the lowering")
                );
            }
            let v = self.tile_arg(a)?;
            bound.push((params[k], v));
        }
        for kw in kwargs {
            let Some(key) = kw.arg else {
                return Err(self.err("**kwargs are not supported in kernels"));
            };
            let Some(p) = params.iter().find(|p| **p == key) else {
                return Err(self.err(format!(
                    "{name}() argument '{key}' is not supported by this version of the lowering"
                )));
            };
            if bound.iter().any(|(b, _)| b == p) {
                return Err(self.err(format!("{name}() got multiple values for argument '{key}'")));
            }
            let v = self.tile_arg(&kw.value)?;
            bound.push((p, v));
        }
        let get = |p: &str| bound.iter().find(|(b, _)| *b == p).map(|(_, v)| v.clone());
        let var = |s: &Self, p: &str| -> LResult<VarId> {
            match get(p) {
                Some(TileArg::Var(v)) => Ok(v),
                _ => Err(s.err(format!("{name}() needs a value for '{p}'"))),
            }
        };
        let tile = |s: &Self, p: &str| -> LResult<(VarId, Tile)> {
            let v = var(s, p)?;
            match s.tile_of(v) {
                Some(t) => Ok((v, t)),
                None => Err(s.err(format!("{name}() argument '{p}' must be a tile"))),
            }
        };
        let array = |s: &Self| -> LResult<(VarId, Value, usize)> {
            let v = var(s, "a")?;
            match s.ty(v).strip_ref() {
                Type::Array {
                    dtype,
                    ndim,
                    kind: ArrayKind::Array | ArrayKind::Fixed(_),
                } => Ok((v, dtype, ndim)),
                _ => Err(s.err(format!(
                    "{name}() needs an array of scalars, vectors or matrices (this version of the lowering)"
                ))),
            }
        };
        // `bounds_check=` (default on) and `aligned=` (default off): compile
        // time constants, template arguments; `aligned` only for a tile in
        // shared memory (warp passes false for a register tile).
        let flag = |s: &Self, p: &str, default: bool| -> LResult<String> {
            let on = match get(p) {
                None => default,
                Some(TileArg::Var(v)) => match s.var(v).constant {
                    Some(ConstVal::Bool(b)) => b,
                    _ => {
                        return Err(s.err(format!(
                            "{name}() argument '{p}' must be a compile time constant bool"
                        )));
                    }
                },
                Some(_) => return Err(s.err(format!("{name}() argument '{p}' must be a bool"))),
            };
            Ok(on.to_string())
        };
        // `tile_load` / `tile_store`'s first template arguments.
        let access = |s: &Self, dtype: Value, shared: bool| -> LResult<Vec<String>> {
            let aligned = if shared {
                flag(s, "aligned", false)?
            } else {
                "false".into()
            };
            Ok(vec![dtype.ctype(), flag(s, "bounds_check", true)?, aligned])
        };
        self.use_builtin(name);
        match name {
            "tile_load" => {
                let (a, dtype, ndim) = array(self)?;
                let shape = self.tile_shape(get("shape").as_ref(), name)?;
                if shape.len() != ndim {
                    return Err(self.err(format!(
                        "tile_load() array argument must have same number of dimensions as the tile shape, trying to perform an {} dimensional load from an array with {ndim} dimensions.",
                        shape.len()
                    )));
                }
                let mut call = vec![CallArg::Var(a)];
                call.extend(self.tile_offsets(get("offset").as_ref(), ndim)?);
                let mut t = Tile::new(dtype, &shape);
                t.shared = self.tile_storage(get("storage").as_ref())?;
                let mut templates = access(self, dtype, t.shared)?;
                templates.extend(shape.iter().map(|n| n.to_string()));
                self.emit_tile_call(
                    "tile_load",
                    &templates,
                    Some(Type::Tile(t)),
                    call,
                    true,
                    false,
                )
            }
            "tile_store" | "tile_atomic_add" => {
                let (a, dtype, ndim) = array(self)?;
                let (t, tt) = tile(self, "t")?;
                if tt.ndim as usize != ndim {
                    return Err(self.err(format!(
                        "{name}() tile has {} dimension(s), the array {ndim}",
                        tt.ndim
                    )));
                }
                if tt.dtype != dtype {
                    return Err(self.err(format!(
                        "{name}() array and tile must have the same dtype, got {} and {}",
                        dtype, tt.dtype
                    )));
                }
                let mut call = vec![CallArg::Var(a)];
                call.extend(self.tile_offsets(get("offset").as_ref(), ndim)?);
                call.push(CallArg::Var(t));
                if name == "tile_store" {
                    let templates = access(self, dtype, tt.shared)?;
                    self.emit_tile_call(name, &templates, None, call, true, true)
                } else {
                    let templates = vec![dtype.ctype().to_string(), "true".into()];
                    // A new tile of the same shape and (current) storage; owning, row-major.
                    let mut r = Tile::new(tt.dtype, &tt.dims());
                    r.shared = tt.shared;
                    self.emit_tile_call(name, &templates, Some(Type::Tile(r)), call, true, true)
                }
            }
            "tile_zeros" | "tile_ones" | "tile_empty" => {
                let shape = self.tile_shape(get("shape").as_ref(), name)?;
                // warp's default dtype is Python's `float`.
                let (spelling, dtype) = match get("dtype") {
                    Some(TileArg::Dtype(s, d)) => (s, d),
                    None => ("float".to_string(), Value::Scalar(Scalar::Float32)),
                    _ => return Err(self.err(format!("{name}() needs a type as dtype="))),
                };
                let mut templates = vec![spelling];
                templates.extend(shape.iter().map(|n| n.to_string()));
                let mut t = Tile::new(dtype, &shape);
                t.shared = self.tile_storage(get("storage").as_ref())?;
                self.emit_tile_call(
                    name,
                    &templates,
                    Some(Type::Tile(t)),
                    Vec::new(),
                    false,
                    false,
                )
            }
            "tile_sum" if get("axis").is_some() => {
                // Along one axis: the input moves to shared memory, the axis
                // (a constant) is a template argument, the result loses it.
                let (a, t) = tile(self, "a")?;
                let axis = self.tile_axis(name, var(self, "axis")?, &t)?;
                if matches!(t.dtype, Value::Struct(_)) {
                    return Err(self.err(
                        "tile_sum() of a tile of structs is not supported by this version of the lowering",
                    ));
                }
                self.promote_shared(a);
                let ret = Type::Tile(Tile::new(t.dtype, &without_axis(&t, axis)));
                let native = TileNative {
                    namespace: "wp::",
                    name: "tile_sum_axis",
                    adjoint_templates: true,
                };
                let templates = [axis.to_string()];
                self.emit_tile_call(
                    native,
                    &templates,
                    Some(ret),
                    vec![CallArg::Var(a)],
                    true,
                    false,
                )
            }
            "tile_full" => {
                // Of the value's type unless dtype= converts a scalar value.
                let shape = self.tile_shape(get("shape").as_ref(), name)?;
                let value = var(self, "value")?;
                let of_value = self.ty(value).strip_ref().value().ok_or_else(|| {
                    self.err("tile_full() value must be a scalar, vector, matrix or struct")
                })?;
                let dtype = match get("dtype") {
                    None => of_value,
                    Some(TileArg::Dtype(_, d))
                        if d == of_value || matches!(of_value, Value::Scalar(_)) =>
                    {
                        d
                    }
                    Some(TileArg::Dtype(_, d)) => {
                        return Err(self.err(format!(
                            "tile_full() value of type {of_value} does not match dtype {d}"
                        )));
                    }
                    Some(_) => return Err(self.err("tile_full() needs a type as dtype=")),
                };
                let mut templates = vec![dtype.ctype()];
                templates.extend(shape.iter().map(|n| n.to_string()));
                let mut t = Tile::new(dtype, &shape);
                t.shared = self.tile_storage(get("storage").as_ref())?;
                let call = vec![CallArg::Var(value)];
                self.emit_tile_call(name, &templates, Some(Type::Tile(t)), call, false, false)
            }
            "tile_randi" | "tile_randf" => {
                // A tile of `randi` (int32) or `randf` (float32) draws from
                // `rng`; `min` and `max`, compile time constants given
                // together, become new constants of the element type after
                // the output (a float rounded to float32 first, as warp's
                // dispatch does).
                let shape = self.tile_shape(get("shape").as_ref(), name)?;
                let rng = var(self, "rng")?;
                if self.ty(rng).strip_ref() != Type::Scalar(Scalar::UInt32) {
                    return Err(self.err(format!("{name}() argument 'rng' must be a uint32")));
                }
                let dtype = if name == "tile_randi" {
                    Scalar::Int32
                } else {
                    Scalar::Float32
                };
                let mut call = vec![CallArg::Var(rng)];
                match (get("min"), get("max")) {
                    (None, None) => {}
                    (Some(TileArg::Var(lo)), Some(TileArg::Var(hi))) => {
                        let (lo, hi) = (self.var(lo).constant, self.var(hi).constant);
                        match (dtype, lo, hi) {
                            (Scalar::Int32, Some(ConstVal::Int(lo)), Some(ConstVal::Int(hi))) => {
                                let int32 = i32::MIN as i128..=i32::MAX as i128;
                                if !int32.contains(&lo) || !int32.contains(&hi) {
                                    return Err(self.err(
                                        "tile_randi() min and max must be representable as int32",
                                    ));
                                }
                                if hi <= lo {
                                    return Err(
                                        self.err("tile_randi() max must be greater than min")
                                    );
                                }
                                call.push(CallArg::Typed(dtype, ConstVal::Int(lo)));
                                call.push(CallArg::Typed(dtype, ConstVal::Int(hi)));
                            }
                            (
                                Scalar::Float32,
                                Some(ConstVal::Float(lo)),
                                Some(ConstVal::Float(hi)),
                            ) => {
                                let (lo, hi) = (lo as f32 as f64, hi as f32 as f64);
                                if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
                                    return Err(
                                        self.err("tile_randf() max must be greater than min")
                                    );
                                }
                                call.push(CallArg::Typed(dtype, ConstVal::Float(lo)));
                                call.push(CallArg::Typed(dtype, ConstVal::Float(hi)));
                            }
                            (Scalar::Int32, ..) => {
                                return Err(self.err("'min' and 'max' must both be integers"));
                            }
                            _ => return Err(self.err("'min' and 'max' must both be floats")),
                        }
                    }
                    _ => return Err(self.err("Both 'min' and 'max' must be provided together")),
                }
                let templates: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
                let mut t = Tile::new(Value::Scalar(dtype), &shape);
                t.shared = self.tile_storage(get("storage").as_ref())?;
                self.emit_tile_call(name, &templates, Some(Type::Tile(t)), call, false, false)
            }
            "tile_load_indexed" | "tile_store_indexed" | "tile_atomic_add_indexed" => {
                // Gathered (scattered) along `axis` through a 1-D int tile of
                // indices, which moves to shared memory.
                let (a, dtype, ndim) = array(self)?;
                let (indices, ti) = tile(self, "indices")?;
                if ti.ndim != 1 || ti.dtype != Value::Scalar(Scalar::Int32) {
                    return Err(self.err(format!("{name}() indices must be a 1D tile of int32")));
                }
                let (axis_arg, axis) = match get("axis") {
                    None => (CallArg::Const(0), 0),
                    Some(TileArg::Var(v)) => match self.var(v).constant {
                        Some(ConstVal::Int(k)) if (0..ndim as i128).contains(&k) => {
                            (CallArg::Var(v), k as usize)
                        }
                        _ => {
                            return Err(self.err(format!(
                                "{name}() axis must be a constant below the array's {ndim} dimensions"
                            )));
                        }
                    },
                    Some(_) => return Err(self.err(format!("{name}() axis must be an int"))),
                };
                let (shape, moved) = if name == "tile_load_indexed" {
                    (self.tile_shape(get("shape").as_ref(), name)?, None)
                } else {
                    let (t, tt) = tile(self, "t")?;
                    if tt.dtype != dtype {
                        return Err(self.err(format!(
                            "{name}() 'a' and 't' arguments must have the same dtype, got {dtype} and {}",
                            tt.dtype
                        )));
                    }
                    (tt.dims().to_vec(), Some((t, tt)))
                };
                if shape.len() != ndim || ti.extent(0) != shape[axis] {
                    return Err(self.err(format!(
                        "{name}() needs a tile of the array's dimensions, with as many indices as its extent along the axis"
                    )));
                }
                self.promote_shared(indices);
                let mut call = vec![CallArg::Var(a), CallArg::Var(indices), axis_arg];
                call.extend(self.tile_offsets(get("offset").as_ref(), ndim)?);
                match moved {
                    None => {
                        let mut t = Tile::new(dtype, &shape);
                        t.shared = self.tile_storage(get("storage").as_ref())?;
                        let templates: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
                        self.emit_tile_call(
                            name,
                            &templates,
                            Some(Type::Tile(t)),
                            call,
                            true,
                            false,
                        )
                    }
                    Some((t, tt)) => {
                        call.push(CallArg::Var(t));
                        let ret = (name == "tile_atomic_add_indexed").then(|| {
                            let mut r = Tile::new(tt.dtype, &tt.dims());
                            r.shared = tt.shared;
                            Type::Tile(r)
                        });
                        self.emit_tile_call(name, &[], ret, call, true, true)
                    }
                }
            }
            "tile_sort" => {
                // In place, by the keys; both move to shared memory.
                let (keys, tk) = tile(self, "keys")?;
                let (values, tv) = tile(self, "values")?;
                if !matches!(
                    tk.dtype,
                    Value::Scalar(
                        Scalar::Float32
                            | Scalar::Int32
                            | Scalar::UInt32
                            | Scalar::Int64
                            | Scalar::UInt64
                    )
                ) {
                    return Err(self.err(format!(
                        "tile_sort() keys must be a tile of type float32, int32, uint32, int64, or uint64, got {}",
                        tk.dtype
                    )));
                }
                if tk.dims() != tv.dims() {
                    return Err(self.err("tile_sort() shapes must match"));
                }
                self.promote_shared(keys);
                self.promote_shared(values);
                let call = vec![CallArg::Var(keys), CallArg::Var(values)];
                self.emit_tile_call(name, &[], None, call, false, false)
            }
            "tile_stack" => {
                // `wp::tile_stack_init<T, capacity>()`, T spelled as written.
                let capacity = var(self, "capacity")?;
                let capacity = match self.var(capacity).constant {
                    Some(ConstVal::Int(n)) if n > 0 && n <= i128::from(u32::MAX) => n as u32,
                    _ => {
                        return Err(self.err(
                            "tile_stack() requires capacity to be a positive compile-time constant",
                        ));
                    }
                };
                let Some(TileArg::Dtype(spelled, dtype)) = get("dtype") else {
                    return Err(self.err("tile_stack() missing required keyword argument 'dtype'"));
                };
                let templates = [spelled, capacity.to_string()];
                let ret = Type::TileStack(dtype, capacity);
                self.emit_tile_call(
                    "tile_stack_init",
                    &templates,
                    Some(ret),
                    Vec::new(),
                    false,
                    false,
                )
            }
            "tile_from_thread" => {
                // One thread's value in every element, of the value's type.
                let shape = self.tile_shape(get("shape").as_ref(), name)?;
                let value = var(self, "value")?;
                let thread = var(self, "thread_idx")?;
                let dtype = self.ty(value).strip_ref().value().ok_or_else(|| {
                    self.err("tile_from_thread() value must be a scalar, vector, matrix or struct")
                })?;
                if !matches!(self.ty(thread).strip_ref(), Type::Scalar(s) if s.is_int()) {
                    return Err(self.err("tile_from_thread() thread_idx must be an int"));
                }
                let mut templates = vec![dtype.ctype()];
                templates.extend(shape.iter().map(|n| n.to_string()));
                let mut t = Tile::new(dtype, &shape);
                t.shared = self.tile_storage(get("storage").as_ref())?;
                let call = vec![CallArg::Var(value), CallArg::Var(thread)];
                self.emit_tile_call(name, &templates, Some(Type::Tile(t)), call, false, false)
            }
            "tile_argmax" | "tile_argmin" => {
                // The index of the extreme element, in an int32 tile of one.
                let (a, t) = tile(self, "a")?;
                self.scalar_tile(name, &t)?;
                let ret = Type::Tile(Tile::new(Value::Scalar(Scalar::Int32), &[1]));
                self.emit_tile_call(name, &[], Some(ret), vec![CallArg::Var(a)], false, false)
            }
            "tile_scan_inclusive"
            | "tile_scan_exclusive"
            | "tile_scan_max_inclusive"
            | "tile_scan_min_inclusive" => {
                // Prefix sums (or extremes) in a register tile like the input.
                let (a, t) = tile(self, "a")?;
                if !matches!(
                    t.dtype,
                    Value::Scalar(Scalar::Float32 | Scalar::Int32 | Scalar::UInt32)
                ) {
                    return Err(self.err(format!(
                        "{name}() argument must be a tile of type float32, int32, or uint32, got {}",
                        t.dtype
                    )));
                }
                let ret = Type::Tile(Tile::new(t.dtype, &t.dims()));
                self.emit_tile_call(name, &[], Some(ret), vec![CallArg::Var(a)], false, false)
            }
            "tile_sum" | "tile_max" | "tile_min" => {
                // A sum takes any element type (vectors, matrices, structs).
                let (a, t) = tile(self, "a")?;
                if name != "tile_sum" {
                    self.scalar_tile(name, &t)?;
                }
                let ret = Type::Tile(Tile::new(t.dtype, &[1]));
                self.emit_tile_call(
                    name,
                    &[],
                    Some(ret),
                    vec![CallArg::Var(a)],
                    name == "tile_sum",
                    false,
                )
            }
            "tile_reduce" if get("axis").is_some() => {
                // Along one axis: the input moves to shared memory; the call
                // takes the operator's identity (add, mul, min, max) and
                // whether it has one (a @wp.func has none).
                let (a, t) = tile(self, "a")?;
                let Value::Scalar(dtype) = t.dtype else {
                    return Err(self.err("tile_reduce() along an axis needs a tile of scalars"));
                };
                let axis = var(self, "axis")?;
                let k = self.tile_axis(name, axis, &t)?;
                let ty = Type::Scalar(dtype);
                let (callee, identity) = match get("op") {
                    Some(TileArg::Func(op)) => {
                        let ov = builtins::resolve(&op, &[ty, ty]).map_err(|m| self.err(m))?;
                        if ov.ret != Some(ty) || ov.native != op {
                            return Err(self.err(format!(
                                "tile_reduce() operator {op} must return the tile element type"
                            )));
                        }
                        let (lo, hi) = dtype.int_range();
                        let extreme = |top: bool| {
                            if dtype.is_float() {
                                ConstVal::Float(if top {
                                    f64::INFINITY
                                } else {
                                    f64::NEG_INFINITY
                                })
                            } else {
                                ConstVal::Int(if top { hi } else { lo })
                            }
                        };
                        let identity = match &*op {
                            "add" => Some(ConstVal::Int(0)),
                            "mul" => Some(ConstVal::Int(1)),
                            "min" => Some(extreme(true)),
                            "max" => Some(extreme(false)),
                            _ => None,
                        };
                        (CallArg::Func(op), identity)
                    }
                    Some(TileArg::UserFunc(f)) => {
                        let (native, ret) = self.tile_operator_func(&f, &[ty, ty])?;
                        if ret != Some(ty) {
                            return Err(self.err(format!(
                                "tile_reduce() operator {f} must return the tile element type"
                            )));
                        }
                        (CallArg::UserFunc(native), None)
                    }
                    _ => {
                        return Err(
                            self.err("tile_reduce() needs a warp builtin or a @wp.func as op")
                        );
                    }
                };
                self.promote_shared(a);
                let ret = Type::Tile(Tile::new(t.dtype, &without_axis(&t, k)));
                let call = vec![
                    callee,
                    CallArg::Var(a),
                    CallArg::Var(axis),
                    CallArg::Typed(dtype, identity.unwrap_or(ConstVal::Int(0))),
                    CallArg::Typed(Scalar::Bool, ConstVal::Bool(identity.is_some())),
                ];
                self.emit_tile_call("tile_reduce_axis", &[], Some(ret), call, false, false)
            }
            "tile_reduce" => {
                let Some(TileArg::Func(op)) = get("op") else {
                    return Err(
                        self.err("tile_reduce() needs a warp builtin as op (wp.add, wp.min, ...)")
                    );
                };
                let (a, t) = tile(self, "a")?;
                if matches!(t.dtype, Value::Struct(_)) {
                    return Err(self.err(
                        "tile_reduce() of a tile of structs is not supported by this version of the lowering",
                    ));
                }
                let ty = t.dtype.to_type();
                let ov = builtins::resolve(&op, &[ty, ty]).map_err(|m| self.err(m))?;
                if ov.ret != Some(ty) || ov.native != op {
                    return Err(self.err(format!(
                        "tile_reduce() operator {op} must return the tile element type"
                    )));
                }
                let ret = Type::Tile(Tile::new(t.dtype, &[1]));
                let call = vec![CallArg::Func(op), CallArg::Var(a)];
                self.emit_tile_call(name, &[], Some(ret), call, false, false)
            }
            "tile_view" => {
                let (src, t) = tile(self, "t")?;
                let Some(TileArg::Var(offset)) = get("offset") else {
                    return Err(self.err("tile_view() needs offset=(...), a tuple of ints"));
                };
                // A tuple keeps the values of its constant elements (warp's
                // `tuple_t.values`), which become new constants of the call.
                let Some((_, elems)) = self.tuples.iter().find(|(t, _)| *t == offset) else {
                    return Err(self.err("tile_view() offset must be a tuple of ints"));
                };
                let mut entries = Vec::with_capacity(elems.len());
                for (dim, &e) in elems.clone().iter().enumerate() {
                    if self.ty(e).strip_ref() == Type::Slice {
                        let Some([start, stop, step]) = self.slice_value(e) else {
                            return Err(self
                                .err("tile_view() slice bounds must be compile-time constants."));
                        };
                        if step == 0 {
                            return Err(self.err("tile_view() slice step cannot be zero."));
                        }
                        entries.push(ViewEntry::Slice {
                            start: Some(start),
                            stop: Some(stop),
                            step,
                        });
                        continue;
                    }
                    if !matches!(self.ty(e).strip_ref(), Type::Scalar(s) if s.is_int()) {
                        return Err(self.err(format!(
                            "tile_view() offset entries must be integers or slices, got {}",
                            self.ty(e).strip_ref()
                        )));
                    }
                    entries.push(match self.var(e).constant {
                        Some(ConstVal::Int(c)) => {
                            if dim < t.ndim as usize && !(0..i128::from(t.extent(dim))).contains(&c) {
                                return Err(self.err(format!(
                                    "tile_view() integer offset {c} is out of bounds for axis {dim} with size {}; negative offsets are only wrapped for subscript indexing (e.g. t[-1, :]), not explicit tile_view() calls.",
                                    t.extent(dim)
                                )));
                            }
                            ViewEntry::Index(CallArg::Const(c))
                        }
                        _ => ViewEntry::Index(CallArg::Var(e)),
                    });
                }
                let shape = match get("shape") {
                    None => None,
                    s => Some(self.tile_shape(s.as_ref(), "tile_view")?),
                };
                self.tile_view(src, t, entries, shape.as_deref()).map(Some)
            }
            "tile_squeeze" => {
                let (src, t) = tile(self, "t")?;
                let ndim = t.ndim as i128;
                let (shape, strides) = (t.dims(), t.strides());
                let keep: Vec<usize> = match get("axis") {
                    None => (0..t.ndim as usize).filter(|&k| shape[k] != 1).collect(),
                    Some(axis) => {
                        if !matches!(&axis, TileArg::Var(v) if self.tuples.iter().any(|(t, _)| t == v))
                        {
                            return Err(self.err(format!(
                                "Couldn't find function overload for 'tile_squeeze' that matched inputs with types: [{}, ...]: axis must be a tuple",
                                Type::Tile(t)
                            )));
                        }
                        let mut axes = Vec::new();
                        for a in self.tile_int_tuple(&axis, "tile_squeeze() axis")? {
                            if a < -ndim || a >= ndim {
                                return Err(self.err(format!(
                                    "tile_squeeze() axis {a} is out of bounds for tile with {ndim} dimensions"
                                )));
                            }
                            let a = if a < 0 { a + ndim } else { a } as usize;
                            if shape[a] != 1 {
                                return Err(self.err(format!(
                                    "Cannot select an axis to squeeze out which has size not equal to one, axis={a}, size={}",
                                    shape[a]
                                )));
                            }
                            axes.push(a);
                        }
                        (0..t.ndim as usize).filter(|k| !axes.contains(k)).collect()
                    }
                };
                let dims: Vec<u32> = keep.iter().map(|&k| shape[k]).collect();
                let st: Vec<i64> = keep.iter().map(|&k| strides[k]).collect();
                self.tile_alias(name, src, t.dtype, &dims, &st, None)
            }
            "tile_reshape" => {
                let (src, t) = tile(self, "t")?;
                if t.strides.is_some() {
                    return Err(self.err(format!(
                        "tile_reshape() requires a contiguous tile; a tile view with shape {:?} and strides {:?} cannot be reshaped in place. Copy the view into a new tile first, e.g. with wp.tile_assign().",
                        &*t.dims(),
                        t.strides()
                    )));
                }
                let size: i128 = t.dims().iter().map(|&n| i128::from(n)).product();
                let Some(shape) = get("shape") else {
                    return Err(self.err("tile_reshape() needs shape=..."));
                };
                let mut shape = self.tile_int_tuple(
                    &shape,
                    "Tile functions require shape to be a compile time constant.",
                )?;
                let unknown: Vec<usize> = (0..shape.len()).filter(|&k| shape[k] == -1).collect();
                if unknown.len() > 1 {
                    return Err(self.err("Cannot infer shape if more than one index is -1."));
                }
                if let [k] = unknown[..] {
                    let known: i128 = shape.iter().filter(|&&d| d != -1).product();
                    if known <= 0 {
                        return Err(self.err("tile_reshape() shape entries must be positive"));
                    }
                    shape[k] = size / known;
                }
                let new_size: i128 = shape.iter().product();
                if new_size != size
                    || shape
                        .iter()
                        .any(|&d| d <= 0 || d > i128::from(Tile::MAX_EXTENT))
                {
                    return Err(self.err(format!(
                        "New shape {shape:?} has total size {new_size} which does not match original size {size}"
                    )));
                }
                if shape.is_empty() || shape.len() > 4 {
                    return Err(self.err("tiles of 1 to 4 dimensions are supported"));
                }
                let dims: Vec<u32> = shape.iter().map(|&d| d as u32).collect();
                let row_major = Tile::new(t.dtype, &dims).strides();
                self.tile_alias(name, src, t.dtype, &dims, &row_major, None)
            }
            "tile_broadcast" => {
                let (src, t) = tile(self, "a")?;
                let target = self.tile_shape(get("shape").as_ref(), name)?;
                let offset = target.len() as isize - t.ndim as isize;
                if offset < 0 {
                    return Err(self.err(format!(
                        "tile_broadcast() cannot broadcast a {}-D tile to {} dimensions",
                        t.ndim,
                        target.len()
                    )));
                }
                let (shape, strides) = (t.dims(), t.strides());
                let mut st = vec![0i64; target.len()];
                for i in (0..target.len()).rev() {
                    let j = i as isize - offset;
                    if j < 0 {
                        continue;
                    }
                    let j = j as usize;
                    if shape[j] == 1 {
                        st[i] = 0;
                    } else if shape[j] == target[i] {
                        st[i] = strides[j];
                    } else {
                        return Err(self.err(format!(
                            "tile_broadcast() cannot broadcast dimension {} into {} at index {i}",
                            shape[j], target[i]
                        )));
                    }
                }
                let spelled: Vec<String> = target
                    .iter()
                    .map(|n| n.to_string())
                    .chain(st.iter().map(|n| n.to_string()))
                    .collect();
                self.tile_alias(name, src, t.dtype, &target, &st, Some(spelled))
            }
            "tile_assign" => {
                let (dst, td) = tile(self, "dst")?;
                let (src, ts) = tile(self, "src")?;
                if td.ndim != ts.ndim {
                    return Err(self.err(format!(
                        "tile_assign() destination and source tiles must have the same rank, got {} and {}",
                        td.ndim, ts.ndim
                    )));
                }
                if ts.dtype != td.dtype {
                    return Err(self.err(format!(
                        "tile_assign() source and destination must have one dtype, got {} and {}",
                        ts.dtype, td.dtype
                    )));
                }
                let offset = get("offset");
                if offset.is_none() && (0..td.ndim as usize).any(|k| ts.extent(k) > td.extent(k)) {
                    return Err(self.err(format!(
                        "tile_assign() source tile of shape {:?} does not fit within destination tile of shape {:?}",
                        &*ts.dims(),
                        &*td.dims()
                    )));
                }
                self.promote_shared(dst);
                let mut call = vec![CallArg::Var(dst), CallArg::Var(src)];
                call.extend(self.tile_offsets(offset.as_ref(), td.ndim as usize)?);
                self.emit_tile_call(name, &[], None, call, true, false)
            }
            "tile_transpose" => {
                let (a, t) = tile(self, "a")?;
                if t.ndim != 2 {
                    return Err(self.err("tile_transpose() needs a 2-D tile"));
                }
                self.promote_shared(a);
                let mut st = t.strides();
                st.reverse();
                let Some(r) = Tile::view_of(t.dtype, &[t.extent(1), t.extent(0)], &st) else {
                    return Err(self.err("tile views with strides beyond 16 bits are not supported by this version of the lowering"));
                };
                self.emit_tile_call(
                    name,
                    &[],
                    Some(Type::Tile(r)),
                    vec![CallArg::Var(a)],
                    true,
                    false,
                )
            }
            "tile" => {
                let x = var(self, "x")?;
                if self.ty(x).is_ref() {
                    // warp reads the C++ type of the argument itself, which an array element reference lacks
                    return Err(
                        self.err("wp.tile() of an array element: assign it to a local first")
                    );
                }
                let preserve = match get("preserve_type") {
                    None => false,
                    Some(TileArg::Var(v)) => match self.var(v).constant {
                        Some(ConstVal::Bool(b)) => b,
                        _ => {
                            return Err(self.err("wp.tile() preserve_type must be a constant bool"));
                        }
                    },
                    Some(_) => return Err(self.err("wp.tile() preserve_type must be a bool")),
                };
                let value = self.ty(x).strip_ref().value().ok_or_else(|| {
                    self.err("wp.tile() needs a scalar, vector, matrix or struct value")
                })?;
                // One value per thread of the block (module option block_dim);
                // a vector, quaternion or matrix spreads over leading dimensions
                // unless its type is preserved.
                let b = self.block_dim;
                let (dtype, shape, templates) = match value {
                    v if preserve => (v, vec![b], vec![v.ctype()]),
                    Value::Vector(n, s) => (
                        Value::Scalar(s),
                        vec![u32::from(n), b],
                        vec![s.ctype().into(), n.to_string()],
                    ),
                    Value::Quat(s) => (
                        Value::Scalar(s),
                        vec![4, b],
                        vec![s.ctype().into(), "4".into()],
                    ),
                    Value::Matrix(r, c, s) => (
                        Value::Scalar(s),
                        vec![u32::from(r), u32::from(c), b],
                        vec![r.to_string(), c.to_string(), s.ctype().into()],
                    ),
                    v => (v, vec![b], vec![v.ctype()]),
                };
                let ret = Type::Tile(Tile::new(dtype, &shape));
                self.emit_tile_call(
                    "tile",
                    &templates,
                    Some(ret),
                    vec![CallArg::Var(x)],
                    true,
                    false,
                )
            }
            "untile" => {
                // Back to one value per thread: a 2-D tile gives vectors, a 3-D one matrices.
                let (a, t) = tile(self, "a")?;
                if t.dims().last() != Some(&self.block_dim) {
                    return Err(self.err(format!(
                        "untile() argument last dimension {} does not match the expected block width {}",
                        t.dims().last().copied().unwrap_or(0),
                        self.block_dim
                    )));
                }
                let value = match (&*t.dims(), t.dtype) {
                    ([_], v) => v.to_type(),
                    ([n, _], Value::Scalar(s)) if *n <= 255 => Type::Vector(*n as u8, s),
                    ([r, c, _], Value::Scalar(s)) if *r <= 255 && *c <= 255 => {
                        Type::Matrix(*r as u8, *c as u8, s)
                    }
                    _ => return Err(self.err(
                        "untile() of this tile is not supported by this version of the lowering",
                    )),
                };
                self.emit_tile_call(name, &[], Some(value), vec![CallArg::Var(a)], true, false)
            }
            "tile_matmul" => {
                let (a, ta) = tile(self, "a")?;
                let (b, tb) = tile(self, "b")?;
                let out = match get("out") {
                    None => None,
                    Some(TileArg::Var(v)) if self.tile_of(v).is_some() => Some(v),
                    Some(_) => return Err(self.err("tile_matmul() 'out' argument must be a tile")),
                };
                if out.is_none() && get("beta").is_some() {
                    return Err(self.err("tile_matmul() takes beta only with out="));
                }
                if ta.ndim != 2 || tb.ndim != 2 {
                    return Err(self.err("tile_matmul() needs 2-D tiles"));
                }
                let (m, k, n) = (ta.extent(0), ta.extent(1), tb.extent(1));
                let to = out.and_then(|o| self.tile_of(o));
                let consistent = tb.extent(0) == k
                    && to.is_none_or(|t| t.ndim == 2 && t.extent(0) == m && t.extent(1) == n);
                if !consistent {
                    return Err(self.err("tile_matmul(A, B, C) requires sizes of A, B and C to be consistent for a matmul"));
                }
                let dts = [Some(ta.dtype), Some(tb.dtype), to.map(|t| t.dtype)];
                use Scalar::{BFloat16, Float16, Float32, Float64};
                if dts
                    .iter()
                    .flatten()
                    .any(|d| !matches!(d, Value::Scalar(Float16 | BFloat16 | Float32 | Float64)))
                {
                    return Err(self.err("tile_matmul() arguments must be tiles of float16, bfloat16, float32, or float64 entries"));
                }
                // the accumulator is `out`, or a new tile of a's dtype
                if dts[2].unwrap_or(ta.dtype) == Value::Scalar(BFloat16) {
                    return Err(self.err("tile_matmul() does not support a bfloat16 'out' tile. Allowed 'out' dtypes are float16, float32, and float64."));
                }
                if self.enable_backward
                    && (ta.dtype == Value::Scalar(BFloat16) || tb.dtype == Value::Scalar(BFloat16))
                {
                    return Err(self.err("tile_matmul() does not support bfloat16 'a' or 'b' tiles when the backward pass is enabled."));
                }
                let scalar = |s: &Self, p: &str, default: f64| -> LResult<CallArg> {
                    match get(p) {
                        None => Ok(CallArg::ConstF(default)),
                        Some(TileArg::Var(v)) if matches!(s.ty(v).strip_ref(), Type::Scalar(d) if d.is_float()) => {
                            Ok(CallArg::Var(v))
                        }
                        Some(_) => {
                            Err(s.err(format!("tile_matmul() '{p}' must be a float scalar")))
                        }
                    }
                };
                let alpha = scalar(self, "alpha", 1.0)?;
                // The operands (and the accumulator) move to shared memory.
                for v in [Some(a), Some(b), out].into_iter().flatten() {
                    self.promote_shared(v);
                }
                let head = [CallArg::Const(0), CallArg::Const(0), CallArg::Const(0)];
                match out {
                    Some(o) => {
                        let beta = scalar(self, "beta", 1.0)?;
                        let mut call: Vec<CallArg> = head.into_iter().collect();
                        call.extend([
                            CallArg::Var(a),
                            CallArg::Var(b),
                            CallArg::Var(o),
                            alpha,
                            beta,
                        ]);
                        self.emit_tile_call("tile_matmul_acc", &[], None, call, true, false)
                    }
                    None => {
                        let mut t = Tile::new(ta.dtype, &[m, n]);
                        t.shared = true;
                        let mut call: Vec<CallArg> = head.into_iter().collect();
                        call.extend([
                            CallArg::Var(a),
                            CallArg::Var(b),
                            CallArg::Output,
                            alpha,
                            CallArg::ConstF(0.0),
                        ]);
                        self.emit_tile_call(
                            "tile_matmul",
                            &[],
                            Some(Type::Tile(t)),
                            call,
                            true,
                            false,
                        )
                    }
                }
            }
            "tile_fft" | "tile_ifft" => {
                let (a, t) = tile(self, "inout")?;
                self.tile_fft(name, a, t)
            }
            _ => unreachable!(),
        }
    }

    /// `wp.tile_fft(t)` / `wp.tile_ifft(t)`: in place along the last dimension, as
    /// warp dispatches them without libmathdx (no target architecture): the scalar
    /// path, with the dtype, scratch bytes, batch and elements per thread as arguments.
    fn tile_fft(&mut self, name: &str, a: VarId, t: Tile) -> LResult<Option<VarId>> {
        if t.shared {
            return Err(self.err(format!(
                "{name}() argument must have 'register' storage, got shared"
            )));
        }
        let (dtype, bytes) = match t.dtype {
            Value::Vector(2, Scalar::Float32) => ("wp::vec2f", 8u64),
            Value::Vector(2, Scalar::Float64) => ("wp::vec2d", 16u64),
            d => {
                return Err(self.err(format!(
                    "{name}() argument must be a tile of vec2f or vec2d (interpreted as complex) entries, got {d}"
                )));
            }
        };
        if t.ndim < 2 {
            return Err(self.err(format!(
                "{name}() argument must be a tile with at least 2 dimensions, got {}D",
                t.ndim
            )));
        }
        let dims = t.dims();
        let size = *dims.last().unwrap() as u64;
        let batch: u64 = dims[..dims.len() - 1].iter().map(|&d| d as u64).product();
        let threads = self.block_dim as u64;
        // block_dim 1 (the sequential CPU path) is rejected with the module.
        if !size.is_power_of_two() {
            return Err(self.err(format!(
                "{name}() on CPU with block_dim={threads} (>1) requires a power-of-two FFT size, got {size}. Use block_dim=1 for arbitrary sizes up to 4096."
            )));
        }
        if size % threads != 0 {
            return Err(self.err(format!(
                "{name}() on CPU requires fft_size to be divisible by block_dim (got fft_size={size}, block_dim={threads})."
            )));
        }
        let ept = size / threads;
        let shared = size * bytes;
        let l = self.load(a)?;
        let head = format!("/* scalar */ 0, /* scalar */ 0, {dtype}, {shared}, {batch}, {ept}");
        let fwd = format!("{name}({head}, {});", self.emit(l));
        self.add_forward_plain(&fwd);
        reverse!(
            self,
            "adj_{name}({head}, {}, {head}, {});",
            self.emit(l),
            self.emit_adj(a)
        );
        Ok(None)
    }

    /// The element type of a tile of scalars (other element types are not supported by `name` here).
    fn scalar_tile(&self, name: &str, t: &Tile) -> LResult<Scalar> {
        match t.dtype {
            Value::Scalar(s) => Ok(s),
            d => Err(self.err(format!(
                "{name}() of a tile of {d} is not supported by this version of the lowering"
            ))),
        }
    }

    /// warp sets the storage of the tile's type object to shared.
    fn promote_shared(&mut self, v: VarId) {
        let Some(t) = self.tile_of(v) else { return };
        for var in self.vars.iter_mut() {
            if let Type::Tile(vt) = &mut var.ty {
                if vt.obj == t.obj {
                    vt.shared = true;
                }
            }
        }
    }

    /// `+ - * /` and unary `-` with a tile operand.
    pub(super) fn tile_operator(&mut self, name: &str, args: &[VarId]) -> LResult<Option<VarId>> {
        let types: Vec<Type> = args.iter().map(|a| self.ty(*a).strip_ref()).collect();
        if let ("assign", [Type::Tile(a), Type::Tile(b)]) = (name, types.as_slice()) {
            // A tile reassigned in a dynamic loop is copied back into the loop-carried variable.
            if a.dtype != b.dtype {
                return Err(self.err("assigning a tile of another dtype"));
            }
            let call = args.iter().map(|a| CallArg::Var(*a)).collect();
            return self.emit_tile_call("assign", &[], None, call, true, false);
        }
        let bad = || {
            format!(
                "operator '{name}' is not supported for {}",
                types
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let (native, ordered, t) = match (name, types.as_slice()) {
            ("neg", [Type::Tile(t)]) => ("tile_neg", vec![args[0]], *t),
            ("add" | "sub", [Type::Tile(a), Type::Tile(b)])
                if a.dims() == b.dims() && a.dtype == b.dtype =>
            {
                (
                    if name == "add" {
                        "tile_add"
                    } else {
                        "tile_sub"
                    },
                    args.to_vec(),
                    *a,
                )
            }
            ("mul" | "div", [x, y]) => {
                let (native, ordered, t) = self
                    .tile_product(name, args, x, y)
                    .ok_or_else(|| self.err(bad()))?;
                self.use_builtin(name);
                let ret = Type::Tile(t);
                let call = ordered.into_iter().map(CallArg::Var).collect();
                return self.emit_tile_call(native, &[], Some(ret), call, true, false);
            }
            ("print", [Type::Tile(_)]) => {
                self.use_builtin(name);
                let call = vec![CallArg::Var(args[0])];
                return self.emit_tile_call("print", &[], None, call, true, false);
            }
            ("copy", [Type::Tile(a)]) => {
                // `t = u` (warp's `copy_value_func`): a register tile keeps
                // its type itself, a shared one is copied into a new one.
                self.use_builtin(name);
                let ret = if a.shared { a.shared_copy() } else { *a };
                let call = vec![CallArg::Var(args[0])];
                return self.emit_tile_call("copy", &[], Some(Type::Tile(ret)), call, true, false);
            }
            ("where", [Type::Scalar(c), Type::Tile(a), Type::Tile(b)])
                if (c.is_int() || *c == Scalar::Bool)
                    && a.dims() == b.dims()
                    && a.dtype == b.dtype =>
            {
                // A tile bound on either side of an if (warp's
                // `where_value_func`): the register side's type itself, else
                // a new shared tile.
                self.use_builtin(name);
                let ret = if !a.shared {
                    *a
                } else if !b.shared {
                    *b
                } else {
                    a.shared_copy()
                };
                let call = args.iter().map(|a| CallArg::Var(*a)).collect();
                return self.emit_tile_call("where", &[], Some(Type::Tile(ret)), call, true, false);
            }
            ("bit_and" | "bit_or" | "bit_xor", [Type::Tile(a), Type::Tile(b)])
                if a.dims() == b.dims()
                    && a.dtype == b.dtype
                    && !matches!(a.dtype, Value::Struct(_))
                    && a.dtype.dtype().is_int() =>
            {
                self.use_builtin(name);
                let native = match name {
                    "bit_and" => "tile_bit_and",
                    "bit_or" => "tile_bit_or",
                    _ => "tile_bit_xor",
                };
                let ret = Type::Tile(Tile::new(a.dtype, &a.dims()));
                let call = args.iter().map(|a| CallArg::Var(*a)).collect();
                return self.emit_tile_call(native, &[], Some(ret), call, false, false);
            }
            _ => return Err(self.err(bad())),
        };
        self.use_builtin(name);
        let ret = Type::Tile(Tile::new(t.dtype, &t.dims()));
        let call = ordered.into_iter().map(CallArg::Var).collect();
        self.emit_tile_call(native, &[], Some(ret), call, true, false)
    }

    /// `*` and `/` with a tile operand (warp's `tile_mul_value_func` and
    /// `tile_div_value_func`): two tiles of one shape element-wise, or a tile
    /// and a scalar, vector or matrix; at least one side's elements scalar,
    /// one underlying scalar type; a vector or matrix side gives the result's
    /// element type. The C++ function, its arguments (a product takes the tile
    /// first) and the result tile; None where warp refuses the operands.
    fn tile_product(
        &self,
        name: &str,
        args: &[VarId],
        x: &Type,
        y: &Type,
    ) -> Option<(&'static str, Vec<VarId>, Tile)> {
        let composite = |v: Value| matches!(v, Value::Vector(..) | Value::Matrix(..));
        let operand = |t: &Type| match t {
            Type::Tile(t) => Some(t.dtype),
            t => t.value(),
        };
        let (a, b) = (operand(x)?, operand(y)?);
        let plain = |v: Value| matches!(v, Value::Scalar(_)) || composite(v);
        if !plain(a) || !plain(b) || a.dtype() != b.dtype() || (composite(a) && composite(b)) {
            return None;
        }
        let dtype = if composite(b) && !composite(a) { b } else { a };
        let mul = name == "mul";
        match (x, y) {
            (Type::Tile(ta), Type::Tile(tb)) if ta.dims() == tb.dims() => {
                let native = if mul {
                    "tile_mul_elementwise"
                } else {
                    "tile_div_elementwise"
                };
                Some((native, args.to_vec(), Tile::new(dtype, &ta.dims())))
            }
            (Type::Tile(_), Type::Tile(_)) => None,
            (Type::Tile(t), _) | (_, Type::Tile(t)) => {
                let ordered = if mul && !matches!(x, Type::Tile(_)) {
                    vec![args[1], args[0]]
                } else {
                    args.to_vec()
                };
                let native = if mul { "tile_mul" } else { "tile_div" };
                Some((native, ordered, Tile::new(dtype, &t.dims())))
            }
            _ => None,
        }
    }

    /// `acc += t`, `acc -= t` and (integer tiles) `acc &= t`, `|=`, `^=` on
    /// tiles: `tile_add_inplace`, ..., `tile_bit_xor_inplace`; the bitwise
    /// ones have no adjoint.
    pub(super) fn tile_inplace(&mut self, op: BinOp, target: VarId, rhs: VarId) -> LResult<()> {
        let (a, b) = (
            self.tile_of(target).expect("tile"),
            self.tile_of(rhs).expect("tile"),
        );
        if a.dims() != b.dims() || a.dtype != b.dtype {
            return Err(self.err("Tile inplace arguments must have the same shape and dtype"));
        }
        let (builtin, native) = tile_inplace_native(op).expect("an in-place tile operator");
        let bitwise = builtin.starts_with("bit_");
        if bitwise && (matches!(a.dtype, Value::Struct(_)) || !a.dtype.dtype().is_int()) {
            return Err(self.err(format!(
                "operator '{builtin}' is not supported for tiles of {}",
                a.dtype
            )));
        }
        self.use_builtin(builtin);
        let call = vec![CallArg::Var(target), CallArg::Var(rhs)];
        self.emit_tile_call(native, &[], None, call, !bitwise, false)?;
        Ok(())
    }

    /// `t[i, j] += v` (and `-=`, `&=`, `|=`, `^=`) on one element of a tile:
    /// `tile_add_inplace(t, i, j, v)`, ...; the tile moves to shared memory
    /// (the update is a shared-memory atomic); the bitwise ones have no
    /// adjoint. A view (fewer indices, a slice) is warp's error.
    pub(super) fn tile_element_inplace(
        &mut self,
        target: VarId,
        nodes: &[&Expr<'a>],
        op: BinOp,
        value: &Expr<'a>,
    ) -> LResult<()> {
        let t = self.tile_of(target).expect("a tile");
        if nodes.len() < t.ndim as usize
            || nodes.iter().any(|n| matches!(n.kind, ExprKind::Slice(..)))
        {
            return Err(self.err(
                "Compound assignment to a tile view (e.g. `t[a:b, :] += x` or `t[i] += x`) is not supported. Read the view, update it, and assign it back explicitly.",
            ));
        }
        let Some((builtin, native)) = tile_inplace_native(op) else {
            return Err(self.err(
                "this compound assignment to a tile element is not supported by this version of the lowering",
            ));
        };
        let bitwise = builtin.starts_with("bit_");
        if bitwise && matches!(t.dtype, Value::Struct(_)) {
            return Err(
                self.err("Tile bitwise inplace operators do not support Warp struct tile elements")
            );
        }
        let (slot, idx) = self.tile_element(target, nodes, native, true)?;
        if idx.len() != t.ndim as usize {
            return Err(self.err(format!(
                "{native}: a component of a tile element cannot be updated in place"
            )));
        }
        let rhs = self.expr(value)?;
        let value = self.ty(rhs).strip_ref();
        if value != slot {
            return Err(self.err(format!(
                "'value' must have the same dtype as target tile for inplace ops, got {slot} and {value}"
            )));
        }
        self.promote_shared(target);
        self.use_builtin(builtin);
        let mut call = vec![CallArg::Var(target)];
        call.extend(idx.into_iter().map(CallArg::Var));
        call.push(CallArg::Var(rhs));
        self.emit_tile_call(native, &[], None, call, !bitwise, false)?;
        Ok(())
    }

    /// A runtime int32 tile index wrapped against the axis length as warp does
    /// (`where(i < 0, i + length, i)`), with the two constants it declares.
    fn wrap_tile_index(&mut self, index: VarId, length: u32) -> LResult<VarId> {
        let zero = self.add_var(Type::Scalar(Scalar::Int32), Some(ConstVal::Int(0)));
        let len = self.add_var(
            Type::Scalar(Scalar::Int32),
            Some(ConstVal::Int(length as i128)),
        );
        let negative = self.add_var(Type::BOOL, None);
        // An array element is loaded at each use, as warp's calls load it.
        let loaded = self.load(index)?;
        let mut s = self.new_line();
        s.put_all(&[
            self.emit(negative),
            " = (",
            self.emit(loaded),
            " < ",
            self.emit(zero),
            ");",
        ]);
        self.push_forward_line(s);
        let wrapped = self
            .add_call("add", &[index, len])?
            .expect("add returns a value");
        Ok(self
            .add_call("where", &[negative, wrapped, index])?
            .expect("where returns a value"))
    }

    /// A subscript of a tile: one element (`t[i, j]`, `tile_extract`), or a
    /// view (`t[i]` with fewer indices than dimensions, `t[a:b, ::-1]`:
    /// warp's `tile_view` with the indices as its offset).
    pub(super) fn tile_subscript(&mut self, target: VarId, nodes: &[&Expr<'a>]) -> LResult<VarId> {
        let t = self.tile_of(target).expect("a tile");
        let ndim = t.ndim as usize;
        if !nodes.iter().any(|n| self.makes_tile_view(n)) && nodes.len() >= ndim {
            return self.tile_extract(target, nodes);
        }
        let entries = self.tile_view_entries(t, nodes)?;
        if entries.iter().any(|e| matches!(e, ViewEntry::IndexTile(_))) {
            return self.tile_gather(target, t, &entries);
        }
        self.tile_view(target, t, entries, None)
    }

    /// `t[idx, :]`: the elements of `t` along one axis that a 1-D int tile
    /// selects, every other axis a full `:` (warp's `tile_slice_indexed`): a
    /// register tile; `t` and `idx` move to shared memory.
    fn tile_gather(&mut self, src: VarId, t: Tile, entries: &[ViewEntry]) -> LResult<VarId> {
        let mut gather = None;
        for (dim, e) in entries.iter().enumerate() {
            match e {
                ViewEntry::IndexTile(v) => {
                    if gather.is_some() {
                        return Err(
                            self.err("Tile indexing supports exactly one 1D integer index tile.")
                        );
                    }
                    let it = self.tile_of(*v).expect("an index tile");
                    if it.ndim != 1 {
                        return Err(self.err(format!(
                            "Tile indexing requires a 1D integer index tile, got {} dimensions.",
                            it.ndim
                        )));
                    }
                    if !matches!(it.dtype, Value::Scalar(s) if s.is_int()) {
                        return Err(self.err(format!(
                            "Tile indexing requires an integer index tile, got dtype {}.",
                            it.dtype
                        )));
                    }
                    gather = Some((dim, *v, it.extent(0)));
                }
                ViewEntry::Slice { start, stop, step } => {
                    let length = i128::from(t.extent(dim));
                    let (a, b, step) = normalize_slice(*start, *stop, *step, length);
                    if !(a == 0 && step == 1 && slice_len(a, b, step) == length) {
                        return Err(self.err("Tile indexing with an integer index tile requires ':' on all other axes, e.g. `t[indices, :]`."));
                    }
                }
                ViewEntry::Index(_) => {
                    return Err(self.err(
                        "Tile indexing entries must be a 1D integer index tile or full slices ':'.",
                    ));
                }
            }
        }
        let (axis, idx, count) = gather.expect("an index tile among the entries");
        let mut dims = t.dims().to_vec();
        dims[axis] = count;
        self.promote_shared(src);
        self.promote_shared(idx);
        self.use_builtin("tile_slice_indexed");
        let out = Tile::new(t.dtype, &dims);
        let templates: Vec<String> = dims.iter().map(|n| n.to_string()).collect();
        let call = vec![
            CallArg::Var(src),
            CallArg::Var(idx),
            CallArg::Const(axis as i128),
        ];
        Ok(self
            .emit_tile_call(
                "tile_slice_indexed",
                &templates,
                Some(Type::Tile(out)),
                call,
                true,
                false,
            )?
            .expect("tile_slice_indexed returns a tile"))
    }

    /// Whether a tile index makes a view or a gather rather than picking an
    /// element: a slice, or a name bound to a tile (an index tile). warp
    /// probes a name's type before evaluating; an index tile written inline
    /// (`t[wp.tile_arange(...)]`) is not seen here.
    pub(super) fn makes_tile_view(&self, n: &Expr<'a>) -> bool {
        match &n.kind {
            ExprKind::Slice(..) => true,
            ExprKind::Name(name) => self
                .symbol(name)
                .is_some_and(|v| matches!(self.ty(v).strip_ref(), Type::Tile(_))),
            _ => false,
        }
    }

    /// The evaluated indices of a subscript of `t` that makes a view (warp's
    /// `eval_indices`: left to right, slices as raw constants, ints resolved).
    fn tile_view_entries(&mut self, t: Tile, nodes: &[&Expr<'a>]) -> LResult<Vec<ViewEntry>> {
        let ndim = t.ndim as usize;
        if nodes.len() > ndim {
            return Err(self.err(format!(
                "tile_view() specified too many indices {} > {ndim}",
                nodes.len()
            )));
        }
        // warp evaluates every index first (`eval_indices`), left to right.
        let mut entries = Vec::with_capacity(nodes.len());
        for (k, n) in nodes.iter().enumerate() {
            if let ExprKind::Slice(lower, upper, step) = &n.kind {
                entries.push(self.tile_slice(
                    lower.as_deref(),
                    upper.as_deref(),
                    step.as_deref(),
                )?);
                continue;
            }
            let v = self.expr(n)?;
            match self.ty(v).strip_ref() {
                Type::Scalar(s) if s.is_int() => {}
                Type::Tile(_) => {
                    // an index tile gathers (`tile_slice_indexed`); passed as is
                    entries.push(ViewEntry::IndexTile(v));
                    continue;
                }
                other => {
                    return Err(self.err(format!(
                        "Tile indices must be integers or slices, got {other}."
                    )));
                }
            }
            let v = self.resolve_tile_index(v, k, &t)?;
            entries.push(ViewEntry::Index(CallArg::Var(v)));
        }
        Ok(entries)
    }

    /// A slice of a tile subscript (warp's `eval_raw_const_slice`): the step,
    /// start and stop evaluated as constants in that order, then a
    /// `wp::slice_t` of the raw bounds (an open one as warp's sentinel).
    fn tile_slice(
        &mut self,
        lower: Option<&Expr<'a>>,
        upper: Option<&Expr<'a>>,
        step: Option<&Expr<'a>>,
    ) -> LResult<ViewEntry> {
        let step = self.slice_step(step)?;
        let start = lower.map(|e| self.const_slice_component(e)).transpose()?;
        let stop = upper.map(|e| self.const_slice_component(e)).transpose()?;
        let out = self.add_var(Type::Slice, None);
        let raw = [
            start.unwrap_or(SLICE_BEGIN),
            stop.unwrap_or(SLICE_END),
            step,
        ];
        let parts = raw.map(|c| self.add_constant(ConstVal::Int(c)));
        self.emit_slice_t(out, parts);
        Ok(ViewEntry::Slice { start, stop, step })
    }

    /// warp's `tile_view` of `src` (of type `t`): the view's shape and
    /// strides from the offset's slices and indices, or from `shape`; `src`
    /// moves to shared memory; the call takes the view's origin, one
    /// coordinate per dimension of `src`. No adjoint.
    fn tile_view(
        &mut self,
        src: VarId,
        t: Tile,
        entries: Vec<ViewEntry>,
        shape: Option<&[u32]>,
    ) -> LResult<VarId> {
        let ndim = t.ndim as usize;
        if entries.len() > ndim {
            return Err(self.err(format!(
                "tile_view() specified too many indices {} > {ndim}",
                entries.len()
            )));
        }
        let (pshape, pstrides) = (t.dims(), t.strides());
        let has_slice = entries.iter().any(|e| matches!(e, ViewEntry::Slice { .. }));
        let mut coords = Vec::with_capacity(ndim);
        let (mut vshape, mut vstrides) = (Vec::new(), Vec::new());
        for dim in 0..ndim {
            let length = i128::from(pshape[dim]);
            match entries.get(dim) {
                Some(ViewEntry::Slice { start, stop, step }) => {
                    let (a, b, step) = normalize_slice(*start, *stop, *step, length);
                    vshape.push(slice_len(a, b, step));
                    vstrides.push(pstrides[dim] * step as i64);
                    coords.push(CallArg::Const(a));
                }
                Some(ViewEntry::Index(c)) => coords.push(c.clone()),
                Some(ViewEntry::IndexTile(_)) => {
                    return Err(self
                        .err("tile_view() offset entries must be integers or slices, got a tile"));
                }
                None => {
                    vshape.push(length);
                    vstrides.push(pstrides[dim]);
                    coords.push(CallArg::Const(0));
                }
            }
        }
        let (vshape, vstrides): (Vec<i128>, Vec<i64>) = if has_slice {
            if shape.is_some() {
                return Err(self.err("tile_view() does not support specifying 'shape' together with a slice-containing 'offset'; the view shape is inferred from the slice bounds."));
            }
            if vshape.is_empty() {
                return Err(self.err(
                    "tile_view() slice resulted in a scalar; use tile_extract() for element access",
                ));
            }
            if vshape.contains(&0) {
                return Err(self.err(format!(
                    "tile_view() slice produced an empty tile with shape {vshape:?}; zero-length tile dimensions are not supported."
                )));
            }
            (vshape, vstrides)
        } else if let Some(shape) = shape {
            if shape.len() != ndim {
                return Err(self.err(format!(
                    "tile_view() if shape is specified it must have same number of dimensions as source tile, expected {ndim}, got {}",
                    shape.len()
                )));
            }
            (shape.iter().map(|&n| i128::from(n)).collect(), pstrides)
        } else {
            let skip = entries.len();
            (
                pshape[skip..].iter().map(|&n| i128::from(n)).collect(),
                pstrides[skip..].to_vec(),
            )
        };
        if vshape.is_empty() {
            return Err(
                self.err("tile_view() of every dimension is one element: use tile_extract()")
            );
        }
        let dims: Vec<u32> = vshape.iter().map(|&n| n as u32).collect();
        let Some(view) = Tile::view_of(t.dtype, &dims, &vstrides) else {
            return Err(self.err("tile views with strides beyond 16 bits are not supported by this version of the lowering"));
        };
        self.promote_shared(src);
        self.use_builtin("tile_view");
        let mut call = vec![CallArg::Var(src)];
        call.extend(coords);
        Ok(self
            .emit_tile_call(
                "tile_view",
                &[view.ctype()],
                Some(Type::Tile(view)),
                call,
                false,
                false,
            )?
            .expect("tile_view returns a view"))
    }

    /// A view of `src` that warp's builtin `name` returns (`tile_squeeze`,
    /// `tile_reshape`, `tile_broadcast`): shared, not owning, these extents
    /// and strides; `src` moves to shared memory. The view's C++ type is the
    /// template argument, or `templates` where given; differentiable.
    fn tile_alias(
        &mut self,
        name: &str,
        src: VarId,
        dtype: Value,
        dims: &[u32],
        strides: &[i64],
        templates: Option<Vec<String>>,
    ) -> LResult<Option<VarId>> {
        if dims.is_empty() || dims.len() > 4 {
            return Err(self.err(format!(
                "{name}() output must have between one and four dimensions"
            )));
        }
        let Some(view) = Tile::view_of(dtype, dims, strides) else {
            return Err(self.err("tile views with strides beyond 16 bits are not supported by this version of the lowering"));
        };
        self.promote_shared(src);
        let templates = templates.unwrap_or_else(|| vec![view.ctype()]);
        self.emit_tile_call(
            name,
            &templates,
            Some(Type::Tile(view)),
            vec![CallArg::Var(src)],
            true,
            false,
        )
    }

    /// warp's `resolve_tile_int_index`: an int index into axis `k` of `t`
    /// kept if it is an in-range constant, a negative constant counted from
    /// the end, a runtime one wrapped once; past the tile's rank (a
    /// component of a vector or matrix element) as written.
    fn resolve_tile_index(&mut self, v: VarId, k: usize, t: &Tile) -> LResult<VarId> {
        let ndim = t.ndim as usize;
        Ok(match self.var(v).constant {
            Some(ConstVal::Int(c)) if c >= 0 && (k >= ndim || (c as u64) < u64::from(t.extent(k))) => v,
            Some(ConstVal::Int(c)) if k < ndim && c < 0 && c + i128::from(t.extent(k)) >= 0 => {
                self.add_constant(ConstVal::Int(c + i128::from(t.extent(k))))
            }
            None if k < ndim => self.wrap_tile_index(v, t.extent(k))?,
            _ if k >= ndim => v,
            _ => return Err(self.err("tile indices must be in-range ints (constant indices past the tile's rank) in this version of the lowering")),
        })
    }

    /// `t[i]` / `t[i, j]`: one element (`tile_extract`).
    pub(super) fn tile_extract(&mut self, target: VarId, nodes: &[&Expr<'a>]) -> LResult<VarId> {
        self.tile_extract_as(target, nodes, true)
    }

    /// `tile_extract`, its indices resolved as a subscript's are (`resolve`)
    /// or passed as written (an explicit `wp.tile_extract(t, i)`).
    fn tile_extract_as(
        &mut self,
        target: VarId,
        nodes: &[&Expr<'a>],
        resolve: bool,
    ) -> LResult<VarId> {
        let (ret, idx) = self.tile_element(target, nodes, "tile_extract", resolve)?;
        // Reading an element makes the tile shared (warp sets the type's storage).
        self.promote_shared(target);
        self.use_builtin("tile_extract");
        let mut call = vec![CallArg::Var(target)];
        call.extend(idx.into_iter().map(CallArg::Var));
        Ok(self
            .emit_tile_call("tile_extract", &[], Some(ret), call, true, false)?
            .expect("tile_extract returns a value"))
    }

    /// `t[i] = x` / `t[i, j][1] = x`: one element or component written
    /// (`assign`), `x` evaluated before the indices; the tile becomes shared.
    pub(super) fn tile_assign(
        &mut self,
        target: VarId,
        nodes: &[&Expr<'a>],
        rhs: VarId,
    ) -> LResult<()> {
        let t = self.tile_of(target).expect("a tile");
        if nodes.len() < t.ndim as usize
            || nodes.iter().any(|n| matches!(n.kind, ExprKind::Slice(..)))
        {
            return self.tile_view_assign(target, t, nodes, rhs);
        }
        let (slot, idx) = self.tile_element(target, nodes, "assign", true)?;
        let value = self.ty(rhs).strip_ref();
        if value != slot {
            return Err(self.err(format!(
                "assigning a {value} to an element of type {slot} of a tile"
            )));
        }
        self.promote_shared(target);
        self.use_builtin("assign");
        let mut call = vec![CallArg::Var(target)];
        call.extend(idx.into_iter().map(CallArg::Var));
        call.push(CallArg::Var(rhs));
        self.emit_tile_call("assign", &[], None, call, true, false)?;
        Ok(())
    }

    /// `t[a:b, :] = src`, `t[0] = row`: `src` (a tile of the view's shape)
    /// assigned into a view of `t` (warp's `tile_view`, then `tile_assign`
    /// at the view's origin).
    fn tile_view_assign(
        &mut self,
        target: VarId,
        t: Tile,
        nodes: &[&Expr<'a>],
        rhs: VarId,
    ) -> LResult<()> {
        let Type::Tile(src) = self.ty(rhs).strip_ref() else {
            return Err(self.err(format!(
                "Tile view assignment requires a tile of matching shape on the right-hand side (e.g. `t[a:b, :] = src` or `t[0] = row`), but got a value of type {}.",
                self.ty(rhs).strip_ref()
            )));
        };
        let entries = self.tile_view_entries(t, nodes)?;
        if entries.iter().any(|e| matches!(e, ViewEntry::IndexTile(_))) {
            return Err(self.err("Advanced-index assignment on tiles (e.g. `t[indices, :] = src`) is not supported. Use slice assignment (`t[a:b, :] = src`) or construct the tile explicitly."));
        }
        let view = self.tile_view(target, t, entries, None)?;
        let vt = self.tile_of(view).expect("a view");
        if *vt.dims() != *src.dims() {
            return Err(self.err(format!(
                "Tile view assignment shape mismatch: destination view has shape {:?} but source has shape {:?}.",
                &*vt.dims(),
                &*src.dims()
            )));
        }
        if vt.dtype != src.dtype {
            return Err(self.err(format!(
                "tile_assign() source and destination must have one dtype, got {} and {}",
                src.dtype, vt.dtype
            )));
        }
        self.use_builtin("tile_assign");
        let mut call = vec![CallArg::Var(view), CallArg::Var(rhs)];
        call.extend((0..vt.ndim).map(|_| CallArg::Const(0)));
        self.emit_tile_call("tile_assign", &[], None, call, true, false)?;
        Ok(())
    }

    /// The type of `target[nodes]` (an element, or a component of a vector or
    /// matrix element) and its evaluated indices, resolved as warp resolves a
    /// subscript's (`resolve`: a runtime index wrapped once, a negative
    /// constant counted from the end) or as they are.
    fn tile_element(
        &mut self,
        target: VarId,
        nodes: &[&Expr<'a>],
        what: &str,
        resolve: bool,
    ) -> LResult<(Type, Vec<VarId>)> {
        let t = self.tile_of(target).expect("a tile");
        let ndim = t.ndim as usize;
        if nodes.len() < ndim {
            return Err(self.err("tile views (fewer indices than dimensions) are not supported by this version of the lowering"));
        }
        // Indices past the tile's rank pick a component of a vector or matrix element.
        let ret = match (nodes.len() - ndim, t.dtype) {
            (0, d) => d.to_type(),
            (1, Value::Vector(_, s)) => Type::Scalar(s),
            (1, Value::Matrix(_, c, s)) => Type::Vector(c, s),
            (2, Value::Matrix(_, _, s)) => Type::Scalar(s),
            (n, _) => {
                return Err(self.err(format!(
                    "{what}: incorrect number of indices ({}) for tile shape {:?}",
                    n + ndim,
                    &*t.dims()
                )));
            }
        };
        let mut idx = Vec::with_capacity(nodes.len());
        for (k, n) in nodes.iter().enumerate() {
            if matches!(n.kind, ExprKind::Slice(..)) {
                return Err(
                    self.err("tile slices are not supported by this version of the lowering")
                );
            }
            let v = self.expr(n)?;
            match self.ty(v).strip_ref() {
                Type::Scalar(Scalar::Int32) if !resolve => idx.push(v),
                Type::Scalar(Scalar::Int32) => {
                    let r = self.resolve_tile_index(v, k, &t)?;
                    idx.push(r)
                }
                Type::Tile(_) => {
                    return Err(self.err(
                        "tile indexing by a tile is not supported by this version of the lowering",
                    ));
                }
                other => {
                    return Err(self.err(format!("{what}() indices must be int32, got {other}")));
                }
            }
        }
        Ok((ret, idx))
    }
}

/// One entry of a tile view's offset: an index (evaluated, or a Python int
/// warp registers while dispatching), or a constant slice as written (an
/// open bound `None`).
enum ViewEntry {
    Index(CallArg),
    /// An int tile that gathers along its axis (`t[idx, :]`).
    IndexTile(VarId),
    Slice {
        start: Option<i128>,
        stop: Option<i128>,
        step: i128,
    },
}

/// warp's open slice bounds in a `wp::slice_t` (`SLICE_BEGIN`, `SLICE_END`).
const SLICE_BEGIN: i128 = i32::MAX as i128;
const SLICE_END: i128 = i32::MIN as i128;

/// A slice's bounds resolved against an axis of `length` as CPython's
/// `slice.indices` does (warp's `_normalize_tile_slice`).
fn normalize_slice(
    start: Option<i128>,
    stop: Option<i128>,
    step: i128,
    length: i128,
) -> (i128, i128, i128) {
    let (lower, upper) = if step > 0 {
        (0, length)
    } else {
        (-1, length - 1)
    };
    let resolve = |v: Option<i128>, default: i128| match v {
        None => default,
        Some(v) if v < 0 => (v + length).max(lower),
        Some(v) => v.min(upper),
    };
    let a = resolve(start, if step > 0 { lower } else { upper });
    let b = resolve(stop, if step > 0 { upper } else { lower });
    (a, b, step)
}

/// The number of elements a resolved slice selects.
fn slice_len(start: i128, stop: i128, step: i128) -> i128 {
    if step > 0 {
        ((stop - start + step - 1).div_euclid(step)).max(0)
    } else {
        ((start - stop - step - 1).div_euclid(-step)).max(0)
    }
}

/// The operators a tile (or one of its elements) updates in place with, as
/// (builtin, native): `+=` `tile_add_inplace`, ... `^=` `tile_bit_xor_inplace`.
pub(super) fn tile_inplace_native(op: BinOp) -> Option<(&'static str, &'static str)> {
    Some(match op {
        BinOp::Add => ("add", "tile_add_inplace"),
        BinOp::Sub => ("sub", "tile_sub_inplace"),
        BinOp::BitAnd => ("bit_and", "tile_bit_and_inplace"),
        BinOp::BitOr => ("bit_or", "tile_bit_or_inplace"),
        BinOp::BitXor => ("bit_xor", "tile_bit_xor_inplace"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::lower::lower;

    fn cuda(src: &str) -> String {
        lower(src, false, true)
            .unwrap()
            .cuda
            .unwrap()
            .module
            .unwrap()
    }

    fn forward(src: &str) -> String {
        lower(src, true, false).unwrap().cpu.unwrap().kernels[0]
            .forward
            .clone()
    }

    fn backward(src: &str) -> String {
        lower(src, true, false).unwrap().cpu.unwrap().kernels[0]
            .backward
            .clone()
    }

    const HEAD: &str = "import warp as wp\n\nTILE = wp.constant(16)\n\n\n@wp.kernel\n";

    #[test]
    fn element_read_makes_the_tile_shared_everywhere() {
        let src = format!(
            "{HEAD}def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):\n    i = wp.tid()\n    t = wp.tile_load(a, shape=TILE, offset=i * TILE)\n    s = wp.tile_sum(t)\n    out[i] = s[0]\n"
        );
        let fwd = forward(&src);
        let bwd = backward(&src);
        // the loaded tile stays in registers, the sum is read by element and becomes shared
        assert!(fwd.contains("wp::tile_register_t<wp::float32,wp::tile_layout_register_t<wp::tile_shape_t<16>>> var_3"), "{fwd}");
        assert!(fwd.contains("wp::tile_shared_t<wp::float32,wp::tile_layout_strided_t<wp::tile_shape_t<1>, wp::tile_stride_t<1>>, true> var_4 = wp::tile_alloc_empty<wp::float32,wp::tile_shape_t<1>,wp::tile_stride_t<1>,false>();"), "{fwd}");
        // the backward pass allocates gradient storage and aliases the adjoint
        assert!(bwd.contains(",true>();"), "{bwd}");
        assert!(bwd.contains("& adj_4 = var_4;"), "{bwd}");
        assert!(bwd.contains("> adj_3{};"), "{bwd}");
    }

    #[test]
    fn a_view_whose_strides_do_not_fit_is_an_error_not_a_panic() {
        // warp builds it; the tile type keeps a view's strides in 16 bits
        let src = format!(
            "{HEAD}def k(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):\n    t = wp.tile_load(a, shape=(2, 40000), storage=\"shared\")\n    wp.tile_store(out, wp.tile_transpose(t))\n    wp.tile_store(out, t[:, ::2])\n"
        );
        let err = lower(&src, false, true).unwrap_err().to_string();
        assert!(err.contains("strides beyond 16 bits"), "{err}");
        let rows = src.replace("wp.tile_transpose(t)", "t");
        let err = lower(&rows, false, true).unwrap_err().to_string();
        assert!(err.contains("strides beyond 16 bits"), "{err}");
    }

    #[test]
    fn shared_strides_are_row_major() {
        let src = format!(
            "{HEAD}def k(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):\n    t = wp.tile_load(a, shape=(4, 8))\n    out[0] = t[1, 2]\n"
        );
        assert!(cuda(&src).contains("wp::tile_shape_t<4,8>, wp::tile_stride_t<8,1>>"));
    }

    #[test]
    fn scalar_times_tile_passes_the_tile_first() {
        let src = format!(
            "{HEAD}def k(a: wp.array(dtype=float)):\n    t = wp.tile_load(a, shape=TILE)\n    u = 2.0 * t\n    wp.tile_store(a, u)\n"
        );
        let f = forward(&src);
        let mul = f.lines().find(|l| l.contains("wp::tile_mul(")).unwrap();
        let (tile, scalar) = (mul.find("var_1,").unwrap(), mul.find("var_3)").unwrap());
        assert!(tile < scalar, "{mul}");
    }

    #[test]
    fn omitted_offsets_are_constants_after_the_output() {
        let src = format!(
            "{HEAD}def k(a: wp.array2d(dtype=float)):\n    t = wp.tile_load(a, shape=(TILE, TILE))\n"
        );
        let f = forward(&src);
        // var_0 is TILE, var_1 the shape tuple, var_2 the loaded tile
        let out = f.find("> var_2 = ").unwrap();
        let z1 = f.find("const wp::int32 var_3 = 0;").unwrap();
        let z2 = f.find("const wp::int32 var_4 = 0;").unwrap();
        assert!(out < z1 && z1 < z2, "{f}");
        assert!(
            f.contains("wp::tile_load<wp::float32, true, false, 16, 16>(var_a, var_3, var_4);")
        );
    }

    #[test]
    fn module_constants_in_range_create_no_variable() {
        let src = "import warp as wp\n\nK = 3\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    for j in range(K):\n        a[j] = 1.0\n";
        let f = forward(src);
        assert!(!f.contains("= 3;"), "{f}");
        let src2 = src.replace("a[j] = 1.0", "a[j] = float(K)");
        assert_eq!(
            forward(&src2).matches("const wp::int32 var_").count() >= 1,
            true
        );
    }

    #[test]
    fn stores_are_not_replayed_and_reductions_of_max_have_no_adjoint() {
        let src = format!(
            "{HEAD}def k(a: wp.array(dtype=float), r: wp.array(dtype=float)):\n    t = wp.tile_load(a, shape=TILE)\n    m = wp.tile_max(t)\n    wp.tile_store(r, m)\n"
        );
        let b = backward(&src);
        assert!(
            b.contains("// wp::tile_store<wp::float32, true, false>("),
            "{b}"
        );
        assert!(b.contains("wp::adj_tile_store("));
        assert!(!b.contains("adj_tile_max"));
    }

    #[test]
    fn matmul_moves_its_operands_to_shared_memory() {
        let src = format!(
            "{HEAD}def k(a: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):\n    ta = wp.tile_load(a, shape=(4, 2))\n    tb = wp.tile_load(a, shape=(2, 8))\n    d = wp.tile_matmul(ta, tb)\n    wp.tile_store(c, d)\n"
        );
        let f = forward(&src);
        assert_eq!(f.matches("wp::tile_shared_t<").count(), 3, "{f}");
        assert!(!f.contains("wp::tile_register_t<"), "{f}");
        // the returning form passes its own output as the accumulator, with beta = 0
        let call = f
            .lines()
            .find(|l| l.contains("wp::tile_matmul("))
            .unwrap()
            .trim();
        let out = call.split(" = ").next().unwrap();
        assert!(call.contains(&format!(", {out}, ")), "{call}");
        assert!(f.contains(" = 0.0;"), "{f}");
    }

    #[test]
    fn tile_errors_point_at_the_call() {
        let src = format!(
            "{HEAD}def k(a: wp.array(dtype=float), n: int):\n    t = wp.tile_load(a, shape=n)\n"
        );
        let e = lower(&src, true, true).unwrap_err();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("compile time constant"), "{}", e.message);
    }
}
