//! torch's `FloorDiv.eval` with the gcd quotient it simplifies
//! (torch/utils/_sympy/functions.py).

use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

use super::facts::facts;
use torchspec_pyval::{PyResult, Raise};

use super::*;

pub(super) fn zero_division(msg: &str) -> Raise {
    Raise::new("ZeroDivisionError", msg)
}

pub(super) fn func(f: Func, args: Vec<Ex>) -> Ex {
    Rc::new(Node::Fn(f, args))
}

/// Divide every term of `p` by the integer `g` (exact by construction).
pub(super) fn div_int_exact(p: &Ex, g: &BigInt) -> PyResult<Ex> {
    let mut out = Vec::new();
    for t in add_args(p) {
        let (c, rest) = as_coeff_mul(&t);
        match c {
            Num::Int(c) => out.push(attach_coeff(&Num::Int(c / g), &rest)),
            _ => return Err(Raise::unsupported("FloorDiv gcd with a Float")),
        }
    }
    add(&out)
}

/// `term / factor` for a factor known to occur in every term's `Mul.make_args`.
pub(super) fn div_factor(p: &Ex, x: &Ex) -> PyResult<Ex> {
    // A sum that is the factor itself (`(x - 1) / (x - 1)`) is 1, not taken
    // term by term.
    if p == x {
        return Ok(int(1));
    }
    let mut out = Vec::new();
    for t in add_args(p) {
        let mut args = mul_args(&t);
        if let Some(i) = args.iter().position(|a| a == x) {
            args.remove(i);
        }
        out.push(if args.is_empty() { int(1) } else { mul(&args)? });
    }
    add(&out)
}

/// torch `simple_floordiv_gcd(p, q)`: the common integer content times the
/// factors of `q` that occur syntactically in every term of `p`. Returned
/// as the integer part and the symbolic factors.
pub(super) fn simple_floordiv_gcd(p: &Ex, q: &Ex) -> (BigInt, Vec<Ex>) {
    fn integer_coefficient(x: &Ex) -> BigInt {
        mul_args(x)
            .iter()
            .filter_map(|a| a.as_int().map(|i| i.abs()))
            .fold(BigInt::one(), |acc, i| acc * i)
    }
    fn integer_factor(e: &Ex) -> BigInt {
        let mut it = add_args(e).into_iter().map(|t| integer_coefficient(&t));
        let first = it.next().unwrap_or_else(BigInt::zero);
        it.fold(first, |acc, i| acc.gcd(&i))
    }
    let g = integer_factor(p).gcd(&integer_factor(q));
    let (pd, qd) = if g.is_zero() || g.is_one() {
        (p.clone(), q.clone())
    } else {
        match (div_int_exact(p, &g), div_int_exact(q, &g)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => (p.clone(), q.clone()),
        }
    };
    let base_splits: Vec<Vec<Ex>> = add_args(&pd).iter().map(mul_args).collect();
    let mut syms = Vec::new();
    for x in mul_args(&qd) {
        if base_splits.iter().all(|s| s.contains(&x)) {
            syms.push(x);
        }
    }
    (g, syms)
}

/// `FloorDiv(base, divisor)` with `FloorDiv.eval`.
pub fn floordiv(base: &Ex, divisor: &Ex) -> PyResult<Ex> {
    if let Some(settled) = floordiv_settled(base, divisor) {
        return settled;
    }
    if let Node::Fn(Func::FloorDiv, a) = &**base {
        let d = mul(&[a[1].clone(), divisor.clone()])?;
        return floordiv(&a[0], &d);
    }
    // (x + y) // b is x // b + y // b for the terms whose quotient is an
    // integer.
    if let Node::Int(d) = &**divisor {
        if let Some(e) = floordiv_integer_terms(base, divisor, d)? {
            return Ok(e);
        }
    }
    if let Some(e) = floordiv_gcd(base, divisor)? {
        return Ok(e);
    }
    Ok(func(Func::FloorDiv, vec![base.clone(), divisor.clone()]))
}

/// The cases `FloorDiv.eval` settles before it simplifies: a zero
/// divisor, nan and infinities, a zero base, `±1`, equal operands, two
/// numbers; and an `int_oo` that would reach the polynomial gcd.
fn floordiv_settled(base: &Ex, divisor: &Ex) -> Option<PyResult<Ex>> {
    let fd = facts(divisor);
    if fd.zero == Some(true) {
        return Some(Err(zero_division("division by zero")));
    }
    let infinite = |e: &Ex| matches!(**e, Node::IntOo { .. } | Node::Inf { .. });
    if infinite(base) && infinite(divisor)
        || matches!(**base, Node::NaN)
        || matches!(**divisor, Node::NaN)
    {
        return Some(Ok(Rc::new(Node::NaN)));
    }
    let fb = facts(base);
    if fb.zero == Some(true) {
        return Some(Ok(int(0)));
    }
    // A BooleanAtom operand (`a // True`) reaches arithmetic (`p / gcd`,
    // `term / divisor`, `base.args[1] * divisor`) and raises there.
    if base.is_bool_atom() || divisor.is_bool_atom() {
        if base == divisor {
            return Some(Ok(int(1)));
        }
        return Some(Err(boolean_atom_error()));
    }
    if fb.integer == Some(true) && divisor.is_int_value(1) {
        return Some(Ok(base.clone()));
    }
    if fb.integer == Some(true) && divisor.is_int_value(-1) {
        return Some(mul(&[base.clone(), int(-1)]));
    }
    if base == divisor {
        return Some(Ok(int(1)));
    }
    if let (Node::Int(b), Node::Int(d)) = (&**base, &**divisor) {
        return Some(Ok(int(b.div_floor(d))));
    }
    if base.is_number() && divisor.is_number() && (infinite(base) || infinite(divisor)) {
        let r =
            Num::of(base).expect("number").to_f64() / Num::of(divisor).expect("number").to_f64();
        return Some(Ok(if r == f64::INFINITY {
            Rc::new(Node::IntOo { neg: false })
        } else if r == f64::NEG_INFINITY {
            Rc::new(Node::IntOo { neg: true })
        } else if r.is_nan() {
            Rc::new(Node::NaN)
        } else {
            int(torchspec_pyval::float_to_bigint(r.floor()).expect("finite"))
        }));
    }
    if base.is_number() && divisor.is_number() {
        return Some(Err(Raise::unsupported("FloorDiv of Floats")));
    }
    // `simple_floordiv_gcd` takes int_oo as an atom (not an Integer, so no
    // integer factor); a sum divisor goes on to sympy's polynomial gcd,
    // which fails or divides in the EX domain with int_oo in it.
    if (has_infinity(base) || has_infinity(divisor)) && matches!(**divisor, Node::Add(_)) {
        if let Some(e) = int_oo_gcd_failure(base, divisor) {
            return Some(Err(e));
        }
        return Some(Err(Raise::unsupported("FloorDiv's gcd with int_oo")));
    }
    None
}

/// `(x + y) // d` is `x // d + y // d` for the terms whose quotient by the
/// Integer `d` is an integer (`FloorDiv.eval`'s `Add.make_args` loop).
fn floordiv_integer_terms(base: &Ex, divisor: &Ex, d: &BigInt) -> PyResult<Option<Ex>> {
    let mut taken = Vec::new();
    let mut quotients = Vec::new();
    for t in add_args(base) {
        // `-int_oo / d` is `-int_oo` for a positive d, an integer: the
        // term is taken, and `base - (-int_oo)` then adds `int_oo` to
        // `-int_oo` (nan). Any other `int_oo / d` is sympy's `oo` or
        // `-oo`, not an integer (IntInfinity.__truediv__ and
        // NegativeIntInfinity.__truediv__ differ).
        if let Node::IntOo { neg } = &*t {
            if *neg && d.is_positive() {
                quotients.push(Rc::new(Node::IntOo { neg: true }));
                taken.push(t.clone());
            }
            continue;
        }
        let (c, rest) = as_coeff_mul(&t);
        if let Num::Int(c) = &c {
            if (c % d).is_zero() && facts(&rest).integer == Some(true) {
                quotients.push(attach_coeff(&Num::Int(c / d), &rest));
                taken.push(t.clone());
            }
        }
    }
    if !taken.is_empty() {
        let taken_sum = if taken.len() == 1 {
            taken[0].clone()
        } else {
            Rc::new(Node::Add(taken))
        };
        let rest = sub(base, &taken_sum)?;
        let q = floordiv(&rest, divisor)?;
        let mut all = vec![q];
        all.extend(quotients);
        return add(&all).map(Some);
    }
    Ok(None)
}

/// `FloorDiv(base / gcd, divisor / gcd)` for the gcd `simple_floordiv_gcd`
/// finds (or, for a sum divisor, the `sympy.gcd` cases modelled); `None`
/// when there is nothing to divide out.
fn floordiv_gcd(base: &Ex, divisor: &Ex) -> PyResult<Option<Ex>> {
    let (g, syms) = simple_floordiv_gcd(base, divisor);
    if matches!(**divisor, Node::Add(_)) && g.is_one() && syms.is_empty() {
        // torch falls back to sympy.gcd (a polynomial gcd) here. Modelled:
        // the base an integer multiple of the divisor, or the divisor a
        // factor of the base.
        if let Some(k) = integer_multiple(base, divisor)? {
            return floordiv(&k, &int(1)).map(Some);
        }
        if let Node::Mul(args) = &**base {
            if let Some(i) = args.iter().position(|a| a == divisor) {
                let mut rest = args.clone();
                rest.remove(i);
                return floordiv(&simplify_quotient(&mul(&rest)?)?, &int(1)).map(Some);
            }
        }
        if let Some(q) = integer_over_poly(base, divisor)? {
            return Ok(Some(q));
        }
        // Otherwise sympy.gcd must be proved 1 (see `poly_coprime`); other
        // polynomial gcds (`(x*y + x)//(x**2 + x)`) are not modelled.
        // The quotients come out expanded, as simplify leaves them when
        // the common factor cancels syntactically; from a power of a sum
        // with a content it keeps the power (`(3*a + 6)**3 / (a + 2)` is
        // `27*(a + 2)**2`): not modelled.
        if let (false, Some((b, d))) = (
            has_power_of_sum(base) || has_power_of_sum(divisor),
            linear_gcd_quotients(base, divisor)?,
        ) {
            return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?).map(Some);
        }
        if let Some((b, d)) = monomial_gcd_quotients(base, divisor)? {
            return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?).map(Some);
        }
        if !poly_coprime(base, divisor) && !certified_coprime(base, divisor) {
            return Err(Raise::unsupported(
                "sympy.gcd of two polynomials with a common factor (FloorDiv's safe_gcd)",
            ));
        }
    }
    if !(g.is_zero() || g.is_one() && syms.is_empty()) {
        let mut b = div_int_exact(base, &g)?;
        let mut d = div_int_exact(divisor, &g)?;
        for x in &syms {
            b = div_factor(&b, x)?;
            d = div_factor(&d, x)?;
        }
        return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?).map(Some);
    }
    Ok(None)
}

/// `FloorDiv(n, q)` for an integer `n` and a polynomial `q`: `sympy.gcd`
/// is the gcd of `n` and `q`'s integer content, taken from the expanded
/// `q` (`a**2 - a*(a - 2)` is `2*a`: `6 // that` is `3 // a`). `None` when
/// it is 1; unsupported when the expanded quotient's terms share a factor
/// (what `sympy.simplify` makes of it is not modelled).
pub(super) fn integer_over_poly(base: &Ex, divisor: &Ex) -> PyResult<Option<Ex>> {
    let (Node::Int(n), Some(qq)) = (&**base, as_poly(divisor)) else {
        return Ok(None);
    };
    let g = qq.iter().fold(n.abs(), |g, (c, _)| g.gcd(c));
    if g.is_zero() || g.is_one() {
        return Ok(None);
    }
    // A power of a sum in `q` can keep its structure through simplify
    // (`b**3 - (b - 4)**3` over 4 is `b**3/4 - (b - 4)**3/4`) unless the
    // expanded quotient is linear (`(b + 3)**2 - b**2` over 3 is `2*b + 3`):
    // not modelled.
    let power_of_sum = |t: &Ex| {
        mul_args(t)
            .iter()
            .any(|f| matches!(&**f, Node::Pow(b, _) if matches!(**b, Node::Add(_))))
    };
    let linear = qq
        .iter()
        .all(|(_, m)| m.iter().map(|(_, k)| *k).sum::<u32>() <= 1);
    if !linear && add_args(divisor).iter().any(power_of_sum) {
        return Err(Raise::unsupported(
            "sympy.simplify of a quotient with a power of a sum (FloorDiv's safe_gcd)",
        ));
    }
    let quotient: Poly = poly_norm(qq.iter().map(|(c, m)| (c / &g, m.clone())).collect());
    // simplify's `cancel` expands the quotient, and the expanded sum is
    // the shortest form it finds unless its terms share a factor.
    let quotient = poly_to_ex(&quotient)?;
    if !simplify_stable(&quotient) {
        return Err(Raise::unsupported(
            "sympy.simplify of a polynomial quotient (FloorDiv's safe_gcd)",
        ));
    }
    floordiv(&int(n / &g), &quotient).map(Some)
}

/// An item simplify leaves alone: a symbol, its integer power, or a torch
/// function whose arguments simplify leaves alone.
pub(super) fn simplify_atomic(f: &Ex) -> bool {
    match &**f {
        Node::Sym(_) => true,
        Node::Pow(b, e) => matches!(**b, Node::Sym(_)) && e.as_int().is_some(),
        Node::Fn(Func::FloorDiv | Func::Mod | Func::PythonMod, args) => args
            .iter()
            .all(|a| matches!(**a, Node::Int(_)) || simplify_stable(a)),
        _ => false,
    }
}

/// A monomial: an integer coefficient times simplify-atomic items.
pub(super) fn simplify_monomial(e: &Ex) -> bool {
    let (c, rest) = as_coeff_mul(e);
    matches!(c, Num::Int(_))
        && (rest.is_int_value(1) || mul_args(&rest).iter().all(simplify_atomic))
}

/// Expressions `sympy.simplify` returns unchanged (checked against sympy
/// 1.14 shape by shape): monomials, and sums of monomials with no factor
/// common to every term (`a*b + a` would become `a*(b + 1)`).
pub(super) fn simplify_stable(e: &Ex) -> bool {
    match &**e {
        Node::Add(terms) => {
            if !terms.iter().all(simplify_monomial) {
                return false;
            }
            let mut common: Option<Vec<Ex>> = None;
            for t in terms {
                let (_, rest) = as_coeff_mul(t);
                let bases: Vec<Ex> = if rest.is_int_value(1) {
                    vec![]
                } else {
                    mul_args(&rest)
                        .iter()
                        .map(|f| match &**f {
                            Node::Pow(b, _) => b.clone(),
                            _ => f.clone(),
                        })
                        .collect()
                };
                common = Some(match common {
                    None => bases,
                    Some(c) => c.into_iter().filter(|b| bases.contains(b)).collect(),
                });
            }
            common.is_none_or(|c| c.is_empty())
        }
        _ => simplify_monomial(e),
    }
}

/// A sum of integer multiples of single atomic items (the shape the sign
/// rule of `simplify_quotient` was checked on).
pub(super) fn is_plain_linear(e: &Ex) -> bool {
    let Node::Add(terms) = &**e else { return false };
    simplify_stable(e)
        && terms.iter().all(|t| {
            let (_, rest) = as_coeff_mul(t);
            rest.is_int_value(1) || simplify_atomic(&rest)
        })
}

/// simplify's `together` / `gcd_terms` step on a sum of monomials whose
/// terms all share a generator: the common monomial and the positive
/// integer content come out (`a*b + a` is `a*(b + 1)`, `2*a**2 + 2*a` is
/// `2*a*(a + 1)`, `-a*b - a` is `a*(-b - 1)`), when what stays inside is
/// itself stable. `None` when there is no common generator.
pub(super) fn factor_common_monomial(x: &Ex) -> PyResult<Option<Ex>> {
    let Node::Add(terms) = &**x else {
        return Ok(None);
    };
    if !terms.iter().all(simplify_monomial) {
        return Ok(None);
    }
    let Some(p) = as_poly(x) else { return Ok(None) };
    if p.len() != terms.len() {
        return Ok(None);
    }
    let mut common: Vec<(Ex, u32)> = p[0].1.clone();
    for (_, m) in &p[1..] {
        common = common
            .into_iter()
            .filter_map(|(g, k)| {
                m.iter()
                    .find(|(h, _)| *h == g)
                    .map(|(_, j)| (g.clone(), k.min(*j)))
            })
            .collect();
    }
    if common.is_empty() {
        return Ok(None);
    }
    let content = p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c));
    let mut inner = Vec::new();
    for (c, m) in &p {
        let mut f = vec![int(c / &content)];
        for (g, k) in m {
            let k0 = common.iter().find(|(h, _)| h == g).map_or(0, |(_, j)| *j);
            if *k > k0 {
                f.push(make_pow(g, &BigInt::from(k - k0)));
            }
        }
        inner.push(mul(&f)?);
    }
    let inner = add(&inner)?;
    if !simplify_stable(&inner) || factor_common_monomial(&inner)?.is_some() {
        return Err(Raise::unsupported(
            "sympy.simplify of a nested factorization",
        ));
    }
    let mut f = vec![int(content)];
    for (g, k) in &common {
        f.push(make_pow(g, &BigInt::from(*k)));
    }
    f.push(inner);
    // Mul(2, a, a + 1) keeps the sum (no two-argument distribution).
    let factored = mul(&f)?;
    // simplify keeps the shorter by `count_ops`, the factored one on a tie
    // (`x**2 + x` is `x*(x + 1)`, `x**3 + x` stays).
    if count_ops(&factored)? > count_ops(x)? {
        return Ok(Some(x.clone()));
    }
    Ok(Some(factored))
}

/// `sympy.count_ops(e)` for sums, products and powers of symbols and
/// integers: an ADD or SUB between terms (a NEG if every term is
/// negative), a MUL between factors (a NEG for a negative coefficient, which
/// counts as a factor unless it is 1), a POW per power.
pub(super) fn count_ops(e: &Ex) -> PyResult<usize> {
    Ok(match &**e {
        Node::Add(terms) => {
            let mut ops = terms.len() - 1;
            let mut negs = 0;
            for t in terms {
                if super::facts::could_extract_minus_sign(t) {
                    negs += 1;
                    ops += count_ops(&neg(t)?)?;
                } else {
                    ops += count_ops(t)?;
                }
            }
            ops + usize::from(negs == terms.len())
        }
        Node::Mul(_) => {
            let (c, rest) = as_coeff_mul(e);
            let factors = if rest.is_int_value(1) {
                vec![]
            } else {
                mul_args(&rest)
            };
            let coeff = usize::from(!matches!(&c, Num::Int(i) if i.abs().is_one()));
            let mut ops = usize::from(c.is_negative()) + (factors.len() + coeff).saturating_sub(1);
            for f in &factors {
                ops += count_ops(f)?;
            }
            ops
        }
        Node::Pow(b, x) => 1 + count_ops(b)? + count_ops(x)?,
        Node::Fn(_, args) => {
            let mut ops = 1;
            for a in args {
                ops += count_ops(a)?;
            }
            ops
        }
        _ => 0,
    })
}

/// `sympy.simplify(x)` for the quotients FloorDiv's gcd path builds, as far
/// as it is modelled: atoms, monomials and content-1 linear sums stay; a
/// product of a coefficient, symbols and one such sum is rewritten the way
/// simplify's operation count prefers (`signsimp` pulls the sign out of an
/// all-negative sum; a negative coefficient moves into a mixed-sign sum:
/// `-3*b*(1 - a)` is `3*b*(a - 1)`). Anything else is not modelled.
pub(super) fn simplify_quotient(x: &Ex) -> PyResult<Ex> {
    let atomic = simplify_atomic;
    if let Some(f) = factor_common_monomial(x)? {
        return Ok(f);
    }
    match &**x {
        Node::Int(_) => return Ok(x.clone()),
        _ if simplify_stable(x) => return Ok(x.clone()),
        Node::Mul(_) => {
            let (c, rest) = as_coeff_mul(x);
            let factors = mul_args(&rest);
            if let Num::Int(ci) = &c {
                if factors.iter().all(atomic) {
                    return Ok(x.clone());
                }
                let sums: Vec<&Ex> = factors
                    .iter()
                    .filter(|f| matches!(***f, Node::Add(_)))
                    .collect();
                // (A sum with content > 1 also gives its content up:
                // `-a*(2*b - 2)` is `2*a*(1 - b)`; not modelled.)
                if sums.len() == 1
                    && is_plain_linear(sums[0])
                    && as_poly(sums[0]).is_some_and(|p| {
                        p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c)).is_one()
                    })
                    && factors
                        .iter()
                        .all(|f| atomic(f) || matches!(**f, Node::Add(_)))
                {
                    let a = sums[0];
                    let n = add_args(a).len();
                    let negs = add_args(a)
                        .iter()
                        .filter(|t| super::facts::could_extract_minus_sign(t))
                        .count();
                    let flip = negs == n || (ci.is_negative() && negs > 0 && negs < n);
                    if !flip {
                        return Ok(x.clone());
                    }
                    let mut out = vec![int(-ci.clone())];
                    for f in &factors {
                        out.push(if f == a { neg(f)? } else { f.clone() });
                    }
                    return mul(&out);
                }
            }
        }
        _ => {}
    }
    Err(Raise::unsupported(format!(
        "sympy.simplify of `{}` in FloorDiv's gcd path",
        crate::sym::print::sstr(x)
    )))
}

/// Whether an infinity or nan occurs in `e`.
pub fn has_infinity(e: &Ex) -> bool {
    match &**e {
        Node::IntOo { .. } | Node::Inf { .. } | Node::NaN => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(has_infinity)
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => has_infinity(a) || has_infinity(b),
        Node::Not(a) => has_infinity(a),
        _ => false,
    }
}

/// The class name Python reports for a sympy Boolean in an operator error.
pub(super) fn boolean_class_name(e: &Ex) -> &'static str {
    match &**e {
        Node::True => "BooleanTrue",
        Node::False => "BooleanFalse",
        Node::Rel(op, ..) => op.class_name(),
        Node::And(_) => "And",
        Node::Or(_) => "Or",
        _ => "Not",
    }
}
