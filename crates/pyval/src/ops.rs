//! Mirrors CPython 3.11's binary and unary operators on builtin values
//! (Objects/longobject.c, floatobject.c, abstract.c): `+ - * // % ** /`,
//! unary `-`, comparisons, `&`, `|` and `not`. Operands that are torch
//! symbolic objects never reach here: `spec::expr` takes those.

use std::cmp::Ordering;
use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use super::{Dict, Number, PyResult, Raise, Value};

/// The operators of the case format, named as there.
///
/// ```
/// use torchspec_pyval::ops::{binary, Op};
/// use torchspec_pyval::Value;
/// // 7 // 2, -7 // 2, -7 % 3, 7 / 2, 2 ** 100
/// let r = |op, a: i64, b: i64| binary(op, &Value::int(a), &Value::int(b)).and_then(|v| v.repr());
/// assert_eq!(r(Op::FloorDiv, 7, 2)?, "3");
/// assert_eq!(r(Op::FloorDiv, -7, 2)?, "-4");
/// assert_eq!(r(Op::Mod, -7, 3)?, "2");
/// assert_eq!(r(Op::TrueDiv, 7, 2)?, "3.5");
/// assert_eq!(r(Op::Pow, 2, -1)?, "0.5");
/// assert_eq!(r(Op::Pow, 2, 100)?, "1267650600228229401496703205376");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a // b`.
    FloorDiv,
    /// `a % b`.
    Mod,
    /// `a ** b`.
    Pow,
    /// `a / b`.
    TrueDiv,
    /// Unary `-a`.
    Neg,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
    /// `a & b` (named `and` in the case format).
    And,
    /// `a | b` (named `or` in the case format).
    Or,
    /// `not a`.
    Not,
}

impl Op {
    /// Every operator, in declaration order.
    pub const ALL: [Op; 17] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::FloorDiv,
        Op::Mod,
        Op::Pow,
        Op::TrueDiv,
        Op::Neg,
        Op::Eq,
        Op::Ne,
        Op::Lt,
        Op::Le,
        Op::Gt,
        Op::Ge,
        Op::And,
        Op::Or,
        Op::Not,
    ];

    /// The case-format name (`add`, `floordiv`, ...).
    ///
    /// ```
    /// use torchspec_pyval::ops::Op;
    /// assert_eq!(Op::FloorDiv.name(), "floordiv");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::FloorDiv => "floordiv",
            Op::Mod => "mod",
            Op::Pow => "pow",
            Op::TrueDiv => "truediv",
            Op::Neg => "neg",
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Lt => "lt",
            Op::Le => "le",
            Op::Gt => "gt",
            Op::Ge => "ge",
            Op::And => "and",
            Op::Or => "or",
            Op::Not => "not",
        }
    }

    /// The operator with the case-format name `name`, if there is one.
    ///
    /// ```
    /// use torchspec_pyval::ops::Op;
    /// assert_eq!(Op::from_name("truediv"), Some(Op::TrueDiv));
    /// assert_eq!(Op::from_name("matmul"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// How many operands the operator takes: 1 for `neg` and `not`, 2 for the
    /// rest.
    ///
    /// ```
    /// use torchspec_pyval::ops::Op;
    /// assert_eq!((Op::Neg.arity(), Op::Not.arity(), Op::Add.arity()), (1, 1, 2));
    /// ```
    pub fn arity(self) -> usize {
        match self {
            Op::Neg | Op::Not => 1,
            _ => 2,
        }
    }

    /// The Python operator symbol, as error messages quote it.
    ///
    /// ```
    /// use torchspec_pyval::ops::Op;
    /// assert_eq!(Op::FloorDiv.symbol(), "//");
    /// assert_eq!(Op::Pow.symbol(), "** or pow()");
    /// ```
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::FloorDiv => "//",
            Op::Mod => "%",
            Op::Pow => "** or pow()",
            Op::TrueDiv => "/",
            Op::Neg => "-",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::And => "&",
            Op::Or => "|",
            Op::Not => "not",
        }
    }
}

/// Results larger than this many elements are not built: PyTorch would
/// need gigabytes for them, and the case format has no use for them.
const MAX_SEQUENCE_LEN: u64 = 1 << 20;
/// Largest int result (in bits) that `**` computes.
const MAX_POW_BITS: u64 = 1 << 16;

/// Apply a unary operator to a plain value.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::ops::{unary, Op};
/// use torchspec_pyval::{Raise, Value};
/// assert_eq!(unary(Op::Neg, &Value::Bool(true))?.repr()?, "-1");
/// assert_eq!(unary(Op::Not, &Value::int(0))?.repr()?, "True");
/// assert_eq!(unary(Op::Not, &Value::List(Rc::new(vec![Value::int(1)])))?.repr()?, "False");
/// assert_eq!(
///     unary(Op::Neg, &Value::str("a")).unwrap_err(),
///     Raise::type_error("bad operand type for unary -: 'str'")
/// );
/// # Ok::<(), Raise>(())
/// ```
pub fn unary(op: Op, a: &Value) -> PyResult<Value> {
    match op {
        Op::Not => Ok(Value::Bool(!a.truth()?)),
        Op::Neg => match a.as_number() {
            Some(Number::Int(i)) => Ok(Value::big(-i.to_big())),
            Some(Number::Float(f)) => Ok(Value::Float(-f)),
            None => Err(Raise::type_error(format!(
                "bad operand type for unary -: '{}'",
                a.type_name()
            ))),
        },
        _ => unreachable!("binary operator {op:?} applied as unary"),
    }
}

/// Apply a binary operator to two plain values.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::ops::{binary, Op};
/// use torchspec_pyval::{Raise, Value};
/// let (one, a) = (Value::int(1), Value::str("a"));
/// assert_eq!(binary(Op::Add, &Value::Bool(true), &one)?.repr()?, "2");
/// assert_eq!(binary(Op::Add, &Value::Float(0.1), &Value::Float(0.2))?.repr()?, "0.30000000000000004");
/// assert_eq!(binary(Op::Mul, &Value::str("ab"), &Value::int(2))?.repr()?, "'abab'");
/// assert_eq!(binary(Op::Mod, &Value::int(10), &Value::int(-3))?.repr()?, "-2");
/// assert_eq!(binary(Op::FloorDiv, &Value::Float(5.5), &Value::int(2))?.repr()?, "2.0");
/// // CPython's errors, word for word.
/// let err = |op, x: &Value, y: &Value| binary(op, x, y).unwrap_err();
/// assert_eq!(err(Op::Add, &one, &a), Raise::type_error("unsupported operand type(s) for +: 'int' and 'str'"));
/// assert_eq!(err(Op::Add, &a, &one), Raise::type_error("can only concatenate str (not \"int\") to str"));
/// assert_eq!(err(Op::Lt, &one, &a), Raise::type_error("'<' not supported between instances of 'int' and 'str'"));
/// assert_eq!(err(Op::Lt, &Value::None, &Value::int(0)),
///     Raise::type_error("'<' not supported between instances of 'NoneType' and 'int'"));
/// assert_eq!(err(Op::And, &Value::Float(3.0), &one), Raise::type_error("unsupported operand type(s) for &: 'float' and 'int'"));
/// assert_eq!(
///     err(Op::Add, &Value::List(Rc::new(vec![one.clone()])), &Value::Tuple(Rc::new(vec![Value::int(2)]))),
///     Raise::type_error("can only concatenate list (not \"tuple\") to list")
/// );
/// let zero = Value::int(0);
/// assert_eq!(err(Op::TrueDiv, &one, &zero), Raise::new("ZeroDivisionError", "division by zero"));
/// assert_eq!(err(Op::FloorDiv, &one, &zero), Raise::new("ZeroDivisionError", "integer division or modulo by zero"));
/// assert_eq!(err(Op::Mod, &one, &zero), Raise::new("ZeroDivisionError", "integer modulo by zero"));
/// assert_eq!(err(Op::TrueDiv, &Value::Float(1.0), &zero), Raise::new("ZeroDivisionError", "float division by zero"));
/// # Ok::<(), Raise>(())
/// ```
pub fn binary(op: Op, a: &Value, b: &Value) -> PyResult<Value> {
    match op {
        Op::Eq => Ok(Value::Bool(py_eq(a, b)?)),
        Op::Ne => Ok(Value::Bool(!py_eq(a, b)?)),
        Op::Lt | Op::Le | Op::Gt | Op::Ge => compare(op, a, b).map(Value::Bool),
        Op::And | Op::Or => bitwise(op, a, b),
        _ => arith(op, a, b),
    }
}

fn unsupported_operands(op: Op, a: &Value, b: &Value) -> Raise {
    Raise::type_error(format!(
        "unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        a.type_name(),
        b.type_name()
    ))
}

fn int_to_float(i: &BigInt) -> PyResult<f64> {
    match i.to_f64() {
        Some(f) if f.is_finite() => Ok(f),
        _ => Err(Raise::new(
            "OverflowError",
            "int too large to convert to float",
        )),
    }
}

fn arith(op: Op, a: &Value, b: &Value) -> PyResult<Value> {
    match (a.as_number(), b.as_number()) {
        (Some(Number::Int(x)), Some(Number::Int(y))) => int_arith(op, &x.to_big(), &y.to_big()),
        (Some(x), Some(y)) => {
            let x = match x {
                Number::Int(i) => int_to_float(&i.to_big())?,
                Number::Float(f) => f,
            };
            let y = match y {
                Number::Int(i) => int_to_float(&i.to_big())?,
                Number::Float(f) => f,
            };
            float_arith(op, x, y).map(Value::Float)
        }
        _ => sequence_arith(op, a, b),
    }
}

fn sequence_arith(op: Op, a: &Value, b: &Value) -> PyResult<Value> {
    match op {
        Op::Add => match (a, b) {
            (Value::Str(x), Value::Str(y)) => Ok(Value::Str(format!("{x}{y}").into())),
            (Value::List(x), Value::List(y)) => {
                Ok(Value::List(Rc::new([x.as_slice(), y.as_slice()].concat())))
            }
            (Value::Tuple(x), Value::Tuple(y)) => {
                Ok(Value::Tuple(Rc::new([x.as_slice(), y.as_slice()].concat())))
            }
            (Value::Str(_) | Value::List(_) | Value::Tuple(_), _) => {
                Err(Raise::type_error(format!(
                    "can only concatenate {} (not \"{}\") to {}",
                    a.type_name(),
                    b.type_name(),
                    a.type_name()
                )))
            }
            _ => Err(unsupported_operands(op, a, b)),
        },
        Op::Mul => {
            let (seq, n) = match (a, b) {
                (Value::Str(_) | Value::List(_) | Value::Tuple(_), _) => (a, b),
                (_, Value::Str(_) | Value::List(_) | Value::Tuple(_)) => (b, a),
                _ => return Err(unsupported_operands(op, a, b)),
            };
            let n = match n.as_number() {
                Some(Number::Int(i)) => i.to_big(),
                _ => {
                    return Err(Raise::type_error(format!(
                        "can't multiply sequence by non-int of type '{}'",
                        n.type_name()
                    )))
                }
            };
            repeat(seq, &n)
        }
        // printf-style formatting; only the case without conversions is modelled.
        Op::Mod => match a {
            Value::Str(s) if s.contains('%') => Err(Raise::unsupported(
                "printf-style `str % args` with conversions",
            )),
            Value::Str(_) => match b {
                // An empty tuple, or anything with `__getitem__` that is not a
                // tuple or str (taken as a mapping), leaves the text as it is.
                Value::Tuple(t) if t.is_empty() => Ok(a.clone()),
                Value::Dict(_) | Value::List(_) => Ok(a.clone()),
                Value::Object(o) if o.type_name() == "TensorSpec" => Ok(a.clone()),
                _ => Err(Raise::type_error(
                    "not all arguments converted during string formatting",
                )),
            },
            _ => Err(unsupported_operands(op, a, b)),
        },
        Op::Or => match (a, b) {
            (Value::Dict(x), Value::Dict(y)) => {
                let mut d = x.as_ref().clone();
                for (k, v) in y.iter() {
                    d.insert(k.clone(), v.clone())?;
                }
                Ok(Value::Dict(Rc::new(d)))
            }
            _ => Err(unsupported_operands(op, a, b)),
        },
        _ => Err(unsupported_operands(op, a, b)),
    }
}

fn repeat(seq: &Value, n: &BigInt) -> PyResult<Value> {
    let Some(n) = n.to_i64() else {
        return Err(Raise::new(
            "OverflowError",
            "cannot fit 'int' into an index-sized integer",
        ));
    };
    let n = n.max(0) as u64;
    let len = match seq {
        Value::Str(s) => s.chars().count(),
        Value::List(v) | Value::Tuple(v) => v.len(),
        _ => unreachable!("only sequences repeat"),
    } as u64;
    if len.saturating_mul(n) > MAX_SEQUENCE_LEN {
        return Err(Raise::unsupported(format!(
            "a sequence of {len} items repeated {n} times is larger than the reference builds"
        )));
    }
    Ok(match seq {
        Value::Str(s) => Value::Str(s.repeat(n as usize).into()),
        Value::List(v) => Value::List(Rc::new(repeat_vec(v, n as usize))),
        Value::Tuple(v) => Value::Tuple(Rc::new(repeat_vec(v, n as usize))),
        _ => unreachable!("only sequences repeat"),
    })
}

fn repeat_vec(v: &[Value], n: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity(v.len() * n);
    for _ in 0..n {
        out.extend_from_slice(v);
    }
    out
}

fn int_arith(op: Op, x: &BigInt, y: &BigInt) -> PyResult<Value> {
    Ok(match op {
        Op::Add => Value::big(x + y),
        Op::Sub => Value::big(x - y),
        Op::Mul => Value::big(x * y),
        Op::FloorDiv => {
            if y.is_zero() {
                return Err(Raise::new(
                    "ZeroDivisionError",
                    "integer division or modulo by zero",
                ));
            }
            Value::big(x.div_floor(y))
        }
        Op::Mod => {
            if y.is_zero() {
                return Err(Raise::new("ZeroDivisionError", "integer modulo by zero"));
            }
            Value::big(x.mod_floor(y))
        }
        Op::TrueDiv => {
            if y.is_zero() {
                return Err(Raise::new("ZeroDivisionError", "division by zero"));
            }
            Value::Float(int_true_divide(x, y)?)
        }
        Op::Pow => {
            if y.is_negative() {
                // int ** negative int is computed in floats.
                if x.is_zero() {
                    return Err(Raise::new(
                        "ZeroDivisionError",
                        "0.0 cannot be raised to a negative power",
                    ));
                }
                return float_arith(Op::Pow, int_to_float(x)?, int_to_float(y)?).map(Value::Float);
            }
            let trivial = x.is_zero() || x.abs() == BigInt::from(1);
            let e = y.to_u64().unwrap_or(u64::MAX);
            if !trivial && x.bits().saturating_mul(e) > MAX_POW_BITS {
                return Err(Raise::unsupported("an int power larger than 65536 bits"));
            }
            if trivial {
                // 0**e, 1**e, (-1)**e without computing a huge power.
                if x.is_zero() {
                    Value::big(if y.is_zero() {
                        BigInt::from(1)
                    } else {
                        BigInt::zero()
                    })
                } else if x.is_negative() && y.is_odd() {
                    Value::big(BigInt::from(-1))
                } else {
                    Value::big(BigInt::from(1))
                }
            } else {
                Value::big(num_traits::pow(x.clone(), e as usize))
            }
        }
        _ => unreachable!("{op:?} is not arithmetic"),
    })
}

/// `int / int`, correctly rounded as CPython's `long_true_divide` is.
fn int_true_divide(x: &BigInt, y: &BigInt) -> PyResult<f64> {
    const EXACT: u64 = 1 << 53;
    if let (Some(a), Some(b)) = (x.to_i64(), y.to_i64()) {
        if a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
            return Ok(a as f64 / b as f64);
        }
    }
    // Scale so the quotient has 55+ significant bits, then round the
    // integer quotient (with a sticky bit for the remainder) to a double.
    let negative = x.is_negative() != y.is_negative();
    let (a, b) = (x.abs(), y.abs());
    let shift = 55i64 - (a.bits() as i64 - b.bits() as i64);
    let (num, den) = if shift >= 0 {
        (a << shift as usize, b)
    } else {
        (a, b << (-shift) as usize)
    };
    let (q, r) = num.div_rem(&den);
    let q = (q << 1usize) | BigInt::from(u8::from(!r.is_zero()));
    // q has 56 or 57 bits; to_f64 rounds half to even, and the sticky bit
    // keeps that rounding exact.
    let mag = q.to_f64().unwrap_or(f64::INFINITY);
    let exp = -shift - 1;
    let result = if exp > i32::MAX as i64 {
        f64::INFINITY
    } else {
        scale(mag, exp)
    };
    if result.is_infinite() {
        return Err(Raise::new(
            "OverflowError",
            "integer division result too large for a float",
        ));
    }
    Ok(if negative { -result } else { result })
}

fn scale(mut m: f64, mut exp: i64) -> f64 {
    // ldexp by repeated exact steps; subnormal results round once at the end.
    while exp > 1000 {
        m *= 2f64.powi(1000);
        exp -= 1000;
        if m.is_infinite() {
            return m;
        }
    }
    while exp < -1000 {
        m *= 2f64.powi(-1000);
        exp += 1000;
    }
    m * 2f64.powi(exp as i32)
}

fn float_arith(op: Op, x: f64, y: f64) -> PyResult<f64> {
    Ok(match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::TrueDiv => {
            if y == 0.0 {
                return Err(Raise::new("ZeroDivisionError", "float division by zero"));
            }
            x / y
        }
        Op::FloorDiv => {
            if y == 0.0 {
                return Err(Raise::new(
                    "ZeroDivisionError",
                    "float floor division by zero",
                ));
            }
            float_divmod(x, y).0
        }
        Op::Mod => {
            if y == 0.0 {
                return Err(Raise::new("ZeroDivisionError", "float modulo"));
            }
            float_divmod(x, y).1
        }
        Op::Pow => float_pow(x, y)?,
        _ => unreachable!("{op:?} is not arithmetic"),
    })
}

/// CPython's `_float_div_mod`.
fn float_divmod(vx: f64, wx: f64) -> (f64, f64) {
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0f64.copysign(vx / wx)
    };
    (floordiv, m)
}

/// CPython's `float_pow`, special cases first.
fn float_pow(iv: f64, iw: f64) -> PyResult<f64> {
    if iw == 0.0 {
        return Ok(1.0);
    }
    if iv.is_nan() {
        return Ok(iv);
    }
    if iw.is_nan() {
        return Ok(if iv == 1.0 { 1.0 } else { iw });
    }
    if iw.is_infinite() {
        let a = iv.abs();
        return Ok(if a == 1.0 {
            1.0
        } else if (iw > 0.0) == (a > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    let iw_is_odd = iw.rem_euclid(2.0) == 1.0;
    if iv.is_infinite() {
        return Ok(if iw > 0.0 {
            if iw_is_odd {
                iv
            } else {
                iv.abs()
            }
        } else if iw_is_odd {
            0f64.copysign(iv)
        } else {
            0.0
        });
    }
    if iv == 0.0 {
        if iw < 0.0 {
            return Err(Raise::new(
                "ZeroDivisionError",
                "0.0 cannot be raised to a negative power",
            ));
        }
        return Ok(if iw_is_odd { iv } else { 0.0 });
    }
    if iv < 0.0 && iw != iw.floor() {
        return Err(Raise::unsupported(
            "a negative float to a fractional power is a complex number",
        ));
    }
    if iv == 1.0 {
        return Ok(1.0);
    }
    let r = iv.powf(iw);
    if r.is_infinite() {
        return Err(Raise::new(
            "OverflowError",
            "(34, 'Numerical result out of range')",
        ));
    }
    Ok(r)
}

fn bitwise(op: Op, a: &Value, b: &Value) -> PyResult<Value> {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => {
            Ok(Value::Bool(if op == Op::And { *x && *y } else { *x || *y }))
        }
        _ => match (a.as_number(), b.as_number()) {
            (Some(Number::Int(x)), Some(Number::Int(y))) => {
                let (x, y) = (x.to_big(), y.to_big());
                Ok(Value::big(if op == Op::And { x & y } else { x | y }))
            }
            _ => sequence_arith(op, a, b),
        },
    }
}

/// Python `==` on plain values (objects by identity, as for `object.__eq__`).
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::ops::py_eq;
/// use torchspec_pyval::Value;
/// assert!(py_eq(&Value::int(1), &Value::Float(1.0))?);
/// assert!(!py_eq(&Value::str("a"), &Value::int(1))?);
/// let t = |s: &str| Value::Tuple(Rc::new(vec![Value::int(1), Value::str(s)]));
/// assert!(py_eq(&t("a"), &t("a"))?);
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
pub fn py_eq(a: &Value, b: &Value) -> PyResult<bool> {
    if let (Some(x), Some(y)) = (a.as_number(), b.as_number()) {
        return Ok(x.num_cmp(&y) == Some(Ordering::Equal));
    }
    Ok(match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => seq_eq(x, y)?,
        (Value::Slice(x), Value::Slice(y)) => seq_eq(x.as_ref(), y.as_ref())?,
        (Value::Dict(x), Value::Dict(y)) => dict_eq(x, y)?,
        _ => a.is(b),
    })
}

fn seq_eq(x: &[Value], y: &[Value]) -> PyResult<bool> {
    if x.len() != y.len() {
        return Ok(false);
    }
    for (p, q) in x.iter().zip(y) {
        if !(p.is(q) || py_eq(p, q)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn dict_eq(x: &Dict, y: &Dict) -> PyResult<bool> {
    if x.len() != y.len() {
        return Ok(false);
    }
    for (k, v) in x.iter() {
        match y.get(k) {
            Some(w) if v.is(w) || py_eq(v, w)? => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

fn compare(op: Op, a: &Value, b: &Value) -> PyResult<bool> {
    let ord = match (a.as_number(), b.as_number()) {
        (Some(x), Some(y)) => x.num_cmp(&y),
        _ => match (a, b) {
            (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
            (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
                return seq_compare(op, x, y)
            }
            (Value::Slice(x), Value::Slice(y)) => return seq_compare(op, x.as_ref(), y.as_ref()),
            _ => {
                return Err(Raise::type_error(format!(
                    "'{}' not supported between instances of '{}' and '{}'",
                    op.symbol(),
                    a.type_name(),
                    b.type_name()
                )))
            }
        },
    };
    Ok(match ord {
        None => false,
        Some(o) => match op {
            Op::Lt => o == Ordering::Less,
            Op::Le => o != Ordering::Greater,
            Op::Gt => o == Ordering::Greater,
            Op::Ge => o != Ordering::Less,
            _ => unreachable!("{op:?} is not an ordering"),
        },
    })
}

/// Lexicographic comparison: the first pair that differs by `==` decides,
/// compared with the operator itself.
fn seq_compare(op: Op, x: &[Value], y: &[Value]) -> PyResult<bool> {
    for (p, q) in x.iter().zip(y) {
        if !(p.is(q) || py_eq(p, q)?) {
            return compare(op, p, q);
        }
    }
    let (lx, ly) = (x.len(), y.len());
    Ok(match op {
        Op::Lt => lx < ly,
        Op::Le => lx <= ly,
        Op::Gt => lx > ly,
        Op::Ge => lx >= ly,
        _ => unreachable!("{op:?} is not an ordering"),
    })
}
