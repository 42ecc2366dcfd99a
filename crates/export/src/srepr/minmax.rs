//! What sympy makes of a `Min`/`Max` when `torch.export.load` parses an
//! `expr_str`: `sympify` rebuilds `Symbol('s4', positive=True,
//! integer=True)` with its assumptions, and `Min`/`Max` drop every argument
//! that another provably bounds (`Min(8, 16*s4)` is `8`, as `s4 >= 1`).
//! `torch.export.save` then writes the simplified expression: an integer as
//! `as_int`, else its `srepr`.
//!
//! The reference decides `a <= b` as sympy does in the cases that occur in
//! sizes and strides: `b - a` as a polynomial, each positive symbol written
//! `1 + u` and each nonnegative one `u` (`u >= 0`); all coefficients of the
//! expansion nonnegative means `a <= b`. Anything else (another function, a
//! symbol of unknown sign left in the difference, a `Min` that keeps two
//! arguments inside a larger expression) is left as the file has it.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

use super::{positional, Node, Parser};

/// An expression after the load's `Min`/`Max` evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Simplified {
    /// A constant (`as_int`).
    Int(BigInt),
    /// Another `srepr` text (a `Min`/`Max` reduced to one of its arguments).
    Text(String),
}

/// The sign a symbol's assumptions give it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sign {
    /// `positive=True` (with `integer=True`: at least 1).
    Positive,
    /// `nonnegative=True`.
    Nonnegative,
    Unknown,
}

/// Monomial (symbol name and power, sorted) → coefficient.
type Poly = BTreeMap<Vec<(String, u32)>, BigInt>;

/// Bounds on the work an expansion may do.
const MAX_TERMS: usize = 4096;
const MAX_POWER: u32 = 16;

/// `srepr` text `expr` as the loader's sympy leaves it, when that differs
/// from the text: `None` when there is nothing to simplify or the
/// reference cannot tell.
///
/// ```
/// use torchspec_export::srepr::{min_max_simplified, Simplified};
/// let s = "Symbol('s4', positive=True, integer=True)";
/// let e = format!("Mul(Integer(2), Min(Integer(8), Mul(Integer(16), {s})))");
/// assert_eq!(min_max_simplified(&e), Some(Simplified::Int(16.into())));
/// assert_eq!(min_max_simplified(&format!("Max(Integer(1), {s})")), Some(Simplified::Text(s.into())));
/// assert_eq!(min_max_simplified(&format!("Min(Integer(2), {s})")), None);
/// // A Min inside a product: sympy's Mul of the coefficient and the symbols.
/// let e = format!("Mul({s}, Min(Integer(8), Mul(Integer(8), {s})))");
/// assert_eq!(min_max_simplified(&e), Some(Simplified::Text(format!("Mul(Integer(8), {s})"))));
/// // A Max that stays is one positive term: Min(M, 2*s4*M) is M
/// // (nn.MultiheadAttention's strides).
/// let m = format!("Max(Integer(1), FloorDiv(Integer(4), {s}))");
/// let e = format!("Mul(Integer(2), Min({m}, Mul(Integer(2), {s}, {m})))");
/// assert_eq!(min_max_simplified(&e), Some(Simplified::Text(format!("Mul(Integer(2), {m})"))));
/// ```
pub fn min_max_simplified(expr: &str) -> Option<Simplified> {
    if !expr.contains("Min(") && !expr.contains("Max(") {
        return None;
    }
    let mut p = Parser {
        s: expr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let node = p.node()?;
    let mut signs = BTreeMap::new();
    // A Min/Max at the top reduced to one argument: that argument's text.
    if let Node::Call(f, args) = &node {
        if f == "Min" || f == "Max" {
            let args = positional(args);
            let polys: Vec<Poly> = args
                .iter()
                .map(|a| poly(a, &mut signs))
                .collect::<Option<_>>()?;
            let k = survivor(f == "Min", &polys, &signs)?;
            return Some(match constant(&polys[k]) {
                Some(c) => Simplified::Int(c),
                None => Simplified::Text(srepr(args[k])),
            });
        }
    }
    let p = poly(&node, &mut signs)?;
    if let Some(c) = constant(&p) {
        return Some(Simplified::Int(c));
    }
    monomial_srepr(&p, &node).map(Simplified::Text)
}

/// `srepr` of a one-term polynomial of distinct symbols, as sympy's `Mul`
/// orders it (the coefficient, then the symbols by name), each symbol
/// written as in `node`; `None` for any other polynomial.
fn monomial_srepr(p: &Poly, node: &Node) -> Option<String> {
    let [(m, c)] = p.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if m.iter().any(|(_, e)| *e != 1) {
        return None;
    }
    // An opaque Min/Max term only alone or times an integer: how sympy's
    // Mul orders it among symbols is not modelled.
    if m.len() > 1 && m.iter().any(|(s, _)| s.starts_with(ATOM)) {
        return None;
    }
    if let [(s, _)] = &m[..] {
        if let Some(text) = s.strip_prefix(ATOM) {
            return Some(if c.is_one() {
                text.to_string()
            } else {
                format!("Mul(Integer({c}), {text})")
            });
        }
    }
    let mut texts = BTreeMap::new();
    symbol_texts(node, &mut texts);
    let mut parts: Vec<String> = Vec::new();
    if !c.is_one() {
        parts.push(format!("Integer({c})"));
    }
    for (name, _) in m {
        parts.push(texts.get(name.as_str())?.clone());
    }
    match parts.as_slice() {
        [one] => Some(one.clone()),
        _ => Some(format!("Mul({})", parts.join(", "))),
    }
}

/// Each symbol's `srepr` text in `n`, by name.
fn symbol_texts<'n>(n: &'n Node, out: &mut BTreeMap<&'n str, String>) {
    if let Node::Call(f, args) = n {
        if f == "Symbol" {
            if let Some(Node::Str(name)) = positional(args).first() {
                out.insert(name, srepr(n));
            }
            return;
        }
        for a in args {
            symbol_texts(a, out);
        }
    }
}

/// The one argument a `Min` (or `Max`) keeps, if all others are bounded by it.
fn survivor(min: bool, polys: &[Poly], signs: &BTreeMap<String, Sign>) -> Option<usize> {
    (0..polys.len()).find(|&k| {
        polys.iter().enumerate().all(|(j, other)| {
            j == k || {
                let (lo, hi) = if min {
                    (&polys[k], other)
                } else {
                    (other, &polys[k])
                };
                nonnegative(&sub(hi, lo), signs)
            }
        })
    })
}

fn constant(p: &Poly) -> Option<BigInt> {
    match p.len() {
        0 => Some(BigInt::zero()),
        1 => p.get(&Vec::new()).cloned(),
        _ => None,
    }
}

/// The polynomial of `n`; a `Min`/`Max` inside must reduce to one argument.
fn poly(n: &Node, signs: &mut BTreeMap<String, Sign>) -> Option<Poly> {
    let Node::Call(f, raw) = n else { return None };
    let args = positional(raw);
    match f.as_str() {
        "Integer" => match args.first() {
            Some(Node::Int(i)) => Some(monomial(Vec::new(), i.parse().ok()?)),
            _ => None,
        },
        "Symbol" => {
            let Some(Node::Str(name)) = args.first() else {
                return None;
            };
            signs.insert(name.clone(), sign_of(raw));
            Some(monomial(vec![(name.clone(), 1)], BigInt::one()))
        }
        "Add" => args
            .iter()
            .try_fold(Poly::new(), |acc, a| Some(add(&acc, &poly(a, signs)?))),
        "Mul" => args
            .iter()
            .try_fold(monomial(Vec::new(), BigInt::one()), |acc, a| {
                mul(&acc, &poly(a, signs)?)
            }),
        "Pow" => {
            let base = poly(args.first()?, signs)?;
            let Some(Node::Call(g, e)) = args.get(1) else {
                return None;
            };
            let Some(Node::Int(k)) = positional(e).first().filter(|_| g == "Integer") else {
                return None;
            };
            let k: u32 = k.parse().ok().filter(|k| *k <= MAX_POWER)?;
            (0..k).try_fold(monomial(Vec::new(), BigInt::one()), |acc, _| {
                mul(&acc, &base)
            })
        }
        "Min" | "Max" => {
            let polys: Vec<Option<Poly>> = args.iter().map(|a| poly(a, signs)).collect();
            if let Some(all) = polys.iter().cloned().collect::<Option<Vec<Poly>>>() {
                if let Some(k) = survivor(f == "Min", &all, signs) {
                    return all.into_iter().nth(k);
                }
            }
            // A Min/Max that stays: one opaque term, with the sign its
            // arguments give it (sympy's `Max(1, x).is_positive`), so that
            // an outer `Min(M, 2*s0*M)` still reduces to `M`.
            let at_least = |p: &Option<Poly>, k: i64| {
                p.as_ref().is_some_and(|p| {
                    nonnegative(&sub(p, &monomial(Vec::new(), BigInt::from(k))), signs)
                })
            };
            let (pos, nonneg) = if f == "Max" {
                (
                    polys.iter().any(|p| at_least(p, 1)),
                    polys.iter().any(|p| at_least(p, 0)),
                )
            } else {
                (
                    polys.iter().all(|p| at_least(p, 1)),
                    polys.iter().all(|p| at_least(p, 0)),
                )
            };
            let sign = if pos {
                Sign::Positive
            } else if nonneg {
                Sign::Nonnegative
            } else {
                Sign::Unknown
            };
            let name = format!("{ATOM}{}", srepr(n));
            signs.insert(name.clone(), sign);
            Some(monomial(vec![(name, 1)], BigInt::one()))
        }
        _ => None,
    }
}

/// The first character of an opaque term's name (a `Min`/`Max` that stays),
/// which no symbol name has.
const ATOM: char = '\u{1}';

fn sign_of(raw: &[Node]) -> Sign {
    let flag = |name: &str| {
        raw.iter()
            .any(|a| matches!(a, Node::Kw(k, v) if k == name && v == "True"))
    };
    if flag("positive") {
        Sign::Positive
    } else if flag("nonnegative") {
        Sign::Nonnegative
    } else {
        Sign::Unknown
    }
}

fn monomial(m: Vec<(String, u32)>, c: BigInt) -> Poly {
    let mut p = Poly::new();
    if !c.is_zero() {
        p.insert(m, c);
    }
    p
}

fn add(a: &Poly, b: &Poly) -> Poly {
    let mut out = a.clone();
    for (m, c) in b {
        let e = out.entry(m.clone()).or_insert_with(BigInt::zero);
        *e += c;
        if e.is_zero() {
            out.remove(m);
        }
    }
    out
}

fn sub(a: &Poly, b: &Poly) -> Poly {
    let neg: Poly = b.iter().map(|(m, c)| (m.clone(), -c)).collect();
    add(a, &neg)
}

fn mul(a: &Poly, b: &Poly) -> Option<Poly> {
    if a.len() * b.len() > MAX_TERMS {
        return None;
    }
    let mut out = Poly::new();
    for (ma, ca) in a {
        for (mb, cb) in b {
            let mut m: BTreeMap<String, u32> = ma.iter().cloned().collect();
            for (s, e) in mb {
                let total = m.entry(s.clone()).or_insert(0);
                *total += e;
                if *total > MAX_POWER {
                    return None;
                }
            }
            out = add(&out, &monomial(m.into_iter().collect(), ca * cb));
        }
    }
    Some(out)
}

/// Whether `p >= 0` follows from the symbols' signs: every coefficient of
/// `p` with positive symbols written `1 + u` is nonnegative.
fn nonnegative(p: &Poly, signs: &BTreeMap<String, Sign>) -> bool {
    let mut shifted = Poly::new();
    for (m, c) in p {
        let mut term = monomial(Vec::new(), c.clone());
        for (s, e) in m {
            let factor = match signs.get(s) {
                Some(Sign::Positive) => add(
                    &monomial(Vec::new(), BigInt::one()),
                    &monomial(vec![(s.clone(), 1)], BigInt::one()),
                ),
                Some(Sign::Nonnegative) => monomial(vec![(s.clone(), 1)], BigInt::one()),
                _ => return false,
            };
            for _ in 0..*e {
                match mul(&term, &factor) {
                    Some(t) => term = t,
                    None => return false,
                }
            }
        }
        shifted = add(&shifted, &term);
        if shifted.len() > MAX_TERMS {
            return false;
        }
    }
    shifted.values().all(|c| !c.is_negative())
}

/// `srepr` of a parsed node, as sympy writes it.
fn srepr(n: &Node) -> String {
    match n {
        Node::Int(i) => i.clone(),
        Node::Str(s) => format!("'{s}'"),
        Node::Kw(k, v) => format!("{k}={v}"),
        Node::Call(f, args) => {
            let parts: Vec<String> = args.iter().map(srepr).collect();
            format!("{f}({})", parts.join(", "))
        }
    }
}
