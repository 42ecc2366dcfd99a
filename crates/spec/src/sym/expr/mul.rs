//! `Mul` and `Pow`: `Mul.flatten`, integer powers and torch's
//! `PowByNatural`/`FloatPow` (sympy/core/{mul,power}.py,
//! torch/utils/_sympy/functions.py).

use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::facts::facts;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// `base**exp` as a factor: its base and integer exponent.
pub(super) fn base_exp(e: &Ex) -> (Ex, BigInt) {
    match &**e {
        Node::Pow(b, x) => match x.as_int() {
            Some(i) => (b.clone(), i.clone()),
            None => (e.clone(), BigInt::one()),
        },
        _ => (e.clone(), BigInt::one()),
    }
}

pub(super) fn make_pow(base: &Ex, exp: &BigInt) -> Ex {
    if exp.is_one() {
        base.clone()
    } else {
        Rc::new(Node::Pow(base.clone(), int(exp.clone())))
    }
}

/// `sympy.Mul(*args)` (Mul.flatten): multiply the numbers, merge equal
/// bases by adding exponents, and distribute a number over a sum when the
/// product has exactly two factors (`2*(a + 1)` is `2*a + 2`).
pub fn mul(args: &[Ex]) -> PyResult<Ex> {
    // AssocOp.__new__ drops the identity (Integer 1) first.
    let args: Vec<Ex> = args
        .iter()
        .filter(|a| !a.is_int_value(1))
        .cloned()
        .collect();
    match args.len() {
        0 => return Ok(int(1)),
        1 => return Ok(args[0].clone()),
        _ => {}
    }
    let args = &args[..];
    // Mul.flatten's two-argument special case: Rational * Add distributes.
    if let [a, b] = args {
        if let Some(e) = distribute_pair(a, b)? {
            return Ok(e);
        }
    }
    let (mut coeff, powers) = collect_powers(args)?;
    if coeff.is_zero() || matches!(coeff, Num::NaN) {
        return Ok(coeff.to_ex());
    }
    let mut out: Vec<Ex> = Vec::new();
    for (b, e) in powers {
        if e.is_zero() {
            continue;
        }
        out.push(make_pow(&b, &e));
    }
    crate::sym::order::sort_canonical(&mut out);
    if out.is_empty() {
        return Ok(coeff.to_ex());
    }
    if out.len() == 1 && coeff.is_one() {
        return Ok(out.pop().expect("one factor"));
    }
    // A number times a single sum distributes (the two-argument rule above
    // applied to the folded product).
    if let Num::Inf(neg) = coeff {
        coeff = Num::Inf(oo_absorbs(neg, &mut out));
        if out.is_empty() {
            return Ok(coeff.to_ex());
        }
    }
    // Mul.flatten's last step: a finite number times a single sum
    // distributes (`1.5*(a + 1)` is `1.5*a + 1.5`, `int_oo*(a + 1)` too).
    // (`not nc_part`: a non-commutative sum stays a factor.)
    if out.len() == 1 && coeff.is_finite() {
        match &*out[0] {
            Node::Add(terms) if crate::sym::order::is_commutative(&out[0]) => {
                if let Num::Int(_) = coeff {
                    return mul(&[coeff.to_ex(), out[0].clone()]);
                }
                let mut dist = Vec::new();
                for t in terms {
                    let (tc, rest) = as_coeff_mul(t);
                    dist.push(attach_coeff(&coeff.mul(&tc)?, &rest));
                }
                return add(&dist);
            }
            _ => {}
        }
    }
    if !coeff.is_one() {
        out.insert(0, coeff.to_ex());
    }
    Ok(Rc::new(Node::Mul(out)))
}

/// Mul.flatten's two-argument special case: an Integer times a
/// (commutative) sum distributes; `None` for any other pair.
fn distribute_pair(a: &Ex, b: &Ex) -> PyResult<Option<Ex>> {
    let (num, other) = if matches!(**b, Node::Int(_)) {
        (b, a)
    } else {
        (a, b)
    };
    // `global_parameters.distribute and b.is_commutative`: a sum with an
    // opaque `BitwiseFn` of a Boolean stays whole (`-(a + (a | False))`).
    let sum = match (&**num, &**other) {
        (Node::Int(n), Node::Add(terms)) if crate::sym::order::is_commutative(other) => {
            Some((n, terms))
        }
        _ => None,
    };
    if let Some((n, terms)) = sum {
        if n.is_zero() {
            return Ok(Some(int(0)));
        }
        if n.is_one() {
            return Ok(Some(other.clone()));
        }
        let c = Num::Int(n.clone());
        let mut out = Vec::new();
        for t in terms {
            let (tc, rest) = as_coeff_mul(t);
            out.push(attach_coeff(&c.mul(&tc)?, &rest));
        }
        return add(&out).map(Some);
    }
    Ok(None)
}

/// Mul.flatten's first pass over the flattened factors: the product of the
/// numbers, and each base with its summed exponent, in first-seen order.
fn collect_powers(args: &[Ex]) -> PyResult<(Num, Vec<(Ex, BigInt)>)> {
    let mut coeff = Num::Int(BigInt::one());
    let mut powers: Vec<(Ex, BigInt)> = Vec::new();
    let mut flat = Vec::new();
    for a in args {
        flat.extend(mul_args(a));
    }
    for a in flat {
        if let Some(n) = Num::of(&a) {
            coeff = coeff.mul(&n)?;
            continue;
        }
        let (b, e) = base_exp(&a);
        match powers.iter_mut().find(|(pb, _)| *pb == b) {
            Some((_, pe)) => *pe += e,
            None => powers.push((b, e)),
        }
    }
    Ok((coeff, powers))
}

/// Mul.flatten: `oo` (negated when `neg`) absorbs the factors of known
/// sign; the sign of the `oo` left.
fn oo_absorbs(mut neg: bool, out: &mut Vec<Ex>) -> bool {
    out.retain(|t| {
        let f = facts(t);
        if f.pos == Some(true) {
            return false;
        }
        if f.neg == Some(true) {
            neg = !neg;
            return false;
        }
        true
    });
    neg
}

/// `sympy.Pow(base, n)` for an integer `n >= 0`: numbers fold, products
/// distribute the power over their factors, powers multiply exponents.
pub fn pow_int(base: &Ex, n: &BigInt) -> PyResult<Ex> {
    if n.is_zero() {
        return Ok(int(1));
    }
    if n.is_one() {
        return Ok(base.clone());
    }
    match &**base {
        // 0, 1 and -1 to any power need no arithmetic (`(-c)**n` splits
        // off `(-1)**n` however large n is).
        Node::Int(b) if b.is_zero() || b.is_one() => Ok(base.clone()),
        Node::Int(b) if *b == BigInt::from(-1) => Ok(int(if n.is_odd() { -1 } else { 1 })),
        Node::Int(b) => {
            let e = n
                .to_u32()
                .filter(|e| b.bits() * (*e as u64) <= 1 << 16)
                .ok_or_else(|| Raise::unsupported("a huge integer power"))?;
            Ok(int(num_traits::pow(b.clone(), e as usize)))
        }
        Node::Float(_) | Node::BigFloat(_) | Node::Inf { .. } => {
            Err(Raise::unsupported("a power of a Float"))
        }
        // IntInfinity._eval_power: a positive exponent keeps int_oo.
        Node::IntOo { neg: false } | Node::NaN => Ok(base.clone()),
        // NegativeIntInfinity._eval_power: the sign of an odd power stays.
        Node::IntOo { neg: true } => Ok(Rc::new(Node::IntOo { neg: n.is_odd() })),
        Node::Mul(args) => {
            let mut out = Vec::new();
            for a in args {
                out.push(pow_int(a, n)?);
            }
            mul(&out)
        }
        Node::Pow(b, e) => match e.as_int() {
            Some(e) => pow_int(b, &(e * n)),
            None => Ok(make_pow(base, n)),
        },
        _ => Ok(make_pow(base, n)),
    }
}

/// `safe_pow(base, exp)` (torch/utils/_sympy/functions.py): Python ints,
/// but a magnitude past `sys.maxsize` at any squaring step is `int_oo`
/// (signed by the base's sign for an odd exponent).
pub(super) fn safe_pow(base: &BigInt, exp: &BigInt) -> PyResult<Num> {
    /// `_safe_pow` on a non-negative base; `None` is `int_oo`.
    fn unsigned(base: &BigInt, exp: &BigInt, max: &BigInt) -> Option<BigInt> {
        if exp.is_zero() {
            return Some(BigInt::one());
        }
        let half = unsigned(base, &(exp / 2), max)?;
        let mut r = &half * &half;
        if r > *max {
            return None;
        }
        if exp.is_odd() {
            r *= base;
            if r > *max {
                return None;
            }
        }
        Some(r)
    }
    if exp.is_negative() {
        return Err(Raise::value_error("Exponent must be non-negative."));
    }
    let neg = base.is_negative() && exp.is_odd();
    Ok(match unsigned(&base.abs(), exp, &BigInt::from(i64::MAX)) {
        Some(r) => Num::Int(if neg { -r } else { r }),
        None => Num::IntOo(neg),
    })
}

/// `PowByNatural(base, exp)` with its `eval`.
pub fn pow_by_natural(base: &Ex, exp: &Ex) -> PyResult<Ex> {
    if let (Node::Int(b), Node::Int(e)) = (&**base, &**exp) {
        return Ok(safe_pow(b, e)?.to_ex());
    }
    if let Node::Int(e) = &**exp {
        // "Rely on regular sympy Pow for this".
        if e.is_negative() {
            return Err(Raise::unsupported("a negative integer power"));
        }
        return pow_int(base, e);
    }
    if matches!(**exp, Node::IntOo { neg: false } | Node::Inf { neg: false }) {
        let fb = facts(base);
        if fb.nonneg() == Some(true) {
            return Ok(Rc::new(Node::IntOo { neg: false }));
        }
        if fb.neg == Some(true) {
            return Err(Raise::unsupported("zoo"));
        }
    }
    Ok(func(Func::PowByNatural, vec![base.clone(), exp.clone()]))
}

/// CPython's `float ** float` when the result is complex (a negative base
/// to a non-integer power): `complex.__pow__`'s `_Py_c_pow`, as `repr`.
pub(super) fn complex_pow_repr(a: f64, b: f64) -> String {
    let vabs = a.abs();
    let len = vabs.powf(b);
    let at = 0.0f64.atan2(a);
    let phase = at * b;
    let (re, im) = (len * phase.cos(), len * phase.sin());
    let r = torchspec_pyval::float_repr;
    let im_s = if im.is_nan() {
        "nan".to_string()
    } else {
        r(im)
    };
    if re == 0.0 && re.is_sign_positive() {
        format!("{im_s}j")
    } else {
        let sign = if im_s.starts_with('-') { "" } else { "+" };
        format!("({}{sign}{im_s}j)", r(re))
    }
}

/// `FloatPow(base, exp)`: two numbers fold through Python's float `**`.
pub fn float_pow(base: &Ex, exp: &Ex) -> PyResult<Ex> {
    if let (Some(b), Some(e)) = (Num::of(base), Num::of(exp)) {
        if matches!(b, Num::NaN) || matches!(e, Num::NaN) {
            return Err(Raise::unsupported("FloatPow of nan"));
        }
        let (x, y) = (b.to_f64(), e.to_f64());
        if x == 0.0 && y < 0.0 && y.is_finite() {
            return Err(zero_division("0.0 cannot be raised to a negative power"));
        }
        if x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0 {
            return Err(Raise::type_error(format!(
                "cannot create mpf from {}",
                complex_pow_repr(x, y)
            )));
        }
        let r = x.powf(y);
        if r.is_infinite() && x.is_finite() && y.is_finite() {
            return Err(Raise::new(
                "OverflowError",
                "(34, 'Numerical result out of range')",
            ));
        }
        // sympy.Float(r): a zero stays Float 0.0; inf is oo.
        return Ok(if r.is_infinite() {
            Rc::new(Node::Inf { neg: r < 0.0 })
        } else if r.is_nan() {
            Rc::new(Node::NaN)
        } else {
            float(r)
        });
    }
    Ok(func(Func::FloatPow, vec![base.clone(), exp.clone()]))
}

/// `expr.atoms(FloorDiv)` is not empty.
pub fn contains_floordiv(e: &Ex) -> bool {
    match &**e {
        Node::Fn(Func::FloorDiv, _) => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(contains_floordiv)
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => contains_floordiv(a) || contains_floordiv(b),
        Node::Not(a) => contains_floordiv(a),
        _ => false,
    }
}

/// `TypeError` of a BooleanAtom in arithmetic (`BooleanAtom._noop`).
pub(super) fn boolean_atom_error() -> Raise {
    Raise::type_error("BooleanAtom not allowed in this context.")
}
