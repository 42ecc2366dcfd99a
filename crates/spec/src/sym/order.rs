//! Mirrors sympy 1.14's orderings: `Basic.class_key`, `Expr.sort_key` /
//! `Basic.sort_key` (sympy/core/{basic,expr}.py), and
//! `Expr.as_ordered_terms` with the default `lex` monomial order, which is
//! what `StrPrinter._print_Add` prints terms in.

use std::cmp::Ordering;

use num_bigint::BigInt;

use super::basic::{add_args, as_coeff_mul, int, mul_args, Ex, Func, Node, Num};
use super::print::atom::atom_str;

/// A Python tuple of the shapes sort keys use; compared like Python does.
#[derive(Clone, Debug)]
pub enum Key {
    /// A Python `int`.
    I(i64),
    /// A `str`.
    S(String),
    /// A sympy number, compared by value with the ints.
    N(Num),
    /// A tuple of keys, compared item by item.
    T(Vec<Key>),
}

impl Key {
    fn rank(&self) -> u8 {
        match self {
            Key::I(_) | Key::N(_) => 0,
            Key::S(_) => 1,
            Key::T(_) => 2,
        }
    }
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Key) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Key) -> Ordering {
        match (self, o) {
            (Key::I(a), Key::I(b)) => a.cmp(b),
            (Key::S(a), Key::S(b)) => a.cmp(b),
            (Key::T(a), Key::T(b)) => a.cmp(b),
            (Key::N(a), Key::N(b)) => a.num_cmp(b).unwrap_or(Ordering::Equal),
            (Key::I(a), Key::N(b)) => Num::Int(BigInt::from(*a))
                .num_cmp(b)
                .unwrap_or(Ordering::Equal),
            (Key::N(a), Key::I(b)) => a
                .num_cmp(&Num::Int(BigInt::from(*b)))
                .unwrap_or(Ordering::Equal),
            _ => self.rank().cmp(&o.rank()),
        }
    }
}

fn class_key(e: &Node) -> Key {
    let (a, b, name): (i64, i64, &str) = match e {
        Node::Int(_)
        | Node::Float(_)
        | Node::BigFloat(_)
        | Node::IntOo { .. }
        | Node::Inf { .. }
        | Node::NaN => (1, 0, "Number"),
        Node::Sym(_) => (2, 0, "Symbol"),
        Node::Pow(..) => (3, 2, "Pow"),
        Node::Mul(_) => (3, 0, "Mul"),
        Node::Add(_) => (3, 1, "Add"),
        // Function.class_key: (4, i, name), i = 10000 for these classes.
        Node::Fn(f, _) => (4, 10000, f.name()),
        Node::Rel(op, ..) => (5, 0, op.class_name()),
        Node::And(_) => (5, 0, "And"),
        Node::Or(_) => (5, 0, "Or"),
        Node::Not(_) => (5, 0, "Not"),
        Node::True => (5, 0, "BooleanTrue"),
        Node::False => (5, 0, "BooleanFalse"),
    };
    Key::T(vec![Key::I(a), Key::I(b), Key::S(name.to_string())])
}

fn one_key() -> Key {
    number_key(&Num::Int(BigInt::from(1)))
}

fn number_key(n: &Num) -> Key {
    Key::T(vec![
        Key::T(vec![Key::I(1), Key::I(0), Key::S("Number".into())]),
        Key::T(vec![Key::I(0), Key::T(vec![])]),
        Key::T(vec![]),
        Key::N(n.clone()),
    ])
}

fn args_key(keys: Vec<Key>) -> Key {
    Key::T(vec![Key::I(keys.len() as i64), Key::T(keys)])
}

/// `default_sort_key(e)` (`e.sort_key()`).
pub fn sort_key(e: &Ex) -> Key {
    if let Some(n) = Num::of(e) {
        return number_key(&n);
    }
    match &**e {
        Node::Rel(_, l, r) => Key::T(vec![
            class_key(e),
            args_key(vec![sort_key(l), sort_key(r)]),
            one_key(),
            Key::N(Num::Int(BigInt::from(1))),
        ]),
        Node::And(a) | Node::Or(a) => Key::T(vec![
            class_key(e),
            args_key(a.iter().map(sort_key).collect()),
            one_key(),
            Key::N(Num::Int(BigInt::from(1))),
        ]),
        Node::Not(a) => Key::T(vec![
            class_key(e),
            args_key(vec![sort_key(a)]),
            one_key(),
            Key::N(Num::Int(BigInt::from(1))),
        ]),
        Node::True | Node::False => Key::T(vec![
            class_key(e),
            args_key(vec![]),
            one_key(),
            Key::N(Num::Int(BigInt::from(1))),
        ]),
        _ => {
            // Expr.sort_key.
            let (coeff, expr) = as_coeff_mul(e);
            let (expr, exp) = match &*expr {
                Node::Pow(b, x) => (b.clone(), x.clone()),
                _ => (expr.clone(), int(1)),
            };
            let args = if expr.is_atom() {
                Key::T(vec![
                    Key::I(1),
                    Key::T(vec![Key::S(atom_str(&expr, false))]),
                ])
            } else {
                let items: Vec<Ex> = match &*expr {
                    Node::Add(_) => ordered_terms(&expr),
                    Node::Mul(_) => ordered_factors(&expr),
                    Node::Fn(_, a) => a.clone(),
                    Node::Pow(b, x) => vec![b.clone(), x.clone()],
                    _ => vec![],
                };
                args_key(items.iter().map(sort_key).collect())
            };
            Key::T(vec![class_key(&expr), args, sort_key(&exp), Key::N(coeff)])
        }
    }
}

/// Total order by `default_sort_key`.
pub fn compare(a: &Ex, b: &Ex) -> Ordering {
    sort_key(a).cmp(&sort_key(b))
}

/// `_node_count(e)` (sympy/core/sorting.py), doubled: a Float counts 1/2.
pub fn node_count2(e: &Ex) -> u64 {
    let kids: u64 = match &**e {
        Node::Float(_) | Node::BigFloat(_) => return 1,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().map(node_count2).sum()
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => node_count2(a) + node_count2(b),
        Node::Not(a) => node_count2(a),
        _ => 0,
    };
    2 + kids
}

/// The order of `sympy.ordered(seq)`: by node count, then `default_sort_key`.
pub fn ordered_cmp(a: &Ex, b: &Ex) -> Ordering {
    node_count2(a)
        .cmp(&node_count2(b))
        .then_with(|| compare(a, b))
}

/// Sort like `sympy.ordered` (And/Or keep their args in this order).
pub fn sort_ordered(v: &mut [Ex]) {
    v.sort_by(ordered_cmp);
}

/// Sort args into a canonical order (used for structural equality and for
/// `And`/`Or`, whose args sympy keeps `ordered`).
pub fn sort_canonical(v: &mut [Ex]) {
    if v.len() > 1 {
        let mut keyed: Vec<(Key, Ex)> = v.iter().map(|e| (sort_key(e), e.clone())).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        for (slot, (_, e)) in v.iter_mut().zip(keyed) {
            *slot = e;
        }
    }
}

/// `Mul.as_ordered_factors()`: the factors sorted by `sort_key`.
pub fn ordered_factors(e: &Ex) -> Vec<Ex> {
    let mut f = mul_args(e);
    sort_canonical(&mut f);
    f
}

/// `Expr.as_ordered_terms()` for a sum (the printer's term order).
pub fn ordered_terms(e: &Ex) -> Vec<Ex> {
    let terms = add_args(e);
    // The special case `Add(Number, Mul(Number, x))` with the first number
    // positive and the second negative keeps the number first: `1 - a`.
    if terms.len() == 2 {
        let (n, m) = if terms[0].is_number() {
            (&terms[0], &terms[1])
        } else {
            (&terms[1], &terms[0])
        };
        if let (Some(nv), Node::Mul(margs)) = (Num::of(n), &**m) {
            if margs.len() == 2 {
                // `is_positive` / `is_negative` are not True for sympy's
                // `oo` (not finite) or nan: `1.0 - oo*x` prints as
                // `-oo*x + 1.0`. torch's `int_oo` has them: `1 - int_oo*b`.
                let finite = |n: &Num| !matches!(n, Num::Inf(_) | Num::NaN);
                if let Some(c) = Num::of(&margs[0]) {
                    if finite(&nv)
                        && finite(&c)
                        && !nv.is_negative()
                        && !nv.is_zero()
                        && c.is_negative()
                    {
                        return vec![n.clone(), m.clone()];
                    }
                }
            }
        }
    }
    // as_terms(): each term as (coefficient, monomial over the generators,
    // the factors not known commutative in order).
    let mut gens: Vec<Ex> = Vec::new();
    type Decomposed = (Ex, f64, Vec<(Ex, BigInt)>, Vec<Ex>);
    let mut decomposed: Vec<Decomposed> = Vec::new();
    for t in &terms {
        let (c, rest) = as_coeff_mul(t);
        let (mut cpart, mut ncpart) = (Vec::new(), Vec::new());
        if !rest.is_int_value(1) {
            for f in mul_args(&rest) {
                if !is_commutative(&f) {
                    ncpart.push(f);
                    continue;
                }
                let (b, x) = match &*f {
                    Node::Pow(b, x) if x.as_int().is_some() => {
                        (b.clone(), x.as_int().cloned().expect("int"))
                    }
                    _ => (f.clone(), BigInt::from(1)),
                };
                if !gens.contains(&b) {
                    gens.push(b.clone());
                }
                cpart.push((b, x));
            }
        }
        decomposed.push((t.clone(), c.to_f64(), cpart, ncpart));
    }
    sort_canonical(&mut gens);
    let mut keyed: Vec<(Vec<BigInt>, Vec<Ex>, f64, Ex)> = decomposed
        .into_iter()
        .map(|(t, c, cpart, ncpart)| {
            let monom = gens
                .iter()
                .map(|g| {
                    cpart
                        .iter()
                        .find(|(b, _)| b == g)
                        .map_or_else(|| BigInt::from(0), |(_, x)| -x)
                })
                .collect();
            (monom, ncpart, c, t)
        })
        .collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| nc_cmp(&a.1, &b.1))
            .then(a.2.partial_cmp(&b.2).unwrap_or(Ordering::Equal))
    });
    keyed.into_iter().map(|(_, _, _, t)| t).collect()
}

/// The `ncpart` tuples of two terms compared as Python compares them: by
/// each factor's `sort_key`, then by length.
fn nc_cmp(a: &[Ex], b: &[Ex]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| compare(x, y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// `e.is_commutative` is True. A BooleanAtom's, a relational's and a
/// `Not`'s is None (an `And` / `Or`'s is True), and so is that of an opaque
/// `BitwiseFn` of one (its assumptions come from its arguments),
/// of a power or product with such a part; torch's integer and real
/// functions (`ToFloat`, `FloorDiv`, ...) are commutative whatever their
/// arguments.
pub(super) fn is_commutative(e: &Ex) -> bool {
    commutative_slot(e) == Some(true)
}

/// The `is_commutative` a node carries (its slot, set when it was built):
/// True, False (a product or sum built with a non-commutative part), or
/// None (a BooleanAtom, relational or `Not`; a `BitwiseFn` of one; a power
/// of one; `-x` of one, built by `Expr.__neg__`).
pub(super) fn commutative_slot(e: &Ex) -> Option<bool> {
    match &**e {
        Node::True | Node::False | Node::Rel(..) | Node::Not(_) => None,
        // Function._eval_is_commutative: `fuzzy_and` of the arguments'.
        Node::Fn(Func::BitwiseAnd | Func::BitwiseOr, args) => {
            super::fuzzy::fuzzy_all(args.iter().map(commutative_slot))
        }
        // `b.is_commutative and e.is_commutative`.
        Node::Pow(b, x) => match commutative_slot(b) {
            Some(true) => commutative_slot(x),
            other => other,
        },
        // `-x` of a non-commutative atom: `Mul._from_args((-1, x), None)`
        // (the same product from `Mul(-1, x)` would be False; a subtraction
        // is the way the reference builds it).
        Node::Mul(args) if args.len() == 2 && args[0].is_int_value(-1) => {
            match commutative_slot(&args[1]) {
                Some(true) => Some(true),
                None if !matches!(*args[1], Node::Mul(_) | Node::Add(_)) => None,
                _ => Some(false),
            }
        }
        // Mul.flatten / Add.flatten: `is_commutative = not nc_part`.
        Node::Mul(args) | Node::Add(args) => Some(args.iter().all(is_commutative)),
        _ => Some(true),
    }
}

/// `e.is_extended_real is False` for a sum or product because it is not
/// commutative (`extended_real -> commutative`): `_eval_is_commutative`,
/// `_fuzzy_group` of the arguments' slots, is False. In a sum the terms
/// with a coefficient were rebuilt by `Mul(c, s)` (False when `s` does not
/// commute), except in `Add.flatten`'s fast path for a Rational and a
/// product, which keeps the product as it came (`1 - (a | True)`: None).
pub(super) fn not_real_by_commutativity(e: &Ex) -> bool {
    use super::fuzzy::fuzzy_group;
    let slots = match &**e {
        Node::Mul(args) => fuzzy_group(args.iter().map(commutative_slot), false),
        Node::Add(args) => {
            let fast = args.len() == 2
                && matches!(*args[0], Node::Int(_))
                && matches!(*args[1], Node::Mul(_));
            let slot = |t: &Ex| match &**t {
                Node::Mul(f) if !fast && Num::of(&f[0]).is_some() => {
                    Some(f[1..].iter().all(is_commutative))
                }
                _ => commutative_slot(t),
            };
            fuzzy_group(args.iter().map(slot), false)
        }
        _ => return false,
    };
    slots == Some(false)
}
