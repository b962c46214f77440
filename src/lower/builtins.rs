//! Warp's builtin functions as data, the way warp keeps them: a registry of
//! `add_builtin(...)` entries (warp/_src/builtins.py), one line per overload.
//! Each line names the builtin, its signature (argument patterns with type
//! variables, argument defaults, the return type in terms of the variables)
//! and the flags that shape the generated call: no adjoint, original output
//! passed to the adjoint, replay suppressed, global namespace, hidden. A new
//! builtin is a line in [`TABLE`]; [`resolve`] walks the lines of one name in
//! order and takes the first whose signature matches, as warp does.
//!
//! Signatures read like Rust generics:
//!
//! ```text
//! <T: Float>(x: T) -> T                       same-type variable with a class
//! (a: Matrix(R, C, T), b: Vector(C, T)) -> Vector(R, T)     dimension variables
//! <V: Numeric | Vector(_, _)>(arr: Array(V, D), i: Int*D, value: V) -> V
//! <T: Float>(a: T, b: T, tolerance: T = 1e-6)                 default, void
//! (fmt: str, args: Any...)                                    variadic
//! ```
//!
//! A single capital letter (optionally followed by a digit) is a variable: its
//! first match binds it, later ones must be equal; `<X: pattern>` constrains it.
//! Class names (`Float`, `Int`, `Numeric`, `Scalar`, `Value`, `NumValue`,
//! `Any`) match independently at each use; lower-case names are exact types
//! (`int32`, `uint32`, `bool`, `str`, `range`). `Int*D` stands for `D` index
//! arguments, `X...` for any number of trailing arguments, `_` for anything.
//! The signatures are parsed once, into an index by name ([`REGISTRY`]);
//! resolving allocates nothing.

use super::types::{ArrayKind, ConstVal, Query, Scalar, Type, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;
use std::sync::LazyLock;

/// A resolved builtin call.
#[derive(Debug, Clone, PartialEq)]
pub struct Overload<'a> {
    /// Native function name (without namespace), e.g. `add`, `vec_t<3, wp::float32>`.
    /// Borrowed from the table unless it is built (constructors).
    pub native: Cow<'a, str>,
    /// Name of the adjoint (`adj_` + this): the native name without template arguments.
    pub adj_native: Cow<'a, str>,
    /// "wp::" for most builtins, "" for macros like `builtin_tid1d` and C's `printf`.
    pub namespace: &'static str,
    /// None for void builtins.
    pub ret: Option<Type>,
    /// The adjoint takes the forward output as an argument (`adj_div(a, b, ret, ...)`).
    pub require_original_output: bool,
    /// An adjoint call is emitted in the reverse pass.
    pub differentiable: bool,
    /// The call is commented out when the forward pass is replayed in the backward kernel.
    pub skip_replay: bool,
    /// Values of the trailing arguments the call left out (warp's `defaults`),
    /// each with the type of the constant the caller creates for it.
    pub defaults: &'static [(Type, ConstVal)],
    /// The arguments are passed as an initializer list (`f({a, b})`), and
    /// their adjoints as one of pointers (`adj_f({a, b}, {&adj_a, &adj_b}, adj_ret)`).
    pub initializer_list: bool,
}

/// No adjoint call (warp's `is_differentiable=False`).
pub const NODIFF: u16 = 1;
/// The adjoint takes the forward output (warp's `require_original_output_arg`).
pub const ORIG: u16 = 2;
/// Commented out in the replay of the forward pass (warp's `skip_replay`).
pub const SKIP_REPLAY: u16 = 4;
/// Called without the `wp::` namespace (warp's `namespace=""`).
pub const GLOBAL: u16 = 8;
/// Internal: not callable as `wp.NAME` (operators, indexing, `load`, ...).
pub const HIDDEN: u16 = 16;
/// Lowered by dedicated code (tiles, templated constants, several outputs):
/// the line records the builtin; its signature is documentation only.
pub const CUSTOM: u16 = 32;

/// One overload of a builtin: a line of the table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub name: &'static str,
    /// The C++ function called (warp's `native_func`).
    pub native: &'static str,
    pub sig: &'static str,
    pub flags: u16,
    /// warp's `dispatch_func`: from the return type, the C++ template arguments
    /// (appended to the native name) and whether the arguments are passed as
    /// an initializer list (`f<2, 3, T>({a, b})`).
    pub dispatch: Option<fn(Type) -> (String, bool)>,
}

const fn b(name: &'static str, sig: &'static str, flags: u16) -> Row {
    Row {
        name,
        native: name,
        sig,
        flags,
        dispatch: None,
    }
}

/// A line whose C++ function has another name than the builtin.
const fn nat(name: &'static str, native: &'static str, sig: &'static str, flags: u16) -> Row {
    Row {
        name,
        native,
        sig,
        flags,
        dispatch: None,
    }
}

/// A line whose call warp's `dispatch_func` shapes.
const fn dispatched(
    name: &'static str,
    sig: &'static str,
    flags: u16,
    dispatch: fn(Type) -> (String, bool),
) -> Row {
    Row {
        name,
        native: name,
        sig,
        flags,
        dispatch: Some(dispatch),
    }
}

/// `matrix_from_rows`/`_cols`: the shape is a template argument unless the
/// matrix is square of size 2 to 4; other shapes take their vectors as an
/// initializer list.
fn matrix_from_vecs(ret: Type) -> (String, bool) {
    match ret {
        Type::Matrix(r, c, s) if r == c && (2..=4).contains(&r) => {
            (format!("<{}>", s.ctype()), false)
        }
        Type::Matrix(r, c, s) => (format!("<{r}, {c}, {}>", s.ctype()), r != c || r > 4),
        _ => (String::new(), false),
    }
}

const UNARY: &str = "<T: Float>(x: T) -> T";
const BINARY_NUM: &str = "<T: Numeric>(a: T, b: T) -> T";
const BINARY_INT: &str = "<V: Int | Vector(_, Int) | Matrix(_, _, Int)>(a: V, b: V) -> V";
const FLOAT_ANY: &str = "(a: Float | Vector(_, Float) | Quat(Float) | Matrix(_, _, Float)) -> bool";
/// The atomic read-modify-write of an array element.
const ATOMIC_NUM: &str = "<V: Numeric | Vector(_, _) | Matrix(_, _, _) | Quat(_) | Transform(_)>(arr: AnyArray(V, D), i: Int*D, value: V) -> V";
const ATOMIC_MINMAX: &str = "<V: Numeric | Vector(_, Numeric) | Matrix(_, _, Numeric)>(arr: AnyArray(V, D), i: Int*D, value: V) -> V";
const ATOMIC_BITS: &str =
    "<V: Int | Vector(_, Int) | Matrix(_, _, Int)>(arr: AnyArray(V, D), i: Int*D, value: V) -> V";

/// Every builtin overload this lowering resolves, in warp's order per name.
pub static TABLE: &[Row] = &[
    // ---- math on scalars
    b("sin", UNARY, 0),
    b("cos", UNARY, 0),
    b("tan", UNARY, 0),
    b("asin", UNARY, 0),
    b("acos", UNARY, 0),
    b("atan", UNARY, 0),
    b("sinh", UNARY, 0),
    b("cosh", UNARY, 0),
    b("tanh", UNARY, ORIG),
    b("exp", UNARY, ORIG),
    b("log", UNARY, 0),
    b("log2", UNARY, 0),
    b("log10", UNARY, 0),
    b("sqrt", UNARY, ORIG),
    b("cbrt", UNARY, ORIG),
    b("floor", UNARY, NODIFF),
    b("ceil", UNARY, NODIFF),
    b("round", UNARY, NODIFF),
    b("trunc", UNARY, NODIFF),
    b("frac", UNARY, NODIFF),
    b("rint", UNARY, NODIFF),
    b("erf", UNARY, 0),
    b("erfc", UNARY, 0),
    b("erfinv", UNARY, ORIG),
    b("erfcinv", UNARY, ORIG),
    b("degrees", UNARY, 0),
    b("radians", UNARY, 0),
    b("isnan", FLOAT_ANY, NODIFF),
    b("isinf", FLOAT_ANY, NODIFF),
    b("isfinite", FLOAT_ANY, NODIFF),
    b("abs", "<V: Numeric | Vector(_, Numeric)>(x: V) -> V", 0),
    b(
        "sign",
        "<V: Numeric | Vector(_, Numeric)>(x: V) -> V",
        NODIFF,
    ),
    b("step", "<T: Numeric>(x: T) -> T", NODIFF),
    b("nonzero", "<T: Numeric>(x: T) -> T", NODIFF),
    b("neg", "<V: NumValue>(x: V) -> V", 0),
    b("pos", "<V: NumValue>(x: V) -> V", 0),
    b("add", "<V: NumValue>(a: V, b: V) -> V", 0),
    b("sub", "<V: NumValue>(a: V, b: V) -> V", 0),
    b("mul", BINARY_NUM, 0),
    b(
        "mul",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T)>(a: V, b: T) -> V",
        0,
    ),
    b(
        "mul",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T)>(a: T, b: V) -> V",
        0,
    ),
    b(
        "mul",
        "(a: Matrix(R, C, T), b: Vector(C, T)) -> Vector(R, T)",
        0,
    ),
    b(
        "mul",
        "(a: Vector(N, T), b: Matrix(N, C, T)) -> Vector(C, T)",
        0,
    ),
    b(
        "mul",
        "(a: Matrix(R, K, T), b: Matrix(K, C, T)) -> Matrix(R, C, T)",
        0,
    ),
    b("mul", "<Q: Quat(_)>(a: Q, b: Q) -> Q", 0),
    // Composition, and scaling (which leaves the quaternion unnormalized).
    b(
        "mul",
        "<T: Float>(a: Transform(T), b: Transform(T)) -> Transform(T)",
        0,
    ),
    b(
        "mul",
        "<T: Float>(a: T, b: Transform(T)) -> Transform(T)",
        0,
    ),
    b(
        "mul",
        "<T: Float>(a: Transform(T), b: T) -> Transform(T)",
        0,
    ),
    b("div", BINARY_NUM, ORIG),
    b(
        "div",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T)>(a: V, b: T) -> V",
        0,
    ),
    b(
        "div",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T)>(a: T, b: V) -> V",
        0,
    ),
    b("mod", BINARY_NUM, 0),
    b("mod", "<V: Vector(_, _)>(a: V, b: V) -> V", NODIFF),
    b("floordiv", BINARY_NUM, NODIFF),
    b(
        "min",
        "<V: Numeric | Vector(_, Numeric)>(a: V, b: V) -> V",
        0,
    ),
    b("min", "(a: Vector(_, T)) -> T", 0),
    b(
        "max",
        "<V: Numeric | Vector(_, Numeric)>(a: V, b: V) -> V",
        0,
    ),
    b("max", "(a: Vector(_, T)) -> T", 0),
    b("pow", "<T: Float>(x: T, y: T) -> T", ORIG),
    b("atan2", "<T: Float>(a: T, b: T) -> T", 0),
    b("bit_and", BINARY_INT, NODIFF),
    b("bit_or", BINARY_INT, NODIFF),
    b("bit_xor", BINARY_INT, NODIFF),
    b("lshift", BINARY_INT, NODIFF),
    b("rshift", BINARY_INT, NODIFF),
    b(
        "invert",
        "<V: Int | Vector(_, Int) | Matrix(_, _, Int)>(a: V) -> V",
        NODIFF,
    ),
    b("unot", "(a: Scalar) -> bool", NODIFF),
    b("unot", "(a: Array(_, _)) -> bool", NODIFF),
    b("clamp", "<T: Numeric>(x: T, a: T, b: T) -> T", 0),
    b(
        "lerp",
        "<T: Float, V: T | Vector(_, T) | Matrix(_, _, T) | Quat(T)>(a: V, b: V, t: T) -> V",
        0,
    ),
    b("where", "<V: Value>(cond: Int | bool, a: V, b: V) -> V", 0),
    // An array as the condition: whether it is not null (an optional input).
    b("where", "<V: Value>(arr: Array(_, _), a: V, b: V) -> V", 0),
    // A query of one kind stays that kind; two query kinds (or a kind and
    // its erased parent) merge to the parent, whose iteration dispatches on
    // the kind stored at run time.
    b("where", "<Q: Query>(cond: Int | bool, a: Q, b: Q) -> Q", 0),
    b(
        "where",
        "(cond: Int | bool, a: BvhQuery, b: BvhQuery) -> BvhQuery",
        0,
    ),
    b(
        "where",
        "(cond: Int | bool, a: MeshQuery, b: MeshQuery) -> MeshQuery",
        0,
    ),
    b("smoothstep", "<T: Float>(a: T, b: T, x: T) -> T", 0),
    nat(
        "div_approx",
        "approx_div",
        "<T: Float>(a: T, b: T) -> T",
        ORIG,
    ),
    nat(
        "div_approx",
        "approx_div",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T), T: Float>(a: V, b: T) -> V",
        0,
    ),
    nat(
        "div_approx",
        "approx_div",
        "<V: Vector(_, T) | Matrix(_, _, T) | Quat(T), T: Float>(a: T, b: V) -> V",
        0,
    ),
    // ---- vectors, matrices, quaternions
    b("dot", "<V: Vector(_, T) | Quat(T)>(a: V, b: V) -> T", 0),
    b("cross", "<V: Vector(3, _)>(a: V, b: V) -> V", 0),
    b("length", "<T: Float>(a: Vector(_, T) | Quat(T)) -> T", ORIG),
    b("length_sq", "(a: Vector(_, T) | Quat(T)) -> T", 0),
    b("normalize", "<V: Vector(_, Float)>(a: V) -> V", ORIG),
    b("normalize", "<Q: Quat(_)>(a: Q) -> Q", 0),
    b(
        "outer",
        "(a: Vector(N, T), b: Vector(M, T)) -> Matrix(N, M, T)",
        0,
    ),
    b("transpose", "(a: Matrix(R, C, T)) -> Matrix(C, R, T)", 0),
    b("determinant", "(a: Matrix(N, N, T)) -> T", 0),
    b("trace", "(a: Matrix(N, N, T)) -> T", 0),
    b("inverse", "<M: Matrix(N, N, _)>(a: M) -> M", ORIG),
    b("diag", "(a: Vector(N, T)) -> Matrix(N, N, T)", 0),
    b("skew", "(a: Vector(3, T)) -> Matrix(3, 3, T)", 0),
    b(
        "cw_mul",
        "<V: Vector(_, _) | Matrix(_, _, _)>(a: V, b: V) -> V",
        0,
    ),
    b(
        "cw_div",
        "<V: Vector(_, _) | Matrix(_, _, _)>(a: V, b: V) -> V",
        ORIG,
    ),
    b("ddot", "<M: Matrix(_, _, T)>(a: M, b: M) -> T", 0),
    b(
        "identity",
        "(n: int32, dtype: Float) -> Matrix(N, N, T)",
        NODIFF | CUSTOM,
    ),
    b(
        "quat_identity",
        "(dtype: Float) -> Quat(T)",
        NODIFF | CUSTOM,
    ),
    b(
        "quat_rotate",
        "(q: Quat(T), p: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "quat_rotate_inv",
        "(q: Quat(T), p: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b("quat_inverse", "<Q: Quat(_)>(q: Q) -> Q", 0),
    b(
        "quat_from_axis_angle",
        "(axis: Vector(3, T), angle: T) -> Quat(T)",
        0,
    ),
    b(
        "quat_rpy",
        "<T: Float>(roll: T, pitch: T, yaw: T) -> Quat(T)",
        0,
    ),
    b(
        "quat_from_matrix",
        "<T: Float>(mat: Matrix(3, 3, T) | Matrix(4, 4, T)) -> Quat(T)",
        0,
    ),
    b(
        "quat_to_matrix",
        "<T: Float>(quat: Quat(T)) -> Matrix(3, 3, T)",
        0,
    ),
    b(
        "quat_slerp",
        "<T: Float>(a: Quat(T), b: Quat(T), t: T) -> Quat(T)",
        ORIG,
    ),
    nat(
        "inverse_approx",
        "approx_inverse",
        "<M: Matrix(N, N, Float)>(a: M) -> M",
        ORIG,
    ),
    b(
        "quat_to_axis_angle",
        "<T: Float>(quat: Quat(T)) -> (Vector(3, T), T)",
        0,
    ),
    b(
        "quat_to_axis_angle",
        "<T: Float>(quat: Quat(T), axis: Vector(3, T), angle: T)",
        0,
    ),
    b(
        "svd3",
        "<T: Float>(a: Matrix(3, 3, T)) -> (Matrix(3, 3, T), Vector(3, T), Matrix(3, 3, T))",
        0,
    ),
    b(
        "svd3",
        "<T: Float>(a: Matrix(3, 3, T), u: Matrix(3, 3, T), sigma: Vector(3, T), v: Matrix(3, 3, T))",
        0,
    ),
    b(
        "svd2",
        "<T: Float>(a: Matrix(2, 2, T)) -> (Matrix(2, 2, T), Vector(2, T), Matrix(2, 2, T))",
        0,
    ),
    b(
        "svd2",
        "<T: Float>(a: Matrix(2, 2, T), u: Matrix(2, 2, T), sigma: Vector(2, T), v: Matrix(2, 2, T))",
        0,
    ),
    dispatched(
        "matrix_from_rows",
        "(rows: Vector(N, T)...) -> Matrix(#, N, T)",
        0,
        matrix_from_vecs,
    ),
    dispatched(
        "matrix_from_cols",
        "(cols: Vector(N, T)...) -> Matrix(N, #, T)",
        0,
        matrix_from_vecs,
    ),
    // ---- spatial vectors (6-D twists and wrenches)
    b(
        "spatial_adjoint",
        "<T: Float>(r: Matrix(3, 3, T), s: Matrix(3, 3, T)) -> Matrix(6, 6, T)",
        0,
    ),
    b(
        "spatial_dot",
        "<T: Float>(a: Vector(6, T), b: Vector(6, T)) -> T",
        0,
    ),
    b("spatial_cross", "<V: Vector(6, Float)>(a: V, b: V) -> V", 0),
    b(
        "spatial_cross_dual",
        "<V: Vector(6, Float)>(a: V, b: V) -> V",
        0,
    ),
    b(
        "spatial_top",
        "<T: Float>(svec: Vector(6, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "spatial_bottom",
        "<T: Float>(svec: Vector(6, T)) -> Vector(3, T)",
        0,
    ),
    b("argmin", "(a: Vector(_, Scalar)) -> uint32", NODIFF),
    b("argmax", "(a: Vector(_, Scalar)) -> uint32", NODIFF),
    // ---- components (indexing and assignment of vector, matrix, quaternion parts)
    b(
        "extract",
        "(a: Vector(_, T) | Quat(T) | Transform(T), i: Int) -> T",
        HIDDEN,
    ),
    b(
        "extract",
        "(a: Matrix(_, C, T), i: Int) -> Vector(C, T)",
        HIDDEN,
    ),
    b(
        "extract",
        "(a: Matrix(_, _, T), i: Int, j: Int) -> T",
        HIDDEN,
    ),
    b(
        "assign_inplace",
        "(a: Vector(_, T) | Quat(T) | Transform(T), i: Int, value: T)",
        HIDDEN,
    ),
    b(
        "assign_inplace",
        "(a: Matrix(_, C, T), i: Int, value: Vector(C, T))",
        HIDDEN,
    ),
    b(
        "assign_inplace",
        "(a: Matrix(_, _, T), i: Int, j: Int, value: T)",
        HIDDEN,
    ),
    b(
        "add_inplace",
        "(a: Vector(_, T) | Quat(T) | Transform(T), i: Int, value: T)",
        HIDDEN,
    ),
    b(
        "add_inplace",
        "(a: Matrix(_, C, T), i: Int, value: Vector(C, T))",
        HIDDEN,
    ),
    b(
        "add_inplace",
        "(a: Matrix(_, _, T), i: Int, j: Int, value: T)",
        HIDDEN,
    ),
    b(
        "sub_inplace",
        "(a: Vector(_, T) | Quat(T) | Transform(T), i: Int, value: T)",
        HIDDEN,
    ),
    b(
        "sub_inplace",
        "(a: Matrix(_, C, T), i: Int, value: Vector(C, T))",
        HIDDEN,
    ),
    b(
        "sub_inplace",
        "(a: Matrix(_, _, T), i: Int, j: Int, value: T)",
        HIDDEN,
    ),
    // ---- transforms
    b(
        "transform_get_translation",
        "<T: Float>(xform: Transform(T)) -> Vector(3, T)",
        0,
    ),
    b(
        "transform_get_rotation",
        "<T: Float>(xform: Transform(T)) -> Quat(T)",
        0,
    ),
    b(
        "transform_set_translation",
        "<T: Float>(xform: Transform(T), p: Vector(3, T))",
        0,
    ),
    b(
        "transform_set_rotation",
        "<T: Float>(xform: Transform(T), q: Quat(T))",
        0,
    ),
    b(
        "transform_identity",
        "(dtype: Float) -> Transform(T)",
        NODIFF | CUSTOM,
    ),
    b(
        "transform_multiply",
        "<T: Float>(a: Transform(T), b: Transform(T)) -> Transform(T)",
        0,
    ),
    b(
        "transform_point",
        "<T: Float>(xform: Transform(T), point: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "transform_point",
        "<T: Float>(mat: Matrix(4, 4, T), point: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "transform_vector",
        "<T: Float>(xform: Transform(T), vec: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "transform_vector",
        "<T: Float>(mat: Matrix(4, 4, T), vec: Vector(3, T)) -> Vector(3, T)",
        0,
    ),
    b(
        "transform_inverse",
        "<T: Float>(xform: Transform(T)) -> Transform(T)",
        0,
    ),
    // The constructor under its builtin's name, and a bit cast (adjoint.rs).
    b(
        "transformation",
        "(p: Vector(3, T), q: Quat(T), dtype: Float) -> Transform(T)",
        CUSTOM,
    ),
    b("cast", "(a: Any, dtype: Any) -> Any", NODIFF | CUSTOM),
    // ---- values, references, loops
    b("copy", "(a: V) -> V", HIDDEN),
    b("load", "(a: V) -> V", NODIFF | HIDDEN),
    b("assign", "(dest: V, src: V)", HIDDEN),
    b("range", "(end: int32) -> range", NODIFF | HIDDEN),
    b(
        "range",
        "(start: int32, end: int32) -> range",
        NODIFF | HIDDEN,
    ),
    b(
        "range",
        "(start: int32, end: int32, step: int32) -> range",
        NODIFF | HIDDEN,
    ),
    b("iter_next", "(r: range) -> int32", NODIFF | HIDDEN),
    nat("tid", "builtin_tid1d", "() -> int32", GLOBAL | NODIFF),
    // ---- arrays
    b(
        "address",
        "(arr: AnyArray(V, D), i: Int*D) -> Ref(V)",
        HIDDEN,
    ),
    b(
        "array_store",
        "(arr: AnyArray(V, D), i: Int*D, value: V)",
        SKIP_REPLAY | HIDDEN,
    ),
    b("atomic_add", ATOMIC_NUM, SKIP_REPLAY),
    b("atomic_sub", ATOMIC_NUM, SKIP_REPLAY),
    b("atomic_min", ATOMIC_MINMAX, SKIP_REPLAY),
    b("atomic_max", ATOMIC_MINMAX, SKIP_REPLAY),
    b("atomic_and", ATOMIC_BITS, SKIP_REPLAY | NODIFF),
    b("atomic_or", ATOMIC_BITS, SKIP_REPLAY | NODIFF),
    b("atomic_xor", ATOMIC_BITS, SKIP_REPLAY | NODIFF),
    b(
        "atomic_exch",
        "<V: Value>(arr: AnyArray(V, D), i: Int*D, value: V) -> V",
        SKIP_REPLAY | NODIFF,
    ),
    b(
        "atomic_cas",
        "<V: Value>(arr: AnyArray(V, D), i: Int*D, compare: V, value: V) -> V",
        SKIP_REPLAY | NODIFF,
    ),
    b("len", "(a: Array(_, _)) -> int32", NODIFF),
    // Views and shapes: the result depends on how many indices are integers
    // (resolved by `resolve_shaped` below; the lines record the builtins).
    b(
        "view",
        "(arr: AnyArray(V, D), i: _) -> Array(V, _)",
        HIDDEN | CUSTOM,
    ),
    b(
        "extract",
        "(shape: _, i: Int) -> int32",
        NODIFF | HIDDEN | CUSTOM,
    ),
    nat(
        "reversed",
        "iter_reverse",
        "(r: range) -> range",
        NODIFF | HIDDEN,
    ),
    // Bitwise in-place updates of integer vector components.
    b(
        "bit_and_inplace",
        "<T: Int>(a: Vector(_, T), i: Int, value: T)",
        NODIFF | HIDDEN,
    ),
    b(
        "bit_or_inplace",
        "<T: Int>(a: Vector(_, T), i: Int, value: T)",
        NODIFF | HIDDEN,
    ),
    b(
        "bit_xor_inplace",
        "<T: Int>(a: Vector(_, T), i: Int, value: T)",
        NODIFF | HIDDEN,
    ),
    // The length of a vector, quaternion or matrix is a constant (adjoint.rs).
    b(
        "len",
        "(a: Vector(_, _) | Quat(_) | Matrix(_, _, _)) -> int32",
        NODIFF | CUSTOM,
    ),
    b(
        "lower_bound",
        "<T: Scalar>(arr: Array(T, 1), value: T) -> int32",
        NODIFF,
    ),
    b(
        "lower_bound",
        "<T: Scalar>(arr: Array(T, 1), arr_begin: int32, arr_end: int32, value: T) -> int32",
        NODIFF,
    ),
    // ---- utilities
    b("expect_eq", "<V: Value>(a: V, b: V)", NODIFF),
    b("expect_neq", "<V: Value>(a: V, b: V)", NODIFF),
    b(
        "expect_near",
        "<T: Float>(a: T, b: T, tolerance: T = 1e-6)",
        NODIFF,
    ),
    b(
        "expect_near",
        "<T: Float, V: Vector(_, T) | Quat(T) | Matrix(_, _, T)>(a: V, b: V, tolerance: T = 1e-6)",
        NODIFF,
    ),
    b("print", "(value: Any)", 0),
    nat(
        "printf",
        "printf",
        "(fmt: str, args: Any...)",
        GLOBAL | NODIFF,
    ),
    nat(
        "block_dim",
        "builtin_block_dim",
        "() -> int32",
        GLOBAL | NODIFF,
    ),
    // ---- random numbers and noise
    b("rand_init", "(seed: int32) -> uint32", NODIFF),
    b(
        "rand_init",
        "(seed: int32, offset: int32) -> uint32",
        NODIFF,
    ),
    b("randi", "(state: uint32) -> int32", NODIFF),
    b(
        "randi",
        "(state: uint32, low: int32, high: int32) -> int32",
        NODIFF,
    ),
    b("randu", "(state: uint32) -> uint32", NODIFF),
    b(
        "randu",
        "(state: uint32, low: uint32, high: uint32) -> uint32",
        NODIFF,
    ),
    b("randf", "(state: uint32) -> float32", NODIFF),
    b(
        "randf",
        "(state: uint32, low: float32, high: float32) -> float32",
        NODIFF,
    ),
    b("randn", "(state: uint32) -> float32", NODIFF),
    b(
        "sample_cdf",
        "(state: uint32, cdf: Array(float32, 1)) -> int32",
        NODIFF,
    ),
    b("sample_triangle", "(state: uint32) -> vec2f", NODIFF),
    b("sample_unit_ring", "(state: uint32) -> vec2f", NODIFF),
    b("sample_unit_disk", "(state: uint32) -> vec2f", NODIFF),
    b(
        "sample_unit_sphere_surface",
        "(state: uint32) -> vec3f",
        NODIFF,
    ),
    b("sample_unit_sphere", "(state: uint32) -> vec3f", NODIFF),
    b(
        "sample_unit_hemisphere_surface",
        "(state: uint32) -> vec3f",
        NODIFF,
    ),
    b("sample_unit_hemisphere", "(state: uint32) -> vec3f", NODIFF),
    b("sample_unit_square", "(state: uint32) -> vec2f", NODIFF),
    b("sample_unit_cube", "(state: uint32) -> vec3f", NODIFF),
    b("poisson", "(state: uint32, lam: float32) -> uint32", NODIFF),
    b(
        "noise",
        "(state: uint32, x: float32 | vec2f | vec3f | vec4f) -> float32",
        0,
    ),
    b(
        "pnoise",
        "(state: uint32, x: float32, px: int32) -> float32",
        0,
    ),
    b(
        "pnoise",
        "(state: uint32, xy: vec2f, px: int32, py: int32) -> float32",
        0,
    ),
    b(
        "pnoise",
        "(state: uint32, xyz: vec3f, px: int32, py: int32, pz: int32) -> float32",
        0,
    ),
    b(
        "pnoise",
        "(state: uint32, xyzt: vec4f, px: int32, py: int32, pz: int32, pt: int32) -> float32",
        0,
    ),
    b(
        "curlnoise",
        "(state: uint32, xy: vec2f, octaves: uint32 = uint32(1), lacunarity: float32 = 2.0, gain: float32 = 0.5) -> vec2f",
        0,
    ),
    b(
        "curlnoise",
        "(state: uint32, xyz: vec3f | vec4f, octaves: uint32 = uint32(1), lacunarity: float32 = 2.0, gain: float32 = 0.5) -> vec3f",
        0,
    ),
    // ---- geometry
    b(
        "hash_grid_point_id",
        "(id: uint64, index: int32) -> int32",
        NODIFF,
    ),
    // Hash grids: `for index in wp.hash_grid_query(...)` iterates (iter_next below).
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3f, max_dist: float32) -> HashGridQuery",
        NODIFF,
    ),
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3f, max_dist: float32, group: int32) -> HashGridQuery",
        NODIFF,
    ),
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3h, max_dist: float16) -> HashGridQueryH",
        NODIFF,
    ),
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3h, max_dist: float16, group: int32) -> HashGridQueryH",
        NODIFF,
    ),
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3d, max_dist: float64) -> HashGridQueryD",
        NODIFF,
    ),
    b(
        "hash_grid_query",
        "(id: uint64, point: vec3d, max_dist: float64, group: int32) -> HashGridQueryD",
        NODIFF,
    ),
    b(
        "hash_grid_query_next",
        "(query: HashGridQuery | HashGridQueryH | HashGridQueryD, index: int32) -> bool",
        NODIFF,
    ),
    b(
        "iter_next",
        "(query: HashGridQuery | HashGridQueryH | HashGridQueryD | MeshQuery) -> int32",
        NODIFF | HIDDEN,
    ),
    // Meshes. The overloads with trailing output arguments write the result
    // into the caller's variables; the others return a query struct.
    b("mesh_get_bvh", "(id: uint64) -> uint64", NODIFF),
    b(
        "mesh_get_group_root",
        "(id: uint64, group: int32) -> int32",
        NODIFF,
    ),
    b(
        "mesh_get_point",
        "(id: uint64, index: int32) -> vec3f",
        NODIFF,
    ),
    b(
        "mesh_get_velocity",
        "(id: uint64, index: int32) -> vec3f",
        NODIFF,
    ),
    b(
        "mesh_get_index",
        "(id: uint64, index: int32) -> int32",
        NODIFF,
    ),
    b(
        "mesh_eval_face_normal",
        "(id: uint64, face: int32) -> vec3f",
        NODIFF,
    ),
    b(
        "mesh_eval_position",
        "(id: uint64, face: int32, bary_u: float32, bary_v: float32) -> vec3f",
        0,
    ),
    b(
        "mesh_eval_velocity",
        "(id: uint64, face: int32, bary_u: float32, bary_v: float32) -> vec3f",
        0,
    ),
    b(
        "mesh_query_point",
        "(id: uint64, point: vec3f, max_dist: float32, inside: float32, face: int32, bary_u: float32, bary_v: float32) -> bool",
        0,
    ),
    b(
        "mesh_query_point",
        "(id: uint64, point: vec3f, max_dist: float32) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_point_no_sign",
        "(id: uint64, point: vec3f, max_dist: float32, face: int32, bary_u: float32, bary_v: float32) -> bool",
        0,
    ),
    b(
        "mesh_query_point_no_sign",
        "(id: uint64, point: vec3f, max_dist: float32) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_furthest_point_no_sign",
        "(id: uint64, point: vec3f, min_dist: float32, face: int32, bary_u: float32, bary_v: float32) -> bool",
        0,
    ),
    b(
        "mesh_query_furthest_point_no_sign",
        "(id: uint64, point: vec3f, min_dist: float32) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_point_sign_normal",
        "(id: uint64, point: vec3f, max_dist: float32, inside: float32, face: int32, bary_u: float32, bary_v: float32, epsilon: float32 = 0.001) -> bool",
        0,
    ),
    b(
        "mesh_query_point_sign_normal",
        "(id: uint64, point: vec3f, max_dist: float32, epsilon: float32 = 0.001) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_point_sign_parity",
        "(id: uint64, point: vec3f, max_dist: float32, inside: float32, face: int32, bary_u: float32, bary_v: float32, n_sample: int32 = 1, perturbation_scale: float32 = 0.1) -> bool",
        0,
    ),
    b(
        "mesh_query_point_sign_parity",
        "(id: uint64, point: vec3f, max_dist: float32, n_sample: int32 = 1, perturbation_scale: float32 = 0.1) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_point_sign_winding_number",
        "(id: uint64, point: vec3f, max_dist: float32, inside: float32, face: int32, bary_u: float32, bary_v: float32, accuracy: float32 = 2.0, threshold: float32 = 0.5) -> bool",
        0,
    ),
    b(
        "mesh_query_point_sign_winding_number",
        "(id: uint64, point: vec3f, max_dist: float32, accuracy: float32 = 2.0, threshold: float32 = 0.5) -> MeshQueryPoint",
        ORIG,
    ),
    b(
        "mesh_query_ray",
        "(id: uint64, start: vec3f, dir: vec3f, max_t: float32, t: float32, bary_u: float32, bary_v: float32, sign: float32, normal: vec3f, face: int32, root: int32 = -1) -> bool",
        0,
    ),
    b(
        "mesh_query_ray",
        "(id: uint64, start: vec3f, dir: vec3f, max_t: float32, root: int32 = -1) -> MeshQueryRay",
        ORIG,
    ),
    b(
        "mesh_query_ray_anyhit",
        "(id: uint64, start: vec3f, dir: vec3f, max_t: float32, root: int32 = -1) -> bool",
        NODIFF,
    ),
    b(
        "mesh_query_ray_count_intersections",
        "(id: uint64, start: vec3f, dir: vec3f, root: int32 = -1) -> int32",
        NODIFF,
    ),
    b(
        "mesh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f) -> MeshQueryAABB",
        NODIFF,
    ),
    b(
        "mesh_query_sphere",
        "(id: uint64, center: vec3f, radius: float32) -> MeshQuerySphere",
        NODIFF,
    ),
    b(
        "mesh_query_aabb_next",
        "(query: MeshQueryAABB, index: int32) -> bool",
        NODIFF,
    ),
    nat(
        "mesh_query_aabb_next",
        "mesh_query_sphere_next",
        "(query: MeshQuerySphere, index: int32) -> bool",
        NODIFF,
    ),
    nat(
        "mesh_query_aabb_next",
        "mesh_query_next_dynamic",
        "(query: MeshQuery, index: int32) -> bool",
        NODIFF,
    ),
    nat(
        "mesh_query_next",
        "mesh_query_aabb_next",
        "(query: MeshQueryAABB, index: int32) -> bool",
        NODIFF,
    ),
    nat(
        "mesh_query_next",
        "mesh_query_sphere_next",
        "(query: MeshQuerySphere, index: int32) -> bool",
        NODIFF,
    ),
    nat(
        "mesh_query_next",
        "mesh_query_next_dynamic",
        "(query: MeshQuery, index: int32) -> bool",
        NODIFF,
    ),
    // Block-wide queries: each `_next` gives a tile of one hit (or -1) per
    // thread (its tile type is set in `resolve_shaped`).
    b(
        "tile_mesh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f) -> MeshQueryAABBTiled",
        NODIFF,
    ),
    b(
        "tile_mesh_query_aabb_next",
        "(query: MeshQueryAABBTiled) -> Any",
        NODIFF | CUSTOM,
    ),
    b(
        "tile_bvh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f) -> BvhQueryTiled",
        NODIFF,
    ),
    b(
        "tile_bvh_query_ray",
        "(id: uint64, start: vec3f, dir: vec3f) -> BvhQueryTiled",
        NODIFF,
    ),
    b(
        "tile_bvh_query_next",
        "(query: BvhQueryTiled) -> Any",
        NODIFF | CUSTOM,
    ),
    // warp's deprecated names of the block-wide queries (1.18), the same calls.
    nat(
        "mesh_query_aabb_tiled",
        "tile_mesh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f) -> MeshQueryAABBTiled",
        NODIFF,
    ),
    b(
        "mesh_query_aabb_next_tiled",
        "(query: MeshQueryAABBTiled) -> Any",
        NODIFF | CUSTOM,
    ),
    nat(
        "bvh_query_aabb_tiled",
        "tile_bvh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f) -> BvhQueryTiled",
        NODIFF,
    ),
    nat(
        "bvh_query_ray_tiled",
        "tile_bvh_query_ray",
        "(id: uint64, start: vec3f, dir: vec3f) -> BvhQueryTiled",
        NODIFF,
    ),
    b(
        "bvh_query_next_tiled",
        "(query: BvhQueryTiled) -> Any",
        NODIFF | CUSTOM,
    ),
    b(
        "tile_query_valid",
        "(query: BvhQueryTiled | MeshQueryAABBTiled) -> bool",
        NODIFF,
    ),
    // BVHs: `while wp.bvh_query_next(query, index)` walks the hits.
    b(
        "bvh_get_group_root",
        "(id: uint64, group: int32) -> int32",
        NODIFF,
    ),
    b(
        "bvh_query_aabb",
        "(id: uint64, low: vec3f, high: vec3f, root: int32 = -1) -> BvhQueryAabb",
        NODIFF,
    ),
    b(
        "bvh_query_ray",
        "(id: uint64, start: vec3f, dir: vec3f, root: int32 = -1) -> BvhQueryRay",
        NODIFF,
    ),
    b(
        "bvh_query_sphere",
        "(id: uint64, center: vec3f, radius: float32, root: int32 = -1) -> BvhQuerySphere",
        NODIFF,
    ),
    b(
        "bvh_query_capsule",
        "(id: uint64, start: vec3f, dir: vec3f, radius: float32, root: int32 = -1) -> BvhQueryCapsule",
        NODIFF,
    ),
    b(
        "bvh_query_next",
        "(query: BvhQueryAabb, index: int32, max_dist: float32 = inf) -> bool",
        NODIFF,
    ),
    nat(
        "bvh_query_next",
        "bvh_query_ray_next",
        "(query: BvhQueryRay, index: int32, max_dist: float32 = inf) -> bool",
        NODIFF,
    ),
    nat(
        "bvh_query_next",
        "bvh_query_capsule_next",
        "(query: BvhQueryCapsule, index: int32, max_dist: float32 = inf) -> bool",
        NODIFF,
    ),
    nat(
        "bvh_query_next",
        "bvh_query_sphere_next",
        "(query: BvhQuerySphere, index: int32, max_dist: float32 = inf) -> bool",
        NODIFF,
    ),
    nat(
        "bvh_query_next",
        "bvh_query_next_dynamic",
        "(query: BvhQuery, index: int32, max_dist: float32 = inf) -> bool",
        NODIFF,
    ),
    b(
        "closest_point_edge_edge",
        "(p1: vec3f, q1: vec3f, p2: vec3f, q2: vec3f, epsilon: float32) -> vec3f",
        0,
    ),
    b(
        "intersect_tri_tri",
        "<V: vec3f | vec3d>(v0: V, v1: V, v2: V, u0: V, u1: V, u2: V) -> int32",
        NODIFF,
    ),
    // Volumes (NanoVDB grids); `wp.Volume.CLOSEST` / `LINEAR` are the sampling modes.
    b(
        "volume_sample_f",
        "(id: uint64, uvw: vec3f, sampling_mode: int32) -> float32",
        0,
    ),
    b(
        "volume_sample_grad_f",
        "(id: uint64, uvw: vec3f, sampling_mode: int32, grad: vec3f) -> float32",
        0,
    ),
    b(
        "volume_sample_v",
        "(id: uint64, uvw: vec3f, sampling_mode: int32) -> vec3f",
        0,
    ),
    b(
        "volume_sample_i",
        "(id: uint64, uvw: vec3f) -> int32",
        NODIFF,
    ),
    b(
        "volume_lookup_f",
        "(id: uint64, i: int32, j: int32, k: int32) -> float32",
        NODIFF,
    ),
    b(
        "volume_lookup_v",
        "(id: uint64, i: int32, j: int32, k: int32) -> vec3f",
        NODIFF,
    ),
    b(
        "volume_lookup_i",
        "(id: uint64, i: int32, j: int32, k: int32) -> int32",
        NODIFF,
    ),
    b(
        "volume_lookup_index",
        "(id: uint64, i: int32, j: int32, k: int32) -> int32",
        NODIFF,
    ),
    b(
        "volume_store_f",
        "(id: uint64, i: int32, j: int32, k: int32, value: float32)",
        NODIFF,
    ),
    b(
        "volume_store_v",
        "(id: uint64, i: int32, j: int32, k: int32, value: vec3f)",
        NODIFF,
    ),
    b(
        "volume_store_i",
        "(id: uint64, i: int32, j: int32, k: int32, value: int32)",
        NODIFF,
    ),
    // The typed forms: `dtype=` (a type, see DTYPE_ARGUMENT) is left out of the signature.
    b(
        "volume_sample",
        "(id: uint64, uvw: vec3f, sampling_mode: int32)",
        0,
    ),
    b(
        "volume_sample_grad",
        "<G: Vector(3, _) | Matrix(_, 3, _)>(id: uint64, uvw: vec3f, sampling_mode: int32, grad: G)",
        0,
    ),
    b(
        "volume_lookup",
        "(id: uint64, i: int32, j: int32, k: int32)",
        NODIFF,
    ),
    b(
        "volume_store",
        "<V: int32 | int64 | uint32 | float32 | float64 | vec3f | vec3d | vec4f | vec4d>(id: uint64, i: int32, j: int32, k: int32, value: V)",
        NODIFF,
    ),
    b("volume_voxel_count", "(id: uint64) -> int32", NODIFF),
    b("mesh_get", "(id: uint64) -> Mesh", NODIFF),
    // Textures (`wp.Texture1D` ... `Texture3D` kernel arguments); `dtype=` as for volumes.
    b(
        "texture_sample",
        "(tex: Texture1D, u: float32, lod: float32 = -1.0)",
        0,
    ),
    b(
        "texture_sample",
        "(tex: Texture2D, uv: vec2f, lod: float32 = -1.0)",
        0,
    ),
    b(
        "texture_sample",
        "(tex: Texture2D, u: float32, v: float32, lod: float32 = -1.0)",
        0,
    ),
    b(
        "texture_sample",
        "(tex: Texture3D, uvw: vec3f, lod: float32 = -1.0)",
        0,
    ),
    b(
        "texture_sample",
        "(tex: Texture3D, u: float32, v: float32, w: float32, lod: float32 = -1.0)",
        0,
    ),
    b(
        "volume_index_to_world",
        "<V: vec3f | vec3d>(id: uint64, uvw: V) -> V",
        0,
    ),
    b(
        "volume_world_to_index",
        "<V: vec3f | vec3d>(id: uint64, xyz: V) -> V",
        0,
    ),
    b(
        "volume_index_to_world_dir",
        "<V: vec3f | vec3d>(id: uint64, uvw: V) -> V",
        0,
    ),
    b(
        "volume_world_to_index_dir",
        "<V: vec3f | vec3d>(id: uint64, xyz: V) -> V",
        0,
    ),
    // ---- dense linear algebra on flat float32 arrays
    b(
        "dense_gemm",
        "(m: int32, n: int32, p: int32, t1: int32, t2: int32, A: Array(float32, 1), B: Array(float32, 1), C: Array(float32, 1))",
        0,
    ),
    b(
        "dense_gemm_batched",
        "(m: Array(int32, 1), n: Array(int32, 1), p: Array(int32, 1), t1: int32, t2: int32, A_start: Array(int32, 1), B_start: Array(int32, 1), C_start: Array(int32, 1), A: Array(float32, 1), B: Array(float32, 1), C: Array(float32, 1))",
        NODIFF,
    ),
    b(
        "dense_chol",
        "(n: int32, A: Array(float32, 1), regularization: float32, L: Array(float32, 1))",
        NODIFF,
    ),
    b(
        "dense_chol_batched",
        "(A_start: Array(int32, 1), A_dim: Array(int32, 1), A: Array(float32, 1), regularization: float32, L: Array(float32, 1))",
        NODIFF,
    ),
    b(
        "dense_subs",
        "(n: int32, L: Array(float32, 1), b: Array(float32, 1), x: Array(float32, 1))",
        NODIFF,
    ),
    b(
        "dense_solve",
        "(n: int32, A: Array(float32, 1), L: Array(float32, 1), b: Array(float32, 1), x: Array(float32, 1))",
        0,
    ),
    b(
        "dense_solve_batched",
        "(b_start: Array(int32, 1), A_start: Array(int32, 1), A_dim: Array(int32, 1), A: Array(float32, 1), L: Array(float32, 1), b: Array(float32, 1), x: Array(float32, 1))",
        NODIFF,
    ),
    // ---- casts: the native function is the name called
    b("float", "(a: Scalar) -> float32", 0),
    b("int", "(a: Scalar) -> int32", NODIFF),
    nat("bool", "bool", "(a: Scalar) -> bool", GLOBAL | NODIFF),
    b("int8", "(a: Scalar) -> int8", NODIFF),
    b("int16", "(a: Scalar) -> int16", NODIFF),
    b("int32", "(a: Scalar) -> int32", NODIFF),
    b("int64", "(a: Scalar) -> int64", NODIFF),
    b("uint8", "(a: Scalar) -> uint8", NODIFF),
    b("uint16", "(a: Scalar) -> uint16", NODIFF),
    b("uint32", "(a: Scalar) -> uint32", NODIFF),
    b("uint64", "(a: Scalar) -> uint64", NODIFF),
    b("float16", "(a: Scalar) -> float16", 0),
    b("float32", "(a: Scalar) -> float32", 0),
    b("float64", "(a: Scalar) -> float64", 0),
    b("bfloat16", "(a: Scalar) -> bfloat16", 0),
    // ---- tiles (lowered by tile.rs)
    b("tile_load", "", CUSTOM),
    b("tile_store", "", CUSTOM),
    b("tile_atomic_add", "", CUSTOM),
    b("tile_zeros", "", CUSTOM),
    b("tile_ones", "", CUSTOM),
    b("tile_empty", "", CUSTOM),
    b("tile_arange", "", NODIFF | CUSTOM),
    b("tile_cholesky", "", CUSTOM),
    b("tile_cholesky_inplace", "", NODIFF | CUSTOM),
    b("tile_cholesky_solve", "", NODIFF | CUSTOM),
    b("tile_cholesky_solve_inplace", "", NODIFF | CUSTOM),
    b("tile_lower_solve", "", CUSTOM),
    b("tile_lower_solve_inplace", "", NODIFF | CUSTOM),
    b("tile_upper_solve", "", NODIFF | CUSTOM),
    b("tile_upper_solve_inplace", "", NODIFF | CUSTOM),
    b("tile_diag_add", "", NODIFF | CUSTOM),
    b("tile_sum", "", CUSTOM),
    b("tile_max", "", CUSTOM),
    b("tile_min", "", CUSTOM),
    b("tile_argmax", "", NODIFF | CUSTOM),
    b("tile_full", "", NODIFF | CUSTOM),
    b("tile_from_thread", "", NODIFF | CUSTOM),
    b("tile_randi", "", NODIFF | CUSTOM),
    b("tile_randf", "", NODIFF | CUSTOM),
    // Block-wide stacks: `wp.tile_stack(capacity=, dtype=)` makes one (dedicated lowering).
    b("tile_stack", "", NODIFF | CUSTOM),
    b("tile_sort", "", NODIFF | CUSTOM),
    b(
        "tile_stack_push",
        "(s: TileStack(V), value: V, has_value: bool) -> int32",
        NODIFF,
    ),
    b("tile_stack_pop", "(s: TileStack(V)) -> (V, int32)", NODIFF),
    b("tile_stack_clear", "(s: TileStack(_))", NODIFF),
    b("tile_stack_count", "(s: TileStack(_)) -> int32", NODIFF),
    b("tile_load_indexed", "", CUSTOM),
    b("tile_store_indexed", "", SKIP_REPLAY | CUSTOM),
    b("tile_atomic_add_indexed", "", SKIP_REPLAY | CUSTOM),
    b("tile_extract", "", CUSTOM),
    b("tile_argmin", "", NODIFF | CUSTOM),
    b("tile_scan_inclusive", "", NODIFF | CUSTOM),
    b("tile_scan_exclusive", "", NODIFF | CUSTOM),
    b("tile_scan_max_inclusive", "", NODIFF | CUSTOM),
    b("tile_scan_min_inclusive", "", NODIFF | CUSTOM),
    b("tile_reduce", "", CUSTOM),
    b("tile_map", "", CUSTOM),
    b("tile_matmul", "", CUSTOM),
    b("tile_transpose", "", CUSTOM),
    b("tile_view", "", NODIFF | CUSTOM),
    b("tile_squeeze", "", CUSTOM),
    b("tile_reshape", "", CUSTOM),
    b("tile_broadcast", "", CUSTOM),
    b("tile_assign", "", CUSTOM),
    b("tile_slice_indexed", "", CUSTOM),
    b("tile_scatter_add", "", CUSTOM),
    b("tile", "", CUSTOM),
    b("untile", "", CUSTOM),
    b("tile_fft", "", CUSTOM),
    b("tile_ifft", "", CUSTOM),
];

/// The builtins whose `dtype=` argument is a type (warp's `dispatch_func`s
/// of volume and texture sampling): their lines above leave it out; the call
/// passes it as the C++ template argument and returns a value of it. With
/// the types each accepts, by name or by spelling (warp checks textures
/// against Python's `float` itself, volumes by type).
const DTYPE_ARGUMENT: &[(&str, &[&str])] = &[
    ("volume_sample", VOLUME_TYPES),
    ("volume_sample_grad", VOLUME_TYPES),
    ("volume_lookup", VOLUME_TYPES),
    (
        "texture_sample",
        &[
            "float",
            "wp::vec_t<2, wp::float32>",
            "wp::vec_t<4, wp::float32>",
        ],
    ),
];

const VOLUME_TYPES: &[&str] = &[
    "int32", "int64", "uint32", "float32", "float64", "vec3f", "vec3d", "vec4f", "vec4d",
];

/// The types (names or spellings) `dtype=` may name in a call of builtin
/// `name`, if its `dtype` is a type argument.
pub fn dtype_argument(name: &str) -> Option<&'static [&'static str]> {
    DTYPE_ARGUMENT
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, allowed)| *allowed)
}

// ------------------------------------------------------------------ engine

/// Variables one signature may use.
const MAX_VARS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Bind {
    Free,
    Ty(Type),
    Dim(u8),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Any,
    /// Scalars, vectors, matrices, quaternions.
    Value,
    /// A value whose components are not `bool`.
    NumValue,
    Scalar,
    Numeric,
    Float,
    Int,
    Str,
    /// A query object (`wp.bvh_query_ray(...)`, ...).
    Query,
}

impl Class {
    fn accepts(self, t: &Type) -> bool {
        match self {
            Class::Any => true,
            Class::Value => t.value().is_some(),
            Class::NumValue => t.value().is_some_and(|v| v.dtype() != Scalar::Bool),
            Class::Scalar => matches!(t, Type::Scalar(_)),
            Class::Numeric => matches!(t, Type::Scalar(s) if *s != Scalar::Bool),
            Class::Float => matches!(t, Type::Scalar(s) if s.is_float()),
            Class::Int => matches!(t, Type::Scalar(s) if s.is_int()),
            Class::Str => matches!(t, Type::Str(_)),
            Class::Query => matches!(t, Type::Query(_)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dim {
    Any,
    Lit(u8),
    Var(u8),
}

#[derive(Debug, Clone, PartialEq)]
enum Pat {
    Var(u8),
    Class(Class),
    Exact(Type),
    Vector(Dim, Box<Pat>),
    Matrix(Dim, Dim, Box<Pat>),
    Quat(Box<Pat>),
    Transform(Box<Pat>),
    /// An array; `true`: of any family (indexed, fabric, ...), else a
    /// `wp.array` (a fixed-size array is one).
    Array(Box<Pat>, Dim, bool),
    Ref(Box<Pat>),
    /// A query object of this kind, or a concrete kind of it.
    Query(Query),
    /// A tile stack of elements of this pattern (any capacity).
    TileStack(Box<Pat>),
    Alt(Vec<Pat>),
}

#[derive(Debug, Clone, PartialEq)]
struct Arg {
    /// warp's parameter name (for keyword arguments).
    name: String,
    pat: Pat,
    /// `Int*D`: as many arguments as the dimension variable says.
    repeat: Option<u8>,
    /// `X...`: every remaining argument.
    variadic: bool,
    /// Index of its default value in [`Sig::defaults`] (trailing arguments only).
    default: Option<u8>,
}

#[derive(Debug, Clone, PartialEq)]
struct Sig {
    /// Constraint of each variable, by index.
    constraints: Vec<Option<Pat>>,
    args: Vec<Arg>,
    /// None: a void builtin (or one with several outputs).
    ret: Option<Pat>,
    /// `-> (A, B)`: several outputs, which the C++ function takes as trailing
    /// arguments (`axis, angle = wp.quat_to_axis_angle(q)`).
    outputs: Vec<Pat>,
    defaults: Vec<(Type, ConstVal)>,
    /// The variable `#`: how many arguments the variadic one took.
    count_var: Option<u8>,
}

fn match_dim(d: Dim, n: u8, b: &mut [Bind; MAX_VARS]) -> bool {
    match d {
        Dim::Any => true,
        Dim::Lit(k) => k == n,
        Dim::Var(i) => match b[i as usize] {
            Bind::Free => {
                b[i as usize] = Bind::Dim(n);
                true
            }
            Bind::Dim(k) => k == n,
            Bind::Ty(_) => false,
        },
    }
}

impl Sig {
    fn match_pat(&self, p: &Pat, t: &Type, b: &mut [Bind; MAX_VARS]) -> bool {
        match p {
            Pat::Var(i) => match b[*i as usize] {
                Bind::Ty(bound) => bound == *t,
                Bind::Dim(_) => false,
                Bind::Free => {
                    if let Some(c) = &self.constraints[*i as usize] {
                        if !self.match_pat(c, t, b) {
                            return false;
                        }
                    }
                    b[*i as usize] = Bind::Ty(*t);
                    true
                }
            },
            Pat::Class(c) => c.accepts(t),
            Pat::Exact(e) => e == t,
            Pat::Vector(d, inner) => match *t {
                Type::Vector(n, s) => {
                    match_dim(*d, n, b) && self.match_pat(inner, &Type::Scalar(s), b)
                }
                _ => false,
            },
            Pat::Matrix(r, c, inner) => match *t {
                Type::Matrix(rows, cols, s) => {
                    match_dim(*r, rows, b)
                        && match_dim(*c, cols, b)
                        && self.match_pat(inner, &Type::Scalar(s), b)
                }
                _ => false,
            },
            Pat::Quat(inner) => match *t {
                Type::Quat(s) => self.match_pat(inner, &Type::Scalar(s), b),
                _ => false,
            },
            Pat::Transform(inner) => match *t {
                Type::Transform(s) => self.match_pat(inner, &Type::Scalar(s), b),
                _ => false,
            },
            Pat::Array(inner, d, any_family) => match *t {
                Type::Array { dtype, ndim, kind } => {
                    (*any_family || kind.fits(ArrayKind::Array))
                        && u8::try_from(ndim).is_ok_and(|n| match_dim(*d, n, b))
                        && self.match_pat(inner, &dtype.to_type(), b)
                }
                _ => false,
            },
            Pat::Ref(inner) => match *t {
                Type::Ref(v) => self.match_pat(inner, &v.to_type(), b),
                _ => false,
            },
            Pat::Query(q) => matches!(*t, Type::Query(k) if k == *q || k.erased() == *q),
            Pat::TileStack(inner) => match *t {
                Type::TileStack(v, _) => self.match_pat(inner, &v.to_type(), b),
                _ => false,
            },
            Pat::Alt(alts) => alts.iter().any(|a| {
                let saved = *b;
                self.match_pat(a, t, b) || {
                    *b = saved;
                    false
                }
            }),
        }
    }

    /// Whether `args` fit; on success, the index of the first default they leave out.
    fn matches(&self, args: &[Type], b: &mut [Bind; MAX_VARS]) -> Option<usize> {
        let mut next = 0;
        let mut first_missing = None;
        for a in &self.args {
            if a.variadic {
                let first = next;
                while next < args.len() {
                    if !self.match_pat(&a.pat, &args[next], b) {
                        return None;
                    }
                    next += 1;
                }
                if let Some(c) = self.count_var {
                    b[c as usize] = Bind::Dim(u8::try_from(next - first).ok()?);
                }
                continue;
            }
            let count = match a.repeat {
                Some(v) => match b[v as usize] {
                    Bind::Dim(n) => n as usize,
                    _ => return None,
                },
                None => 1,
            };
            for _ in 0..count {
                match args.get(next) {
                    Some(t) => {
                        if !self.match_pat(&a.pat, t, b) {
                            return None;
                        }
                        next += 1;
                    }
                    None => {
                        let d = a.default? as usize;
                        if !self.match_pat(&a.pat, &self.defaults[d].0, b) {
                            return None;
                        }
                        first_missing.get_or_insert(d);
                    }
                }
            }
        }
        (next == args.len()).then_some(first_missing.unwrap_or(self.defaults.len()))
    }

    fn eval_dim(d: Dim, b: &[Bind; MAX_VARS]) -> Option<u8> {
        match d {
            Dim::Lit(n) => Some(n),
            Dim::Var(i) => match b[i as usize] {
                Bind::Dim(n) => Some(n),
                _ => None,
            },
            Dim::Any => None,
        }
    }

    /// The return type, from the bound variables.
    fn eval(p: &Pat, b: &[Bind; MAX_VARS]) -> Option<Type> {
        let scalar = |p: &Pat| Sig::eval(p, b).and_then(|t| t.scalar());
        Some(match p {
            Pat::Var(i) => match b[*i as usize] {
                Bind::Ty(t) => t,
                _ => return None,
            },
            Pat::Exact(t) => *t,
            Pat::Vector(d, inner) => Type::Vector(Sig::eval_dim(*d, b)?, scalar(inner)?),
            Pat::Matrix(r, c, inner) => {
                Type::Matrix(Sig::eval_dim(*r, b)?, Sig::eval_dim(*c, b)?, scalar(inner)?)
            }
            Pat::Quat(inner) => Type::Quat(scalar(inner)?),
            Pat::Transform(inner) => Type::Transform(scalar(inner)?),
            Pat::Ref(inner) => Type::Ref(Sig::eval(inner, b)?.value()?),
            Pat::Query(q) => Type::Query(*q),
            _ => return None,
        })
    }
}

// ------------------------------------------------------------------ parser

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'s> {
    Word(&'s str),
    Num(&'s str),
    P(&'s str),
}

fn tokenize(s: &str) -> Vec<Tok<'_>> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Word(&s[start..i]));
        } else if c.is_ascii_digit()
            || c == b'-' && bytes.get(i + 1).is_some_and(|d| d.is_ascii_digit())
        {
            let start = i;
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || (bytes[i] == b'-' && bytes[i - 1] == b'e'))
            {
                i += 1;
            }
            out.push(Tok::Num(&s[start..i]));
        } else if s[i..].starts_with("->") || s[i..].starts_with("...") {
            let n = if c == b'-' { 2 } else { 3 };
            out.push(Tok::P(&s[i..i + n]));
            i += n;
        } else {
            out.push(Tok::P(&s[i..i + 1]));
            i += 1;
        }
    }
    out
}

struct Parser<'s> {
    toks: Vec<Tok<'s>>,
    pos: usize,
    vars: Vec<&'s str>,
    what: &'s str,
}

fn is_var(w: &str) -> bool {
    let b = w.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_uppercase()
        && (b.len() == 1 || (b.len() == 2 && b[1].is_ascii_digit()))
}

impl<'s> Parser<'s> {
    fn fail(&self, msg: &str) -> ! {
        panic!(
            "builtin signature `{}`: {msg} at token {}",
            self.what, self.pos
        )
    }
    fn peek(&self) -> Option<Tok<'s>> {
        self.toks.get(self.pos).copied()
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.peek() == Some(Tok::P(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str) {
        if !self.eat(p) {
            self.fail(&format!("expected `{p}`"));
        }
    }
    fn word(&mut self) -> &'s str {
        match self.peek() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                w
            }
            _ => self.fail("expected a name"),
        }
    }
    fn var(&mut self, w: &'s str) -> u8 {
        let i = match self.vars.iter().position(|v| *v == w) {
            Some(i) => i,
            None => {
                self.vars.push(w);
                self.vars.len() - 1
            }
        };
        if i >= MAX_VARS {
            self.fail("too many variables");
        }
        i as u8
    }
    fn dim(&mut self) -> Dim {
        match self.peek() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Dim::Lit(n.parse().unwrap_or_else(|_| self.fail("bad dimension")))
            }
            Some(Tok::Word("_")) => {
                self.pos += 1;
                Dim::Any
            }
            Some(Tok::P("#")) => {
                self.pos += 1;
                Dim::Var(self.var("#"))
            }
            Some(Tok::Word(w)) if is_var(w) => {
                self.pos += 1;
                Dim::Var(self.var(w))
            }
            _ => self.fail("expected a dimension"),
        }
    }
    fn pat(&mut self) -> Pat {
        let first = self.prim();
        if self.peek() != Some(Tok::P("|")) {
            return first;
        }
        let mut alts = vec![first];
        while self.eat("|") {
            alts.push(self.prim());
        }
        Pat::Alt(alts)
    }
    fn prim(&mut self) -> Pat {
        let w = self.word();
        let boxed = |p: &mut Parser<'s>| Box::new(p.pat());
        match w {
            "_" | "Any" => Pat::Class(Class::Any),
            "Value" => Pat::Class(Class::Value),
            "NumValue" => Pat::Class(Class::NumValue),
            "Scalar" => Pat::Class(Class::Scalar),
            "Numeric" => Pat::Class(Class::Numeric),
            "Float" => Pat::Class(Class::Float),
            "Int" => Pat::Class(Class::Int),
            "str" => Pat::Class(Class::Str),
            "Query" => Pat::Class(Class::Query),
            "range" => Pat::Exact(Type::Range),
            "Vector" => {
                self.expect("(");
                let d = self.dim();
                self.expect(",");
                let inner = boxed(self);
                self.expect(")");
                Pat::Vector(d, inner)
            }
            "Matrix" => {
                self.expect("(");
                let r = self.dim();
                self.expect(",");
                let c = self.dim();
                self.expect(",");
                let inner = boxed(self);
                self.expect(")");
                Pat::Matrix(r, c, inner)
            }
            "Quat" | "Transform" | "Ref" | "TileStack" => {
                self.expect("(");
                let inner = boxed(self);
                self.expect(")");
                match w {
                    "Quat" => Pat::Quat(inner),
                    "Transform" => Pat::Transform(inner),
                    "TileStack" => Pat::TileStack(inner),
                    _ => Pat::Ref(inner),
                }
            }
            "Array" | "AnyArray" => {
                self.expect("(");
                let inner = boxed(self);
                self.expect(",");
                let d = self.dim();
                self.expect(")");
                Pat::Array(inner, d, w == "AnyArray")
            }
            w if is_var(w) => Pat::Var(self.var(w)),
            w if Query::from_name(w).is_some() => Pat::Query(Query::from_name(w).expect("query")),
            w => match Scalar::from_name(w) {
                Some(s) => Pat::Exact(Type::Scalar(s)),
                None => match super::types::composite_type(w) {
                    Some(v) => Pat::Exact(v.to_type()),
                    None => self.fail(&format!("unknown type `{w}`")),
                },
            },
        }
    }
    /// A default value: a literal, or a typed one (`uint32(1)`).
    fn default(&mut self, arg_type: &Pat) -> (Type, ConstVal) {
        let (ty, text) = match self.peek() {
            Some(Tok::Word(w)) if Scalar::from_name(w).is_some() => {
                self.pos += 1;
                self.expect("(");
                let text = match self.peek() {
                    Some(Tok::Num(n)) => n,
                    _ => self.fail("expected a number"),
                };
                self.pos += 1;
                self.expect(")");
                (Scalar::from_name(w).map(Type::Scalar), text)
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                (None, n)
            }
            Some(Tok::Word("inf")) => {
                self.pos += 1;
                return (Type::F32, ConstVal::Float(f64::INFINITY));
            }
            Some(Tok::Word(w @ ("true" | "false"))) => {
                self.pos += 1;
                return (Type::BOOL, ConstVal::Bool(w == "true"));
            }
            _ => self.fail("expected a default value"),
        };
        let _ = arg_type;
        let c = if text.contains(['.', 'e']) {
            ConstVal::Float(text.parse().unwrap_or_else(|_| self.fail("bad float")))
        } else {
            ConstVal::Int(text.parse().unwrap_or_else(|_| self.fail("bad int")))
        };
        (ty.unwrap_or(c.literal_type()), c)
    }

    fn sig(mut self) -> Sig {
        let mut constraints: Vec<(u8, Pat)> = Vec::new();
        if self.eat("<") {
            loop {
                let w = self.word();
                let v = self.var(w);
                self.expect(":");
                constraints.push((v, self.pat()));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(">");
        }
        self.expect("(");
        let mut args = Vec::new();
        let mut defaults = Vec::new();
        if !self.eat(")") {
            loop {
                let name = self.word().to_string();
                self.expect(":");
                let pat = self.pat();
                let repeat = if self.eat("*") {
                    match self.dim() {
                        Dim::Var(v) => Some(v),
                        _ => self.fail("`*` takes a dimension variable"),
                    }
                } else {
                    None
                };
                let variadic = self.eat("...");
                let default = if self.eat("=") {
                    defaults.push(self.default(&pat));
                    Some(defaults.len() as u8 - 1)
                } else {
                    None
                };
                if default.is_none() && !defaults.is_empty() && !variadic {
                    self.fail("an argument without default after one with");
                }
                args.push(Arg {
                    name,
                    pat,
                    repeat,
                    variadic,
                    default,
                });
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")");
        }
        let mut outputs = Vec::new();
        let ret = if !self.eat("->") {
            None
        } else if self.eat("(") {
            loop {
                outputs.push(self.pat());
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")");
            None
        } else {
            Some(self.pat())
        };
        if self.pos != self.toks.len() {
            self.fail("trailing tokens");
        }
        let mut cs = vec![None; self.vars.len()];
        for (v, p) in constraints {
            cs[v as usize] = Some(p);
        }
        let count_var = self.vars.iter().position(|v| *v == "#").map(|i| i as u8);
        Sig {
            constraints: cs,
            args,
            ret,
            outputs,
            defaults,
            count_var,
        }
    }
}

fn parse_sig(s: &'static str) -> Sig {
    Parser {
        toks: tokenize(s),
        pos: 0,
        vars: Vec::new(),
        what: s,
    }
    .sig()
}

/// The table, parsed, with the lines of each name found by one hash lookup.
pub struct Registry {
    /// Lines sorted by name (stable: warp's order within a name), with their parsed signatures.
    rows: Vec<(&'static Row, Option<Sig>)>,
    by_name: HashMap<&'static str, (u32, u32), BuildHasherDefault<NameHasher>>,
}

/// A multiply-rotate hash of a few bytes (FxHash's): the names are short and
/// trusted, and a streaming hasher costs more than the lookup.
#[derive(Default)]
pub struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        // The last 0 to 7 bytes in two loads (overlapping), with their count.
        let rest = chunks.remainder();
        let n = rest.len();
        let tail = if n >= 4 {
            let first = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
            let last = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes"));
            u64::from(first) | u64::from(last) << 32
        } else if n > 0 {
            u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16
        } else {
            0
        };
        self.0 = (self.0.rotate_left(5) ^ tail ^ (n as u64) << 61).wrapping_mul(K);
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    // Integers in one step each (the keys of a thread's resolved calls hash
    // types: discriminants, dimensions, scalar kinds).
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let mut order: Vec<&'static Row> = TABLE.iter().collect();
    order.sort_by_key(|r| r.name);
    let rows: Vec<(&'static Row, Option<Sig>)> = order
        .into_iter()
        .map(|r| (r, (r.flags & CUSTOM == 0).then(|| parse_sig(r.sig))))
        .collect();
    let mut by_name = HashMap::with_hasher(BuildHasherDefault::<NameHasher>::default());
    let mut i = 0;
    while i < rows.len() {
        let name = rows[i].0.name;
        let mut j = i;
        while j < rows.len() && rows[j].0.name == name {
            j += 1;
        }
        by_name.insert(name, (i as u32, j as u32));
        i = j;
    }
    Registry { rows, by_name }
});

impl Registry {
    fn lines(&self, name: &str) -> &[(&'static Row, Option<Sig>)] {
        match self.by_name.get(name) {
            Some(&(lo, hi)) => &self.rows[lo as usize..hi as usize],
            None => &[],
        }
    }
}

/// Every name callable as `wp.NAME(...)` that the table holds, in table order.
pub static KNOWN: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut out: Vec<&'static str> = Vec::new();
    for r in TABLE {
        if r.flags & HIDDEN == 0 && !out.contains(&r.name) {
            out.push(r.name);
        }
    }
    out
});

/// The lines of builtin `name` (for documentation: overloads and flags).
pub fn rows_of(name: &str) -> impl Iterator<Item = &'static Row> {
    REGISTRY.lines(name).iter().map(|(r, _)| *r)
}

/// warp's named constants (`wp.pi`, `wp.E`, ...), Python floats in kernels.
pub fn warp_constant(name: &str) -> Option<f64> {
    Some(match name {
        "E" | "e" => std::f64::consts::E,
        "LOG2E" | "log2e" => std::f64::consts::LOG2_E,
        "LOG10E" | "log10e" => std::f64::consts::LOG10_E,
        "LN2" | "ln2" => std::f64::consts::LN_2,
        "LN10" | "ln10" => std::f64::consts::LN_10,
        "PHI" | "phi" => 1.618_033_988_749_895,
        "PI" | "pi" => std::f64::consts::PI,
        "HALF_PI" | "half_pi" => std::f64::consts::FRAC_PI_2,
        "TAU" | "tau" => std::f64::consts::TAU,
        "INF" | "inf" => f64::INFINITY,
        "NAN" | "nan" => f64::NAN,
        _ => return None,
    })
}

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

/// Whether `name` is a builtin callable as `wp.NAME` (for "unknown function" errors).
pub fn is_known(name: &str) -> bool {
    REGISTRY
        .lines(name)
        .iter()
        .any(|(r, _)| r.flags & HIDDEN == 0)
        || super::types::composite_type(name).is_some()
}

/// Whether the table has builtin `name`, hidden or not (warp resolves a bare
/// name that is no symbol among all its builtins).
pub fn is_builtin(name: &str) -> bool {
    !REGISTRY.lines(name).is_empty()
}

/// Resolve builtin `name` for value arguments of types `args` (references
/// already stripped). The answer is shared with the thread's cache: an
/// overload is ~120 bytes, and copying it out of each hit cost more than the
/// lookup.
pub fn resolve(name: &str, args: &[Type]) -> Result<Rc<Overload<'static>>, String> {
    // The match is a pure function of the name and the argument types, and
    // the lowering of synthesized kernels asks the same few questions again
    // and again: each thread remembers its answers.
    RESOLVED.with_borrow_mut(|r| r.resolve(name, args))
}

/// The overload of builtin `name` for `args`, worked out from the table.
fn resolve_uncached(name: &str, args: &[Type]) -> Result<Overload<'static>, String> {
    match resolve_shaped(name, args) {
        Some(o) => Ok(o),
        None => match_overload(name, args),
    }
}

/// The first line of builtin `name` whose signature `args` fit (warp's
/// order), made the call's overload.
fn match_overload(name: &str, args: &[Type]) -> Result<Overload<'static>, String> {
    let registry: &'static Registry = &REGISTRY;
    for (row, sig) in registry.lines(name) {
        let Some(sig) = sig else { continue };
        if !sig.outputs.is_empty() {
            continue;
        }
        let mut binds = [Bind::Free; MAX_VARS];
        let Some(first_default) = sig.matches(args, &mut binds) else {
            continue;
        };
        let ret = match &sig.ret {
            Some(p) => match Sig::eval(p, &binds) {
                Some(t) => Some(t),
                None => continue,
            },
            None => None,
        };
        let mut ov = Overload {
            native: Cow::Borrowed(row.native),
            adj_native: Cow::Borrowed(row.native),
            namespace: if row.flags & GLOBAL != 0 { "" } else { "wp::" },
            ret,
            require_original_output: row.flags & ORIG != 0,
            differentiable: row.flags & NODIFF == 0,
            skip_replay: row.flags & SKIP_REPLAY != 0,
            defaults: &sig.defaults[first_default..],
            initializer_list: false,
        };
        if let (Some(dispatch), Some(ret)) = (row.dispatch, ret) {
            let (template, list) = dispatch(ret);
            ov.native = Cow::Owned(format!("{}{template}", row.native));
            ov.initializer_list = list;
        }
        return Ok(ov);
    }
    let types: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    Err(format!(
        "couldn't find a function '{name}' compatible with the arguments '{}'",
        types.join(", ")
    ))
}

/// The arguments a remembered question has at most (longer ones are matched
/// every time).
const KEY_ARGS: usize = 8;

/// A question's argument types, each as a nonzero code (see
/// [`Resolved::code`]), zeros after the last: one compare of a few words.
type Codes = [u32; KEY_ARGS];

/// A thread's answers of [`match_overload`]: the questions (name and
/// argument codes) with their overloads, in one vector, found through a
/// direct-mapped index by the question's hash. A hit compares the name and
/// the codes, so two questions with one hash both stay exact (the second
/// goes to `spill`).
struct Resolved {
    /// Slot `hash % INDEX_SLOTS`: an index into `entries`, or `EMPTY` (no
    /// slots before the first answer).
    index: Vec<u32>,
    entries: Vec<Entry>,
    spill: Vec<Entry>,
    /// The argument types no code packs (tiles, tuples, queries, ...): code
    /// `OTHER | i` is `others[i]`.
    others: Vec<Type>,
}

struct Entry {
    hash: u64,
    name: compact_str::CompactString,
    codes: Codes,
    overload: Rc<Overload<'static>>,
}

const INDEX_SLOTS: usize = 1 << 11;
const EMPTY: u32 = u32::MAX;

/// Questions a thread remembers before it starts over (synthesized kernels
/// ask a few hundred different ones).
const RESOLVED_CAP: usize = 1 << 12;
/// Types without a packed code a thread tells apart before it starts over
/// (each costs a compare per such argument).
const OTHERS_CAP: usize = 64;

/// The tag of a code: its top 5 bits.
const TAG: u32 = 27;
const OTHER: u32 = 31 << TAG;

thread_local! {
    static RESOLVED: std::cell::RefCell<Resolved> = const {
        std::cell::RefCell::new(Resolved {
            index: Vec::new(),
            entries: Vec::new(),
            spill: Vec::new(),
            others: Vec::new(),
        })
    };
}

/// A value type in 23 bits: kind, two dimensions, scalar; None for a struct
/// id too large.
#[inline]
fn value_code(v: Value) -> Option<u32> {
    let (kind, a, b, s) = match v {
        Value::Scalar(s) => (1, 0, 0, s),
        Value::Vector(n, s) => (2, n, 0, s),
        Value::Matrix(r, c, s) => (3, r, c, s),
        Value::Quat(s) => (4, 0, 0, s),
        Value::Transform(s) => (5, 0, 0, s),
        Value::Struct(id) => return (id.index() < 1 << 20).then(|| 6 << 20 | id.index()),
        Value::Texture(n) => (7, n, 0, Scalar::Bool),
    };
    let s = s as u32;
    debug_assert!(s < 16, "a scalar kind fits 4 bits");
    Some(kind << 20 | (a as u32) << 12 | (b as u32) << 4 | s)
}

impl Resolved {
    #[inline]
    fn resolve(&mut self, name: &str, args: &[Type]) -> Result<Rc<Overload<'static>>, String> {
        if args.len() > KEY_ARGS {
            return resolve_uncached(name, args).map(Rc::new);
        }
        // Starting over before the codes are made keeps every code's `others` valid.
        if self.entries.len() + self.spill.len() >= RESOLVED_CAP || self.others.len() >= OTHERS_CAP
        {
            self.index.fill(EMPTY);
            self.entries.clear();
            self.spill.clear();
            self.others.clear();
        }
        let mut codes: Codes = [0; KEY_ARGS];
        for (c, t) in codes.iter_mut().zip(args) {
            *c = self.code(t);
        }
        let hash = Self::hash(name, &codes);
        match self.get(hash, name, &codes) {
            Some(e) => Ok(e.overload.clone()),
            None => self.answer(hash, name, codes, args),
        }
    }

    /// Match a question asked the first time, and remember the answer.
    #[cold]
    #[inline(never)]
    fn answer(
        &mut self,
        hash: u64,
        name: &str,
        codes: Codes,
        args: &[Type],
    ) -> Result<Rc<Overload<'static>>, String> {
        let overload = Rc::new(resolve_uncached(name, args)?);
        self.insert(Entry {
            hash,
            name: name.into(),
            codes,
            overload: overload.clone(),
        });
        Ok(overload)
    }

    /// `t` as a nonzero code: tag and packed fields for the usual types,
    /// else its index among `others`.
    #[inline]
    fn code(&mut self, t: &Type) -> u32 {
        let packed = match *t {
            Type::Scalar(_)
            | Type::Vector(..)
            | Type::Matrix(..)
            | Type::Quat(_)
            | Type::Transform(_)
            | Type::Struct(_) => t.value().and_then(value_code).map(|v| 1 << TAG | v),
            Type::Array { dtype, ndim, kind } if ndim < 16 => {
                let tag = match kind {
                    ArrayKind::Array => Some(2),
                    ArrayKind::Indexed => Some(3),
                    ArrayKind::Fabric => Some(4),
                    ArrayKind::IndexedFabric => Some(5),
                    ArrayKind::Fixed(_) => None,
                };
                tag.zip(value_code(dtype))
                    .map(|(tag, v)| tag << TAG | (ndim as u32) << 23 | v)
            }
            Type::Range => Some(6 << TAG),
            Type::Slice => Some(7 << TAG),
            Type::Shape(r) => Some(8 << TAG | r as u32),
            Type::IntTuple(n) => Some(9 << TAG | n as u32),
            Type::StorageStr(s) => Some(10 << TAG | s as u32),
            Type::Str(i) if i < 1 << TAG => Some(11 << TAG | i),
            _ => None,
        };
        packed.unwrap_or_else(|| self.other_code(t))
    }

    #[cold]
    #[inline(never)]
    fn other_code(&mut self, t: &Type) -> u32 {
        let i = match self.others.iter().position(|o| o == t) {
            Some(i) => i,
            None => {
                self.others.push(*t);
                self.others.len() - 1
            }
        };
        OTHER | i as u32
    }

    fn hash(name: &str, codes: &Codes) -> u64 {
        let mut h = NameHasher::default();
        h.write(name.as_bytes());
        for pair in codes.chunks_exact(2) {
            h.write_u64(u64::from(pair[0]) | u64::from(pair[1]) << 32);
        }
        // A multiplicative hash mixes its high bits best.
        h.finish().rotate_left(26)
    }

    #[inline]
    fn get(&self, hash: u64, name: &str, codes: &Codes) -> Option<&Entry> {
        let is = |e: &&Entry| e.hash == hash && e.codes == *codes && e.name == name;
        if let Some(&i) = self.index.get(hash as usize % INDEX_SLOTS) {
            if i != EMPTY {
                let e = &self.entries[i as usize];
                if is(&e) {
                    return Some(e);
                }
            }
        }
        self.spill.iter().find(is)
    }

    fn insert(&mut self, entry: Entry) {
        if self.index.is_empty() {
            self.index = vec![EMPTY; INDEX_SLOTS];
        }
        let slot = &mut self.index[entry.hash as usize % INDEX_SLOTS];
        if *slot == EMPTY {
            *slot = self.entries.len() as u32;
            self.entries.push(entry);
        } else {
            self.spill.push(entry);
        }
    }
}

/// The builtins whose result type the table's patterns cannot say: a view of
/// an array has one dimension fewer per integer index (slices keep theirs),
/// and a component of an array's shape is an int32.
fn resolve_shaped(name: &str, args: &[Type]) -> Option<Overload<'static>> {
    let is_int = |t: &Type| t.scalar().is_some_and(Scalar::is_int);
    // One int32 per thread of the block (module option block_dim).
    let block_ints = || {
        Type::Tile(super::types::Tile::new(
            Value::Scalar(Scalar::Int32),
            &[super::BLOCK_DIM],
        ))
    };
    let (native, ret) = match (name, args) {
        ("view", [Type::Array { dtype, ndim, kind }, idx @ ..]) => {
            let ints = idx.iter().filter(|i| is_int(i)).count();
            let ok = !idx.is_empty()
                && idx.len() <= *ndim
                && idx.iter().all(|i| is_int(i) || *i == Type::Slice)
                && ints < *ndim;
            let view = ok.then_some(Type::Array {
                dtype: *dtype,
                ndim: ndim - ints,
                kind: kind.view(),
            })?;
            ("view", view)
        }
        ("extract", [Type::Shape(_), i]) if is_int(i) => ("extract", Type::I32),
        (
            "tile_mesh_query_aabb_next" | "mesh_query_aabb_next_tiled",
            [Type::Query(Query::MeshAabbTiled)],
        ) => ("tile_mesh_query_aabb_next", block_ints()),
        ("tile_bvh_query_next" | "bvh_query_next_tiled", [Type::Query(Query::BvhTiled)]) => {
            ("tile_bvh_query_next", block_ints())
        }
        _ => return None,
    };
    Some(Overload {
        native: Cow::Borrowed(native),
        adj_native: Cow::Borrowed(native),
        namespace: "wp::",
        ret: Some(ret),
        require_original_output: false,
        differentiable: native == "view",
        skip_replay: false,
        defaults: &[],
        initializer_list: false,
    })
}

/// For a call of builtin `name` with `positional` arguments followed by the
/// keyword arguments `keywords`: the order of those arguments (indices into
/// positional then keyword) in the parameter order of the first overload that
/// has parameters of these names, leaving no gap before the last one given.
pub fn keyword_order(name: &str, positional: usize, keywords: &[&str]) -> Option<Vec<usize>> {
    'rows: for (_, sig) in REGISTRY.lines(name) {
        let Some(sig) = sig else { continue };
        if sig.args.iter().any(|a| a.repeat.is_some() || a.variadic) {
            continue;
        }
        let mut order: Vec<usize> = (0..positional).collect();
        for param in sig.args.iter().skip(positional) {
            match keywords.iter().position(|k| *k == param.name) {
                Some(k) => order.push(positional + k),
                None => break,
            }
        }
        if order.len() != positional + keywords.len() {
            continue 'rows;
        }
        return Some(order);
    }
    None
}

/// Resolve builtin `name` called for `n` results (`a, b = wp.NAME(...)`): the
/// overload, void, and the types of the output variables the caller creates
/// and passes after the arguments.
pub fn resolve_multi<'a>(
    name: &'a str,
    args: &[Type],
    n: usize,
) -> Result<(Overload<'a>, Vec<Type>), String> {
    for (row, sig) in REGISTRY.lines(name) {
        let Some(sig) = sig else { continue };
        if sig.outputs.len() != n {
            continue;
        }
        let mut binds = [Bind::Free; MAX_VARS];
        if sig.matches(args, &mut binds) != Some(sig.defaults.len()) {
            continue;
        }
        let Some(outs) = sig
            .outputs
            .iter()
            .map(|p| Sig::eval(p, &binds))
            .collect::<Option<Vec<Type>>>()
        else {
            continue;
        };
        let ov = Overload {
            native: Cow::Borrowed(row.native),
            adj_native: Cow::Borrowed(row.native),
            namespace: if row.flags & GLOBAL != 0 { "" } else { "wp::" },
            ret: None,
            require_original_output: false,
            differentiable: row.flags & NODIFF == 0,
            skip_replay: row.flags & SKIP_REPLAY != 0,
            defaults: &[],
            initializer_list: false,
        };
        return Ok((ov, outs));
    }
    Err(format!("'{name}' does not return {n} values"))
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
    Ok(Overload {
        native: Cow::Owned(native),
        adj_native: Cow::Borrowed(adj),
        namespace: "wp::",
        ret: Some(target.to_type()),
        require_original_output: false,
        differentiable: true,
        skip_replay: false,
        defaults: &[],
        initializer_list: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of the table parses, and CUSTOM lines are the only ones without a signature.
    #[test]
    fn every_signature_parses() {
        for r in TABLE {
            if r.flags & CUSTOM == 0 {
                let s = parse_sig(r.sig);
                assert!(s.constraints.len() <= MAX_VARS, "{}", r.sig);
            }
        }
        assert_eq!(REGISTRY.rows.len(), TABLE.len());
        assert!(KNOWN.contains(&"sin") && !KNOWN.contains(&"extract"));
        assert!(is_known("tile_load") && is_known("vec3") && !is_known("address"));
        assert!(!is_known("sinx") && !is_known("SIN"));
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
            kind: ArrayKind::Array,
        };
        let o = resolve("atomic_add", &[arr, Type::I32, Type::F32]).unwrap();
        assert!(o.skip_replay);
        assert!(resolve("atomic_add", &[arr, Type::I32, Type::I32]).is_err());
        assert!(resolve("atomic_add", &[arr, Type::I32, Type::I32, Type::F32]).is_err());
        let arr2 = Type::Array {
            dtype: Value::Scalar(Scalar::Float32),
            ndim: 2,
            kind: ArrayKind::Array,
        };
        let a = resolve("address", &[arr2, Type::I32, Type::Scalar(Scalar::Int64)]).unwrap();
        assert_eq!(a.ret, Some(Type::Ref(Value::Scalar(Scalar::Float32))));
        let t = resolve("tid", &[]).unwrap();
        assert_eq!((&*t.native, t.namespace), ("builtin_tid1d", ""));
    }

    #[test]
    fn resolves_vector_overloads() {
        let v3 = Type::Vector(3, Scalar::Float32);
        let m33 = Type::Matrix(3, 3, Scalar::Float32);
        let m23 = Type::Matrix(2, 3, Scalar::Float32);
        assert_eq!(resolve("mul", &[m33, v3]).unwrap().ret, Some(v3));
        assert_eq!(
            resolve("mul", &[m23, v3]).unwrap().ret,
            Some(Type::Vector(2, Scalar::Float32))
        );
        assert!(resolve("mul", &[v3, m23]).is_err());
        assert_eq!(resolve("mul", &[Type::F32, v3]).unwrap().ret, Some(v3));
        let d = resolve("div", &[v3, Type::F32]).unwrap();
        assert!(!d.require_original_output);
        assert!(resolve("length", &[v3]).unwrap().require_original_output);
        assert_eq!(resolve("outer", &[v3, v3]).unwrap().ret, Some(m33));
        assert!(resolve("cross", &[Type::Vector(2, Scalar::Float32); 2]).is_err());
        assert!(resolve("determinant", &[m23]).is_err());
        assert!(resolve("lerp", &[v3, v3, Type::F32]).is_ok());
        assert!(resolve("lerp", &[v3, v3, Type::Scalar(Scalar::Float64)]).is_err());
        let c = resolve_constructor(Value::Vector(3, Scalar::Float32), &[Type::F32; 3]).unwrap();
        assert_eq!(
            (&*c.native, &*c.adj_native),
            ("vec_t<3, wp::float32>", "vec_t")
        );
        assert!(resolve_constructor(Value::Vector(3, Scalar::Float32), &[Type::F32; 2]).is_err());
    }
}
