//! torch's `Mod.eval` and `PythonMod.eval`, and Float `%`
//! (torch/utils/_sympy/functions.py, sympy/core/numbers.py).

use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::facts::{facts, is_even};
use crate::sym::mpf::Mpf;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// Python float `%` as sympy's `Float.__mod__` does it: an integral ratio
/// gives Float 0.0, otherwise the floored remainder (sign of the divisor).
pub(super) fn float_mod(x: f64, y: f64) -> Num {
    let r = x / y;
    if r.is_finite() && r.fract() == 0.0 {
        return Num::Float(0.0);
    }
    let mut m = x % y;
    if m != 0.0 && ((y < 0.0) != (m < 0.0)) {
        m += y;
    }
    float_result(m)
}

/// `p % q` of two numbers when one is a [`Num::BigFloat`]:
/// `Float.__mod__` (a Float dividend: an integral quotient `p/q`, rounded,
/// gives a Float zero; otherwise `mpf_mod`) and `Rational.__mod__` (an
/// Integer dividend: the exact remainder rounded to the divisor's
/// precision).
pub(super) fn big_float_mod(p: &Num, q: &Num) -> PyResult<Ex> {
    let prec = p.big_prec(q).expect("a BigFloat operand");
    let float_zero = || -> PyResult<Ex> { Ok(Num::BigFloat(Mpf::zero(prec)).to_ex()) };
    let (Some(a), Some(b)) = (p.as_mpf(prec), q.as_mpf(prec)) else {
        // A zero dividend: `p/q` is zero, an integral quotient, for a Float
        // `p`; `Rational.__mod__` rounds an exact zero to a Float zero.
        return float_zero();
    };
    let float = |n: &Num| matches!(n, Num::Float(_) | Num::BigFloat(_));
    if float(p) && float(q) {
        let integral = Mpf::div(&a, &b, prec).is_none_or(|r| r.is_integer_valued());
        if integral {
            return float_zero();
        }
    }
    match Mpf::modulo(&a, &b, prec)? {
        Some(m) => Ok(Num::BigFloat(crate::sym::mpf::in_range(m)?).to_ex()),
        None if matches!(p, Num::Int(_)) => float_zero(),
        None => Ok(int(0)),
    }
}

/// `Mod(p, q)` (torch's, for non-negative operands) or `PythonMod(p, q)`,
/// with their `eval`.
pub fn modulo(python: bool, p: &Ex, q: &Ex) -> PyResult<Ex> {
    let fq = facts(q);
    if fq.zero == Some(true) {
        return Err(zero_division("Modulo by zero"));
    }
    if p.is_int_value(0) {
        return Ok(int(0));
    }
    // `p in (q, -q)` negates q first: a sympy Boolean has no `__neg__`.
    if q.is_boolean() {
        return Err(Raise::type_error(format!(
            "bad operand type for unary -: '{}'",
            boolean_class_name(q)
        )));
    }
    if p.is_boolean() {
        return Err(Raise::unsupported("Mod of a Boolean"));
    }
    if p == q || *p == neg(q)? || q.is_int_value(1) {
        return Ok(int(0));
    }
    if let (Some(a), Some(b)) = (Num::of(p), Num::of(q)) {
        return mod_numbers(python, p, q, a, b);
    }
    // `r = p / q` is 0 for a Float zero `p` (0.0 times anything folds to
    // Integer 0), and `r.is_integer` returns 0.
    if matches!(**p, Node::Float(f) if f == 0.0) {
        return Ok(int(0));
    }
    // `r = p / q` is 0 for an infinite `q` (`1/int_oo` is 0).
    if matches!(**q, Node::IntOo { .. } | Node::Inf { .. }) && !p.is_number() {
        return Ok(int(0));
    }
    if has_infinity(p) || has_infinity(q) {
        return mod_infinite(python, p, q);
    }
    if q.is_int_value(2) {
        match is_even(p) {
            Some(true) => return Ok(int(0)),
            Some(false) => return Ok(int(1)),
            None => {}
        }
    }
    let (r_int, r_pos) = ratio_facts(p, q);
    if r_int == Some(true) {
        return Ok(int(0));
    }
    if rel_eval(Rel::Lt, p, q)? == Some(true) && r_pos == Some(true) {
        return Ok(p.clone());
    }
    // PythonMod's last test, `sympy.Mod(p, q) == 0`: for a monomial `q`
    // dividing every term of `p`, sympy's gcd is `q` itself (up to sign),
    // leaving `Mod(p/q, ±1)`, which is 0 for an integer `p/q`. The same
    // holds for a polynomial `q` of which `p` is an integer multiple
    // with a positive factor (`2*a + 4` and `a + 2`: the gcd is `a + 2`,
    // then `Mod(2, 1)`).
    if python && (monomial_divides_integrally(p, q) || positive_multiple(p, q)) {
        return Ok(int(0));
    }
    if python {
        match float_ratio_multiple(p, q) {
            Some(true) => return Ok(int(0)),
            Some(false) => {}
            None => {
                return Err(Raise::unsupported(
                    "Mod of a Float multiple, integer past 2**53",
                ))
            }
        }
    }
    Ok(func(
        if python { Func::PythonMod } else { Func::Mod },
        vec![p.clone(), q.clone()],
    ))
}

/// `Mod.eval` / `PythonMod.eval` of two numbers: `Mod`'s asserts of a
/// non-negative `p` and a positive `q`, then the numbers' own `%`.
fn mod_numbers(python: bool, p: &Ex, q: &Ex, a: Num, b: Num) -> PyResult<Ex> {
    if !python {
        // `if p < 0: raise AssertionError(p)`; `if q < 1: ...(q)`.
        if a.is_negative() {
            return Err(Raise::new("AssertionError", crate::sym::print::sstr(p)));
        }
        if b.num_cmp(&Num::Int(BigInt::one())) == Some(std::cmp::Ordering::Less) {
            return Err(Raise::new("AssertionError", crate::sym::print::sstr(q)));
        }
    }
    match (a, b) {
        (Num::Int(a), Num::Int(b)) => Ok(int(a.mod_floor(&b))),
        // IntInfinity.__mod__ / __rmod__, and a Float mod of oo: nan.
        (Num::IntOo(_) | Num::Inf(_), _) | (_, Num::IntOo(_) | Num::Inf(_)) => {
            Ok(Rc::new(Node::NaN))
        }
        (a @ Num::BigFloat(_), b) | (a, b @ Num::BigFloat(_)) => big_float_mod(&a, &b),
        (Num::Float(_), Num::Int(_) | Num::Float(_)) | (Num::Int(_), Num::Float(_)) => {
            let (x, y) = (
                Num::of(p).expect("n").to_f64(),
                Num::of(q).expect("n").to_f64(),
            );
            Ok(float_mod(x, y).to_ex())
        }
        _ => Err(Raise::unsupported("Mod of an infinity")),
    }
}

/// `Mod.eval` / `PythonMod.eval` with an infinity in `p` or `q` (not two
/// numbers): the forms that stay unevaluated, or the unsupported gcd.
fn mod_infinite(python: bool, p: &Ex, q: &Ex) -> PyResult<Ex> {
    // Modelled: `Mod(int_oo, x)` for a symbol x (`int_oo < x` is false),
    // and an `oo` dividend over a real divisor (`oo < q` is false; the
    // `sympy.Mod(p, q) == 0` test of PythonMod gives nan != 0). Other
    // forms reach sympy's polynomial gcd.
    let q_real = facts(q).real == Some(true) && !has_infinity(q);
    match &**p {
        // torch's Mod.eval never reaches sympy's gcd: `r = p / q` with an
        // opaque function `q` (`BitwiseFn_bitwise_and(int_oo, a)`) is not
        // known integer, and `int_oo < q` is False.
        Node::IntOo { neg: false }
            if !python && (!has_infinity(q) || matches!(**q, Node::Fn(..))) => {}
        Node::Inf { .. } if q_real => {}
        _ => {
            // `p < q` is IntInfinity.__lt__: False for int_oo, so
            // PythonMod goes on to `sympy.Mod(p, q)` and its gcd.
            if matches!(**p, Node::IntOo { neg: false }) {
                if let Some(e) = int_oo_gcd_failure(p, q) {
                    return Err(e);
                }
            }
            return Err(Raise::unsupported(
                "Mod with int_oo (sympy's polynomial gcd)",
            ));
        }
    }
    Ok(func(
        if python { Func::PythonMod } else { Func::Mod },
        vec![p.clone(), q.clone()],
    ))
}

/// `sympy.Mod(p, q) == 0` by sympy's ratio step, where one of `p` and `q`
/// has a Float coefficient and both are a number times the same term
/// (`1.0*ToFloat(a)` and `ToFloat(a)`): `r = p / q` folds to the Float
/// `cp / cq`, and `rv = p - int(r)*q` is `(cp - int(r)*cq)` times the term,
/// 0 when that coefficient is (`Float._new` makes a zero `S.Zero`). Each
/// step is one 53-bit rounding, as f64 arithmetic; `None` for an integer
/// coefficient f64 does not hold exactly (its conversion rounds too).
pub(super) fn float_ratio_multiple(p: &Ex, q: &Ex) -> Option<bool> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2**53
    let ((cp, tp), (cq, tq)) = (as_coeff_mul(p), as_coeff_mul(q));
    if tp != tq || tp.is_number() || !(matches!(cp, Num::Float(_)) || matches!(cq, Num::Float(_))) {
        return Some(false);
    }
    let exact = |n: &Num| match n {
        Num::Float(f) => Some(*f),
        Num::Int(i) => i.to_f64().filter(|f| f.abs() < EXACT),
        _ => None,
    };
    let (a, b) = (exact(&cp)?, exact(&cq)?);
    let r = a / b;
    if !r.is_finite() {
        // `int(r)` raises for nan and infinities: no ratio step.
        return Some(false);
    }
    // `int(r)` is exact, and an f64 as well: `d * cq` is one rounding.
    let d = r.trunc();
    Some(a - d * b == 0.0)
}

/// Whether `q` is one monomial (integer coefficient times powers of
/// generators) that divides every term of the polynomial `p`, with an
/// integer quotient.
pub(super) fn monomial_divides_integrally(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    let [(c, m)] = qq.as_slice() else {
        return false;
    };
    if c.is_zero() || m.is_empty() {
        return false;
    }
    poly_div_monomial(&pp, c, m)
        .and_then(|quotient| poly_to_ex(&poly_norm(quotient)).ok())
        .is_some_and(|x| facts(&x).integer == Some(true))
}

/// Whether `p` is `c * q` for a positive integer `c` and a polynomial `q`
/// of two terms or more (sympy distributes `c * (x + y)`, so `p` is the
/// expanded sum): the terms of `q`, each times `c`, are those of `p`. A
/// negative `c` is not 0 in sympy: `gcd_terms(p/G)` keeps `3*(-a - 2)/(a +
/// 2)` uncancelled (`Mod(-3*a - 6, a + 2)` is `(a + 2)*Mod(...)`).
pub(super) fn positive_multiple(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    if qq.len() < 2 || pp.len() != qq.len() {
        return false;
    }
    let (cq, mq) = &qq[0];
    let Some((cp, _)) = pp.iter().find(|(_, m)| m == mq) else {
        return false;
    };
    if cq.is_zero() || !(cp % cq).is_zero() {
        return false;
    }
    let c = cp / cq;
    c.is_positive()
        && qq
            .iter()
            .all(|(cq, mq)| pp.iter().any(|(cp, mp)| mp == mq && *cp == cq * &c))
}
