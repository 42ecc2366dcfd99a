//! `ShapeEnv.divisible` and what it does to `simplify`
//! (torch/fx/experimental/symbolic_shapes.py): `_maybe_guard_rel` records a
//! torch `Mod` that an equality solves to 0 (`_add_divisible`); `simplify`
//! then turns each `FloorDiv(b, k)` whose `Mod(b, k)` is recorded into
//! `CleanDiv(b, k)` and cancels `k*CleanDiv(b, k)` into `b`; and
//! `_maybe_evaluate_static`'s `resimplify_floor_div` simplifies the axioms
//! with a FloorDiv again when `divisible` grew.
//!
//! A `CleanDiv` (torch/utils/_sympy/functions.py) is a `FloorDiv` subclass:
//! it prints as `(b//k)`, `bound_sympy` bounds it as `floordiv` and
//! `try_solve` isolates it as a FloorDiv. So in what the model computes it
//! is its FloorDiv, except where `simplify` cancels it.

use super::{has_fn, is_number, sum, unsupported, ShapeEnv};
use torchspec_pyval::PyResult;
use torchspec_spec::sym::expr::{self, Ex, Func, Node};

/// Every distinct `Fn(f, ..)` node of `e` (`expr.atoms(f)`), outer first.
fn atoms(e: &Ex, f: Func, out: &mut Vec<Ex>) {
    if let Node::Fn(g, _) = &**e {
        if *g == f && !out.contains(e) {
            out.push(e.clone());
        }
    }
    match &**e {
        Node::Fn(_, a) | Node::Add(a) | Node::Mul(a) | Node::And(a) | Node::Or(a) => {
            a.iter().for_each(|x| atoms(x, f, out))
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => {
            atoms(a, f, out);
            atoms(b, f, out);
        }
        Node::Not(a) => atoms(a, f, out),
        _ => {}
    }
}

/// `e.has(thing)` for a subexpression.
fn contains(e: &Ex, thing: &Ex) -> bool {
    if e == thing {
        return true;
    }
    match &**e {
        Node::Fn(_, a) | Node::Add(a) | Node::Mul(a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(|x| contains(x, thing))
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => contains(a, thing) || contains(b, thing),
        Node::Not(a) => contains(a, thing),
        _ => false,
    }
}

/// Whether `try_solve(Eq(lhs, rhs), m)` gives `(_, 0)`: the side with `m`
/// loses its terms without `m` (`_try_isolate_lhs`) and must be `m` itself
/// (a product with `m` is divided through only when the other side is not
/// zero, and then the other side stays non-zero).
fn solves_to_zero(lhs: &Ex, rhs: &Ex, m: &Ex) -> PyResult<bool> {
    let (side, other) = match (contains(lhs, m), contains(rhs, m)) {
        (true, false) => (lhs, rhs),
        (false, true) => (rhs, lhs),
        _ => return Ok(false),
    };
    let (side, other) = match &**side {
        Node::Add(terms) => {
            let rest: Vec<Ex> = terms.iter().filter(|t| !contains(t, m)).cloned().collect();
            let c = sum(&rest)?;
            (expr::sub(side, &c)?, expr::sub(other, &c)?)
        }
        _ => (side.clone(), other.clone()),
    };
    Ok(side == *m && other.is_int_value(0))
}

impl ShapeEnv {
    /// `_maybe_guard_rel`'s branch for an equality with a torch `Mod`:
    /// `mod_expr = next(iter(expr.atoms(Mod)))`, then `_add_divisible` when
    /// `try_solve(expr, mod_expr)` gives 0.
    pub(super) fn maybe_add_divisible(&mut self, lhs: &Ex, rhs: &Ex) -> PyResult<()> {
        let mut mods = Vec::new();
        atoms(lhs, Func::Mod, &mut mods);
        atoms(rhs, Func::Mod, &mut mods);
        let [m] = mods.as_slice() else {
            return unsupported("an equality with several Mod atoms (a set's first)");
        };
        if solves_to_zero(lhs, rhs, m)? && !self.divisible.contains(m) {
            self.divisible.push(m.clone());
            self.resimplify_axioms()?;
        }
        Ok(())
    }

    /// `resimplify_floor_div` of `_maybe_evaluate_static`: each axiom with
    /// a FloorDiv is added again as `simplify(k)` with its value.
    fn resimplify_axioms(&mut self) -> PyResult<()> {
        let mut new = Vec::new();
        for (k, v) in &self.axioms {
            if has_fn(k, Func::FloorDiv) {
                new.push((self.simplify_div(&self.replace(k)?)?, *v));
            }
        }
        for (k, v) in new {
            match self.axioms.iter_mut().find(|(a, _)| *a == k) {
                Some(slot) => slot.1 = v,
                None => self.axioms.push((k, v)),
            }
        }
        Ok(())
    }

    /// Whether `simplify` makes `FloorDiv(b, k)` a CleanDiv:
    /// `self.replace(Mod(b, k)) in self.divisible`, after
    /// `_update_divisible` dropped the entries that became numbers.
    fn is_clean(&self, b: &Ex, k: &Ex) -> PyResult<bool> {
        let m = self.replace(&expr::modulo(false, b, k)?)?;
        Ok(!is_number(&m) && self.divisible.contains(&m))
    }

    /// The FloorDiv passes of `simplify` on a replaced expression: the
    /// CleanDivs, then `cancel_clean_div` on every product.
    pub(super) fn simplify_div(&self, e: &Ex) -> PyResult<Ex> {
        if self.divisible.is_empty() || !has_fn(e, Func::FloorDiv) {
            return Ok(e.clone());
        }
        let mut fds = Vec::new();
        atoms(e, Func::FloorDiv, &mut fds);
        let mut clean = Vec::new();
        for fd in fds {
            let Node::Fn(_, a) = &*fd else { continue };
            if has_fn(&a[1], Func::FloorDiv) {
                return unsupported("a FloorDiv by a FloorDiv under a divisibility fact");
            }
            if self.is_clean(&a[0], &a[1])? {
                clean.push(fd);
            }
        }
        if clean.is_empty() {
            return Ok(e.clone());
        }
        cancel(e, &clean)
    }
}

/// Whether some product in `e` has a CleanDiv as a factor.
fn has_clean_product(e: &Ex, clean: &[Ex]) -> bool {
    match &**e {
        Node::Mul(a) if a.iter().any(|x| clean.contains(x)) => true,
        Node::Fn(_, a) | Node::Add(a) | Node::Mul(a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(|x| has_clean_product(x, clean))
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => {
            has_clean_product(a, clean) || has_clean_product(b, clean)
        }
        Node::Not(a) => has_clean_product(a, clean),
        _ => false,
    }
}

/// `expr.replace(is a Mul with a CleanDiv factor, cancel_clean_div)`:
/// bottom-up, each such product rebuilt without `CleanDiv(b, k)` and `k`,
/// with `b` instead.
fn cancel(e: &Ex, clean: &[Ex]) -> PyResult<Ex> {
    if !has_clean_product(e, clean) {
        return Ok(e.clone());
    }
    match &**e {
        Node::Add(a) => expr::add(&cancel_all(a, clean)?),
        Node::Mul(a) => cancel_mul(cancel_all(a, clean)?, clean),
        Node::Rel(op, l, r) => expr::relational(*op, &cancel(l, clean)?, &cancel(r, clean)?),
        _ => unsupported("a CleanDiv product inside a function"),
    }
}

fn cancel_all(a: &[Ex], clean: &[Ex]) -> PyResult<Vec<Ex>> {
    a.iter().map(|x| cancel(x, clean)).collect()
}

/// `cancel_clean_div(mul)`.
fn cancel_mul(mut args: Vec<Ex>, clean: &[Ex]) -> PyResult<Ex> {
    loop {
        let found = args.iter().enumerate().find_map(|(i, x)| {
            let Node::Fn(_, fa) = &**x else { return None };
            if !clean.contains(x) {
                return None;
            }
            let j = args.iter().position(|y| *y == fa[1])?;
            Some((i, j, fa[0].clone()))
        });
        let Some((i, j, base)) = found else {
            return expr::mul(&args);
        };
        args.remove(i.max(j));
        args.remove(i.min(j));
        args.push(base);
    }
}
