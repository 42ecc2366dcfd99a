//! Mirrors torch's `bound_sympy` (torch/utils/_sympy/value_ranges.py) as
//! far as `%` and the spec ShapeEnv need it: the bounds of an expression
//! from the registered var ranges, with the errors `ValueRanges` raises.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

use super::expr::facts::*;
use super::expr::{Ex, Func, Node, Num};

/// An extended integer bound.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ext {
    /// `-oo`: no lower bound.
    NegInf,
    /// A finite bound.
    Fin(BigInt),
    /// `oo`: no upper bound.
    PosInf,
}

fn ext_add(a: &Ext, b: &Ext) -> Option<Ext> {
    Some(match (a, b) {
        (Ext::Fin(x), Ext::Fin(y)) => Ext::Fin(x + y),
        (Ext::NegInf, Ext::PosInf) | (Ext::PosInf, Ext::NegInf) => return None,
        (Ext::NegInf, _) | (_, Ext::NegInf) => Ext::NegInf,
        _ => Ext::PosInf,
    })
}

fn ext_mul(a: &Ext, b: &Ext) -> Ext {
    let sign = |x: &Ext| match x {
        Ext::NegInf => -1,
        Ext::PosInf => 1,
        Ext::Fin(i) => {
            if i.is_zero() {
                0
            } else if i.is_negative() {
                -1
            } else {
                1
            }
        }
    };
    match (a, b) {
        (Ext::Fin(x), Ext::Fin(y)) => Ext::Fin(x * y),
        // `safe_mul`: 0 * oo is 0.
        _ => match sign(a) * sign(b) {
            0 => Ext::Fin(BigInt::zero()),
            s if s > 0 => Ext::PosInf,
            _ => Ext::NegInf,
        },
    }
}

/// `bound_sympy(expr)`: the value range of an integer expression from the
/// symbols' registered ranges (`None`: unknown, i.e. unbounded). A range
/// whose bound is NaN (`int_oo + -int_oo`) counts as unknown here; see
/// [`try_bounds`] for the assertion `bound_sympy` raises there.
pub fn bounds(e: &Ex) -> (Ext, Ext) {
    try_bounds(e).unwrap_or((Ext::NegInf, Ext::PosInf))
}

/// What `bound_sympy` raises instead of giving a range.
pub enum BoundRaise {
    /// A bound that is NaN: `ValueRanges` raises
    /// `AssertionError("sympy expression is NaN")`.
    NaN,
    /// Another exception (type, message): sympy refusing a BooleanAtom
    /// exponent in `pow_by_natural`.
    Raise(&'static str, String),
}

impl BoundRaise {
    fn into_raise(self) -> torchspec_pyval::Raise {
        match self {
            BoundRaise::NaN => {
                torchspec_pyval::Raise::new("AssertionError", "sympy expression is NaN")
            }
            BoundRaise::Raise(ty, msg) => torchspec_pyval::Raise::new(ty, msg),
        }
    }
}

/// `pow_by_natural` of a base range and a BooleanAtom exponent
/// (`PowByNatural(a, False)`): every branch uses the exponent as a number,
/// which sympy refuses. A singleton base goes to `safe_pow` (`exp % 2` for
/// a negative base, else `exponent < 0`); a base at least 1 clamps the
/// exponent with `b & ValueRanges(0, int_oo)`, whose intersection asserts;
/// any other base takes `b.lower % 2`.
fn bool_exponent(base: &(Ext, Ext), atom: &str) -> BoundRaise {
    let atom_use = || {
        BoundRaise::Raise(
            "TypeError",
            "BooleanAtom not allowed in this context.".into(),
        )
    };
    let one = Ext::Fin(BigInt::from(1));
    if base.0 == base.1 {
        return match &base.0 {
            Ext::NegInf => atom_use(),
            Ext::Fin(v) if v.is_negative() => atom_use(),
            _ => BoundRaise::Raise(
                "TypeError",
                "\nA Boolean argument can only be used in Eq and Ne; all other\nrelationals expect real expressions."
                    .into(),
            ),
        };
    }
    if base.0 >= one {
        return BoundRaise::Raise(
            "AssertionError",
            format!("(VR[{atom}, {atom}], VR[0, int_oo])"),
        );
    }
    atom_use()
}

/// `bound_sympy(expr)`, or what it raises: [`BoundRaise::NaN`] where a sum
/// adds `int_oo` to `-int_oo` (a power past `sys.maxsize` is `int_oo`, as
/// `safe_pow` clamps).
pub fn try_bounds(e: &Ex) -> Result<(Ext, Ext), BoundRaise> {
    let unknown = (Ext::NegInf, Ext::PosInf);
    Ok(match &**e {
        Node::Int(i) => (Ext::Fin(i.clone()), Ext::Fin(i.clone())),
        Node::IntOo { neg: true } => (Ext::NegInf, Ext::NegInf),
        Node::IntOo { neg: false } => (Ext::PosInf, Ext::PosInf),
        Node::Sym(s) => (
            s.lower.clone().map_or(Ext::NegInf, Ext::Fin),
            s.upper.clone().map_or(Ext::PosInf, Ext::Fin),
        ),
        Node::Add(args) => add_bounds(args)?,
        Node::Mul(args) => mul_bounds(args)?,
        Node::Pow(b, x) => {
            let Some(n) = x.as_int() else {
                return Ok(unknown);
            };
            pow_bounds(try_bounds(b)?, n)
        }
        // pow_by_natural with a BooleanAtom exponent raises; its other
        // ranges are not modelled here (unknown).
        Node::Fn(Func::PowByNatural, args) => match *args[1] {
            Node::True => return Err(bool_exponent(&try_bounds(&args[0])?, "True")),
            Node::False => return Err(bool_exponent(&try_bounds(&args[0])?, "False")),
            _ => unknown,
        },
        // ValueRangeAnalysis.mod (C semantics) and SymPyValueRangeAnalysis
        // .python_mod.
        Node::Fn(Func::Mod, args) => vr_mod(try_bounds(&args[0])?, try_bounds(&args[1])?),
        Node::Fn(Func::PythonMod, args) => {
            vr_python_mod(try_bounds(&args[0])?, try_bounds(&args[1])?)
        }
        Node::Fn(Func::FloorDiv, args) => vr_floordiv(try_bounds(&args[0])?, try_bounds(&args[1])?),
        Node::Fn(Func::BitwiseAnd, args) => {
            vr_bitwise_and(bitwise_operand(&args[0])?, bitwise_operand(&args[1])?)
        }
        Node::Fn(Func::BitwiseOr, args) => {
            vr_bitwise_or(bitwise_operand(&args[0])?, bitwise_operand(&args[1])?)
        }
        _ => unknown,
    })
}

/// The range of a sum: the sums of the bounds (`int_oo - int_oo` raises).
fn add_bounds(args: &[Ex]) -> Result<(Ext, Ext), BoundRaise> {
    let mut lo = Ext::Fin(BigInt::zero());
    let mut hi = Ext::Fin(BigInt::zero());
    for a in args {
        let (l, h) = try_bounds(a)?;
        match (ext_add(&lo, &l), ext_add(&hi, &h)) {
            (Some(l), Some(h)) => {
                lo = l;
                hi = h;
            }
            _ => return Err(BoundRaise::NaN),
        }
    }
    Ok((lo, hi))
}

/// The range of a product: the least and greatest of the four bound
/// products, factor by factor.
fn mul_bounds(args: &[Ex]) -> Result<(Ext, Ext), BoundRaise> {
    let mut acc = (Ext::Fin(BigInt::from(1)), Ext::Fin(BigInt::from(1)));
    for a in args {
        let b = try_bounds(a)?;
        let c = [
            ext_mul(&acc.0, &b.0),
            ext_mul(&acc.0, &b.1),
            ext_mul(&acc.1, &b.0),
            ext_mul(&acc.1, &b.1),
        ];
        acc = (
            c.iter().min().cloned().expect("4"),
            c.iter().max().cloned().expect("4"),
        );
    }
    Ok(acc)
}

/// pow_by_natural with a singleton exponent `n`: convex_min_zero_map for
/// an even one, increasing_map for an odd one.
fn pow_bounds((lo, hi): (Ext, Ext), n: &BigInt) -> (Ext, Ext) {
    let (pl, ph) = (pow_ext(&lo, n), pow_ext(&hi, n));
    let zero = Ext::Fin(BigInt::zero());
    if n.is_even() && lo <= zero && zero <= hi {
        (zero, std::cmp::max(pl, ph))
    } else {
        (std::cmp::min(pl.clone(), ph.clone()), std::cmp::max(pl, ph))
    }
}

/// SymPyValueRangeAnalysis.python_mod: `mod` for non-negative operands,
/// else the divisor's range less one step toward zero.
fn vr_python_mod(x: (Ext, Ext), y: (Ext, Ext)) -> (Ext, Ext) {
    let zero = Ext::Fin(BigInt::zero());
    if x.0 >= zero && y.0 >= zero {
        return vr_mod(x, y);
    }
    let lower = if y.0 < zero {
        ext_add(&y.0, &Ext::Fin(BigInt::from(1))).unwrap_or(Ext::NegInf)
    } else {
        zero.clone()
    };
    let upper = if y.1 > zero {
        ext_add(&y.1, &Ext::Fin(BigInt::from(-1))).unwrap_or(Ext::PosInf)
    } else {
        zero
    };
    (lower, upper)
}

/// ValueRangeAnalysis.bitwise_and: a finite negative lower bound rounds
/// down to a power of two; anything else (even -int_oo) is 0.
fn vr_bitwise_and(a: (Ext, Ext), b: (Ext, Ext)) -> (Ext, Ext) {
    let lower = match std::cmp::min(&a.0, &b.0) {
        Ext::Fin(l) if l.is_negative() => {
            let m: BigInt = -l - 1;
            Ext::Fin(-(BigInt::from(1) << m.bits() as usize))
        }
        _ => Ext::Fin(BigInt::zero()),
    };
    (lower, std::cmp::max(a.1, b.1))
}

/// ValueRangeAnalysis.bitwise_or: a positive finite upper bound rounds up
/// to a power of two minus one; a negative one is -1.
fn vr_bitwise_or(a: (Ext, Ext), b: (Ext, Ext)) -> (Ext, Ext) {
    let zero = BigInt::zero();
    let upper = match std::cmp::max(&a.1, &b.1) {
        Ext::Fin(u) if u.is_zero() => Ext::Fin(zero),
        Ext::Fin(u) if u.is_positive() => Ext::Fin((BigInt::from(1) << u.bits() as usize) - 1),
        Ext::Fin(_) => Ext::Fin(BigInt::from(-1)),
        inf => inf.clone(),
    };
    (std::cmp::min(a.0, b.0), upper)
}

/// The range of a bitwise operand: a BooleanAtom counts as 0 or 1
/// (`_bool_to_int`); a BooleanAtom pair folds before any range is taken.
fn bitwise_operand(e: &Ex) -> Result<(Ext, Ext), BoundRaise> {
    let bit = |v: i64| (Ext::Fin(BigInt::from(v)), Ext::Fin(BigInt::from(v)));
    Ok(match &**e {
        Node::True => bit(1),
        Node::False => bit(0),
        _ => try_bounds(e)?,
    })
}

fn pow_ext(x: &Ext, n: &BigInt) -> Ext {
    match x {
        // `safe_pow`: a power past `sys.maxsize` in absolute value is
        // `int_oo`, signed by the base for an odd exponent.
        Ext::Fin(v) => match num_traits::ToPrimitive::to_usize(n) {
            Some(k) if (v.bits() as usize).saturating_mul(k) < 1 << 16 => {
                let p = num_traits::pow(v.clone(), k);
                if p.abs() > BigInt::from(i64::MAX) {
                    if p.is_negative() {
                        Ext::NegInf
                    } else {
                        Ext::PosInf
                    }
                } else {
                    Ext::Fin(p)
                }
            }
            _ => {
                if v.is_negative() && n.is_odd() {
                    Ext::NegInf
                } else {
                    Ext::PosInf
                }
            }
        },
        Ext::PosInf => Ext::PosInf,
        Ext::NegInf => {
            if n.is_odd() {
                Ext::NegInf
            } else {
                Ext::PosInf
            }
        }
    }
}

/// One side of the `%` choice in `SymNode.mod` (sym_node.py):
/// `expr.is_nonnegative or shape_env.bound_sympy(expr).lower >= 0`, with
/// what that raises for a Boolean (its range's lower bound compared to 0)
/// or a ToFloat of one (the value-range map asserts).
pub fn mod_operand_nonneg(e: &Ex) -> torchspec_pyval::PyResult<bool> {
    use torchspec_pyval::Raise;
    if e.is_boolean() {
        return Err(Raise::type_error(
            "\nA Boolean argument can only be used in Eq and Ne; all other\nrelationals expect real expressions.",
        ));
    }
    // `bound_sympy` wraps a Number as it is: `ValueRanges(nan, nan)`
    // asserts.
    if matches!(**e, Node::NaN) {
        return Err(Raise::new("AssertionError", "sympy expression is NaN"));
    }
    if facts(e).nonneg() == Some(true) {
        return Ok(true);
    }
    if let Node::Fn(Func::ToFloat, a) = &**e {
        if a[0].is_boolean() {
            let lower = if rel_range_lower(&a[0]).map_err(BoundRaise::into_raise)? {
                "True"
            } else {
                "False"
            };
            if !matches!(*a[0], Node::True | Node::False | Node::Rel(..)) {
                return Err(Raise::unsupported(
                    "the value range of ToFloat of a BooleanFunction",
                ));
            }
            return Err(Raise::new("AssertionError", format!("ToFloat({lower})")));
        }
    }
    // bound_sympy: `if expr.has(PythonMod, Mod)`, first
    // `_rewrite_for_value_range_analysis`.
    let rewritten;
    let e = if has_mod(e) {
        rewritten = rewrite_for_vra(e)?;
        &rewritten
    } else {
        e
    };
    if is_float_expr(e) {
        return match float_bounds(e) {
            Ok((lo, _)) => Ok(lo >= 0.0),
            Err(FloatBoundFail::Raised(b)) => Err(b.into_raise()),
            Err(FloatBoundFail::Unmodelled) => Err(Raise::unsupported(
                "the value range of this float expression",
            )),
        };
    }
    let (lower, _) = try_bounds(e).map_err(BoundRaise::into_raise)?;
    Ok(matches!(lower, Ext::Fin(ref l) if !l.is_negative()) || lower == Ext::PosInf)
}

/// The lower end of a Boolean's value range (ValueRangeAnalysis `lt`,
/// `eq` and their negations over the operands' bounds, as floats when a
/// side is a float: `-1.0` is `VR[-1.0, -1.0]`): `true` when the ranges
/// prove it; a float range not modelled proves nothing. An operand whose
/// range is NaN (`a - int_oo`) raises first, as `ValueRanges` asserts.
fn rel_range_lower(e: &Ex) -> Result<bool, BoundRaise> {
    Ok(match &**e {
        Node::True => true,
        Node::Rel(op, l, r) if is_float_expr(l) || is_float_expr(r) => {
            let range = |e: &Ex| -> Result<Option<(f64, f64)>, BoundRaise> {
                if is_float_expr(e) {
                    return match float_bounds(e) {
                        Ok(r) => Ok(Some(r)),
                        Err(FloatBoundFail::Raised(b)) => Err(b),
                        Err(FloatBoundFail::Unmodelled) => Ok(None),
                    };
                }
                let (lo, hi) = try_bounds(e)?;
                Ok(Some((ext_f64(&lo), ext_f64(&hi))))
            };
            match (range(l)?, range(r)?) {
                (Some(a), Some(b)) => rel_proven(*op, &a, &b),
                _ => false,
            }
        }
        Node::Rel(op, l, r) => rel_proven(*op, &try_bounds(l)?, &try_bounds(r)?),
        _ => false,
    })
}

/// Whether ranges `a` and `b` prove `a op b`.
fn rel_proven<T: PartialOrd>(op: super::expr::Rel, a: &(T, T), b: &(T, T)) -> bool {
    use super::expr::Rel;
    match op {
        Rel::Lt => a.1 < b.0,
        Rel::Gt => b.1 < a.0,
        Rel::Ge => a.0 >= b.1,
        Rel::Le => b.0 >= a.1,
        Rel::Eq => a.0 == a.1 && b.0 == b.1 && a.0 == b.0,
        Rel::Ne => a.0 > b.1 || b.0 > a.1,
    }
}

/// An integer bound as the float `ToFloat` makes of it.
fn ext_f64(x: &Ext) -> f64 {
    match x {
        Ext::NegInf => f64::NEG_INFINITY,
        Ext::PosInf => f64::INFINITY,
        Ext::Fin(i) => num_traits::ToPrimitive::to_f64(i).unwrap_or(f64::NAN),
    }
}

/// `_rewrite_for_value_range_analysis` (torch/utils/_sympy/value_ranges.py):
/// bottom-up, `expr.func(*args)` when an argument changed, then each sum
/// gets `_rewrite_mod_subtractions_in_add`.
fn rewrite_for_vra(e: &Ex) -> torchspec_pyval::PyResult<Ex> {
    let old: Vec<&Ex> = match &**e {
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) => a.iter().collect(),
        Node::Pow(b, x) => vec![b, x],
        _ => return Ok(e.clone()),
    };
    let args = old
        .iter()
        .map(|a| rewrite_for_vra(a))
        .collect::<Result<Vec<_>, _>>()?;
    let unchanged = args.iter().zip(&old).all(|(n, o)| n == *o);
    let x = if unchanged {
        e.clone()
    } else {
        super::subst::rebuild(e, &args)?
    };
    match &*x {
        Node::Add(_) => rewrite_mod_subtractions_in_add(&x),
        _ => Ok(x),
    }
}

/// `_definitely_ge(expr, lower)`: a sympy sign fact, a symbol's range, or
/// the bound's lower end.
fn definitely_ge(e: &Ex, lower: i64) -> bool {
    let f = facts(e);
    if lower == 0 && f.nonneg() == Some(true) || lower == 1 && f.pos == Some(true) {
        return true;
    }
    match bounds(e).0 {
        Ext::Fin(l) => l >= BigInt::from(lower),
        Ext::PosInf => true,
        Ext::NegInf => false,
    }
}

/// `_rewrite_mod_subtractions_in_add`: `k*Mod(b, q) - k*b` becomes
/// `-k*q*FloorDiv(b, q)` so interval arithmetic keeps the dependency.
fn rewrite_mod_subtractions_in_add(e: &Ex) -> torchspec_pyval::PyResult<Ex> {
    use super::expr::{self, add_args, as_coeff_mul};
    let has_mod_term = add_args(e).iter().any(|t| {
        let (c, f) = as_coeff_mul(t);
        matches!(c, Num::Int(_)) && matches!(*f, Node::Fn(Func::Mod | Func::PythonMod, _))
    });
    if !has_mod_term {
        return Ok(e.clone());
    }
    let mut terms: Vec<(Ex, BigInt)> = Vec::new();
    for t in add_args(e) {
        let (c, f) = as_coeff_mul(&t);
        let Num::Int(c) = c else {
            return Err(torchspec_pyval::Raise::unsupported(
                "a Float term in a Mod-subtraction rewrite",
            ));
        };
        match terms.iter_mut().find(|(g, _)| *g == f) {
            Some((_, cc)) => *cc += c,
            None => terms.push((f, c)),
        }
    }
    let snapshot = terms.clone();
    let mut replacements = Vec::new();
    for (factor, mod_coeff) in snapshot {
        if mod_coeff.is_zero() {
            continue;
        }
        let Node::Fn(func @ (Func::Mod | Func::PythonMod), args) = &*factor else {
            continue;
        };
        let (base, divisor) = (&args[0], &args[1]);
        let valid =
            definitely_ge(divisor, 1) && (*func == Func::PythonMod || definitely_ge(base, 0));
        if !valid {
            continue;
        }
        let mut matched: Vec<(Ex, BigInt)> = Vec::new();
        let mut ok = true;
        for bt in add_args(base) {
            let (bc, bf) = as_coeff_mul(&bt);
            let Num::Int(bc) = bc else {
                ok = false;
                break;
            };
            let term_coeff = terms
                .iter()
                .find(|(g, _)| *g == bf)
                .map_or(BigInt::zero(), |(_, c)| c.clone());
            let needed = -&mod_coeff * &bc;
            if needed.is_zero() {
                continue;
            }
            let zero = BigInt::zero();
            if term_coeff.is_zero() || &term_coeff * &needed <= zero {
                ok = false;
                break;
            }
            if (needed > zero && term_coeff < needed) || (needed < zero && term_coeff > needed) {
                ok = false;
                break;
            }
            matched.push((bf, needed));
        }
        if !ok {
            continue;
        }
        for (bf, needed) in matched {
            if let Some((_, c)) = terms.iter_mut().find(|(g, _)| *g == bf) {
                *c -= needed;
            }
        }
        if let Some((_, c)) = terms.iter_mut().find(|(g, _)| *g == factor) {
            *c = BigInt::zero();
        }
        // `coeff * FloorDiv(base, divisor) * divisor`, left to right.
        let fd = expr::floordiv(base, divisor)?;
        let r = expr::mul(&[expr::int(-mod_coeff.clone()), fd])?;
        replacements.push(expr::mul(&[r, divisor.clone()])?);
    }
    if replacements.is_empty() {
        return Ok(e.clone());
    }
    let mut new_terms = Vec::new();
    for (factor, coeff) in terms {
        if coeff.is_zero() {
            continue;
        }
        new_terms.push(if factor.is_int_value(1) {
            expr::int(coeff)
        } else {
            expr::mul(&[expr::int(coeff), factor])?
        });
    }
    new_terms.extend(replacements);
    expr::add(&new_terms)
}

/// `expr.has(PythonMod, Mod)`.
fn has_mod(e: &Ex) -> bool {
    match &**e {
        Node::Fn(Func::Mod | Func::PythonMod, _) => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) => a.iter().any(has_mod),
        Node::Pow(a, _) => has_mod(a),
        _ => false,
    }
}

/// Whether `e` is a float-valued expression (a Float, a ToFloat, a float
/// division or power somewhere in it).
fn is_float_expr(e: &Ex) -> bool {
    match &**e {
        Node::Float(_) | Node::BigFloat(_) | Node::Inf { .. } => true,
        Node::Fn(Func::ToFloat | Func::FloatTrueDiv | Func::IntTrueDiv | Func::FloatPow, _) => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) => a.iter().any(is_float_expr),
        Node::Pow(b, _) => is_float_expr(b),
        _ => false,
    }
}

/// `ValueRangeAnalysis.int_truediv(a, b)` when an operand is a BooleanAtom
/// (`IntTrueDiv(False, a)`), whose range is `VR[False, False]`: the
/// membership tests `0 in b` and `-int_oo in a` compare a Boolean bound with
/// a number, and `sympy_generic_le` asserts `(lower, upper)`; a divisor
/// whose range holds 0 answers unknown before the dividend is looked at.
fn int_truediv_bool_range(a: &Ex, b: &Ex) -> Result<(f64, f64), FloatBoundFail> {
    let asserts = |atom: &Ex, other: &str| {
        let atom = if matches!(**atom, Node::True) {
            "True"
        } else {
            "False"
        };
        Err(FloatBoundFail::Raised(BoundRaise::Raise(
            "AssertionError",
            format!("({atom}, {other})"),
        )))
    };
    if b.is_bool_atom() {
        return asserts(b, "0");
    }
    let (lo, hi) = float_bounds(b)?;
    if lo <= 0.0 && 0.0 <= hi {
        return Ok((f64::NEG_INFINITY, f64::INFINITY));
    }
    asserts(a, "-int_oo")
}

/// Why [`float_bounds`] has no range.
enum FloatBoundFail {
    /// A node kind whose float range is not modelled.
    Unmodelled,
    /// What `bound_sympy` raises: a sum of ranges holding `oo` and `-oo`
    /// (`VR[-oo, oo] + VR[oo, oo]`, or the integer `a + int_oo` under a
    /// `ToFloat`) asserts `sympy expression is NaN`.
    Raised(BoundRaise),
}

/// `bound_sympy` of a float expression (ValueRangeAnalysis with float
/// arithmetic), for the node kinds modelled.
fn float_bounds(e: &Ex) -> Result<(f64, f64), FloatBoundFail> {
    use FloatBoundFail::Unmodelled;
    match &**e {
        Node::Float(f) => Ok((*f, *f)),
        // The range compares exactly; only the sign of this bound is asked.
        Node::BigFloat(m) => {
            let f = m.to_f64();
            Ok((f, f))
        }
        Node::Int(_) | Node::Sym(_) => {
            let (l, h) = try_bounds(e).map_err(FloatBoundFail::Raised)?;
            Ok((ext_f64(&l), ext_f64(&h)))
        }
        Node::Inf { neg } => {
            let v = if *neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            Ok((v, v))
        }
        Node::Fn(Func::ToFloat, a) => {
            if is_float_expr(&a[0]) || a[0].is_boolean() {
                return Err(Unmodelled);
            }
            let (l, h) = try_bounds(&a[0]).map_err(FloatBoundFail::Raised)?;
            Ok((ext_f64(&l), ext_f64(&h)))
        }
        Node::Add(args) => {
            let (mut lo, mut hi) = (0.0f64, 0.0f64);
            for a in args {
                let (l, h) = float_bounds(a)?;
                lo += l;
                hi += h;
            }
            if lo.is_nan() || hi.is_nan() {
                return Err(FloatBoundFail::Raised(BoundRaise::NaN));
            }
            Ok((lo, hi))
        }
        Node::Fn(Func::IntTrueDiv, args) if args.iter().any(|a| a.is_bool_atom()) => {
            int_truediv_bool_range(&args[0], &args[1])
        }
        // ValueRangeAnalysis.truediv / int_truediv: unknown when the
        // divisor's range holds 0 or both hold an infinity, else the corners.
        Node::Fn(Func::FloatTrueDiv | Func::IntTrueDiv, args) => {
            let (a, b) = (float_bounds(&args[0])?, float_bounds(&args[1])?);
            let inf = |r: (f64, f64)| r.0.is_infinite() || r.1.is_infinite();
            if (b.0 <= 0.0 && 0.0 <= b.1) || (inf(a) && inf(b)) {
                return Ok((f64::NEG_INFINITY, f64::INFINITY));
            }
            let c = [a.0 / b.0, a.0 / b.1, a.1 / b.0, a.1 / b.1];
            if c.iter().any(|x| x.is_nan()) {
                return Err(Unmodelled);
            }
            Ok((
                c.iter().cloned().fold(f64::INFINITY, f64::min),
                c.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            ))
        }
        Node::Mul(args) => {
            // coordinatewise_monotone_map with safe_mul (0 * inf is 0).
            let safe_mul = |a: f64, b: f64| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
            let mut acc = (1.0f64, 1.0f64);
            for a in args {
                let (l, h) = float_bounds(a)?;
                let c = [
                    safe_mul(acc.0, l),
                    safe_mul(acc.0, h),
                    safe_mul(acc.1, l),
                    safe_mul(acc.1, h),
                ];
                acc = (
                    c.iter().cloned().fold(f64::INFINITY, f64::min),
                    c.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                );
            }
            Ok(acc)
        }
        _ => Err(Unmodelled),
    }
}

/// The `%` choice in `SymNode.mod`: `expr.is_nonnegative or
/// bound_sympy(expr).lower >= 0`.
pub fn known_nonneg(e: &Ex) -> bool {
    if facts(e).nonneg() == Some(true) {
        return true;
    }
    matches!(bounds(e).0, Ext::Fin(ref l) if !l.is_negative())
}

fn contains_zero(r: &(Ext, Ext)) -> bool {
    let z = Ext::Fin(BigInt::zero());
    r.0 <= z && z <= r.1
}

/// `ValueRangeAnalysis.mod` (C semantics).
fn vr_mod(x: (Ext, Ext), y: (Ext, Ext)) -> (Ext, Ext) {
    if contains_zero(&y) {
        return (Ext::NegInf, Ext::PosInf);
    }
    let fin = |v: BigInt| Ext::Fin(v);
    if y.0 == y.1 {
        let Ext::Fin(yv) = &y.0 else {
            return (Ext::NegInf, Ext::PosInf);
        };
        let yv = yv.abs();
        // c_div: truncating division; infinities stay infinite.
        let c_div = |a: &Ext| match a {
            Ext::Fin(v) => Ext::Fin(v / &yv),
            o => o.clone(),
        };
        let c_mod = |a: &Ext| match a {
            Ext::Fin(v) => {
                let r = v.abs() % &yv;
                Ext::Fin(if v.is_negative() { -r } else { r })
            }
            o => o.clone(),
        };
        if c_div(&x.0) == c_div(&x.1) {
            return (c_mod(&x.0), c_mod(&x.1));
        }
        let zero = Ext::Fin(BigInt::zero());
        let one = BigInt::from(1);
        if x.1 < zero {
            return (fin(-&yv + &one), zero);
        }
        if x.0 > zero {
            return (zero, fin(&yv - &one));
        }
        let lower = std::cmp::max(fin(-&yv + &one), x.0);
        let upper = std::cmp::min(fin(&yv - &one), x.1);
        return (lower, upper);
    }
    // Too difficult: +-(max |y| - 1).
    let abs_upper = std::cmp::max(
        match &y.0 {
            Ext::Fin(v) => Ext::Fin(v.abs()),
            _ => Ext::PosInf,
        },
        match &y.1 {
            Ext::Fin(v) => Ext::Fin(v.abs()),
            _ => Ext::PosInf,
        },
    );
    match abs_upper {
        Ext::Fin(u) => {
            let u = u - 1;
            (Ext::Fin(-&u), Ext::Fin(u))
        }
        _ => (Ext::NegInf, Ext::PosInf),
    }
}

/// `FloorDiv(x, y)` of two bounds, as `ValueRangeAnalysis.floordiv` forms
/// its corner products.
fn floordiv_ext(x: &Ext, y: &Ext) -> Ext {
    match (x, y) {
        (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a.div_floor(b)),
        // number / infinity: float division gives (+-)0.0, floored to 0 (or
        // -1 for a negative numerator over +inf, since -0.x floors to -1 only
        // when non-zero: float(a)/inf is -0.0 -> floor 0).
        (Ext::Fin(_), _) => Ext::Fin(BigInt::zero()),
        (_, Ext::Fin(b)) => {
            let neg = matches!(x, Ext::NegInf) != b.is_negative();
            if neg {
                Ext::NegInf
            } else {
                Ext::PosInf
            }
        }
        // inf / inf is nan: sign(x)*sign(y)*int_oo.
        _ => {
            let neg = matches!(x, Ext::NegInf) != matches!(y, Ext::NegInf);
            if neg {
                Ext::NegInf
            } else {
                Ext::PosInf
            }
        }
    }
}

/// `ValueRangeAnalysis.floordiv`.
fn vr_floordiv(a: (Ext, Ext), b: (Ext, Ext)) -> (Ext, Ext) {
    let zero = Ext::Fin(BigInt::zero());
    if contains_zero(&b) {
        if b.0 >= zero && a.0 >= zero {
            return (zero, Ext::PosInf);
        }
        if b.1 <= zero && a.1 <= zero {
            return (zero, Ext::PosInf);
        }
        if b.1 <= zero && a.0 >= zero {
            return (Ext::NegInf, zero);
        }
        if b.0 >= zero && a.1 <= zero {
            return (Ext::NegInf, zero);
        }
        return (Ext::NegInf, Ext::PosInf);
    }
    let c = [
        floordiv_ext(&a.0, &b.0),
        floordiv_ext(&a.0, &b.1),
        floordiv_ext(&a.1, &b.0),
        floordiv_ext(&a.1, &b.1),
    ];
    (
        c.iter().min().cloned().expect("4"),
        c.iter().max().cloned().expect("4"),
    )
}
