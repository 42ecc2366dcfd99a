//! Relationals: `Eq`, `Ne`, `<`, `<=`, `>`, `>=` and their evaluation
//! (sympy/core/relational.py).

use std::rc::Rc;

use super::facts::facts;
use torchspec_pyval::{PyResult, Raise};

use super::*;

/// `is_eq(lhs, rhs)` (sympy/core/relational.py), for the node kinds here.
pub(super) fn is_eq(l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    if l == r {
        return Ok(Some(true));
    }
    let lb = matches!(**l, Node::True | Node::False);
    let rb = matches!(**r, Node::True | Node::False);
    if lb && rb {
        return Ok(Some(false));
    }
    let l_sym = matches!(**l, Node::Sym(_));
    let r_sym = matches!(**r, Node::Sym(_));
    if !(l_sym || r_sym) && l.is_boolean() != r.is_boolean() {
        return Ok(Some(false));
    }
    if l.is_boolean() || r.is_boolean() {
        return Ok(None);
    }
    let dif = sub(l, r)?;
    let z = facts(&dif).zero;
    if z.is_some() {
        return Ok(z);
    }
    // `dif.as_coeff_Add()` with a Float constant: an integral float plus a
    // non-integer rest (or vice versa) cannot be zero.
    if let Node::Add(terms) = &*dif {
        if let Node::BigFloat(c) = &*terms[0] {
            let rest = add(&terms[1..])?;
            if c.is_integer_valued() && facts(&rest).integer == Some(false) {
                return Ok(Some(false));
            }
        }
        if let Node::Float(c) = &*terms[0] {
            let rest = add(&terms[1..])?;
            let fr = facts(&rest);
            if c.fract() == 0.0 {
                if fr.integer == Some(false) {
                    return Ok(Some(false));
                }
            } else if fr.integer == Some(true) {
                // t.is_rational is False for no node here.
            }
        }
    }
    Ok(None)
}

/// `is_ge(lhs, rhs)`.
pub(super) fn is_ge(l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    if let (Some(Num::IntOo(x)), Some(Num::IntOo(y))) = (Num::of(l), Num::of(r)) {
        // _n2: `int_oo - int_oo` is nan, not comparable; nothing decides.
        if x == y {
            return Ok(None);
        }
    }
    if let (Some(a), Some(b)) = (Num::of(l), Num::of(r)) {
        return Ok(a.num_cmp(&b).map(|o| o != std::cmp::Ordering::Less));
    }
    let (fl, fr) = (facts(l), facts(r));
    if fl.real == Some(true) && fr.real == Some(true) {
        let d = sub(l, r)?;
        return Ok(facts(&d).nonneg());
    }
    Ok(None)
}

/// The truth value sympy finds when constructing `op(l, r)`, if any.
pub fn rel_eval(op: Rel, l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    let not = |v: Option<bool>| v.map(|b| !b);
    Ok(match op {
        Rel::Eq => is_eq(l, r)?,
        Rel::Ne => not(is_eq(l, r)?),
        Rel::Ge => is_ge(l, r)?,
        Rel::Le => is_ge(r, l)?,
        Rel::Lt => not(is_ge(l, r)?),
        Rel::Gt => not(is_ge(r, l)?),
    })
}

/// `_Inequality.__new__`'s check of one side (the left first): it must not
/// be known non-real, nor nan.
pub fn inequality_side(me: &Ex) -> PyResult<()> {
    if crate::sym::order::not_real_by_commutativity(me) {
        return Err(Raise::type_error(format!(
            "Invalid comparison of non-real {}",
            crate::sym::print::sstr(me)
        )));
    }
    if matches!(**me, Node::NaN) {
        return Err(Raise::type_error("Invalid NaN comparison"));
    }
    Ok(())
}

/// `sympy.Eq(l, r)`, `sympy.Gt(l, r)`, ...
pub fn relational(op: Rel, l: &Ex, r: &Ex) -> PyResult<Ex> {
    if !matches!(op, Rel::Eq | Rel::Ne) {
        inequality_side(l)?;
        inequality_side(r)?;
        // is_ge: `if not (isinstance(lhs, Expr) and isinstance(rhs, Expr))`.
        if l.is_boolean() || r.is_boolean() {
            return Err(Raise::type_error("Can only compare inequalities with Expr"));
        }
    } else if matches!(**l, Node::NaN) || matches!(**r, Node::NaN) {
        // is_eq: only Booleans equal Booleans.
        let other = if matches!(**l, Node::NaN) { r } else { l };
        if other.is_boolean() {
            return Ok(boolean(op == Rel::Ne));
        }
        return Err(Raise::unsupported("Eq with nan"));
    }
    // (A Boolean side is decided by is_eq's class rule below, infinity or not.)
    if (has_infinity(l) || has_infinity(r))
        && !(l.is_number() && r.is_number())
        && !(l.is_boolean() || r.is_boolean())
    {
        // Modelled: an infinity atom against an expression free of them,
        // which sympy decides when that expression is real (or a Boolean,
        // for Eq/Ne) and otherwise leaves unevaluated.
        let is_inf_atom = |e: &Ex| matches!(**e, Node::IntOo { .. } | Node::Inf { .. } | Node::NaN);
        let (inf, other, inf_left) = if is_inf_atom(l) {
            (l, r, true)
        } else {
            (r, l, false)
        };
        let Some(n) = Num::of(inf).filter(|_| is_inf_atom(inf)) else {
            // An infinity inside a product or sum: Add/Mul.flatten already
            // absorbed every term or factor of known sign into it, so the
            // sign is unknown and is_ge cannot decide.
            // is_eq likewise finds neither is_infinite nor dif.is_zero.
            return Ok(Rc::new(Node::Rel(op, l.clone(), r.clone())));
        };
        if has_infinity(other) || matches!(n, Num::NaN) {
            return Err(Raise::unsupported("a relational with an infinity inside"));
        }
        // int_oo is an extended-real integer: is_ge / is_eq go through the
        // difference (`int_oo - x`) and its sign, as for any real pair.
        if matches!(n, Num::IntOo(_)) && !other.is_boolean() {
            return Ok(match rel_eval(op, l, r)? {
                Some(b) => boolean(b),
                None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
            });
        }
        let decided = if other.is_boolean() {
            match op {
                Rel::Eq => Some(false),
                Rel::Ne => Some(true),
                _ => None,
            }
        } else if matches!(n, Num::Inf(_)) && facts(other).real == Some(true) {
            // inf_left: `inf op other`; an infinity compares past any real.
            let inf_big = n.is_positive() == inf_left;
            Some(match op {
                Rel::Eq => false,
                Rel::Ne => true,
                Rel::Gt | Rel::Ge => inf_big,
                Rel::Lt | Rel::Le => !inf_big,
            })
        } else {
            None
        };
        return Ok(match decided {
            Some(b) => boolean(b),
            None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
        });
    }
    Ok(match rel_eval(op, l, r)? {
        Some(b) => boolean(b),
        None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
    })
}
