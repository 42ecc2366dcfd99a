//! `Add`: `Add.flatten` and negation (sympy/core/add.py); the coefficient
//! views of an expression are in `basic`.

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::Zero;

use super::facts::facts;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// `_keep_coeff(c, rest)` / `c*rest` for a term of a sum: distributes
/// nothing, only attaches the coefficient.
pub(super) fn attach_coeff(c: &Num, rest: &Ex) -> Ex {
    if c.is_one() {
        return rest.clone();
    }
    if rest.is_int_value(1) {
        return c.to_ex();
    }
    let mut args = vec![c.to_ex()];
    args.extend(mul_args(rest));
    Rc::new(Node::Mul(args))
}

/// `sympy.Add(*args)` (Add.flatten): flatten nested sums, add up the
/// numbers, collect terms with equal non-numeric part, drop zeros.
pub fn add(args: &[Ex]) -> PyResult<Ex> {
    // AssocOp.__new__ drops the identity (Integer 0) before flattening, so a
    // lone Float 0.0 survives while `0.0 + 0.0` folds to Integer 0.
    let args: Vec<Ex> = args
        .iter()
        .filter(|a| !a.is_int_value(0))
        .cloned()
        .collect();
    match args.len() {
        0 => return Ok(int(0)),
        1 => return Ok(args[0].clone()),
        _ => {}
    }
    let mut coeff = Num::Int(BigInt::zero());
    let mut terms: Vec<(Ex, Num)> = Vec::new();
    let mut flat = Vec::new();
    for a in &args {
        flat.extend(add_args(a));
    }
    for a in flat {
        if let Some(n) = Num::of(&a) {
            coeff = coeff.add(&n)?;
            continue;
        }
        let (c, rest) = as_coeff_mul(&a);
        match terms.iter_mut().find(|(r, _)| *r == rest) {
            Some((_, cc)) => *cc = cc.add(&c)?,
            None => terms.push((rest, c)),
        }
    }
    if matches!(coeff, Num::NaN) {
        return Ok(coeff.to_ex());
    }
    let mut out: Vec<Ex> = Vec::new();
    for (rest, c) in terms {
        if c.is_zero() {
            continue;
        }
        match c {
            Num::NaN => return Err(Raise::unsupported("a nan coefficient in a sum")),
            // `Mul(c, s)` runs Mul's machinery (oo absorbs signed factors).
            Num::Inf(_) if !matches!(*rest, Node::Mul(_)) => out.push(mul(&[c.to_ex(), rest])?),
            _ => out.push(attach_coeff(&c, &rest)),
        }
    }
    if let Num::Inf(neg) = coeff {
        // Add.flatten: oo absorbs the terms that are real or of its sign.
        out.retain(|t| {
            let f = facts(t);
            let same_sign = if neg { f.nonpos() } else { f.nonneg() };
            !(same_sign == Some(true) || f.real == Some(true))
        });
    }
    crate::sym::order::sort_canonical(&mut out);
    if !coeff.is_zero() {
        out.insert(0, coeff.to_ex());
    }
    Ok(match out.len() {
        0 => int(0),
        1 => out.pop().expect("one term"),
        _ => Rc::new(Node::Add(out)),
    })
}

/// `a - b`, built as `Add(a, -b)`.
pub fn sub(a: &Ex, b: &Ex) -> PyResult<Ex> {
    add(&[a.clone(), neg(b)?])
}

/// `-a`: a number negates in place, anything else is `Mul(-1, a)`.
pub fn neg(a: &Ex) -> PyResult<Ex> {
    // `Number.__neg__` negates in place: `-Float(0.0)` stays a Float.
    if let Some(n) = Num::of(a) {
        return Ok(n.neg().to_ex());
    }
    mul(&[int(-1), a.clone()])
}
