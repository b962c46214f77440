//! Arrays made inside a kernel: `wp.zeros(shape, dtype=)` (a fixed-size
//! local array, `wp::fixedarray_t<N, T>`) and `wp.array(ptr=, shape=, dtype=)`
//! (an `array_t` over a raw pointer). Neither has an adjoint.

use super::*;
use crate::lower::types::ArrayKind;

/// An argument of the generated constructor call: a variable, or a shape
/// component warp registers as a new constant while dispatching.
enum ShapeArg {
    Var(VarId),
    Const(i128),
}

impl<'a> Adjoint<'a> {
    /// `wp.zeros(...)` and `wp.array(...)` in a kernel or function.
    pub(super) fn array_constructor(
        &mut self,
        name: &str,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let params: &[&str] = if name == "zeros" {
            &["shape", "dtype"]
        } else {
            &["ptr", "shape", "dtype"]
        };
        if args.len() > params.len() {
            return Err(self.err(format!("{name}() takes at most {} arguments", params.len())));
        }
        // Arguments are evaluated in source order; the dtype is a type, not a value.
        let mut bound: Vec<(&str, Option<VarId>, &Expr<'a>)> = Vec::with_capacity(3);
        let pairs = args
            .iter()
            .enumerate()
            .map(|(k, a)| Ok((params[k], a)))
            .chain(kwargs.iter().map(|kw| match kw.arg {
                Some(key) => match params.iter().find(|p| **p == key) {
                    Some(p) => Ok((*p, &kw.value)),
                    None => Err(key),
                },
                None => Err("**"),
            }));
        for pair in pairs {
            let (p, e) = pair.map_err(|key| {
                self.err(format!(
                    "{name}() argument '{key}' is not supported by this version of the lowering"
                ))
            })?;
            if bound.iter().any(|(b, ..)| *b == p) {
                return Err(self.err(format!("{name}() got multiple values for argument '{p}'")));
            }
            if matches!(e.kind, ExprKind::Starred(_)) {
                return Err(
                    self.err("starred arguments are not supported by this version of the lowering")
                );
            }
            let v = if p == "dtype" {
                None
            } else {
                Some(self.expr(e)?)
            };
            bound.push((p, v, e));
        }
        let get = |p: &str| bound.iter().find(|(b, ..)| *b == p);
        let Some(&(_, _, dtype_expr)) = get("dtype") else {
            return Err(self.err(format!("{name}() needs a dtype")));
        };
        let dtype = self.scope.value_type(dtype_expr).ok_or_else(|| {
            self.err("arrays of this dtype are not supported by this version of the lowering")
        })?;
        let Some(&(_, Some(shape), _)) = get("shape") else {
            return Err(self.err(format!("{name}() needs a shape")));
        };
        // warp's `extract_tuple`: a tuple's constant elements are values (new
        // constants when passed), its other elements and a lone value are variables.
        let (elems, is_tuple) = match self.tuples.iter().find(|(t, _)| *t == shape) {
            Some((_, e)) => (e.clone(), true),
            None => (vec![shape], false),
        };
        if elems.is_empty() || elems.len() > 4 {
            return Err(self.err("arrays of 1 to 4 dimensions are supported"));
        }
        for &e in &elems {
            if !matches!(self.ty(e).strip_ref(), Type::Scalar(s) if s.is_int()) {
                return Err(self.err("array shapes must be integers"));
            }
        }
        let ndim = elems.len();
        let mut call_args: Vec<ShapeArg> = Vec::with_capacity(ndim + 1);
        let kind = if name == "zeros" {
            let mut size: u64 = 1;
            for &e in &elems {
                match self.var(e).constant {
                    Some(ConstVal::Int(n)) if n >= 0 => {
                        size = size.saturating_mul(n as u64);
                        call_args.push(ShapeArg::Const(n));
                    }
                    _ => {
                        return Err(self.err(
                            "the `shape` argument must be specified as a constant when zero-initializing an array",
                        ));
                    }
                }
            }
            let size =
                u32::try_from(size).map_err(|_| self.err("this fixed-size array is too large"))?;
            ArrayKind::Fixed(size)
        } else {
            let Some(&(_, Some(ptr), _)) = get("ptr") else {
                return Err(self.err("array() needs a ptr"));
            };
            if self.ty(ptr).strip_ref() != Type::Scalar(Scalar::UInt64) {
                return Err(self.err("array() needs a uint64 ptr"));
            }
            call_args.push(ShapeArg::Var(ptr));
            for &e in &elems {
                call_args.push(match (is_tuple, self.var(e).constant) {
                    (true, Some(ConstVal::Int(c))) => ShapeArg::Const(c),
                    _ => ShapeArg::Var(e),
                });
            }
            ArrayKind::Array
        };
        if let Value::Struct(id) = dtype {
            self.use_struct(id);
        }
        self.use_builtin(name);
        let ty = Type::Array { dtype, ndim, kind };
        let out = self.add_var(ty, None);
        // warp registers the constants of the call, then loads its arguments.
        let mut vars: Vec<VarId> = Vec::with_capacity(call_args.len());
        for a in &call_args {
            vars.push(match *a {
                ShapeArg::Var(v) => v,
                ShapeArg::Const(c) => self.add_constant(ConstVal::Int(c)),
            });
        }
        for v in vars.iter_mut() {
            *v = self.load(*v)?;
        }
        let mut line = String::with_capacity(64);
        line.put_all(&[self.emit(out), " = "]);
        let mut ctype = String::with_capacity(32);
        ty.push_ctype(&mut ctype, false);
        line.put_all(&[&ctype, "("]);
        for (k, v) in vars.iter().enumerate() {
            if k > 0 {
                line.put(", ");
            }
            line.put(self.emit(*v));
        }
        line.put(");");
        self.add_forward_plain(&line);
        Ok(out)
    }
}
