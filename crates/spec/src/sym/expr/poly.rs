//! Expanded polynomials over symbols and torch function applications: products,
//! substitution, division and the gcd tests `FloorDiv` and `Mod` make
//! (sympy/polys as `gcd` and `div` reach them).

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::facts::facts;
use crate::sym::polynomial::{self, Generator, Terms};
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// An expanded polynomial: (integer coefficient, generators with
/// exponents) per term, generators being symbols and torch function
/// applications (as sympy's `parallel_poly_from_expr` takes them), listed
/// in sympy's term order.
pub(super) type Poly = Terms<Ex>;

impl Generator for Ex {
    fn order(&self, other: &Self) -> std::cmp::Ordering {
        crate::sym::order::compare(self, other)
    }
}

pub(super) use polynomial::{mul as poly_mul, norm as poly_norm};

/// `e` expanded as a polynomial over symbols and torch function
/// applications (the generators `parallel_poly_from_expr` would take).
pub(super) fn as_poly(e: &Ex) -> Option<Poly> {
    Some(match &**e {
        Node::Int(i) => poly_norm(vec![(i.clone(), vec![])]),
        Node::Sym(_) | Node::Fn(..) => vec![(BigInt::one(), vec![(e.clone(), 1)])],
        Node::Add(a) => {
            let mut out = Vec::new();
            for t in a {
                out.extend(as_poly(t)?);
            }
            poly_norm(out)
        }
        Node::Mul(a) => {
            let mut acc: Poly = vec![(BigInt::one(), vec![])];
            for f in a {
                acc = poly_mul(&acc, &as_poly(f)?);
            }
            acc
        }
        Node::Pow(b, x) => {
            let n = x.as_int()?.to_u32().filter(|n| *n <= 8)?;
            polynomial::pow(&as_poly(b)?, n)
        }
        _ => return None,
    })
}

/// `p` with generator `x` replaced by the polynomial `v`.
pub(super) fn poly_subst(p: &Poly, x: &Ex, v: &Poly) -> Poly {
    let mut out = Vec::new();
    for (c, m) in p {
        let k = m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k);
        let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| g != x).cloned().collect();
        let mut term: Poly = vec![(c.clone(), rest)];
        for _ in 0..k {
            term = poly_mul(&term, v);
        }
        out.extend(term);
    }
    poly_norm(out)
}

pub(super) fn poly_gens(p: &Poly) -> Vec<Ex> {
    let mut g: Vec<Ex> = Vec::new();
    for (_, m) in p {
        for (x, _) in m {
            if !g.contains(x) {
                g.push(x.clone());
            }
        }
    }
    g
}

pub(super) fn poly_to_ex(p: &Poly) -> PyResult<Ex> {
    let mut terms = Vec::new();
    for (c, m) in p {
        let mut f = vec![int(c.clone())];
        for (g, k) in m {
            f.push(make_pow(g, &BigInt::from(*k)));
        }
        terms.push(mul(&f)?);
    }
    add(&terms)
}

/// `p / (x + c0)` by synthetic division in `x`; `None` unless exact.
pub(super) fn poly_div_monic_linear(p: &Poly, x: &Ex, c0: &BigInt) -> Option<Poly> {
    // Group by the x-free part, divide each univariate polynomial.
    // (the x-free monomial, the coefficients of its univariate polynomial in x)
    #[allow(clippy::type_complexity)]
    let mut groups: Vec<(Vec<(Ex, u32)>, Vec<BigInt>)> = Vec::new();
    for (c, m) in p {
        let k = m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k) as usize;
        let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| g != x).cloned().collect();
        let slot = match groups.iter().position(|(r, _)| *r == rest) {
            Some(i) => i,
            None => {
                groups.push((rest, Vec::new()));
                groups.len() - 1
            }
        };
        let v = &mut groups[slot].1;
        if v.len() <= k {
            v.resize(k + 1, BigInt::zero());
        }
        v[k] += c;
    }
    let mut out: Poly = Vec::new();
    for (rest, coeffs) in groups {
        // coeffs[k] is the x**k coefficient; divide by (x + c0).
        let n = coeffs.len();
        if n < 2 {
            return None;
        }
        let mut q = vec![BigInt::zero(); n - 1];
        let mut carry = BigInt::zero();
        for k in (1..n).rev() {
            q[k - 1] = &coeffs[k] + &carry;
            carry = -&q[k - 1] * c0;
        }
        // Remainder: coeffs[0] + carry must be zero.
        if !(&coeffs[0] + &carry).is_zero() {
            return None;
        }
        for (k, c) in q.into_iter().enumerate() {
            let mut m = rest.clone();
            if k > 0 {
                m.push((x.clone(), k as u32));
            }
            out.push((c, m));
        }
    }
    Some(poly_norm(out))
}

/// `sympy.gcd(p, q)` of `±int_oo` and a polynomial of degree >= 1 in one
/// generator: both become polynomials over `EX`; the subresultant PRS
/// pseudo-divides the polynomial by the constant `[EX(int_oo)]`, and
/// `c*int_oo - int_oo*c` is nan, not zero, so the degree never drops:
/// `PolynomialDivisionFailed`, naming the polynomial's dense coefficients.
pub(super) fn int_oo_gcd_failure(p: &Ex, q: &Ex) -> Option<Raise> {
    let (inf, other) = match (&**p, &**q) {
        (Node::IntOo { neg }, _) if !q.is_number() => (*neg, q),
        (_, Node::IntOo { neg }) if !p.is_number() => (*neg, p),
        _ => return None,
    };
    let poly = as_poly(other)?;
    let gens = poly_gens(&poly);
    if gens.len() != 1 {
        return None;
    }
    let degree = |m: &Vec<(Ex, u32)>| m.first().map_or(0, |(_, k)| *k);
    let top = poly.iter().map(|(_, m)| degree(m)).max()?;
    if top == 0 {
        return None;
    }
    let coeffs: Vec<String> = (0..=top)
        .rev()
        .map(|d| {
            let c = poly
                .iter()
                .filter(|(_, m)| degree(m) == d)
                .fold(BigInt::zero(), |acc, (c, _)| acc + c);
            format!("EX({c})")
        })
        .collect();
    let g = if inf { "-int_oo" } else { "int_oo" };
    Some(Raise::new(
        "PolynomialDivisionFailed",
        format!(
            "couldn't reduce degree in a polynomial division algorithm when dividing [{}] by \
             [EX({g})]. This can happen when it's not possible to detect zero in the coefficient \
             domain. The domain of computation is EX. You may want to use a different \
             simplification algorithm. Note that in general it's not possible to guarantee to \
             detect zero in this domain.",
            coeffs.join(", ")
        ),
    ))
}

/// `sympy.gcd(p, q)` when it is a monomial: both sides expanded sums of
/// monomials (integer coefficient times powers of symbols and torch
/// functions), their common content and common powers `m` not 1, and the
/// cofactors `p/m`, `q/m` proved coprime. Returns the cofactors, term by
/// term (what `base / gcd` cancels to before `sympy.simplify`).
pub(super) fn monomial_gcd_quotients(p: &Ex, q: &Ex) -> PyResult<Option<(Ex, Ex)>> {
    fn plain_terms(e: &Ex) -> bool {
        add_args(e).iter().all(|t| {
            mul_args(t).iter().all(|f| match &**f {
                Node::Int(_) | Node::Sym(_) | Node::Fn(..) => true,
                Node::Pow(b, x) => {
                    matches!(**b, Node::Sym(_) | Node::Fn(..)) && x.as_int().is_some()
                }
                _ => false,
            })
        })
    }
    if !plain_terms(p) || !plain_terms(q) {
        return Ok(None);
    }
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return Ok(None);
    };
    // The content and the least power of each generator over all terms.
    let monomial = |a: &Poly| -> (BigInt, Vec<(Ex, u32)>) {
        let content = content(a);
        let mut gens: Vec<(Ex, u32)> = a[0].1.clone();
        for (_, m) in a {
            gens = gens
                .into_iter()
                .filter_map(|(g, k)| {
                    let j = m.iter().find(|(h, _)| *h == g).map_or(0, |(_, j)| *j);
                    (j.min(k) > 0).then_some((g, j.min(k)))
                })
                .collect();
        }
        (content, gens)
    };
    let (cp, mp) = monomial(&pp);
    let (cq, mq) = monomial(&qq);
    let content = cp.gcd(&cq);
    let common: Vec<(Ex, u32)> = mp
        .iter()
        .filter_map(|(g, k)| {
            let j = mq.iter().find(|(h, _)| h == g).map_or(0, |(_, j)| *j);
            (j.min(*k) > 0).then(|| (g.clone(), j.min(*k)))
        })
        .collect();
    if content.is_zero() || (content.is_one() && common.is_empty()) {
        return Ok(None);
    }
    // The common content and powers divide both sides by construction.
    let (Some(b), Some(d)) = (
        poly_div_monomial(&pp, &content, &common),
        poly_div_monomial(&qq, &content, &common),
    ) else {
        return Ok(None);
    };
    let (b, d) = (poly_to_ex(&b)?, poly_to_ex(&d)?);
    if !(poly_coprime(&b, &d) || certified_coprime(&b, &d)) {
        return Ok(None);
    }
    Ok(Some((b, d)))
}

/// Whether a factor of a term of `e` is a power of a sum whose integer
/// content is not 1 (simplify's `as_content_primitive` takes it out).
pub(super) fn has_power_of_sum(e: &Ex) -> bool {
    let content_one = |b: &Ex| {
        as_poly(b).is_some_and(|p| p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c)).is_one())
    };
    add_args(e).iter().any(|t| {
        mul_args(t).iter().any(
            |f| matches!(&**f, Node::Pow(b, _) if matches!(**b, Node::Add(_)) && !content_one(b)),
        )
    })
}

/// `sympy.gcd(p, q)` when one side's primitive part is `x + c0` (one
/// generator, positive unit leading coefficient) and divides the other:
/// the gcd is that factor; returns `(p/gcd, q/gcd)`.
pub(super) fn linear_gcd_quotients(p: &Ex, q: &Ex) -> PyResult<Option<(Ex, Ex)>> {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return Ok(None);
    };
    for (a, b) in [(&pp, &qq), (&qq, &pp)] {
        let gens = poly_gens(a);
        if gens.len() != 1 {
            continue;
        }
        let (mut c1, mut c0) = (BigInt::zero(), BigInt::zero());
        let mut linear = true;
        for (c, m) in a.iter() {
            match m.as_slice() {
                [] => c0 += c,
                [(_, 1)] => c1 += c,
                _ => linear = false,
            }
        }
        if !linear || c1.is_zero() {
            continue;
        }
        let g = c1.gcd(&c0);
        let (c1, c0) = (&c1 / &g, &c0 / &g);
        if c1 != BigInt::one() {
            continue;
        }
        let x = &gens[0];
        let (Some(qa), Some(qb)) = (
            poly_div_monic_linear(a, x, &c0),
            poly_div_monic_linear(b, x, &c0),
        ) else {
            continue;
        };
        let (ea, eb) = (poly_to_ex(&qa)?, poly_to_ex(&qb)?);
        return Ok(Some(if std::ptr::eq(a, &pp) {
            (ea, eb)
        } else {
            (eb, ea)
        }));
    }
    Ok(None)
}

/// The gcd of a polynomial's integer coefficients (`Poly.content`).
fn content(a: &Poly) -> BigInt {
    a.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c))
}

/// Whether `sympy.gcd(p, q)` is provably 1 (the integer content is already
/// coprime here): no generator in common; or one side of degree 1 in a
/// generator `x` with a unit coefficient (`x = v` then solves it, and it is
/// irreducible), which the other side either lacks or does not vanish on
/// after substituting `x = v`; or one side linear in a single generator
/// (its primitive part has the root `-c0/c1`) not vanishing the other.
pub(super) fn poly_coprime(p: &Ex, q: &Ex) -> bool {
    if p.is_number() || q.is_number() {
        return true;
    }
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    // sympy.gcd takes the integer contents' gcd too: `(2*a + 12)**3` and
    // `8*a + 16` share 8.
    if !content(&pp).gcd(&content(&qq)).is_one() {
        return false;
    }
    let (gp, gq) = (poly_gens(&pp), poly_gens(&qq));
    if !gp.iter().any(|g| gq.contains(g)) {
        return true;
    }
    for (a, b, gb) in [(&pp, &qq, &gq), (&qq, &pp, &gp)] {
        for x in poly_gens(a) {
            let deg = |m: &Vec<(Ex, u32)>| m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k);
            if a.iter().any(|(_, m)| deg(m) > 1) {
                continue;
            }
            let lead: Vec<&(BigInt, Vec<(Ex, u32)>)> =
                a.iter().filter(|(_, m)| deg(m) == 1).collect();
            // a == u*x + rest with u = +-1.
            if lead.len() != 1 || lead[0].1.len() != 1 || !lead[0].0.abs().is_one() {
                continue;
            }
            if !gb.contains(&x) {
                return true;
            }
            let u = lead[0].0.clone();
            // x = -rest/u = -u*rest.
            let v: Poly = poly_norm(
                a.iter()
                    .filter(|(_, m)| deg(m) == 0)
                    .map(|(c, m)| (-(c * &u), m.clone()))
                    .collect(),
            );
            return !poly_subst(b, &x, &v).is_empty();
        }
    }
    let linear_root = |a: &Poly| -> Option<(Ex, BigInt, BigInt)> {
        let gens = poly_gens(a);
        if gens.len() != 1 {
            return None;
        }
        let (mut c1, mut c0) = (BigInt::zero(), BigInt::zero());
        for (c, m) in a {
            match m.as_slice() {
                [] => c0 += c,
                [(_, 1)] => c1 += c,
                _ => return None,
            }
        }
        if c1.is_zero() {
            return None;
        }
        let g = c1.gcd(&c0);
        Some((gens[0].clone(), c1 / &g, c0 / &g))
    };
    for (a, b) in [(&pp, &qq), (&qq, &pp)] {
        if let Some((x, c1, c0)) = linear_root(a) {
            // b(-c0/c1) scaled by c1**deg, per x-free part.
            let deg = b
                .iter()
                .map(|(_, m)| m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k))
                .max()
                .unwrap_or(0);
            let mut groups: Vec<(Vec<(Ex, u32)>, BigInt)> = Vec::new();
            for (c, m) in b {
                let k = m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k);
                let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| *g != x).cloned().collect();
                let v = c
                    * num_traits::pow(-c0.clone(), k as usize)
                    * num_traits::pow(c1.clone(), (deg - k) as usize);
                match groups.iter_mut().find(|(r, _)| *r == rest) {
                    Some((_, s)) => *s += v,
                    None => groups.push((rest, v)),
                }
            }
            return !groups.iter().all(|(_, s)| s.is_zero());
        }
    }
    false
}

/// Whether `sympy.gcd(p, q)` is 1, decided exactly (never guessed): the
/// integer contents are coprime, and for each generator `x` both share,
/// some integer point for the other generators keeps both leading
/// coefficients in `x` nonzero and gives univariate images with a constant
/// gcd. (A common factor of positive degree in `x` would divide both images
/// at every such point; one of degree 0 in every shared generator is an
/// integer, ruled out by the contents.) `false` means "not shown coprime".
pub(super) fn certified_coprime(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    if !content(&pp).gcd(&content(&qq)).is_one() {
        return false;
    }
    let (gp, gq) = (poly_gens(&pp), poly_gens(&qq));
    let mut all = gp.clone();
    for g in &gq {
        if !all.contains(g) {
            all.push(g.clone());
        }
    }
    const POINTS: [i64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    let degree = |a: &Poly, x: &Ex| {
        a.iter()
            .map(|(_, m)| m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k))
            .max()
            .unwrap_or(0)
    };
    'shared: for x in gp.iter().filter(|g| gq.contains(g)) {
        let (dp, dq) = (degree(&pp, x), degree(&qq, x));
        if dp > 256 || dq > 256 {
            return false;
        }
        for attempt in 0..6 {
            let value = |g: &Ex| -> BigInt {
                let i = all.iter().position(|h| h == g).unwrap_or(0);
                BigInt::from(POINTS[(i + 5 * attempt) % POINTS.len()] * (1 + attempt as i64))
            };
            let image = |a: &Poly, d: u32| -> Vec<BigInt> {
                let mut out = vec![BigInt::zero(); d as usize + 1];
                for (c, m) in a {
                    let mut v = c.clone();
                    let mut k = 0;
                    for (g, e) in m {
                        if g == x {
                            k = *e;
                        } else {
                            v *= num_traits::pow(value(g), *e as usize);
                        }
                    }
                    out[k as usize] += v;
                }
                out
            };
            let (ip, iq) = (image(&pp, dp), image(&qq, dq));
            if ip[dp as usize].is_zero() || iq[dq as usize].is_zero() {
                continue;
            }
            if univariate_gcd_degree(ip, iq) == 0 {
                continue 'shared;
            }
        }
        return false;
    }
    true
}

/// The degree of the gcd over Q of two integer polynomials (coefficients
/// by degree, leading ones nonzero): primitive pseudo-remainder sequence.
pub(super) fn univariate_gcd_degree(mut a: Vec<BigInt>, mut b: Vec<BigInt>) -> usize {
    fn trim(v: &mut Vec<BigInt>) {
        while v.last().is_some_and(Zero::is_zero) {
            v.pop();
        }
    }
    fn primitive(v: &mut [BigInt]) {
        let g = v.iter().fold(BigInt::zero(), |g, c| g.gcd(c));
        if !g.is_zero() && !g.is_one() {
            for c in v.iter_mut() {
                *c /= &g;
            }
        }
    }
    trim(&mut a);
    trim(&mut b);
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    while !b.is_empty() {
        if b.len() == 1 {
            return 0;
        }
        let lb = b[b.len() - 1].clone();
        let mut r = a;
        while r.len() >= b.len() {
            let shift = r.len() - b.len();
            let lr = r[r.len() - 1].clone();
            for c in r.iter_mut() {
                *c *= &lb;
            }
            for (i, c) in b.iter().enumerate() {
                r[shift + i] -= &lr * c;
            }
            trim(&mut r);
            primitive(&mut r);
        }
        a = b;
        b = r;
    }
    a.len().saturating_sub(1)
}

/// `Some(k)` when `base == k*divisor` for an integer `k`.
pub(super) fn integer_multiple(base: &Ex, divisor: &Ex) -> PyResult<Option<Ex>> {
    let (bt, dt) = (add_args(base), add_args(divisor));
    if bt.len() != dt.len() {
        return Ok(None);
    }
    let (c0, _) = as_coeff_mul(&bt[0]);
    let (d0, _) = as_coeff_mul(&dt[0]);
    if let (Num::Int(c0), Num::Int(d0)) = (c0, d0) {
        if !d0.is_zero() && (&c0 % &d0).is_zero() {
            let k = int(&c0 / &d0);
            if mul(&[k.clone(), divisor.clone()])? == *base {
                return Ok(Some(k));
            }
        }
    }
    Ok(None)
}

/// `p / q` for two monomials whose quotient is a monomial with an integer
/// coefficient: `None` when q's coefficient does not divide p's, or a
/// factor of q is not a factor of p (to at least the same power).
pub(super) fn monomial_quotient(p: &Ex, q: &Ex) -> Option<Ex> {
    let (Num::Int(cp), rp) = as_coeff_mul(p) else {
        return None;
    };
    let (Num::Int(cq), rq) = as_coeff_mul(q) else {
        return None;
    };
    if cq.is_zero() || !(&cp % &cq).is_zero() {
        return None;
    }
    let factors = |e: &Ex| -> Vec<(Ex, BigInt)> {
        if e.is_int_value(1) {
            Vec::new()
        } else {
            mul_args(e).iter().map(base_exp).collect()
        }
    };
    let mut left = factors(&rp);
    for (b, k) in factors(&rq) {
        let (_, e) = left.iter_mut().find(|(pb, e)| *pb == b && *e >= k)?;
        *e -= k;
    }
    let mut out = vec![int(&cp / &cq)];
    out.extend(
        left.iter()
            .filter(|(_, e)| !e.is_zero())
            .map(|(b, e)| make_pow(b, e)),
    );
    mul(&out).ok()
}

/// `r = p / q; r.is_integer` and `r.is_positive`, for the cases sympy
/// decides: `q` an integer dividing every coefficient of integer terms,
/// or `p` a multiple `k*q` of `q`.
pub(super) fn ratio_facts(p: &Ex, q: &Ex) -> (Option<bool>, Option<bool>) {
    if let Node::Int(d) = &**q {
        let mut all_int = true;
        for t in add_args(p) {
            let (c, rest) = as_coeff_mul(&t);
            match c {
                Num::Int(ref c) if (c % d).is_zero() && facts(&rest).integer == Some(true) => {}
                _ => all_int = false,
            }
        }
        let fp = facts(p);
        let pos = if d.is_positive() { fp.pos } else { fp.neg };
        return (if all_int { Some(true) } else { None }, pos);
    }
    // `p / q` cancels to a product `r` when q's coefficient divides p's and
    // each factor of q is a factor of p (to at most its power in p): Mul
    // merges the bases, and r's facts are the quotient's (`2*a*x / (-2*a)`
    // is `-x`; `6*a / (3*a)` is 2).
    if !q.is_number() {
        if let Some(r) = monomial_quotient(p, q) {
            let fr = facts(&r);
            return (fr.integer, fr.pos);
        }
    }
    // Otherwise r = p*q**-1: positive when both signs are known alike.
    let (fp, fq) = (facts(p), facts(q));
    let pos = if (fp.pos == Some(true) && fq.pos == Some(true))
        || (fp.neg == Some(true) && fq.neg == Some(true))
    {
        Some(true)
    } else {
        None
    };
    (None, pos)
}

/// `a / (c * m)` term by term for a monomial `c * m` (integer `c`, powers
/// `m`); `None` unless `c` divides every coefficient and `m` every
/// monomial of `a`.
pub(super) fn poly_div_monomial(a: &Poly, c: &BigInt, m: &[(Ex, u32)]) -> Option<Poly> {
    let mut quotient: Poly = Vec::with_capacity(a.len());
    for (ac, am) in a {
        if c.is_zero() || !(ac % c).is_zero() {
            return None;
        }
        let mut rest = am.clone();
        for (g, k) in m {
            match rest.iter_mut().find(|(h, _)| h == g) {
                Some((_, j)) if *j >= *k => *j -= k,
                _ => return None,
            }
        }
        rest.retain(|(_, j)| *j > 0);
        quotient.push((ac / c, rest));
    }
    Some(quotient)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(coeffs: &[i64]) -> Vec<BigInt> {
        coeffs.iter().map(|&c| BigInt::from(c)).collect()
    }

    #[test]
    fn univariate_gcd_degrees() {
        // (x - 1)(x + 2) and (x - 1)(x + 3): gcd x - 1.
        assert_eq!(univariate_gcd_degree(p(&[-2, 1, 1]), p(&[-3, 2, 1])), 1);
        // x^2 + 1 and x + 1: coprime.
        assert_eq!(univariate_gcd_degree(p(&[1, 0, 1]), p(&[1, 1])), 0);
        // (x + 1)^2 and (x + 1)^3.
        assert_eq!(univariate_gcd_degree(p(&[1, 2, 1]), p(&[1, 3, 3, 1])), 2);
        // A constant is coprime with anything.
        assert_eq!(univariate_gcd_degree(p(&[5]), p(&[0, 0, 1])), 0);
    }
}
