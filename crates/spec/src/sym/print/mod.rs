//! Mirrors sympy 1.14's `StrPrinter` (sympy/printing/str.py) and
//! `precedence` (sympy/printing/precedence.py), plus the `_sympystr` of
//! torch's `FloorDiv` (torch/utils/_sympy/functions.py): `str(expr)`, which
//! is what `repr()` of a SymInt / SymBool / SymFloat returns
//! (`SymNode._graph_repr` -> `SymNode.str` -> `f"{self.expr}"`).

use num_traits::Signed;

use super::basic::{as_coeff_mul, mul_args, Ex, Func, Node, Num, Rel};
use super::order::{ordered_factors, ordered_terms};

pub(super) mod atom;

pub use atom::float_str;

const PREC_AND: u32 = 30;
const PREC_REL: u32 = 35;
const PREC_ADD: u32 = 40;
const PREC_MUL: u32 = 50;
const PREC_POW: u32 = 60;
const PREC_FUNC: u32 = 70;
const PREC_NOT: u32 = 100;
const PREC_ATOM: u32 = 1000;
const PREC_BIT_OR: u32 = 36;
const PREC_BIT_AND: u32 = 38;

/// `precedence(item)`, times two so that `Atom - 0.5` stays an integer.
fn precedence2(e: &Ex) -> u32 {
    2 * match &**e {
        Node::Int(i) => {
            if i.is_negative() {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        Node::Float(f) => {
            if *f < 0.0 {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        Node::BigFloat(m) => {
            if m.neg {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        // NegativeIntInfinity is a Number subclass with no special rule.
        Node::IntOo { .. } | Node::NaN => PREC_ATOM,
        // PRECEDENCE_VALUES lists NegativeInfinity at Add's precedence.
        Node::Inf { neg } => {
            if *neg {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        Node::Sym(_) | Node::True | Node::False => PREC_ATOM,
        Node::Add(_) => PREC_ADD,
        // precedence_Mul: a factor that is a Function with a `precedence`
        // below Mul's keeps the product at Mul; otherwise a product with a
        // negative coefficient prints like a sum.
        Node::Mul(args) => {
            if args.iter().any(
                |a| matches!(&**a, Node::Fn(f, _) if f.precedence().is_some_and(|p| p < PREC_MUL)),
            ) {
                PREC_MUL
            } else if Num::of(&args[0]).is_some_and(|n| n.is_negative()) {
                PREC_ADD
            } else {
                PREC_MUL
            }
        }
        Node::Pow(..) => PREC_POW,
        Node::Fn(f, _) => f.precedence().unwrap_or(PREC_FUNC),
        // Equality / Unequality are listed at Mul's precedence.
        Node::Rel(Rel::Eq | Rel::Ne, ..) => PREC_MUL,
        Node::Rel(..) => PREC_REL,
        Node::And(_) => PREC_AND,
        Node::Or(_) => 20,
        Node::Not(_) => PREC_NOT,
    }
}

/// `f"{expr}"`, as `SymNode.str` formats it: `str(expr)`, except that a
/// Float goes through `Float.__format__`, `format(Decimal(str(self)), "")`
/// (so `-1.18059162071741e+21` prints as `-1.18059162071741E+21`).
pub fn format_expr(e: &Ex) -> String {
    let s = sstr(e);
    if matches!(**e, Node::Float(_) | Node::BigFloat(_)) {
        return decimal_str(&s);
    }
    s
}

/// `str(decimal.Decimal(s))` for a sympy Float string (`[-]d.ddd[e±X]`).
fn decimal_str(s: &str) -> String {
    let (sign, body) = match s.strip_prefix('-') {
        Some(b) => ("-", b),
        None => ("", s),
    };
    let (mant, exp) = match body.split_once('e') {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (body, 0),
    };
    let (int_part, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut digits: String = format!("{int_part}{frac}");
    let mut exponent = exp - frac.len() as i64;
    // Decimal drops leading zeros of the coefficient (keeping one digit).
    let trimmed = digits.trim_start_matches('0');
    digits = if trimmed.is_empty() {
        "0".to_string()
    } else {
        trimmed.to_string()
    };
    if digits == "0" && frac.is_empty() && exp == 0 {
        exponent = 0;
    }
    let n = digits.len() as i64;
    let adjusted = exponent + n - 1;
    let out = if exponent <= 0 && adjusted >= -6 {
        if exponent == 0 {
            digits
        } else if n + exponent > 0 {
            let point = (n + exponent) as usize;
            format!("{}.{}", &digits[..point], &digits[point..])
        } else {
            format!("0.{}{}", "0".repeat((-(n + exponent)) as usize), digits)
        }
    } else {
        let rest = if n > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!(
            "{}{rest}E{}{adjusted}",
            &digits[..1],
            if adjusted >= 0 { "+" } else { "" }
        )
    };
    format!("{sign}{out}")
}

/// `str(expr)`.
pub fn sstr(e: &Ex) -> String {
    let mut out = String::new();
    Printer { level: 0 }.print(e, &mut out);
    out
}

struct Printer {
    /// `Printer._print_level` minus one: 0 while printing the top node.
    level: u32,
}

impl Printer {
    fn print(&mut self, e: &Ex, out: &mut String) {
        self.level += 1;
        self.print_inner(e, out);
        self.level -= 1;
    }

    /// `parenthesize(item, level, strict=False)`; `level2` is twice the level.
    fn paren(&mut self, e: &Ex, level2: u32, out: &mut String) {
        if precedence2(e) <= level2 {
            out.push('(');
            self.print(e, out);
            out.push(')');
        } else {
            self.print(e, out);
        }
    }

    fn stringify(&mut self, args: &[Ex], sep: &str, level2: u32, out: &mut String) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            self.paren(a, level2, out);
        }
    }

    fn print_inner(&mut self, e: &Ex, out: &mut String) {
        match &**e {
            Node::Int(_)
            | Node::Float(_)
            | Node::BigFloat(_)
            | Node::IntOo { .. }
            | Node::Inf { .. }
            | Node::NaN
            | Node::Sym(_)
            | Node::True
            | Node::False => out.push_str(&atom::atom_str(e, self.level > 1)),
            Node::Add(_) => self.print_add(e, out),
            Node::Mul(_) => self.print_mul(e, out),
            Node::Pow(b, x) => {
                // _print_Pow: `base**exp`, both parenthesized at Pow's level.
                self.paren(b, 2 * PREC_POW, out);
                out.push_str("**");
                self.paren(x, 2 * PREC_POW, out);
            }
            Node::Fn(Func::FloorDiv, args) => {
                // FloorDiv._sympystr: `(base//divisor)`, each side
                // parenthesized unless an atom.
                out.push('(');
                self.paren(&args[0], 2 * PREC_ATOM - 1, out);
                out.push_str("//");
                self.paren(&args[1], 2 * PREC_ATOM - 1, out);
                out.push(')');
            }
            Node::Fn(f, args) => {
                // _print_Function: `Name(arg, arg)`.
                out.push_str(f.name());
                out.push('(');
                self.stringify(args, ", ", 0, out);
                out.push(')');
            }
            Node::Rel(op, l, r) => match op {
                Rel::Eq | Rel::Ne => {
                    out.push_str(if *op == Rel::Eq { "Eq(" } else { "Ne(" });
                    self.print(l, out);
                    out.push_str(", ");
                    self.print(r, out);
                    out.push(')');
                }
                _ => {
                    let level = precedence2(e);
                    self.paren(l, level, out);
                    out.push_str(match op {
                        Rel::Lt => " < ",
                        Rel::Le => " <= ",
                        Rel::Gt => " > ",
                        _ => " >= ",
                    });
                    self.paren(r, level, out);
                }
            },
            // _print_And moves relationals whose canonical rhs is -oo first;
            // none arise here.
            Node::And(args) => self.stringify(args, " & ", 2 * PREC_BIT_AND, out),
            Node::Or(args) => self.stringify(args, " | ", 2 * PREC_BIT_OR, out),
            Node::Not(a) => {
                out.push('~');
                self.paren(a, 2 * PREC_NOT, out);
            }
        }
    }

    /// _print_Add: terms in `as_ordered_terms` order, a leading `-` of a
    /// term turned into ` - `, terms below Add's precedence parenthesized.
    fn print_add(&mut self, e: &Ex, out: &mut String) {
        let terms = ordered_terms(e);
        let mut first = true;
        for t in &terms {
            let mut s = String::new();
            self.print(t, &mut s);
            let (sign, body) = match s.strip_prefix('-') {
                Some(rest) => ("-", rest.to_string()),
                None => ("+", s.clone()),
            };
            if first {
                if sign == "-" {
                    out.push('-');
                }
                first = false;
            } else {
                out.push(' ');
                out.push_str(sign);
                out.push(' ');
            }
            if precedence2(t) < 2 * PREC_ADD {
                out.push('(');
                out.push_str(&body);
                out.push(')');
            } else {
                out.push_str(&body);
            }
        }
    }

    /// _print_Mul for an evaluated product: sign of the coefficient first,
    /// then the factors in `as_ordered_factors` order joined by `*`.
    fn print_mul(&mut self, e: &Ex, out: &mut String) {
        let prec = precedence2(e);
        let (c, rest) = as_coeff_mul(e);
        let e2 = if c.is_negative() {
            out.push('-');
            let nc = c.neg();
            if nc.is_one() {
                rest
            } else {
                let mut args = vec![nc.to_ex()];
                args.extend(mul_args(&rest));
                std::rc::Rc::new(Node::Mul(args))
            }
        } else {
            e.clone()
        };
        let factors = match &*e2 {
            Node::Mul(_) => ordered_factors(&e2),
            _ => vec![e2.clone()],
        };
        for (i, f) in factors.iter().enumerate() {
            if i > 0 {
                out.push('*');
            }
            self.paren(f, prec, out);
        }
    }
}
