//! `Num`: sympy's `Integer`, `Float`, `int_oo`, `oo` and `nan`, and their
//! arithmetic (sympy/core/numbers.py).

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::sym::mpf::Mpf;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// A numeric value: sympy `Integer`, `Float`, `int_oo`, `oo` or `nan`.
#[derive(Clone, Debug)]
pub enum Num {
    /// `sympy.Integer`.
    Int(BigInt),
    /// A 53-bit `sympy.Float`.
    Float(f64),
    /// A Float above 53 bits of precision (zero only as the lone result of
    /// a `%`: `Float._new` makes a zero sum or product `S.Zero`).
    BigFloat(Mpf),
    /// torch's `int_oo` (`true`: `-int_oo`).
    IntOo(bool),
    /// sympy's `oo` (`true`: `-oo`).
    Inf(bool),
    /// sympy's `nan`.
    NaN,
}

/// `Float._new`: a Float result of arithmetic that is exactly zero is
/// `S.Zero` (an Integer), an infinite one is `oo`, a NaN is `nan`.
pub(crate) fn float_result(f: f64) -> Num {
    if f == 0.0 {
        Num::Int(BigInt::zero())
    } else if f.is_nan() {
        Num::NaN
    } else if f.is_infinite() {
        Num::Inf(f < 0.0)
    } else {
        Num::Float(f)
    }
}

impl Num {
    /// The node's value, if it is a number.
    pub fn of(e: &Node) -> Option<Num> {
        match e {
            Node::Int(i) => Some(Num::Int(i.clone())),
            Node::Float(f) => Some(Num::Float(*f)),
            Node::BigFloat(m) => Some(Num::BigFloat((**m).clone())),
            Node::IntOo { neg } => Some(Num::IntOo(*neg)),
            Node::Inf { neg } => Some(Num::Inf(*neg)),
            Node::NaN => Some(Num::NaN),
            _ => None,
        }
    }
    /// The number as an expression node.
    pub fn to_ex(&self) -> Ex {
        match self {
            Num::Int(i) => int(i.clone()),
            Num::Float(f) => float(*f),
            Num::BigFloat(m) => Rc::new(Node::BigFloat(Box::new(m.clone()))),
            Num::IntOo(neg) => Rc::new(Node::IntOo { neg: *neg }),
            Num::Inf(neg) => Rc::new(Node::Inf { neg: *neg }),
            Num::NaN => Rc::new(Node::NaN),
        }
    }
    /// The value as a double: `int_oo`, `oo` and an Integer past the double
    /// range are infinite, `nan` is NaN.
    pub fn to_f64(&self) -> f64 {
        match self {
            Num::Int(i) => i.to_f64().unwrap_or(f64::INFINITY),
            Num::Float(f) => *f,
            Num::BigFloat(m) => m.to_f64(),
            Num::IntOo(neg) | Num::Inf(neg) => {
                if *neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Num::NaN => f64::NAN,
        }
    }
    /// Whether the number is zero (an Integer, or a Float of any precision).
    pub fn is_zero(&self) -> bool {
        match self {
            Num::Int(i) => i.is_zero(),
            Num::Float(f) => *f == 0.0,
            Num::BigFloat(m) => m.is_zero(),
            _ => false,
        }
    }
    /// Whether the number is the Integer 1.
    pub fn is_one(&self) -> bool {
        matches!(self, Num::Int(i) if i.is_one())
    }
    /// Whether the number is below zero (`-int_oo` and `-oo` are, `nan` is
    /// not).
    pub fn is_negative(&self) -> bool {
        match self {
            Num::Int(i) => i.is_negative(),
            Num::Float(f) => *f < 0.0,
            Num::BigFloat(m) => m.neg,
            Num::IntOo(neg) | Num::Inf(neg) => *neg,
            Num::NaN => false,
        }
    }
    /// Whether the number is above zero (`int_oo` and `oo` are, `nan` is not).
    pub fn is_positive(&self) -> bool {
        match self {
            Num::Int(i) => i.is_positive(),
            Num::Float(f) => *f > 0.0,
            Num::BigFloat(m) => !m.neg && !m.is_zero(),
            Num::IntOo(neg) | Num::Inf(neg) => !*neg,
            Num::NaN => false,
        }
    }
    /// `is_finite` (an Integer, a Float, and `int_oo`, which says it is an
    /// integer and so finite).
    pub fn is_finite(&self) -> bool {
        matches!(
            self,
            Num::Int(_) | Num::Float(_) | Num::BigFloat(_) | Num::IntOo(_)
        )
    }
    /// This number as an `mpf` at `prec` bits (an Integer rounded by
    /// `from_int`, a double exactly), for arithmetic with a [`Num::BigFloat`];
    /// `None` for zero or a non-finite number.
    pub(crate) fn as_mpf(&self, prec: u32) -> Option<Mpf> {
        match self {
            Num::Int(i) => Mpf::from_int(i, prec),
            Num::Float(f) => Mpf::from_f64(*f, prec),
            Num::BigFloat(m) if !m.is_zero() => Some(m.clone()),
            _ => None,
        }
    }
    /// The precision `Float.__add__` / `__mul__` work at: the larger `_prec`
    /// (an Integer has none, a double 53 bits); `None` when neither operand
    /// is a [`Num::BigFloat`].
    pub(crate) fn big_prec(&self, o: &Num) -> Option<u32> {
        let p = |n: &Num| match n {
            Num::BigFloat(m) => Some(m.prec),
            _ => None,
        };
        match (p(self), p(o)) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
        }
    }
    /// `Float._new(mpf, prec)`: zero is `S.Zero`.
    pub(crate) fn big_float_result(m: Option<Mpf>) -> PyResult<Num> {
        Ok(match m {
            None => Num::Int(BigInt::zero()),
            Some(m) => Num::BigFloat(crate::sym::mpf::in_range(m)?),
        })
    }
    /// Number addition: Integer/Float as sympy, `int_oo` as
    /// torch/utils/_sympy/numbers.py `IntInfinity.__add__`.
    pub fn add(&self, o: &Num) -> PyResult<Num> {
        Ok(match (self, o) {
            (Num::NaN, _) | (_, Num::NaN) => Num::NaN,
            (Num::Int(a), Num::Int(b)) => Num::Int(a + b),
            (Num::IntOo(a), Num::IntOo(b)) | (Num::Inf(a), Num::Inf(b)) => {
                if a == b {
                    self.clone()
                } else {
                    Num::NaN
                }
            }
            (Num::IntOo(_), Num::Inf(_)) | (Num::Inf(_), Num::IntOo(_)) => {
                return Err(Raise::unsupported("int_oo plus oo"))
            }
            (Num::IntOo(_), _) | (Num::Inf(_), _) => self.clone(),
            (_, Num::IntOo(_)) | (_, Num::Inf(_)) => o.clone(),
            _ => match self.big_prec(o) {
                Some(prec) => match (self.as_mpf(prec), o.as_mpf(prec)) {
                    (Some(a), Some(b)) => Num::big_float_result(Mpf::add(&a, &b, prec)?)?,
                    // `x + 0` rounds x to the working precision.
                    (Some(a), None) | (None, Some(a)) => Num::big_float_result(a.round_to(prec))?,
                    (None, None) => Num::Int(BigInt::zero()),
                },
                None => float_result(self.to_f64() + o.to_f64()),
            },
        })
    }
    /// Number multiplication (`IntInfinity.__mul__` for `int_oo`).
    pub fn mul(&self, o: &Num) -> PyResult<Num> {
        Ok(match (self, o) {
            (Num::NaN, _) | (_, Num::NaN) => Num::NaN,
            (Num::Int(a), Num::Int(b)) => Num::Int(a * b),
            (Num::IntOo(_), Num::Inf(_)) | (Num::Inf(_), Num::IntOo(_)) => {
                return Err(Raise::unsupported("int_oo times oo"))
            }
            (Num::IntOo(n), x) | (x, Num::IntOo(n)) => {
                if x.is_zero() {
                    Num::NaN
                } else {
                    Num::IntOo(*n != x.is_negative())
                }
            }
            (Num::Inf(n), x) | (x, Num::Inf(n)) => {
                if x.is_zero() {
                    Num::NaN
                } else {
                    Num::Inf(*n != x.is_negative())
                }
            }
            _ => match self.big_prec(o) {
                Some(prec) => match (self.as_mpf(prec), o.as_mpf(prec)) {
                    (Some(a), Some(b)) => Num::big_float_result(Mpf::mul(&a, &b, prec))?,
                    _ => Num::Int(BigInt::zero()),
                },
                None => float_result(self.to_f64() * o.to_f64()),
            },
        })
    }
    /// `-x` (`Number.__neg__`): `nan` stays `nan`.
    pub fn neg(&self) -> Num {
        match self {
            Num::Int(i) => Num::Int(-i),
            Num::Float(f) => Num::Float(-f),
            Num::BigFloat(m) => Num::BigFloat(m.neg()),
            Num::IntOo(n) => Num::IntOo(!n),
            Num::Inf(n) => Num::Inf(!n),
            Num::NaN => Num::NaN,
        }
    }
    /// Exact numeric comparison (sympy compares Integer with Float exactly);
    /// `int_oo` sits just below `oo`.
    pub fn num_cmp(&self, o: &Num) -> Option<std::cmp::Ordering> {
        fn rank(n: &Num) -> i8 {
            match n {
                Num::Inf(true) => -2,
                Num::IntOo(true) => -1,
                Num::IntOo(false) => 1,
                Num::Inf(false) => 2,
                _ => 0,
            }
        }
        if matches!(self, Num::NaN) || matches!(o, Num::NaN) {
            return None;
        }
        let (ra, rb) = (rank(self), rank(o));
        if ra != 0 || rb != 0 {
            return Some(ra.cmp(&rb));
        }
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(b)),
            (Num::Int(a), Num::Float(b)) => torchspec_pyval::Value::big(a.clone())
                .as_number()
                .and_then(|x| x.num_cmp(&torchspec_pyval::Value::Float(*b).as_number()?)),
            (Num::Float(a), Num::Int(b)) => Num::Int(b.clone())
                .num_cmp(&Num::Float(*a))
                .map(|o| o.reverse()),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(b),
            (Num::BigFloat(a), Num::Int(b)) => a.cmp_int(b).ok(),
            (Num::Int(a), Num::BigFloat(b)) => b.cmp_int(a).ok().map(|o| o.reverse()),
            (Num::BigFloat(a), Num::BigFloat(b)) => Mpf::cmp_value(a, b).ok(),
            (Num::BigFloat(a), Num::Float(b)) => a.cmp_f64(*b),
            (Num::Float(a), Num::BigFloat(b)) => b.cmp_f64(*a).map(|o| o.reverse()),
            _ => None,
        }
    }
}
