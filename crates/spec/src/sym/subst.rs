//! sympy's `Basic.xreplace` over the expressions of [`super::expr`]: a
//! node whose args changed is rebuilt through its class's constructor, so
//! the result is canonical as sympy's `func(*args)` makes it (terms
//! re-sorted by the new symbols' names, numbers folded, relationals
//! evaluated when they can be).

use std::rc::Rc;

use super::expr::{self, Ex, Func, Node, Symbol};
use torchspec_pyval::{PyResult, Raise};

/// `e.xreplace(mapping)`, the mapping given as a function of each symbol
/// (`None`: the symbol stays).
///
/// ```
/// use std::rc::Rc;
/// use torchspec_spec::sym::expr::{self, Node, Symbol};
/// use torchspec_spec::sym::{print::sstr, subst::xreplace};
/// let sym = |n: &str| Rc::new(Node::Sym(Rc::new(Symbol { name: n.into(), lower: None, upper: None, integer: false })));
/// let (a, b) = (sym("a#0"), sym("b#1"));
/// let e = expr::add(&[a.clone(), b.clone()]).unwrap();
/// let swapped = xreplace(&e, &|s: &Symbol| match s.name.as_str() {
///     "a#0" => Some(sym("u1")),
///     "b#1" => Some(sym("u0")),
///     _ => None,
/// }).unwrap();
/// assert_eq!(sstr(&swapped), "u0 + u1");
/// ```
pub fn xreplace(e: &Ex, f: &dyn Fn(&Symbol) -> Option<Ex>) -> PyResult<Ex> {
    Ok(walk(e, f)?.unwrap_or_else(|| e.clone()))
}

/// The rebuilt node, or `None` when nothing under it changed.
fn walk(e: &Ex, f: &dyn Fn(&Symbol) -> Option<Ex>) -> PyResult<Option<Ex>> {
    let args: Vec<&Ex> = match &**e {
        Node::Sym(s) => return Ok(f(s)),
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().collect()
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => vec![a, b],
        Node::Not(a) => vec![a],
        _ => return Ok(None),
    };
    let mut changed = false;
    let mut new = Vec::with_capacity(args.len());
    for a in args {
        match walk(a, f)? {
            Some(n) => {
                changed = true;
                new.push(n);
            }
            None => new.push(a.clone()),
        }
    }
    if !changed {
        return Ok(None);
    }
    rebuild(e, &new).map(Some)
}

/// `type(e)(*args)`: `e`'s class over new arguments (`xreplace`, and
/// `ranges`' rewrite before value-range analysis).
pub(crate) fn rebuild(e: &Ex, args: &[Ex]) -> PyResult<Ex> {
    Ok(match &**e {
        Node::Add(_) => expr::add(args)?,
        Node::Mul(_) => expr::mul(args)?,
        Node::Pow(_, _) => match args[1].as_int() {
            Some(n) => expr::pow_int(&args[0], n)?,
            None => {
                return Err(Raise::unsupported(
                    "xreplace of a power with a symbolic exponent",
                ))
            }
        },
        Node::Fn(func, _) => function(*func, args)?,
        Node::Rel(op, _, _) => expr::relational(*op, &args[0], &args[1])?,
        Node::And(_) => expr::logic_and(args)?,
        Node::Or(_) => expr::logic_or(args)?,
        Node::Not(_) => expr::logic_not(&args[0])?,
        _ => Rc::clone(e),
    })
}

fn function(func: Func, a: &[Ex]) -> PyResult<Ex> {
    match func {
        Func::FloorDiv => expr::floordiv(&a[0], &a[1]),
        Func::Mod => expr::modulo(false, &a[0], &a[1]),
        Func::PythonMod => expr::modulo(true, &a[0], &a[1]),
        Func::IntTrueDiv => expr::int_truediv(&a[0], &a[1]),
        Func::FloatTrueDiv => expr::float_truediv(&a[0], &a[1]),
        Func::ToFloat => expr::to_float(&a[0]),
        Func::BitwiseAnd => expr::bitwise(true, &a[0], &a[1]),
        Func::BitwiseOr => expr::bitwise(false, &a[0], &a[1]),
        Func::PowByNatural => expr::pow_by_natural(&a[0], &a[1]),
        Func::FloatPow => expr::float_pow(&a[0], &a[1]),
    }
}
