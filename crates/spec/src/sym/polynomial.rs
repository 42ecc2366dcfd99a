//! Expanded multivariate polynomials with integer coefficients, as sympy's
//! `Poly` holds them after `expand` (sympy/polys/polytools.py): a list of
//! terms, each an integer coefficient and its monomial, a monomial being
//! generators with positive exponents. The generators are whatever the
//! caller expands over: sympy expressions for `FloorDiv`'s and `Mod`'s gcd
//! tests (`expr::poly`), symbol indices for the export ShapeEnv's
//! shifted static evaluation (`torchspec-spec-export`).
//!
//! ```
//! use num_bigint::BigInt;
//! use torchspec_spec::sym::polynomial::{self, Terms};
//!
//! // (x + 1) * (x - 1) over the generator 0 (x): x**2 - 1.
//! let x_plus_1: Terms<usize> = vec![(BigInt::from(1), vec![(0, 1)]), (BigInt::from(1), vec![])];
//! let x_minus_1: Terms<usize> = vec![(BigInt::from(1), vec![(0, 1)]), (BigInt::from(-1), vec![])];
//! let product = polynomial::mul(&x_plus_1, &x_minus_1);
//! assert_eq!(product, vec![(BigInt::from(1), vec![(0, 2)]), (BigInt::from(-1), vec![])]);
//! ```

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_traits::{One, Zero};

/// A polynomial's generator: its monomials list generators in this order.
pub trait Generator: Clone + PartialEq {
    /// The order generators are listed in within a monomial.
    fn order(&self, other: &Self) -> Ordering;
}

impl Generator for usize {
    fn order(&self, other: &Self) -> Ordering {
        self.cmp(other)
    }
}

/// The terms of an expanded polynomial: (integer coefficient, generators
/// with their exponents), each monomial at most once once normalized.
pub type Terms<G> = Vec<(BigInt, Vec<(G, u32)>)>;

/// The constant polynomial `c`.
pub fn constant<G>(c: BigInt) -> Terms<G> {
    vec![(c, vec![])]
}

/// Sorts each monomial's generators, collects equal monomials (first
/// seen first) and drops zero coefficients.
pub fn norm<G: Generator>(mut p: Terms<G>) -> Terms<G> {
    for (_, m) in p.iter_mut() {
        m.sort_by(|a, b| a.0.order(&b.0));
    }
    let mut out: Terms<G> = Vec::new();
    for (c, m) in p {
        match out.iter_mut().find(|(_, n)| *n == m) {
            Some((cc, _)) => *cc += c,
            None => out.push((c, m)),
        }
    }
    out.retain(|(c, _)| !c.is_zero());
    out
}

/// `a + b`, normalized.
pub fn add<G: Generator>(a: &Terms<G>, b: &Terms<G>) -> Terms<G> {
    norm(a.iter().chain(b).cloned().collect())
}

/// `a * b`, normalized.
pub fn mul<G: Generator>(a: &Terms<G>, b: &Terms<G>) -> Terms<G> {
    let mut out = Vec::new();
    for (ca, ma) in a {
        for (cb, mb) in b {
            let mut m = ma.clone();
            for (g, k) in mb {
                match m.iter_mut().find(|(h, _)| h == g) {
                    Some((_, kk)) => *kk += k,
                    None => m.push((g.clone(), *k)),
                }
            }
            out.push((ca * cb, m));
        }
    }
    norm(out)
}

/// `p ** n`, normalized.
pub fn pow<G: Generator>(p: &Terms<G>, n: u32) -> Terms<G> {
    let mut acc = constant(BigInt::one());
    for _ in 0..n {
        acc = mul(&acc, p);
    }
    acc
}
