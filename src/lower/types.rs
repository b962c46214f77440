//! Warp's value types as the code generator sees them, and their C++ spelling.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
}

impl Scalar {
    pub const ALL: [Scalar; 12] = [
        Scalar::Bool,
        Scalar::Int8,
        Scalar::Int16,
        Scalar::Int32,
        Scalar::Int64,
        Scalar::UInt8,
        Scalar::UInt16,
        Scalar::UInt32,
        Scalar::UInt64,
        Scalar::Float16,
        Scalar::Float32,
        Scalar::Float64,
    ];

    /// Warp's name for the type (`wp.float32`), which is also the C++ name in `wp::`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int8 => "int8",
            Scalar::Int16 => "int16",
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::UInt8 => "uint8",
            Scalar::UInt16 => "uint16",
            Scalar::UInt32 => "uint32",
            Scalar::UInt64 => "uint64",
            Scalar::Float16 => "float16",
            Scalar::Float32 => "float32",
            Scalar::Float64 => "float64",
        }
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn ctype(self) -> String {
        match self {
            Scalar::Bool => "bool".to_string(),
            s => format!("wp::{}", s.name()),
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float16 | Scalar::Float32 | Scalar::Float64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }
}

/// A kernel value's type. References are pointers into arrays (`a[i]` before it is loaded).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(Scalar),
    Array {
        dtype: Scalar,
        ndim: usize,
    },
    Ref(Scalar),
    /// `range()` iterator state.
    Range,
}

impl Type {
    pub const F32: Type = Type::Scalar(Scalar::Float32);
    pub const I32: Type = Type::Scalar(Scalar::Int32);
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);

    /// The C++ type of a variable holding this value (`value_type` strips references).
    pub fn ctype(&self, value_type: bool) -> String {
        match self {
            Type::Scalar(s) => s.ctype(),
            Type::Array { dtype, .. } => format!("wp::array_t<{}>", dtype.ctype()),
            Type::Ref(s) if value_type => s.ctype(),
            Type::Ref(s) => format!("{}*", s.ctype()),
            Type::Range => "wp::range_t".to_string(),
        }
    }

    /// The value type behind a reference; other types unchanged.
    pub fn strip_ref(&self) -> Type {
        match self {
            Type::Ref(s) => Type::Scalar(*s),
            t => t.clone(),
        }
    }

    pub fn is_ref(&self) -> bool {
        matches!(self, Type::Ref(_))
    }

    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Array { dtype, ndim } => write!(f, "array(ndim={ndim}, dtype={})", dtype.name()),
            Type::Ref(s) => write!(f, "Reference[{}]", s.name()),
            Type::Range => f.write_str("range_t"),
        }
    }
}

/// A compile-time constant, as warp keeps Python literals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstVal {
    Int(i128),
    Float(f64),
    Bool(bool),
}

impl ConstVal {
    /// The type warp gives a Python literal of this kind.
    pub fn literal_type(self) -> Type {
        match self {
            ConstVal::Int(_) => Type::I32,
            ConstVal::Float(_) => Type::F32,
            ConstVal::Bool(_) => Type::BOOL,
        }
    }

    /// C++ spelling, as warp's `constant_str` prints a Python value.
    pub fn c_str(self) -> String {
        match self {
            ConstVal::Int(v) => v.to_string(),
            ConstVal::Float(v) => python_float_repr(v),
            ConstVal::Bool(true) => "true".into(),
            ConstVal::Bool(false) => "false".into(),
        }
    }

    pub fn negated(self) -> ConstVal {
        match self {
            ConstVal::Int(v) => ConstVal::Int(-v),
            ConstVal::Float(v) => ConstVal::Float(-v),
            // Python: -True == -1
            ConstVal::Bool(b) => ConstVal::Int(-(b as i128)),
        }
    }

    pub fn truthy(self) -> bool {
        match self {
            ConstVal::Int(v) => v != 0,
            ConstVal::Float(v) => v != 0.0,
            ConstVal::Bool(b) => b,
        }
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in fixed notation
/// for exponents in [-4, 16) and scientific (`1e-05`, `1e+16`) otherwise;
/// `inf`/`nan` are spelled as warp's constant printer spells them.
pub fn python_float_repr(v: f64) -> String {
    if v.is_nan() {
        return "NAN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "INFINITY".into()
        } else {
            "-INFINITY".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e-5".
    let sci = format!("{:e}", v);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // position of the decimal point within `digits`
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let frac = &digits[1..];
        let mant = if frac.is_empty() {
            digits[..1].to_string()
        } else {
            format!("{}.{}", &digits[..1], frac)
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (2.0, "2.0"),
            (0.5, "0.5"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (123456.789, "123456.789"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1, "0.1"),
            (-1.0, "-1.0"),
            (1.5e-7, "1.5e-07"),
            (3.14159, "3.14159"),
            (1e100, "1e+100"),
            (-0.0, "-0.0"),
        ];
        for (v, want) in cases {
            assert_eq!(python_float_repr(v), want, "{v}");
        }
    }

    #[test]
    fn ctypes() {
        assert_eq!(Type::F32.ctype(false), "wp::float32");
        assert_eq!(Type::BOOL.ctype(false), "bool");
        assert_eq!(
            Type::Array {
                dtype: Scalar::Int32,
                ndim: 1
            }
            .ctype(false),
            "wp::array_t<wp::int32>"
        );
        assert_eq!(Type::Ref(Scalar::Float32).ctype(false), "wp::float32*");
        assert_eq!(Type::Ref(Scalar::Float32).ctype(true), "wp::float32");
    }
}
