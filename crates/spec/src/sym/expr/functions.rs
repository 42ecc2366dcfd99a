//! torch's `IntTrueDiv`, `FloatTrueDiv`, `ToFloat` and the bitwise
//! `BitwiseFn_bitwise_and`/`_or` (torch/utils/_sympy/functions.py).

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use super::facts::facts;
use crate::sym::mpf::Mpf;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// `IntTrueDiv(a, b)`: folds to a Float for two integers.
pub fn int_truediv(a: &Ex, b: &Ex) -> PyResult<Ex> {
    if facts(b).zero == Some(true) {
        return Err(zero_division("division by zero"));
    }
    if let (Node::Int(x), Node::Int(y)) = (&**a, &**b) {
        // Python's int / int is correctly rounded.
        let v = torchspec_pyval::ops::binary(
            torchspec_pyval::ops::Op::TrueDiv,
            &torchspec_pyval::Value::big(x.clone()),
            &torchspec_pyval::Value::big(y.clone()),
        )?;
        if let torchspec_pyval::Value::Float(f) = v {
            return Ok(float(f));
        }
    }
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        if matches!(x, Num::IntOo(_)) || matches!(y, Num::IntOo(_)) {
            return Ok(sympy_float(x.to_f64() / y.to_f64()));
        }
        return Err(Raise::unsupported("IntTrueDiv of these numbers"));
    }
    Ok(func(Func::IntTrueDiv, vec![a.clone(), b.clone()]))
}

/// `FloatTrueDiv(a, b)`.
pub fn float_truediv(a: &Ex, b: &Ex) -> PyResult<Ex> {
    if facts(b).zero == Some(true) {
        return Err(zero_division("division by zero"));
    }
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        return Ok(sympy_float(x.to_f64() / y.to_f64()));
    }
    Ok(func(Func::FloatTrueDiv, vec![a.clone(), b.clone()]))
}

/// `sympy.Float(f)` of a Python float: inf is `oo`, nan is `nan`, a zero
/// stays Float 0.0.
pub(super) fn sympy_float(f: f64) -> Ex {
    if f.is_nan() {
        Rc::new(Node::NaN)
    } else if f.is_infinite() {
        Rc::new(Node::Inf { neg: f < 0.0 })
    } else {
        float(f)
    }
}

/// `ToFloat(x)`.
pub fn to_float(a: &Ex) -> PyResult<Ex> {
    match &**a {
        // `sympy.Float(int(n))` takes max(15, len(str(n))) digits of
        // precision: past 15 digits it is no longer a double.
        Node::Int(i) if i.abs() < BigInt::from(1_000_000_000_000_000i64) => {
            Ok(float(i.to_f64().expect("small")))
        }
        Node::Int(i) => match Mpf::from_int_digits(i) {
            Some(m) => Ok(Rc::new(Node::BigFloat(Box::new(
                crate::sym::mpf::in_range(m)?,
            )))),
            None => Ok(float(0.0)),
        },
        Node::Inf { .. } => Ok(a.clone()),
        Node::IntOo { neg } => Ok(Rc::new(Node::Inf { neg: *neg })),
        _ => Ok(func(Func::ToFloat, vec![a.clone()])),
    }
}

/// `BitwiseFn_bitwise_and` / `_or` (`make_opaque_bitwise_fn`): two
/// Booleans combine logically; a Boolean counts as 0/1 only to fold two
/// integers (otherwise the unevaluated function keeps its original args).
pub fn bitwise(and: bool, a: &Ex, b: &Ex) -> PyResult<Ex> {
    // `is_Boolean`: BooleanAtom and BooleanFunction, not a Relational.
    let is_boolean_cls = |e: &Ex| {
        matches!(
            **e,
            Node::True | Node::False | Node::And(_) | Node::Or(_) | Node::Not(_)
        )
    };
    if is_boolean_cls(a) && is_boolean_cls(b) {
        return if and {
            logic_and(&[a.clone(), b.clone()])
        } else {
            logic_or(&[a.clone(), b.clone()])
        };
    }
    let conv = |e: &Ex| -> PyResult<Ex> {
        Ok(match &**e {
            Node::True => int(1),
            Node::False => int(0),
            Node::And(_) | Node::Or(_) | Node::Not(_) => {
                return Err(Raise::unsupported("bool() of a BooleanFunction"))
            }
            _ => e.clone(),
        })
    };
    let (ca, cb) = (conv(a)?, conv(b)?);
    if let (Node::Int(x), Node::Int(y)) = (&*ca, &*cb) {
        return Ok(int(if and { x & y } else { x | y }));
    }
    Ok(func(
        if and {
            Func::BitwiseAnd
        } else {
            Func::BitwiseOr
        },
        vec![a.clone(), b.clone()],
    ))
}
