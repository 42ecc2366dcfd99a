//! Mirrors the sympy assumptions the spec ShapeEnv's operations consult
//! (sympy/core/{add,mul,power}.py `_eval_is_*`, the class attributes of
//! torch/utils/_sympy/functions.py): `is_positive`, `is_integer`, parity,
//! free symbols and `could_extract_minus_sign`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::sym::fuzzy::{fuzzy_all, fuzzy_group};
use crate::sym::order::compare;

use super::*;

/// Fuzzy facts (`None`: sympy cannot tell).
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// `is_extended_positive`.
    pub pos: Option<bool>,
    /// `is_extended_negative`.
    pub neg: Option<bool>,
    /// `is_zero`.
    pub zero: Option<bool>,
    /// `is_real` (`oo` is not real, `int_oo` is).
    pub real: Option<bool>,
    /// `is_integer`.
    pub integer: Option<bool>,
}

impl Facts {
    /// `is_extended_nonnegative`.
    pub fn nonneg(&self) -> Option<bool> {
        match (self.neg, self.real) {
            (Some(true), _) => Some(false),
            (Some(false), Some(true)) => Some(true),
            _ => {
                if self.pos == Some(true) || self.zero == Some(true) {
                    Some(true)
                } else {
                    None
                }
            }
        }
    }
    /// `is_extended_nonpositive`.
    pub fn nonpos(&self) -> Option<bool> {
        match (self.pos, self.real) {
            (Some(true), _) => Some(false),
            (Some(false), Some(true)) => Some(true),
            _ => {
                if self.neg == Some(true) || self.zero == Some(true) {
                    Some(true)
                } else {
                    None
                }
            }
        }
    }

    fn number(n: &Num) -> Facts {
        let (pos, neg, zero) = match n {
            Num::Int(i) => (i.is_positive(), i.is_negative(), i.is_zero()),
            Num::Float(f) => (*f > 0.0, *f < 0.0, *f == 0.0),
            Num::BigFloat(m) => (!m.neg && !m.is_zero(), m.neg, m.is_zero()),
            Num::IntOo(neg) | Num::Inf(neg) => (!neg, *neg, false),
            Num::NaN => return Facts::default(),
        };
        Facts {
            pos: Some(pos),
            neg: Some(neg),
            zero: Some(zero),
            // int_oo says it is an integer, hence real (and finite).
            real: Some(matches!(
                n,
                Num::Int(_) | Num::Float(_) | Num::BigFloat(_) | Num::IntOo(_)
            )),
            // A Float's `is_integer` is False when it has a fraction, else
            // unknown (sympy 1.14: `Float(2.0).is_integer` is None).
            integer: match n {
                Num::Int(_) | Num::IntOo(_) => Some(true),
                Num::Float(f) if f.fract() != 0.0 => Some(false),
                Num::BigFloat(m) if !m.is_integer_valued() => Some(false),
                Num::Inf(_) => Some(false),
                _ => None,
            },
        }
    }

    /// Facts of something known non-negative and integer (torch `Mod`).
    fn nonneg_integer() -> Facts {
        Facts {
            pos: None,
            neg: Some(false),
            zero: None,
            real: Some(true),
            integer: Some(true),
        }
    }

    fn real_only(integer: bool) -> Facts {
        Facts {
            real: Some(true),
            integer: if integer { Some(true) } else { None },
            ..Facts::default()
        }
    }
}

/// The assumptions sympy derives for `e`.
pub fn facts(e: &Ex) -> Facts {
    match &**e {
        n if n.is_number() => Facts::number(&Num::of(e).expect("a number")),
        // `sympy.Symbol(name)` without assumptions knows nothing; one made
        // with `integer=True` is an integer, so real.
        Node::Sym(s) if s.integer => Facts {
            integer: Some(true),
            real: Some(true),
            ..Facts::default()
        },
        Node::Sym(_) => Facts::default(),
        // An odd integer is non-zero (sympy's `odd -> nonzero` rule).
        Node::Add(args) => with_parity(e, add_facts(args)),
        Node::Mul(args) => with_parity(e, mul_facts(args)),
        Node::Pow(b, x) => {
            let fb = facts(b);
            let even = x.as_int().is_some_and(|i| i.is_even());
            let odd = x.as_int().is_some_and(|i| i.is_odd());
            Facts {
                // `Pow._eval_is_extended_positive`: a positive base; a
                // negative base to an even (odd) power is (not) positive; a
                // non-positive base to an odd power is not positive.
                pos: if fb.pos == Some(true) || (fb.neg == Some(true) && even) {
                    Some(true)
                } else if (fb.neg == Some(true) || fb.nonpos() == Some(true)) && odd {
                    Some(false)
                } else {
                    None
                },
                neg: if (fb.real == Some(true) && even) || fb.nonneg() == Some(true) {
                    Some(false)
                } else if fb.neg == Some(true) && !even {
                    Some(true)
                } else if fb.pos == Some(true) {
                    Some(false)
                } else {
                    None
                },
                zero: fb.zero,
                real: fb.real,
                integer: fb.integer,
            }
        }
        Node::Fn(f, args) => match f {
            // `Mod.is_nonnegative = True`, `is_integer = True`.
            Func::Mod => Facts::nonneg_integer(),
            // `PythonMod`: non-negative for a positive divisor, non-positive
            // for a negative one.
            Func::PythonMod => {
                let fq = facts(&args[1]);
                let mut f = Facts::real_only(true);
                if fq.pos == Some(true) {
                    f.neg = Some(false);
                } else if fq.neg == Some(true) {
                    f.pos = Some(false);
                }
                f
            }
            // `FloorDiv._eval_is_nonnegative`: both integer and non-negative.
            Func::FloorDiv => {
                let (p, q) = (facts(&args[0]), facts(&args[1]));
                let mut f = Facts::real_only(true);
                if p.integer == Some(true)
                    && q.integer == Some(true)
                    && p.nonneg() == Some(true)
                    && q.nonneg() == Some(true)
                {
                    f.neg = Some(false);
                }
                f
            }
            Func::IntTrueDiv | Func::FloatTrueDiv | Func::ToFloat | Func::FloatPow => {
                Facts::real_only(false)
            }
            Func::PowByNatural => Facts::real_only(true),
            Func::BitwiseAnd | Func::BitwiseOr => Facts::default(),
        },
        _ => Facts::default(),
    }
}

fn with_parity(e: &Ex, mut f: Facts) -> Facts {
    if f.zero.is_none() && is_even(e) == Some(false) {
        f.zero = Some(false);
    }
    f
}

/// `Add._eval_is_extended_positive` / `_negative` and `_eval_is_zero`,
/// reduced to argument signs.
fn add_facts(args: &[Ex]) -> Facts {
    let fs: Vec<Facts> = args.iter().map(facts).collect();
    let real = fuzzy_all(fs.iter().map(|f| f.real));
    // Add._eval_is_integer: `_fuzzy_group(..., quick_exit=True)`: all
    // integer is True, exactly one non-integer among integers (`2.5 + a`) is
    // False, anything else unknown.
    let integer = fuzzy_group(fs.iter().map(|f| f.integer), true);
    let sign = |want_pos: bool| -> Option<bool> {
        let (mut strict, mut weak, mut opposite) = (false, false, false);
        for f in fs.iter().filter(|f| f.zero != Some(true)) {
            let (s, w, o) = if want_pos {
                (f.pos, f.nonneg(), f.nonpos())
            } else {
                (f.neg, f.nonpos(), f.nonneg())
            };
            if s == Some(true) {
                strict = true;
            } else if w == Some(true) {
                weak = true;
            } else if o == Some(true) {
                opposite = true;
            } else {
                return None;
            }
        }
        if !opposite && strict {
            Some(true)
        } else if !strict && !weak {
            Some(false)
        } else {
            None
        }
    };
    let (mut pos, mut neg) = (sign(true), sign(false));
    if let Some((c, a, v)) = monotonic_step(args) {
        // `s = v + c` against `a`'s sign, as the four handlers test it.
        let s = v + c;
        let fa = facts(a);
        if pos.is_none() && s.is_positive() && fa.nonneg() == Some(true) {
            pos = Some(true);
        }
        if neg.is_none() && s.is_negative() && fa.nonpos() == Some(true) {
            neg = Some(true);
        }
        if pos.is_none() && !s.is_positive() && fa.nonpos() == Some(true) {
            pos = Some(false);
        }
        if neg.is_none() && !s.is_negative() && fa.nonneg() == Some(true) {
            neg = Some(false);
        }
    }
    // `zero -> even -> integer`: a sum that is not an integer is not zero.
    let zero = if pos == Some(true) || neg == Some(true) || integer == Some(false) {
        Some(false)
    } else {
        None
    };
    Facts {
        pos,
        neg,
        zero,
        real,
        integer,
    }
}

/// The `_monotonic_sign` step of `Add._eval_is_extended_positive` (and of
/// `_negative`, `_nonnegative`, `_nonpositive`): for `c + a` with a nonzero
/// number `c`, `v = _monotonic_sign(a)`; the sum's sign follows from
/// `v + c` and `a`'s. Modelled for `a` a power of an integer to an integer
/// `n >= 2` (`(Mod(b, 8) + 2)**2 - 1` is non-negative: the power is
/// composite, so at least 4); elsewhere the step proves nothing here.
fn monotonic_step(args: &[Ex]) -> Option<(BigInt, &Ex, BigInt)> {
    let [c, a] = args else { return None };
    let c = c.as_int().filter(|c| !c.is_zero())?;
    Some((c.clone(), a, monotonic_sign_pow(a)?))
}

/// `_monotonic_sign(b**n)` (sympy/core/exprtools.py) for an integer `b` and
/// an integer `n >= 2`: such a power is never prime (`Pow._eval_is_prime`);
/// it is composite when `b - 1` is positive, or `b + 1` negative and `n`
/// even (`Pow._eval_is_composite`): 9 if odd, else 4; otherwise a positive
/// one is at least 4 if even, else 1, a negative one at most -2 or -1, and
/// one of known weak sign is 0.
fn monotonic_sign_pow(a: &Ex) -> Option<BigInt> {
    let Node::Pow(b, x) = &**a else { return None };
    let n = x.as_int().filter(|n| *n >= &BigInt::from(2))?;
    let fb = facts(b);
    if fb.integer != Some(true) || fb.real != Some(true) {
        return None;
    }
    let shifted = |k: i64| add(&[b.clone(), int(k)]).ok();
    let composite = shifted(-1).is_some_and(|e| facts(&e).pos == Some(true))
        || n.is_even() && shifted(1).is_some_and(|e| facts(&e).neg == Some(true));
    let odd = is_even(a) == Some(false);
    let even = is_even(a) == Some(true);
    let fa = facts(a);
    Some(BigInt::from(if composite {
        if odd {
            9
        } else {
            4
        }
    } else if fa.pos == Some(true) {
        if even {
            4
        } else {
            1
        }
    } else if fa.neg == Some(true) {
        if even {
            -2
        } else {
            -1
        }
    } else if fa.zero == Some(true) || fa.nonpos() == Some(true) || fa.nonneg() == Some(true) {
        0
    } else {
        return None;
    }))
}

/// `Mul._eval_pos_neg` and friends, reduced to argument signs.
fn mul_facts(args: &[Ex]) -> Facts {
    let fs: Vec<Facts> = args.iter().map(facts).collect();
    let real = fuzzy_all(fs.iter().map(|f| f.real));
    // Mul._eval_is_integer gives up (None) at a factor that is neither an
    // integer nor a Rational: a Float, a ToFloat, ...
    let integer = match fuzzy_all(fs.iter().map(|f| f.integer)) {
        Some(false) => None,
        x => x,
    };
    let mut negs = 0;
    let mut known = true;
    let mut weak = false;
    for f in &fs {
        if f.pos == Some(true) {
        } else if f.neg == Some(true) {
            negs += 1;
        } else if f.nonpos() == Some(true) {
            negs += 1;
            weak = true;
        } else if f.nonneg() == Some(true) {
            weak = true;
        } else {
            known = false;
        }
    }
    let zero = if fs.iter().all(|f| f.zero == Some(false)) {
        Some(false)
    } else {
        None
    };
    let (pos, neg) = if !known {
        (None, None)
    } else if weak {
        if negs % 2 == 0 {
            (None, Some(false))
        } else {
            (Some(false), None)
        }
    } else if negs % 2 == 0 {
        (Some(true), Some(false))
    } else {
        (Some(false), Some(true))
    };
    Facts {
        pos,
        neg,
        zero,
        real,
        integer,
    }
}

/// `expr.is_even` (`Some(false)`: odd).
pub fn is_even(e: &Ex) -> Option<bool> {
    match &**e {
        Node::Int(i) => Some(i.is_even()),
        Node::Mul(args) => {
            if fuzzy_all(args.iter().map(|a| facts(a).integer)) != Some(true) {
                return None;
            }
            mul_is_odd(args).map(|odd| !odd)
        }
        Node::Add(args) => {
            let mut even = true;
            for a in args {
                even ^= !is_even(a)?;
            }
            Some(even)
        }
        Node::Pow(b, _) => is_even(b),
        _ => None,
    }
}

/// `Mul._eval_is_odd` over integer factors, in their order: an even
/// factor makes the product even, and so do two neighbours whose sum is
/// odd (`m*(m + 9)`: `2*m + 9` is odd); factors `1` and `-1` are skipped.
fn mul_is_odd(args: &[Ex]) -> Option<bool> {
    let mut r = Some(true);
    let mut acc: Option<&Ex> = None;
    for t in args {
        if matches!(&**t, Node::Int(i) if i.abs() == BigInt::from(1)) {
            continue;
        }
        let even = is_even(t);
        if even == Some(true) {
            return Some(false);
        }
        if r != Some(false) {
            if acc.is_some_and(|a| sum_is_odd(a, t)) {
                r = Some(false);
            } else if even.is_none() {
                r = None;
            }
        }
        acc = Some(t);
    }
    r
}

/// `(a + b).is_odd`.
fn sum_is_odd(a: &Ex, b: &Ex) -> bool {
    add(&[a.clone(), b.clone()])
        .ok()
        .is_some_and(|s| is_even(&s) == Some(false))
}

/// `expr.free_symbols`: appends the name of each symbol in `e` to `out`, unless
/// it is there already.
pub fn free_symbols(e: &Ex, out: &mut Vec<String>) {
    match &**e {
        Node::Sym(s) if !out.contains(&s.name) => out.push(s.name.clone()),
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().for_each(|x| free_symbols(x, out))
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => {
            free_symbols(a, out);
            free_symbols(b, out);
        }
        Node::Not(a) => free_symbols(a, out),
        _ => {}
    }
}

/// `expr.could_extract_minus_sign()`: a negative number, a product with a
/// negative coefficient, or a sum whose (printed) first term is negative.
pub fn could_extract_minus_sign(e: &Ex) -> bool {
    match &**e {
        n if n.is_number() => Num::of(e).is_some_and(|n| n.is_negative()),
        Node::Mul(args) => Num::of(&args[0]).is_some_and(|n| n.is_negative()),
        Node::Add(args) => {
            // Expr.could_extract_minus_sign for Add: `-self` has fewer
            // negative terms, ties broken by sort order.
            let negs = args.iter().filter(|a| could_extract_minus_sign(a)).count();
            let pos = args.len() - negs;
            if negs != pos {
                return negs > pos;
            }
            let Ok(n) = neg(e) else {
                return false;
            };
            compare(e, &n) == std::cmp::Ordering::Greater
        }
        _ => false,
    }
}
