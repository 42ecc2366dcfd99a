//! The equations `_get_input_guards_for_graph` emits for derived dims whose
//! root has no input of its own (`torch/export/_unlift.py`): the first such
//! dim `a*s + b`, with source `T`, solves the root (`try_solve(Eq(a*s + b,
//! Symbol(T)), s)`: `s = T/a - b/a`, no guard); each later one `c*s + d`
//! with source `U` emits `PythonPrinter().doprint(Eq(expr.subs(
//! unification_map), Symbol(U)))`, i.e. `(c/a)*T + (d - c*b/a) == U` as
//! sympy canonicalizes and torch's `ExprPrinter` prints it. The rationals
//! print as Python true divisions (`(3/2)*L['x'].size()[0]`), so the guard
//! is checked in floats.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// sympy's `PRECEDENCE` (`sympy/printing/precedence.py`).
const ADD: u32 = 40;
const MUL: u32 = 50;
const ATOM: u32 = 1000;

/// A derived dim `a*s + b` over the symbol `s`.
pub struct Linear {
    pub a: BigInt,
    pub symbol: String,
    pub b: BigInt,
}

/// The root solved from the first derived dim: `s = (src - b) / a`.
pub struct Solved {
    src: String,
    a: BigInt,
    b: BigInt,
}

impl Solved {
    pub fn new(dim: &Linear, src: &str) -> Solved {
        Solved {
            src: src.to_string(),
            a: dim.a.clone(),
            b: dim.b.clone(),
        }
    }

    /// The guard of a later derived dim `dim` with source `src`.
    pub fn equation(&self, dim: &Linear, src: &str) -> String {
        // c*((T - b)/a) + d = (c/a)*T + (d*a - c*b)/a
        let coef = rational(dim.a.clone(), self.a.clone());
        let konst = rational(&dim.b * &self.a - &dim.a * &self.b, self.a.clone());
        let term = mul_term(&coef, &self.src);
        let lhs = if konst.0.is_zero() {
            term
        } else {
            let text = format!(
                "{} + {}",
                parenthesize(&rational_printed(&konst), ADD),
                parenthesize(&term, ADD)
            );
            (text, ADD)
        };
        // `_print_Relational` at `precedence(Eq)`, which is `Mul`'s.
        format!("{} == {src}", parenthesize(&lhs, MUL))
    }
}

/// A reduced fraction with a positive denominator.
fn rational(n: BigInt, d: BigInt) -> (BigInt, BigInt) {
    let g = n.gcd(&d);
    let (mut n, mut d) = (n / &g, d / &g);
    if d.is_negative() {
        (n, d) = (-n, -d);
    }
    (n, d)
}

/// `StrPrinter._print_Rational` and `precedence_Rational` /
/// `precedence_Integer`: (text, precedence).
fn rational_printed((n, d): &(BigInt, BigInt)) -> (String, u32) {
    let prec = if n.is_negative() {
        ADD
    } else if d.is_one() {
        ATOM
    } else {
        MUL
    };
    let text = if d.is_one() {
        n.to_string()
    } else {
        format!("{n}/{d}")
    };
    (text, prec)
}

/// `coef*Symbol(src)` through `ExprPrinter._print_Mul`
/// (`stringify(expr.args, "*", precedence(expr))`); a coefficient of 1 is
/// the bare symbol.
fn mul_term(coef: &(BigInt, BigInt), src: &str) -> (String, u32) {
    if coef.0.is_one() && coef.1.is_one() {
        return (src.to_string(), ATOM);
    }
    // `precedence_Mul`: `Add`'s when it could extract a minus sign.
    let level = if coef.0.is_negative() { ADD } else { MUL };
    let text = format!("{}*{src}", parenthesize(&rational_printed(coef), level));
    (text, level)
}

/// `StrPrinter.parenthesize(item, level)` (not strict): parentheses when the
/// item's precedence is at most the level.
fn parenthesize((text, prec): &(String, u32), level: u32) -> String {
    if *prec <= level {
        format!("({text})")
    } else {
        text.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lin(a: i64, b: i64) -> Linear {
        Linear {
            a: a.into(),
            symbol: "s0".into(),
            b: b.into(),
        }
    }

    /// The texts PyTorch 2.15.0 generates (`_get_input_guards_for_graph`).
    #[test]
    fn prints_as_python_printer() {
        let (a, b) = ("L['a'].size()[0]", "L['b'].size()[0]");
        let eq = |x: Linear, y: Linear| Solved::new(&x, a).equation(&y, b);
        assert_eq!(eq(lin(1, 1), lin(1, 2)), format!("(1 + {a}) == {b}"));
        assert_eq!(eq(lin(2, 0), lin(3, 0)), format!("((3/2)*{a}) == {b}"));
        assert_eq!(eq(lin(2, 0), lin(1, 4)), format!("(4 + (1/2)*{a}) == {b}"));
        assert_eq!(eq(lin(2, 0), lin(4, 0)), format!("(2*{a}) == {b}"));
        assert_eq!(
            eq(lin(3, 1), lin(2, -1)),
            format!("((-5/3) + (2/3)*{a}) == {b}")
        );
        assert_eq!(eq(lin(2, 2), lin(6, 0)), format!("((-6) + 3*{a}) == {b}"));
        assert_eq!(eq(lin(1, 1), lin(1, 1)), format!("{a} == {b}"));
        assert_eq!(
            eq(lin(1, 0), lin(-1, 3)),
            format!("(3 + ((-1)*{a})) == {b}")
        );
    }
}
