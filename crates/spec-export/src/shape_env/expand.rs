//! `safe_expand` / `_fast_expand` (torch/fx/experimental/symbolic_shapes.py),
//! which `ShapeEnv.replace` applies whenever it substituted a symbol:
//! products of sums multiplied out, bottom-up (`(u1 + 1)**2` is
//! `u1**2 + 2*u1 + 1`, `u0*(u1 + 1)` is `u0*u1 + u0`).

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive};
use torchspec_pyval::{PyResult, Raise};
use torchspec_spec::sym::expr::{self, Ex, Node};

/// The most terms a multiplied-out product may have (sympy would build
/// them all; the reference refuses instead).
const MAX_TERMS: usize = 4096;

/// `_fast_expand(e)`.
pub(crate) fn fast_expand(e: &Ex) -> PyResult<Ex> {
    let rebuilt = match &**e {
        Node::Add(a) => expand_args(a)?.map(|args| expr::add(&args)).transpose()?,
        Node::Mul(a) => expand_args(a)?.map(|args| expr::mul(&args)).transpose()?,
        Node::Pow(b, x) => {
            let nb = fast_expand(b)?;
            let nx = fast_expand(x)?;
            match &*nx {
                _ if nb == *b && nx == *x => None,
                Node::Int(k) if !k.is_negative() => Some(expr::pow_int(&nb, k)?),
                _ => {
                    return Err(Raise::unsupported(
                        "expanding a power that is not a natural number",
                    ))
                }
            }
        }
        Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            if expand_args(a)?.is_some() {
                return Err(Raise::unsupported("expanding the arguments of a function"));
            }
            None
        }
        _ => None,
    };
    if let Some(r) = rebuilt {
        return fast_expand(&r);
    }
    match &**e {
        Node::Pow(b, x) if matches!(&**b, Node::Add(_)) => match &**x {
            Node::Int(k) if k > &BigInt::one() => multinomial(b, k),
            Node::Int(k) if k.is_negative() => {
                Err(Raise::unsupported("expanding a negative power of a sum"))
            }
            _ => Ok(e.clone()),
        },
        Node::Mul(f) => expand_sums(e, f),
        _ => Ok(e.clone()),
    }
}

/// Each argument expanded: `None` when none of them changed.
fn expand_args(a: &[Ex]) -> PyResult<Option<Vec<Ex>>> {
    let new = a.iter().map(fast_expand).collect::<PyResult<Vec<_>>>()?;
    Ok((new.as_slice() != a).then_some(new))
}

/// `sympy.expand_multinomial((a + b + ...)**k, deep=False)`.
fn multinomial(base: &Ex, k: &BigInt) -> PyResult<Ex> {
    let Node::Add(terms) = &**base else {
        return Ok(base.clone());
    };
    let k = k
        .to_u32()
        .filter(|k| (terms.len() as f64).powi(*k as i32) <= MAX_TERMS as f64)
        .ok_or_else(|| Raise::unsupported("expanding a large power of a sum"))?;
    let mut result = vec![expr::int(1)];
    for _ in 0..k {
        result = products(&result, terms)?;
    }
    expr::add(&result)
}

/// `_expandsums` of a product's factors (`1/x` factors, the denominator,
/// are not modelled): changed when it multiplies out anything.
fn expand_sums(e: &Ex, factors: &[Ex]) -> PyResult<Ex> {
    let (adds, other): (Vec<&Ex>, Vec<&Ex>) =
        factors.iter().partition(|f| matches!(&***f, Node::Add(_)));
    if adds.is_empty() || (adds.len() == 1 && other.is_empty()) {
        return Ok(e.clone());
    }
    if other
        .iter()
        .any(|f| matches!(&***f, Node::Pow(_, x) if x.is_int_value(-1)))
    {
        return Err(Raise::unsupported("expanding a product with a denominator"));
    }
    let other: Vec<Ex> = other.into_iter().cloned().collect();
    let mut result = vec![expr::mul(&other)?];
    for add in adds {
        let Node::Add(terms) = &**add else { continue };
        result = products(&result, terms)?;
    }
    expr::add(&result)
}

/// `[a * b for a, b in itertools.product(xs, ys)]`.
fn products(xs: &[Ex], ys: &[Ex]) -> PyResult<Vec<Ex>> {
    if xs.len().saturating_mul(ys.len()) > MAX_TERMS {
        return Err(Raise::unsupported("expanding a product of many sums"));
    }
    let mut out = Vec::with_capacity(xs.len() * ys.len());
    for a in xs {
        for b in ys {
            out.push(expr::mul(&[a.clone(), b.clone()])?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use torchspec_spec::sym::print::sstr;

    fn u(k: usize) -> Ex {
        std::rc::Rc::new(Node::Sym(std::rc::Rc::new(expr::Symbol {
            name: format!("u{k}"),
            lower: None,
            upper: None,
            integer: true,
        })))
    }

    #[test]
    fn a_square_of_a_sum_is_multiplied_out() {
        let s = expr::add(&[u(1), expr::int(1)]).unwrap();
        let sq = expr::pow_int(&s, &BigInt::from(2)).unwrap();
        assert_eq!(sstr(&fast_expand(&sq).unwrap()), "u1**2 + 2*u1 + 1");
        let p = expr::mul(&[u(0), s]).unwrap();
        assert_eq!(sstr(&fast_expand(&p).unwrap()), "u0*u1 + u0");
    }
}
