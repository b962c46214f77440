//! Warp's builtin functions: overload resolution over scalar, vector, matrix,
//! quaternion and array arguments, and the flags that shape the generated call
//! (adjoint emitted or not, original output passed to the adjoint, replay
//! suppressed). The flags are per overload, as in warp (`div(float, float)`
//! passes its output to the adjoint, `div(vec3, float)` does not).

use super::types::{Scalar, Type, Value};
use crate::lang::NameSet;
use std::borrow::Cow;

/// A resolved builtin call.
#[derive(Debug, Clone, PartialEq)]
pub struct Overload<'a> {
    /// Native function name (without namespace), e.g. `add`, `vec_t<3, wp::float32>`.
    /// Borrowed from the called name unless it is built (constructors).
    pub native: Cow<'a, str>,
    /// Name of the adjoint (`adj_` + this): the native name without template arguments.
    pub adj_native: Cow<'a, str>,
    /// "wp::" for most builtins, "" for macros like `builtin_tid1d`.
    pub namespace: &'static str,
    /// None for void builtins.
    pub ret: Option<Type>,
    /// The adjoint takes the forward output as an argument (`adj_div(a, b, ret, ...)`).
    pub require_original_output: bool,
    /// An adjoint call is emitted in the reverse pass.
    pub differentiable: bool,
    /// The call is commented out when the forward pass is replayed in the backward kernel.
    pub skip_replay: bool,
}

const UNARY_FLOAT: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log2",
    "log10", "sqrt", "cbrt", "floor", "ceil", "round", "trunc", "frac", "rint", "erf", "erfc",
    "erfinv", "erfcinv", "degrees", "radians",
];
const UNARY_FLOAT_TO_BOOL: &[&str] = &["isnan", "isinf", "isfinite"];
const ATOMICS: &[&str] = &["atomic_add", "atomic_sub", "atomic_min", "atomic_max"];
/// Builtins without an adjoint (for every overload pairpipe resolves).
const NOT_DIFFERENTIABLE: &[&str] = &[
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "rint",
    "sign",
    "step",
    "nonzero",
    "floordiv",
    "unot",
    "bit_and",
    "bit_or",
    "bit_xor",
    "lshift",
    "rshift",
    "invert",
    "load",
    "tid",
    "isnan",
    "isinf",
    "isfinite",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "range",
    "iter_next",
    "identity",
    "quat_identity",
];
/// Builtins whose adjoint takes the forward output, for scalar arguments.
const REQUIRE_OUTPUT_SCALAR: &[&str] = &[
    "div", "exp", "pow", "sqrt", "cbrt", "tanh", "erfinv", "erfcinv",
];

/// Every name callable as `wp.NAME(...)` that this lowering resolves.
pub const KNOWN: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "log",
    "log2",
    "log10",
    "sqrt",
    "cbrt",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "abs",
    "sign",
    "step",
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "floordiv",
    "min",
    "max",
    "pow",
    "atan2",
    "bit_and",
    "bit_or",
    "bit_xor",
    "lshift",
    "rshift",
    "invert",
    "clamp",
    "lerp",
    "where",
    "tid",
    "dot",
    "cross",
    "length",
    "length_sq",
    "normalize",
    "outer",
    "transpose",
    "determinant",
    "inverse",
    "trace",
    "diag",
    "skew",
    "cw_mul",
    "cw_div",
    "identity",
    "quat_identity",
    "quat_rotate",
    "quat_rotate_inv",
    "quat_inverse",
    "quat_from_axis_angle",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "tile_load",
    "tile_store",
    "tile_atomic_add",
    "tile_zeros",
    "tile_ones",
    "tile_sum",
    "tile_max",
    "tile_min",
    "tile_reduce",
    "tile_map",
    "tile_matmul",
    "tile_transpose",
    "tile",
    "untile",
];

/// Names that cast to a scalar type when called: Python's `float`/`int`/`bool`
/// and every Warp scalar type name.
pub fn cast_target(name: &str) -> Option<Scalar> {
    match name {
        "float" => Some(Scalar::Float32),
        "int" => Some(Scalar::Int32),
        "bool" => Some(Scalar::Bool),
        _ => Scalar::from_name(name),
    }
}

/// Whether `name` is a builtin this lowering knows (for "unknown function" errors).
pub fn is_known(name: &str) -> bool {
    const SET: NameSet<{ KNOWN.len() }> = NameSet::new(KNOWN);
    SET.contains(name)
        || cast_target(name).is_some()
        || super::types::composite_type(name).is_some()
}

fn overload(native: &str, ret: Option<Type>) -> Overload<'_> {
    const NOT_DIFFERENTIABLE_SET: NameSet<{ NOT_DIFFERENTIABLE.len() }> =
        NameSet::new(NOT_DIFFERENTIABLE);
    Overload {
        native: Cow::Borrowed(native),
        adj_native: Cow::Borrowed(native),
        namespace: "wp::",
        ret,
        require_original_output: false,
        differentiable: !NOT_DIFFERENTIABLE_SET.contains(native),
        skip_replay: ATOMICS.contains(&native) || native == "array_store",
    }
}

fn is_int_index(t: &Type) -> bool {
    t.scalar().is_some_and(Scalar::is_int)
}

/// A constructor call of a vector, matrix or quaternion type (`wp.vec3(...)`).
pub fn resolve_constructor(target: Value, args: &[Type]) -> Result<Overload<'static>, String> {
    let (native, adj) = match target {
        Value::Vector(n, s) => (format!("vec_t<{n}, {}>", s.ctype()), "vec_t"),
        Value::Matrix(r, c, s) => (format!("mat_t<{r}, {c}, {}>", s.ctype()), "mat_t"),
        Value::Quat(s) => (format!("quat_t<{}>", s.ctype()), "quat_t"),
        _ => return Err("not a vector, matrix or quaternion type".into()),
    };
    let components = match target {
        Value::Vector(n, _) => n as usize,
        Value::Matrix(r, c, _) => (r * c) as usize,
        _ => 4,
    };
    let dtype = Type::Scalar(target.dtype());
    let ok = args.is_empty()
        || (args.len() == 1 && args[0] == dtype)
        || (args.len() == components && args.iter().all(|a| *a == dtype))
        // conversion from the same shape with another component type
        || (args.len() == 1 && match (target, args[0]) {
            (Value::Vector(n, _), Type::Vector(m, _)) => n == m,
            (Value::Matrix(r, c, _), Type::Matrix(r2, c2, _)) => r == r2 && c == c2,
            (Value::Quat(_), Type::Quat(_)) => true,
            _ => false,
        })
        // a quaternion from its vector part and scalar part
        || matches!((target, args), (Value::Quat(s), [Type::Vector(3, v), Type::Scalar(w)]) if s == *v && s == *w);
    if !ok {
        let types: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        return Err(format!(
            "couldn't construct {target} from arguments '{}'",
            types.join(", ")
        ));
    }
    let o = overload(&native, Some(target.to_type()));
    Ok(Overload {
        native: Cow::Owned(native.clone()),
        adj_native: Cow::Borrowed(adj),
        ..o
    })
}

/// Resolve builtin `name` for value arguments of types `args` (references already stripped).
pub fn resolve<'a>(name: &'a str, args: &[Type]) -> Result<Overload<'a>, String> {
    let no_match = || {
        let types: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        format!(
            "couldn't find a function '{name}' compatible with the arguments '{}'",
            types.join(", ")
        )
    };
    // Unknown names fall through every arm below to "couldn't find a function".
    const UNARY_FLOAT_SET: NameSet<{ UNARY_FLOAT.len() }> = NameSet::new(UNARY_FLOAT);
    const UNARY_FLOAT_TO_BOOL_SET: NameSet<{ UNARY_FLOAT_TO_BOOL.len() }> =
        NameSet::new(UNARY_FLOAT_TO_BOOL);
    const REQUIRE_OUTPUT_SCALAR_SET: NameSet<{ REQUIRE_OUTPUT_SCALAR.len() }> =
        NameSet::new(REQUIRE_OUTPUT_SCALAR);
    use Type as T;
    let numeric = |s: Scalar| s != Scalar::Bool;
    let same = |a: &Type, b: &Type| a == b;
    let mut require_output = false;
    let ret: Option<Type> = match (name, args) {
        ("tid", []) => {
            let mut o = overload("builtin_tid1d", Some(Type::I32));
            o.namespace = "";
            o.differentiable = false;
            return Ok(o);
        }
        (n, [T::Scalar(s)]) if UNARY_FLOAT_SET.contains(n) && s.is_float() => {
            require_output = REQUIRE_OUTPUT_SCALAR_SET.contains(n);
            Some(T::Scalar(*s))
        }
        (n, [T::Scalar(s)]) if UNARY_FLOAT_TO_BOOL_SET.contains(n) && s.is_float() => Some(T::BOOL),
        ("abs" | "sign", [t @ (T::Scalar(_) | T::Vector(..))])
            if t.value().is_some_and(|v| numeric(v.dtype())) =>
        {
            Some(*t)
        }
        ("step" | "nonzero", [T::Scalar(s)]) if numeric(*s) => Some(T::Scalar(*s)),
        ("neg" | "pos", [t]) if t.value().is_some_and(|v| numeric(v.dtype())) => Some(*t),
        ("add" | "sub", [a, b]) if same(a, b) && a.value().is_some_and(|v| numeric(v.dtype())) => {
            Some(*a)
        }
        ("mul", [a, b]) => mul_type(a, b),
        ("div", [T::Scalar(a), T::Scalar(b)]) if a == b && numeric(*a) => {
            require_output = true;
            Some(T::Scalar(*a))
        }
        ("div", [a, T::Scalar(s)])
            if matches!(a, T::Vector(..) | T::Matrix(..) | T::Quat(_))
                && a.value().map(Value::dtype) == Some(*s) =>
        {
            Some(*a)
        }
        ("div", [T::Scalar(s), b])
            if matches!(b, T::Vector(..) | T::Matrix(..) | T::Quat(_))
                && b.value().map(Value::dtype) == Some(*s) =>
        {
            Some(*b)
        }
        ("mod", [T::Scalar(a), T::Scalar(b)]) if a == b && numeric(*a) => Some(T::Scalar(*a)),
        ("mod", [a @ T::Vector(..), b]) if same(a, b) => {
            let mut o = overload("mod", Some(*a));
            o.differentiable = false;
            return Ok(o);
        }
        ("floordiv", [T::Scalar(a), T::Scalar(b)]) if a == b && numeric(*a) => Some(T::Scalar(*a)),
        ("min" | "max", [a, b])
            if same(a, b) && matches!(a, T::Scalar(s) | T::Vector(_, s) if numeric(*s)) =>
        {
            Some(*a)
        }
        ("min" | "max", [T::Vector(_, s)]) => Some(T::Scalar(*s)),
        ("pow", [T::Scalar(a), T::Scalar(b)]) if a == b && a.is_float() => {
            require_output = true;
            Some(T::Scalar(*a))
        }
        ("atan2", [T::Scalar(a), T::Scalar(b)]) if a == b && a.is_float() => Some(T::Scalar(*a)),
        ("bit_and" | "bit_or" | "bit_xor" | "lshift" | "rshift", [T::Scalar(a), T::Scalar(b)])
            if a == b && a.is_int() =>
        {
            Some(T::Scalar(*a))
        }
        ("invert", [T::Scalar(s)]) if s.is_int() => Some(T::Scalar(*s)),
        ("unot", [T::Scalar(_)]) => Some(T::BOOL),
        ("clamp", [a, b, c])
            if same(a, b) && same(b, c) && matches!(a, T::Scalar(s) if numeric(*s)) =>
        {
            Some(*a)
        }
        ("lerp", [a, b, T::Scalar(t)])
            if same(a, b) && t.is_float() && a.value().map(Value::dtype) == Some(*t) =>
        {
            Some(*a)
        }
        ("where", [T::Scalar(c), a, b])
            if (c.is_int() || *c == Scalar::Bool) && same(a, b) && a.value().is_some() =>
        {
            Some(*a)
        }
        ("dot", [a @ (T::Vector(_, s) | T::Quat(s)), b]) if same(a, b) => Some(T::Scalar(*s)),
        ("cross", [a @ T::Vector(3, _), b]) if same(a, b) => Some(*a),
        ("length", [T::Vector(_, s) | T::Quat(s)]) if s.is_float() => {
            require_output = true;
            Some(T::Scalar(*s))
        }
        ("length_sq", [T::Vector(_, s) | T::Quat(s)]) => Some(T::Scalar(*s)),
        ("normalize", [a @ T::Vector(_, s)]) if s.is_float() => {
            require_output = true;
            Some(*a)
        }
        ("normalize", [a @ T::Quat(_)]) => Some(*a),
        ("outer", [T::Vector(n, s), T::Vector(m, t)]) if s == t => Some(T::Matrix(*n, *m, *s)),
        ("transpose", [T::Matrix(r, c, s)]) => Some(T::Matrix(*c, *r, *s)),
        ("determinant" | "trace", [T::Matrix(r, c, s)]) if r == c => Some(T::Scalar(*s)),
        ("inverse", [a @ T::Matrix(r, c, _)]) if r == c => {
            require_output = true;
            Some(*a)
        }
        ("diag", [T::Vector(n, s)]) => Some(T::Matrix(*n, *n, *s)),
        ("skew", [T::Vector(3, s)]) => Some(T::Matrix(3, 3, *s)),
        ("cw_mul", [a @ (T::Vector(..) | T::Matrix(..)), b]) if same(a, b) => Some(*a),
        ("cw_div", [a @ (T::Vector(..) | T::Matrix(..)), b]) if same(a, b) => {
            require_output = true;
            Some(*a)
        }
        ("ddot", [a @ T::Matrix(_, _, s), b]) if same(a, b) => Some(T::Scalar(*s)),
        ("quat_rotate" | "quat_rotate_inv", [T::Quat(s), T::Vector(3, t)]) if s == t => {
            Some(T::Vector(3, *s))
        }
        ("quat_inverse", [a @ T::Quat(_)]) => Some(*a),
        ("quat_from_axis_angle", [T::Vector(3, s), T::Scalar(t)]) if s == t => Some(T::Quat(*s)),
        ("extract", [T::Vector(_, s) | T::Quat(s) | T::Transform(s), i]) if is_int_index(i) => {
            Some(T::Scalar(*s))
        }
        ("extract", [T::Shape, i]) if is_int_index(i) => {
            let mut o = overload("extract", Some(T::I32));
            o.differentiable = false;
            return Ok(o);
        }
        ("transform_get_translation", [T::Transform(s)]) => Some(T::Vector(3, *s)),
        ("transform_get_rotation", [T::Transform(s)]) => Some(T::Quat(*s)),
        ("transform_set_translation", [T::Transform(s), T::Vector(3, t)])
        | ("transform_set_rotation", [T::Transform(s), T::Quat(t)])
            if s == t =>
        {
            return Ok(overload(name, None));
        }
        ("extract", [T::Matrix(_, c, s), i]) if is_int_index(i) => Some(T::Vector(*c, *s)),
        ("extract", [T::Matrix(_, _, s), i, j]) if is_int_index(i) && is_int_index(j) => {
            Some(T::Scalar(*s))
        }
        (
            "assign_inplace" | "add_inplace" | "sub_inplace",
            [T::Vector(_, s) | T::Quat(s) | T::Transform(s), i, v],
        ) if is_int_index(i) && *v == T::Scalar(*s) => {
            return Ok(overload(name, None));
        }
        ("assign_inplace" | "add_inplace" | "sub_inplace", [T::Matrix(_, c, s), i, v])
            if is_int_index(i) && *v == T::Vector(*c, *s) =>
        {
            return Ok(overload(name, None));
        }
        ("assign_inplace" | "add_inplace" | "sub_inplace", [T::Matrix(_, _, s), i, j, v])
            if is_int_index(i) && is_int_index(j) && *v == T::Scalar(*s) =>
        {
            return Ok(overload(name, None));
        }
        ("copy", [a]) => Some(*a),
        ("load", [a]) => Some(*a),
        ("assign", [a, b]) if same(a, b) => return Ok(overload("assign", None)),
        ("range", a) if (1..=3).contains(&a.len()) && a.iter().all(|t| *t == Type::I32) => {
            Some(Type::Range)
        }
        ("iter_next", [Type::Range]) => Some(Type::I32),
        (n, [T::Array { dtype, ndim }, rest @ ..]) if ATOMICS.contains(&n) => {
            let ok = rest.len() == ndim + 1
                && rest[..*ndim].iter().all(is_int_index)
                && rest[*ndim] == dtype.to_type()
                && match dtype {
                    Value::Scalar(s) => numeric(*s),
                    Value::Vector(..) => true,
                    Value::Matrix(..) | Value::Quat(_) | Value::Transform(_) => {
                        matches!(n, "atomic_add" | "atomic_sub")
                    }
                    Value::Struct(_) | Value::Shape => false,
                };
            ok.then(|| dtype.to_type())
        }
        ("address", [T::Array { dtype, ndim }, idx @ ..])
            if idx.len() == *ndim && idx.iter().all(is_int_index) =>
        {
            Some(Type::Ref(*dtype))
        }
        ("array_store", [T::Array { dtype, ndim }, rest @ ..])
            if rest.len() == ndim + 1
                && rest[..*ndim].iter().all(is_int_index)
                && rest[*ndim] == dtype.to_type() =>
        {
            return Ok(overload("array_store", None));
        }
        ("bool", [T::Scalar(_)]) => {
            // `bool` is a plain C++ cast, not a wp:: function.
            let mut o = overload("bool", Some(T::BOOL));
            o.namespace = "";
            return Ok(o);
        }
        (n, [T::Scalar(_)]) if cast_target(n).is_some() => cast_target(n).map(Type::Scalar),
        _ => None,
    };
    let ret = ret.ok_or_else(no_match)?;
    let mut o = overload(name, Some(ret));
    o.require_original_output = require_output;
    Ok(o)
}

/// Result type of `a * b` for scalars, vectors, matrices and quaternions.
fn mul_type(a: &Type, b: &Type) -> Option<Type> {
    use Type as T;
    let numeric = |s: &Scalar| *s != Scalar::Bool;
    match (a, b) {
        (T::Scalar(x), T::Scalar(y)) if x == y && numeric(x) => Some(*a),
        (v @ (T::Vector(_, s) | T::Matrix(_, _, s) | T::Quat(s)), T::Scalar(t))
        | (T::Scalar(t), v @ (T::Vector(_, s) | T::Matrix(_, _, s) | T::Quat(s)))
            if s == t =>
        {
            Some(*v)
        }
        (T::Matrix(r, c, s), T::Vector(n, t)) if c == n && s == t => Some(T::Vector(*r, *s)),
        (T::Vector(n, t), T::Matrix(r, c, s)) if r == n && s == t => Some(T::Vector(*c, *s)),
        (T::Matrix(r, k, s), T::Matrix(k2, c, t)) if k == k2 && s == t => {
            Some(T::Matrix(*r, *c, *s))
        }
        (T::Quat(s), T::Quat(t)) if s == t => Some(*a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name set answers exactly as the list's `contains`, for short and
    /// long names, and for near misses (prefixes, extensions, case).
    #[test]
    fn name_sets_agree_with_their_lists() {
        const SET: NameSet<{ KNOWN.len() }> = NameSet::new(KNOWN);
        const NOT_DIFF: NameSet<{ NOT_DIFFERENTIABLE.len() }> = NameSet::new(NOT_DIFFERENTIABLE);
        let mut probes: Vec<String> = Vec::new();
        for name in KNOWN.iter().chain(NOT_DIFFERENTIABLE) {
            probes.push(name.to_string());
            probes.push(format!("{name}x"));
            probes.push(name[..name.len() - 1].to_string());
            probes.push(name.to_uppercase());
        }
        assert!(KNOWN.iter().any(|n| n.len() > 8), "long names are covered");
        for p in &probes {
            assert_eq!(SET.contains(p), KNOWN.contains(&p.as_str()), "{p}");
            assert_eq!(
                NOT_DIFF.contains(p),
                NOT_DIFFERENTIABLE.contains(&p.as_str()),
                "{p}"
            );
        }
    }

    #[test]
    fn resolves_scalar_overloads() {
        let o = resolve("div", &[Type::F32, Type::F32]).unwrap();
        assert!(o.require_original_output && o.differentiable);
        assert_eq!(o.ret, Some(Type::F32));
        let o = resolve("floor", &[Type::F32]).unwrap();
        assert!(!o.differentiable);
        assert!(
            resolve("add", &[Type::F32, Type::I32])
                .unwrap_err()
                .contains("float32, int32")
        );
        assert!(resolve("sin", &[Type::I32]).is_err());
        let o = resolve("float", &[Type::I32]).unwrap();
        assert_eq!((&*o.native, o.ret), ("float", Some(Type::F32)));
        assert!(
            resolve("int", &[Type::F32])
                .map(|o| !o.differentiable)
                .unwrap()
        );
        let arr = Type::Array {
            dtype: Value::Scalar(Scalar::Float32),
            ndim: 1,
        };
        let o = resolve("atomic_add", &[arr, Type::I32, Type::F32]).unwrap();
        assert!(o.skip_replay);
        assert!(resolve("atomic_add", &[arr, Type::I32, Type::I32]).is_err());
    }

    #[test]
    fn resolves_vector_overloads() {
        let v3 = Type::Vector(3, Scalar::Float32);
        let m33 = Type::Matrix(3, 3, Scalar::Float32);
        assert_eq!(resolve("mul", &[m33, v3]).unwrap().ret, Some(v3));
        assert_eq!(resolve("mul", &[Type::F32, v3]).unwrap().ret, Some(v3));
        let d = resolve("div", &[v3, Type::F32]).unwrap();
        assert!(!d.require_original_output);
        assert!(resolve("length", &[v3]).unwrap().require_original_output);
        assert_eq!(resolve("outer", &[v3, v3]).unwrap().ret, Some(m33));
        assert!(resolve("cross", &[Type::Vector(2, Scalar::Float32); 2]).is_err());
        let c = resolve_constructor(Value::Vector(3, Scalar::Float32), &[Type::F32; 3]).unwrap();
        assert_eq!(
            (&*c.native, &*c.adj_native),
            ("vec_t<3, wp::float32>", "vec_t")
        );
        assert!(resolve_constructor(Value::Vector(3, Scalar::Float32), &[Type::F32; 2]).is_err());
    }
}
