//! Warp's builtin functions over scalars and arrays: overload resolution and the
//! flags that shape the generated call (adjoint emitted or not, original output
//! passed to the adjoint, replay suppressed).

use super::types::{Scalar, Type};

/// A resolved builtin call.
#[derive(Debug, Clone, PartialEq)]
pub struct Overload {
    /// Native function name (without namespace).
    pub native: &'static str,
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
const UNARY_NUMERIC: &[&str] = &["abs", "sign", "neg", "pos", "step", "nonzero"];
const BINARY_NUMERIC: &[&str] = &["add", "sub", "mul", "div", "mod", "floordiv", "min", "max"];
const BINARY_FLOAT: &[&str] = &["pow", "atan2"];
const BINARY_INT: &[&str] = &["bit_and", "bit_or", "bit_xor", "lshift", "rshift"];
const ATOMICS: &[&str] = &["atomic_add", "atomic_sub", "atomic_min", "atomic_max"];
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
];
const REQUIRE_ORIGINAL_OUTPUT: &[&str] = &[
    "div", "exp", "pow", "sqrt", "cbrt", "tanh", "erfinv", "erfcinv",
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
    [
        UNARY_FLOAT,
        UNARY_FLOAT_TO_BOOL,
        UNARY_NUMERIC,
        BINARY_NUMERIC,
        BINARY_FLOAT,
        BINARY_INT,
        ATOMICS,
    ]
    .iter()
    .any(|set| set.contains(&name))
        || matches!(
            name,
            "clamp" | "lerp" | "where" | "select" | "tid" | "invert" | "unot"
        )
        || cast_target(name).is_some()
}

fn overload(native: &'static str, ret: Option<Type>) -> Overload {
    Overload {
        native,
        namespace: "wp::",
        ret,
        require_original_output: REQUIRE_ORIGINAL_OUTPUT.contains(&native),
        differentiable: !NOT_DIFFERENTIABLE.contains(&native),
        skip_replay: ATOMICS.contains(&native) || native == "array_store",
    }
}

fn intern(name: &str) -> Option<&'static str> {
    [
        UNARY_FLOAT,
        UNARY_FLOAT_TO_BOOL,
        UNARY_NUMERIC,
        BINARY_NUMERIC,
        BINARY_FLOAT,
        BINARY_INT,
        ATOMICS,
    ]
    .iter()
    .flat_map(|s| s.iter())
    .chain(
        [
            "clamp",
            "lerp",
            "where",
            "tid",
            "invert",
            "unot",
            "address",
            "load",
            "array_store",
            "copy",
            "float",
            "int",
            "bool",
            "range",
            "iter_next",
            "assign",
        ]
        .iter(),
    )
    .find(|n| **n == name)
    .copied()
    .or_else(|| Scalar::from_name(name).map(Scalar::name))
}

fn all_same_scalar(args: &[Type]) -> Option<Scalar> {
    let first = args.first()?.scalar()?;
    args.iter()
        .all(|a| a.scalar() == Some(first))
        .then_some(first)
}

/// Resolve builtin `name` for value arguments of types `args` (references already stripped).
pub fn resolve(name: &str, args: &[Type]) -> Result<Overload, String> {
    let no_match = || {
        let types: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        format!(
            "couldn't find a function '{name}' compatible with the arguments '{}'",
            types.join(", ")
        )
    };
    let native = intern(name).ok_or_else(|| format!("unknown builtin function '{name}'"))?;
    let numeric = |s: Scalar| s != Scalar::Bool;
    let same = all_same_scalar(args);
    let ret = match (native, args.len()) {
        ("tid", 0) => {
            return Ok(Overload {
                native: "builtin_tid1d",
                namespace: "",
                ..overload("tid", Some(Type::I32))
            });
        }
        (n, 1) if UNARY_FLOAT.contains(&n) => same.filter(|s| s.is_float()).map(Type::Scalar),
        (n, 1) if UNARY_FLOAT_TO_BOOL.contains(&n) => {
            same.filter(|s| s.is_float()).map(|_| Type::BOOL)
        }
        (n, 1) if UNARY_NUMERIC.contains(&n) => same.filter(|s| numeric(*s)).map(Type::Scalar),
        (n, 2) if BINARY_NUMERIC.contains(&n) => same.filter(|s| numeric(*s)).map(Type::Scalar),
        (n, 2) if BINARY_FLOAT.contains(&n) => same.filter(|s| s.is_float()).map(Type::Scalar),
        (n, 2) if BINARY_INT.contains(&n) => same.filter(|s| s.is_int()).map(Type::Scalar),
        ("invert", 1) => same.filter(|s| s.is_int()).map(Type::Scalar),
        ("unot", 1) => args[0].scalar().map(|_| Type::BOOL),
        ("clamp", 3) => same.filter(|s| numeric(*s)).map(Type::Scalar),
        ("lerp", 3) => same.filter(|s| s.is_float()).map(Type::Scalar),
        ("where", 3) => match (&args[0], &args[1], &args[2]) {
            (Type::Scalar(c), a, b) if (c.is_int() || *c == Scalar::Bool) && a == b => {
                Some(a.clone())
            }
            _ => None,
        },
        ("copy", 1) => Some(args[0].clone()),
        ("assign", 2) if args[0] == args[1] => return Ok(overload("assign", None)),
        ("range", 1..=3) if args.iter().all(|a| *a == Type::I32) => Some(Type::Range),
        ("iter_next", 1) if args[0] == Type::Range => Some(Type::I32),
        ("load", 1) => Some(args[0].clone()),
        (n, _) if ATOMICS.contains(&n) => match args {
            [Type::Array { dtype, ndim }, rest @ ..]
                if rest.len() == ndim + 1
                    && rest[..*ndim]
                        .iter()
                        .all(|t| t.scalar().is_some_and(Scalar::is_int))
                    && rest[*ndim] == Type::Scalar(*dtype) =>
            {
                Some(Type::Scalar(*dtype))
            }
            _ => None,
        },
        ("address", _) => match args {
            [Type::Array { dtype, ndim }, idx @ ..]
                if idx.len() == *ndim
                    && idx.iter().all(|t| t.scalar().is_some_and(Scalar::is_int)) =>
            {
                Some(Type::Ref(*dtype))
            }
            _ => None,
        },
        ("array_store", _) => match args {
            [Type::Array { dtype, ndim }, rest @ ..]
                if rest.len() == ndim + 1
                    && rest[..*ndim]
                        .iter()
                        .all(|t| t.scalar().is_some_and(Scalar::is_int))
                    && rest[*ndim] == Type::Scalar(*dtype) =>
            {
                return Ok(overload("array_store", None));
            }
            _ => None,
        },
        (n, 1) if cast_target(n).is_some() => {
            args[0].scalar().and(cast_target(n)).map(Type::Scalar)
        }
        _ => None,
    };
    let ret = ret.ok_or_else(no_match)?;
    Ok(overload(native, Some(ret)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!((o.native, o.ret), ("float", Some(Type::F32)));
        assert!(
            resolve("int", &[Type::F32])
                .map(|o| !o.differentiable)
                .unwrap()
        );
        let arr = Type::Array {
            dtype: Scalar::Float32,
            ndim: 1,
        };
        let o = resolve("atomic_add", &[arr.clone(), Type::I32, Type::F32]).unwrap();
        assert!(o.skip_replay);
        assert!(resolve("atomic_add", &[arr, Type::I32, Type::I32]).is_err());
    }
}
