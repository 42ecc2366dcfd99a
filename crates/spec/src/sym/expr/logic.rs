//! Boolean algebra: `Not`, `And`, `Or` and `as_Boolean`
//! (sympy/logic/boolalg.py).

use std::rc::Rc;

use num_traits::{One, Zero};

use torchspec_pyval::{PyResult, Raise};

use super::*;

/// `~x` (`Not(x)`): a relational negates, `Not(Not(x))` is `x`.
pub fn logic_not(a: &Ex) -> PyResult<Ex> {
    Ok(match &**a {
        Node::True => boolean(false),
        Node::False => boolean(true),
        Node::Rel(op, l, r) => Rc::new(Node::Rel(op.negated(), l.clone(), r.clone())),
        Node::Not(x) => x.clone(),
        _ => Rc::new(Node::Not(a.clone())),
    })
}

/// `Relational.canonical`, as `And`/`Or` use it to find duplicates and
/// contradictions.
pub(super) fn canonical(e: &Ex) -> PyResult<Ex> {
    let Node::Rel(op, l, r) = &**e else {
        return Ok(e.clone());
    };
    let (mut op, mut l, mut r) = (*op, l.clone(), r.clone());
    if r.is_number() {
        if let (Some(a), Some(b)) = (Num::of(&l), Num::of(&r)) {
            if a.num_cmp(&b) == Some(std::cmp::Ordering::Greater) {
                std::mem::swap(&mut l, &mut r);
                op = op.reversed();
            }
        }
    } else if l.is_number() || crate::sym::order::ordered_cmp(&l, &r) == std::cmp::Ordering::Greater
    {
        std::mem::swap(&mut l, &mut r);
        op = op.reversed();
    }
    if super::facts::could_extract_minus_sign(&l) {
        return Ok(Rc::new(Node::Rel(op.reversed(), neg(&l)?, neg(&r)?)));
    }
    if !r.is_number() && super::facts::could_extract_minus_sign(&r) {
        let nr = neg(&r)?;
        if crate::sym::order::ordered_cmp(&l, &nr) == std::cmp::Ordering::Greater {
            return Ok(Rc::new(Node::Rel(op, nr, neg(&l)?)));
        }
    }
    Ok(Rc::new(Node::Rel(op, l, r)))
}

pub(super) fn lattice(is_and: bool, args: &[Ex]) -> PyResult<Ex> {
    let (zero, identity) = if is_and {
        (Node::False, Node::True)
    } else {
        (Node::True, Node::False)
    };
    // Or._new_args_filter drops relationals equal after `canonical` among
    // the arguments as given, before flattening (the first one stays);
    // And._new_args_filter does it after, over `ordered(args)`.
    let filtered;
    let args = if is_and {
        args
    } else {
        match relational_filter(args)? {
            Some(kept) => {
                filtered = kept;
                &filtered[..]
            }
            None => return Ok(Rc::new(zero)),
        }
    };
    let mut flat: Vec<Ex> = Vec::new();
    for a in args {
        match (&**a, is_and) {
            (Node::And(xs), true) | (Node::Or(xs), false) => flat.extend(xs.iter().cloned()),
            _ => flat.push(a.clone()),
        }
    }
    if flat.iter().any(|a| **a == zero) {
        return Ok(Rc::new(zero));
    }
    flat.retain(|a| **a != identity);
    let mut uniq: Vec<Ex> = Vec::new();
    for a in flat {
        if !uniq.contains(&a) {
            uniq.push(a);
        }
    }
    crate::sym::order::sort_ordered(&mut uniq);
    let mut out = if is_and {
        match relational_filter(&uniq)? {
            Some(kept) => kept,
            None => return Ok(Rc::new(zero)),
        }
    } else {
        uniq
    };
    Ok(match out.len() {
        0 => Rc::new(identity),
        1 => out.pop().expect("one arg"),
        _ => Rc::new(if is_and {
            Node::And(out)
        } else {
            Node::Or(out)
        }),
    })
}

/// The relational pass of `And/Or._new_args_filter`: a relational whose
/// `canonical` form came before is dropped; one whose negation's did makes
/// the whole `zero` (`None`).
pub(super) fn relational_filter(args: &[Ex]) -> PyResult<Option<Vec<Ex>>> {
    let mut rels: Vec<Ex> = Vec::new();
    let mut out = Vec::new();
    for x in args {
        if matches!(**x, Node::Rel(..)) {
            let c = canonical(x)?;
            if rels.contains(&c) {
                continue;
            }
            let neg_c = canonical(&logic_not(&c)?)?;
            if rels.contains(&neg_c) {
                return Ok(None);
            }
            rels.push(c);
        }
        out.push(x.clone());
    }
    Ok(Some(out))
}

/// `sympy.And(*args)`: flattened, `false` absorbs, `true` drops out, duplicates
/// and contradictions of relationals folded.
pub fn logic_and(args: &[Ex]) -> PyResult<Ex> {
    lattice(true, args)
}

/// `sympy.Or(*args)`: flattened, `true` absorbs, `false` drops out, duplicates
/// and contradictions of relationals folded.
pub fn logic_or(args: &[Ex]) -> PyResult<Ex> {
    lattice(false, args)
}

/// `as_Boolean(x)` for what `to_node` wraps: an `Integer` 0/1 becomes
/// `false`/`true` (sympy compares `Integer(1) == True`), anything else raises.
pub fn as_boolean(e: &Ex) -> PyResult<Ex> {
    match &**e {
        Node::Int(i) if i.is_zero() => Ok(boolean(false)),
        Node::Int(i) if i.is_one() => Ok(boolean(true)),
        // A Symbol is a Boolean too (its `is_zero` is unknown).
        Node::Sym(_) => Ok(e.clone()),
        _ if e.is_boolean() => Ok(e.clone()),
        _ => Err(Raise::type_error(format!(
            "expecting bool or Boolean, not `{}`.",
            crate::sym::print::sstr(e)
        ))),
    }
}
