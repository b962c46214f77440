//! Static evaluation of the Python values a module computes at import:
//! module-level constants (`DH = 1.0 / N_GRID`, `DT = 0.95 * DX / math.sqrt(3.0)`)
//! and decorator / option arguments (`module_options={"max_unroll": 4}`).
//! warp sees these as Python objects; pairpipe computes them from the source
//! with Python's semantics (IEEE doubles, floor division, banker's rounding).

use super::types::{CompositeConst, CompositeId, ConstVal, Scalar, Value};
use crate::lang::ast::*;

/// A Python value the static evaluator can compute.
#[derive(Clone, Debug, PartialEq)]
pub enum PyVal {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Tuple(Vec<PyVal>),
    Dict(Vec<(PyVal, PyVal)>),
    /// A `wp.Module(...)` / `wp.get_module(...)` object, named by its first argument
    /// (or the name it is bound to).
    WarpModule(String),
    /// A module-level `@wp.func`, by name.
    Function(String),
    /// A value of a warp type: a scalar (`wp.float64(2.0)`, the constant its
    /// value) or a vector, matrix, quaternion or transform (`wp.vec3(1.0, 2.0,
    /// 3.0)`, a [`ConstVal::Composite`]).
    Typed(Value, ConstVal),
}

impl PyVal {
    /// The kernel constant a value becomes (`int`, `float`, `bool` only).
    pub fn const_val(&self) -> Option<ConstVal> {
        match *self {
            PyVal::Bool(b) => Some(ConstVal::Bool(b)),
            PyVal::Int(v) => Some(ConstVal::Int(v)),
            PyVal::Float(v) => Some(ConstVal::Float(v)),
            _ => None,
        }
    }

    pub fn from_const(c: ConstVal) -> PyVal {
        match c {
            ConstVal::Bool(b) => PyVal::Bool(b),
            ConstVal::Int(v) => PyVal::Int(v),
            ConstVal::Float(v) => PyVal::Float(v),
            ConstVal::Composite(id) => PyVal::Typed(id.get().ty, c),
        }
    }

    /// The kernel constant a value becomes, with its variable's type: a Python
    /// int, float or bool has its literal type, a warp value its own.
    pub fn typed_const(&self) -> Option<(super::types::Type, ConstVal)> {
        match self {
            PyVal::Typed(v, c) => Some((v.to_type(), *c)),
            v => v.const_val().map(|c| (c.literal_type(), c)),
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
            PyVal::None => false,
            PyVal::Bool(b) => *b,
            PyVal::Int(v) => *v != 0,
            PyVal::Float(v) => *v != 0.0,
            PyVal::Str(s) => !s.is_empty(),
            PyVal::Tuple(v) => !v.is_empty(),
            PyVal::Dict(v) => !v.is_empty(),
            PyVal::WarpModule(_) | PyVal::Function(_) => true,
            PyVal::Typed(_, c) => c.truthy(),
        }
    }

    fn num(&self) -> Option<Num> {
        match *self {
            PyVal::Bool(b) => Some(Num::I(b as i128)),
            PyVal::Int(v) => Some(Num::I(v)),
            PyVal::Float(v) => Some(Num::F(v)),
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(v) => v as f64,
            Num::F(v) => v,
        }
    }
}

fn py_floor_div_int(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn py_mod_int(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

fn py_mod_float(a: f64, b: f64) -> Option<f64> {
    if b == 0.0 {
        return None;
    }
    let mut m = a % b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    Some(m)
}

fn py_floor_div_float(a: f64, b: f64) -> Option<f64> {
    if b == 0.0 {
        return None;
    }
    // CPython's float_floor_div: divmod's floor of (a - a % b) / b.
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 { f + 1.0 } else { f }
    } else {
        0.0f64.copysign(a / b)
    };
    Some(floordiv)
}

/// A warp scalar type called on a Python value at import (`wp.float64(2.0 * math.pi)`):
/// warp's scalar object keeps the Python value, converted as the type's constructor does.
pub fn warp_scalar(s: Scalar, v: &PyVal) -> Option<PyVal> {
    let c = match (s, v) {
        (Scalar::Bool, v) => ConstVal::Bool(v.truthy()),
        (s, v) if s.is_float() => ConstVal::Float(v.num()?.f()),
        (_, PyVal::Int(i)) => ConstVal::Int(*i),
        (_, PyVal::Bool(b)) => ConstVal::Int(*b as i128),
        (_, PyVal::Float(f)) if f.is_finite() => ConstVal::Int(f.trunc() as i128),
        _ => return None,
    };
    Some(PyVal::Typed(Value::Scalar(s), c))
}

/// A vector, matrix, quaternion or transform type called on Python values at
/// import (`wp.vec3(a, b, c)`, `wp.vec3(x)`, `vec3bool([True, False, True])`,
/// `wp.transform(p, q)`): the components (lists and warp values flattened),
/// stored as the type's ctypes array stores them.
pub fn warp_composite(ty: Value, args: &[PyVal]) -> Option<PyVal> {
    let n = match ty {
        Value::Vector(n, _) => n as usize,
        Value::Matrix(r, c, _) => r as usize * c as usize,
        Value::Quat(_) => 4,
        Value::Transform(_) => 7,
        _ => return None,
    };
    fn flatten(v: &PyVal, out: &mut Vec<PyVal>) -> Option<()> {
        match v {
            PyVal::Tuple(items) => items.iter().try_for_each(|x| flatten(x, out)),
            PyVal::Typed(Value::Scalar(_), c) => {
                out.push(PyVal::from_const(*c));
                Some(())
            }
            PyVal::Typed(_, ConstVal::Composite(id)) => {
                out.extend(id.get().items.iter().map(|c| PyVal::from_const(*c)));
                Some(())
            }
            PyVal::Bool(_) | PyVal::Int(_) | PyVal::Float(_) => {
                out.push(v.clone());
                Some(())
            }
            _ => None,
        }
    }
    let mut flat = Vec::with_capacity(n);
    for a in args {
        flatten(a, &mut flat)?;
    }
    let flat = match flat.len() {
        0 => vec![PyVal::Int(0); n],
        1 if n > 1 => vec![flat[0].clone(); n],
        k if k == n => flat,
        _ => return None,
    };
    let dtype = ty.dtype();
    let items = flat
        .iter()
        .map(|v| {
            Some(match dtype {
                Scalar::Bool => ConstVal::Bool(v.truthy()),
                Scalar::Float32 => ConstVal::Float(v.num()?.f() as f32 as f64),
                Scalar::Float64 => ConstVal::Float(v.num()?.f()),
                // half-precision storage rounds differently: not computed here
                Scalar::Float16 | Scalar::BFloat16 => return None,
                s => {
                    let i = match v.num()? {
                        Num::I(i) => i,
                        Num::F(_) => return None,
                    };
                    ConstVal::Int(wrap_int(s, i))
                }
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let id = CompositeId::intern(CompositeConst { ty, items });
    Some(PyVal::Typed(ty, ConstVal::Composite(id)))
}

/// An integer as a ctypes field of type `s` stores it (two's complement wrap).
fn wrap_int(s: Scalar, i: i128) -> i128 {
    let (bits, signed) = match s {
        Scalar::Int8 => (8, true),
        Scalar::Int16 => (16, true),
        Scalar::Int32 => (32, true),
        Scalar::Int64 => (64, true),
        Scalar::UInt8 => (8, false),
        Scalar::UInt16 => (16, false),
        Scalar::UInt32 => (32, false),
        Scalar::UInt64 => (64, false),
        _ => return i,
    };
    let m = i.rem_euclid(1i128 << bits);
    if signed && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// Python's binary operators on numbers.
pub fn binop(op: BinOp, a: &PyVal, b: &PyVal) -> Option<PyVal> {
    if let (PyVal::Str(x), PyVal::Str(y), BinOp::Add) = (a, b, op) {
        return Some(PyVal::Str(format!("{x}{y}")));
    }
    let (x, y) = (a.num()?, b.num()?);
    Some(match (x, y) {
        (Num::I(x), Num::I(y)) => match op {
            BinOp::Add => PyVal::Int(x.checked_add(y)?),
            BinOp::Sub => PyVal::Int(x.checked_sub(y)?),
            BinOp::Mult => PyVal::Int(x.checked_mul(y)?),
            BinOp::Div => {
                if y == 0 {
                    return None;
                }
                PyVal::Float(int_true_div(x, y))
            }
            BinOp::FloorDiv => PyVal::Int(py_floor_div_int(x, y)?),
            BinOp::Mod => PyVal::Int(py_mod_int(x, y)?),
            BinOp::Pow => {
                if y >= 0 {
                    PyVal::Int(x.checked_pow(u32::try_from(y).ok()?)?)
                } else {
                    PyVal::Float((x as f64).powf(y as f64))
                }
            }
            BinOp::LShift => PyVal::Int(x.checked_shl(u32::try_from(y).ok()?)?),
            BinOp::RShift => PyVal::Int(x >> u32::try_from(y).ok()?.min(127)),
            BinOp::BitAnd => PyVal::Int(x & y),
            BinOp::BitOr => PyVal::Int(x | y),
            BinOp::BitXor => PyVal::Int(x ^ y),
            _ => return None,
        },
        (x, y) => {
            let (x, y) = (x.f(), y.f());
            PyVal::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mult => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return None;
                    }
                    x / y
                }
                BinOp::FloorDiv => py_floor_div_float(x, y)?,
                BinOp::Mod => py_mod_float(x, y)?,
                BinOp::Pow => {
                    if x < 0.0 && y.fract() != 0.0 {
                        return None;
                    }
                    x.powf(y)
                }
                _ => return None,
            })
        }
    })
}

/// `int / int`: exact operands (up to 2**53, all that constants use) divide as doubles.
fn int_true_div(x: i128, y: i128) -> f64 {
    x as f64 / y as f64
}

pub fn unaryop(op: UnaryOp, v: &PyVal) -> Option<PyVal> {
    Some(match (op, v.num()?) {
        (UnaryOp::Not, _) => PyVal::Bool(!v.truthy()),
        (UnaryOp::Neg, Num::I(x)) => PyVal::Int(x.checked_neg()?),
        (UnaryOp::Neg, Num::F(x)) => PyVal::Float(-x),
        (UnaryOp::Pos, Num::I(x)) => PyVal::Int(x),
        (UnaryOp::Pos, Num::F(x)) => PyVal::Float(x),
        (UnaryOp::Invert, Num::I(x)) => PyVal::Int(!x),
        (UnaryOp::Invert, Num::F(_)) => return None,
    })
}

pub fn compare(op: CmpOp, a: &PyVal, b: &PyVal) -> Option<bool> {
    if let (Some(x), Some(y)) = (a.num(), b.num()) {
        let ord = match (x, y) {
            (Num::I(x), Num::I(y)) => x.partial_cmp(&y),
            (x, y) => x.f().partial_cmp(&y.f()),
        };
        use std::cmp::Ordering::*;
        return Some(match op {
            CmpOp::Eq => ord == Some(Equal),
            CmpOp::NotEq => ord != Some(Equal),
            CmpOp::Lt => ord == Some(Less),
            CmpOp::LtE => matches!(ord, Some(Less | Equal)),
            CmpOp::Gt => ord == Some(Greater),
            CmpOp::GtE => matches!(ord, Some(Greater | Equal)),
            _ => return None,
        });
    }
    match op {
        CmpOp::Eq | CmpOp::Is => Some(a == b),
        CmpOp::NotEq | CmpOp::IsNot => Some(a != b),
        _ => None,
    }
}

/// Python's one-argument `round()`: half to even, an int.
pub fn py_round(v: f64) -> Option<i128> {
    if !v.is_finite() {
        return None;
    }
    let r = v.round();
    let r = if (v - v.trunc()).abs() == 0.5 {
        2.0 * (v / 2.0).round()
    } else {
        r
    };
    Some(r as i128)
}

/// A function of Python's `math` module (or numpy's scalar equivalent) on numbers.
pub fn math_call(name: &str, args: &[PyVal]) -> Option<PyVal> {
    let f = |k: usize| args.get(k).and_then(|a| a.num()).map(Num::f);
    let one = |g: fn(f64) -> f64| -> Option<PyVal> {
        if args.len() != 1 {
            return None;
        }
        Some(PyVal::Float(g(f(0)?)))
    };
    match name {
        "sqrt" => {
            let x = f(0)?;
            if x < 0.0 {
                return None;
            }
            one(f64::sqrt)
        }
        "log" if args.len() == 2 => Some(PyVal::Float(f(0)?.ln() / f(1)?.ln())),
        "log" => {
            if f(0)? <= 0.0 {
                return None;
            }
            one(f64::ln)
        }
        "log2" => one(f64::log2),
        "log10" => one(f64::log10),
        "exp" => one(f64::exp),
        "sin" => one(f64::sin),
        "cos" => one(f64::cos),
        "tan" => one(f64::tan),
        "asin" | "arcsin" => one(f64::asin),
        "acos" | "arccos" => one(f64::acos),
        "atan" | "arctan" => one(f64::atan),
        "sinh" => one(f64::sinh),
        "cosh" => one(f64::cosh),
        "tanh" => one(f64::tanh),
        "radians" | "deg2rad" => one(f64::to_radians),
        "degrees" | "rad2deg" => one(f64::to_degrees),
        "fabs" => one(f64::abs),
        "atan2" | "arctan2" if args.len() == 2 => Some(PyVal::Float(f(0)?.atan2(f(1)?))),
        "pow" if args.len() == 2 => Some(PyVal::Float(f(0)?.powf(f(1)?))),
        "hypot" if args.len() == 2 => Some(PyVal::Float(f(0)?.hypot(f(1)?))),
        "floor" | "ceil" | "trunc" if args.len() == 1 => {
            let x = f(0)?;
            if !x.is_finite() {
                return None;
            }
            let r = match name {
                "floor" => x.floor(),
                "ceil" => x.ceil(),
                _ => x.trunc(),
            };
            Some(PyVal::Int(r as i128))
        }
        _ => None,
    }
}

/// A constant of Python's `math` module or numpy.
pub fn math_constant(name: &str) -> Option<PyVal> {
    Some(PyVal::Float(match name {
        "pi" => std::f64::consts::PI,
        "e" => std::f64::consts::E,
        "tau" => std::f64::consts::TAU,
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => return None,
    }))
}

/// The items of a dict literal, read from the source text at `pos` (the
/// syntax tree keeps only that a dict was there): string keys and literal
/// values (numbers, strings, True/False/None, negative numbers, and names
/// `name_value` knows). `None` when the text holds anything else.
pub fn dict_literal(
    lines: &[&str],
    pos: Pos,
    name_value: &dyn Fn(&str) -> Option<PyVal>,
) -> Option<Vec<(PyVal, PyVal)>> {
    // Byte offset of `pos` in the joined lines, then the balanced `{...}`.
    let line = lines.get(pos.line.checked_sub(1)?)?;
    let start = line.char_indices().nth(pos.col.checked_sub(1)?)?.0;
    let mut text = String::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    'outer: for l in std::iter::once(&line[start..]).chain(lines[pos.line..].iter().copied()) {
        for c in l.chars() {
            text.push(c);
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '\'' | '"' => quote = Some(c),
                    '{' | '[' | '(' => depth += 1,
                    '}' | ']' | ')' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            break 'outer;
                        }
                    }
                    '#' => break,
                    _ => {}
                },
            }
        }
        text.push('\n');
    }
    let tokens = crate::lang::tokenize(&text).ok()?;
    use crate::lang::TokenKind as K;
    let toks: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.kind, K::Newline | K::Indent | K::Dedent | K::EndMarker))
        .collect();
    let mut i = 0;
    let is_op = |i: usize, s: &str| toks.get(i).is_some_and(|t| t.kind == K::Op && t.text == s);
    if !is_op(0, "{") {
        return None;
    }
    i += 1;
    let value = |i: &mut usize| -> Option<PyVal> {
        let neg = if is_op(*i, "-") {
            *i += 1;
            true
        } else {
            false
        };
        let t = toks.get(*i)?;
        *i += 1;
        let v = match t.kind {
            K::String => {
                let s = t.text;
                let body = s.trim_start_matches(|c: char| c.is_ascii_alphabetic());
                let q = body.chars().next()?;
                PyVal::Str(body.trim_matches(q).to_string())
            }
            K::Number => number(t.text)?,
            K::Name => match t.text {
                "True" => PyVal::Bool(true),
                "False" => PyVal::Bool(false),
                "None" => PyVal::None,
                n if !neg && !is_op(*i, ".") => name_value(n)?,
                // `wp.DeterministicMode.NOT_GUARANTEED`: an enum member, by its last two names
                // (as the module evaluator spells it); the module alias is not checked here.
                _ => {
                    let mut path = vec![t.text];
                    while is_op(*i, ".") && toks.get(*i + 1).is_some_and(|n| n.kind == K::Name) {
                        path.push(toks[*i + 1].text);
                        *i += 2;
                    }
                    match path[..] {
                        [_, "DeterministicMode", member] => {
                            PyVal::Str(format!("DeterministicMode.{member}"))
                        }
                        _ => return None,
                    }
                }
            },
            _ => return None,
        };
        if neg {
            unaryop(UnaryOp::Neg, &v)
        } else {
            Some(v)
        }
    };
    let mut items = Vec::new();
    while !is_op(i, "}") {
        let k = value(&mut i)?;
        if !is_op(i, ":") {
            return None;
        }
        i += 1;
        let v = value(&mut i)?;
        items.push((k, v));
        if is_op(i, ",") {
            i += 1;
        } else if !is_op(i, "}") {
            return None;
        }
    }
    Some(items)
}

fn number(text: &str) -> Option<PyVal> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return i128::from_str_radix(h, 16).ok().map(PyVal::Int);
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return i128::from_str_radix(b, 2).ok().map(PyVal::Int);
    }
    if let Some(o) = lower.strip_prefix("0o") {
        return i128::from_str_radix(o, 8).ok().map(PyVal::Int);
    }
    if let Ok(v) = t.parse::<i128>() {
        return Some(PyVal::Int(v));
    }
    t.parse::<f64>().ok().map(PyVal::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_arithmetic() {
        let i = PyVal::Int;
        let f = PyVal::Float;
        assert_eq!(binop(BinOp::FloorDiv, &i(-7), &i(2)), Some(i(-4)));
        assert_eq!(binop(BinOp::Mod, &i(-7), &i(2)), Some(i(1)));
        assert_eq!(binop(BinOp::Div, &i(1), &i(512)), Some(f(1.0 / 512.0)));
        assert_eq!(binop(BinOp::Pow, &i(2), &i(31)), Some(i(1 << 31)));
        assert_eq!(binop(BinOp::Mod, &f(-1.0), &f(3.0)), Some(f(2.0)));
        assert_eq!(binop(BinOp::FloorDiv, &f(7.5), &f(2.0)), Some(f(3.0)));
        assert_eq!(py_round(2.5), Some(2));
        assert_eq!(py_round(3.5), Some(4));
        assert_eq!(py_round(-0.5), Some(0));
        assert_eq!(py_round(1.4), Some(1));
    }

    #[test]
    fn dict_literals_from_source() {
        let lines = [
            "x = f(module_options={\"max_unroll\": 4, 'fast_math': True,",
            "  \"n\": -2.5})",
        ];
        let items = dict_literal(&lines, Pos { line: 1, col: 22 }, &|_| None).unwrap();
        assert_eq!(
            items,
            vec![
                (PyVal::Str("max_unroll".into()), PyVal::Int(4)),
                (PyVal::Str("fast_math".into()), PyVal::Bool(true)),
                (PyVal::Str("n".into()), PyVal::Float(-2.5)),
            ]
        );
    }
}
