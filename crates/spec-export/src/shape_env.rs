//! The part of `ShapeEnv` (torch/fx/experimental/symbolic_shapes.py) that a
//! spec's facts reach: unbacked symbols with their value ranges,
//! `guard_or_defer_runtime_assert` (static evaluation, `_maybe_guard_rel`,
//! `_refine_ranges`, `_set_replacement`, `canonicalize_bool_expr`), the
//! deferred runtime asserts keyed by symbol, and the axioms they imply.
//!
//! Expressions are the spec crate's sympy model; an unbacked symbol `uK`
//! is an integer symbol with no range attached (sympy knows only
//! `integer=True`), its range kept here as `var_to_range` is.

use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use torchspec_pyval::{PyResult, Raise};
use torchspec_spec::sym::expr::facts;
use torchspec_spec::sym::expr::{self, Ex, Func, Node, Rel, Symbol};
use torchspec_spec::sym::polynomial::{self, Terms};
use torchspec_spec::sym::ranges::{self, Ext};
use torchspec_spec::sym::subst::xreplace;

mod divisible;
mod expand;

/// A polynomial over the shifted symbols, by their index in `syms`.
type Poly = Terms<usize>;

/// `var_to_range[s]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub lo: Ext,
    pub hi: Ext,
}

impl Range {
    pub fn new(lo: Ext, hi: Ext) -> Range {
        Range { lo, hi }
    }
    fn intersect(&self, o: &Range) -> Range {
        Range::new(
            self.lo.clone().max(o.lo.clone()),
            self.hi.clone().min(o.hi.clone()),
        )
    }
    fn is_subset(&self, o: &Range) -> bool {
        o.lo <= self.lo && self.hi <= o.hi
    }
    fn singleton(&self) -> Option<&BigInt> {
        match (&self.lo, &self.hi) {
            (Ext::Fin(a), Ext::Fin(b)) if a == b => Some(a),
            _ => None,
        }
    }
}

#[derive(Clone)]
struct SymInfo {
    ex: Ex,
    range: Range,
    size_like: bool,
    /// In `unbacked_inputs` (a tensor size, or an int dynamo wrapped),
    /// not an unbacked int of `create_unbacked_symint` alone.
    input: bool,
    replacement: Option<Ex>,
}

/// The ShapeEnv of one trace.
#[derive(Clone)]
pub(crate) struct ShapeEnv {
    syms: Vec<SymInfo>,
    /// `deferred_runtime_asserts`: (key symbol index, canonical expr), in
    /// recording order.
    pub deferred: Vec<(usize, Ex)>,
    axioms: Vec<(Ex, bool)>,
    /// `divisible`: the torch `Mod`s an equality solved to 0, in
    /// recording order (`divisible.rs`).
    divisible: Vec<Ex>,
}

fn unsupported<T>(what: &str) -> PyResult<T> {
    Err(Raise::unsupported(what.to_string()))
}

/// The index of an unbacked symbol named `uK`.
/// `x` of `x >= 0` or `0 <= x`: the form `_maybe_fast_eval_comparison`
/// and `_should_skip_static_eval` both look for.
fn nonneg_side(e: &Ex) -> Option<&Ex> {
    match &**e {
        Node::Rel(Rel::Ge, l, r) if is_zero(r) => Some(l),
        Node::Rel(Rel::Le, l, r) if is_zero(l) => Some(r),
        _ => None,
    }
}

pub(crate) fn sym_index(name: &str) -> Option<usize> {
    name.strip_prefix('u')?.parse().ok()
}

fn free(e: &Ex) -> Vec<String> {
    let mut out = Vec::new();
    facts::free_symbols(e, &mut out);
    out
}

fn is_number(e: &Ex) -> bool {
    matches!(&**e, Node::Int(_))
}

fn is_neg(t: &Ex) -> bool {
    match &**t {
        Node::Int(i) => i.is_negative(),
        Node::Mul(args) => matches!(&*args[0], Node::Int(i) if i.is_negative()),
        _ => false,
    }
}

/// `_reduce_to_lowest_terms`.
fn reduce_to_lowest_terms(e: &Ex) -> PyResult<Ex> {
    fn coeff(x: &Ex) -> BigInt {
        match &**x {
            Node::Int(i) => i.abs(),
            Node::Mul(a) => match &*a[0] {
                Node::Int(i) => i.abs(),
                _ => BigInt::one(),
            },
            _ => BigInt::one(),
        }
    }
    fn div(x: &Ex, f: &BigInt) -> PyResult<Ex> {
        if f.is_one() {
            return Ok(x.clone());
        }
        match &**x {
            Node::Int(i) => Ok(expr::int(i / f)),
            Node::Mul(a) => {
                let mut args: Vec<Ex> = a.to_vec();
                match &*args[0] {
                    Node::Int(i) if i == f => {
                        args.remove(0);
                    }
                    Node::Int(i) => args[0] = expr::int(i / f),
                    _ => return unsupported("a product without an integer coefficient"),
                }
                expr::mul(&args)
            }
            _ => unsupported("reducing a term to lowest terms"),
        }
    }
    match &**e {
        Node::Add(terms) => {
            let f = terms
                .iter()
                .map(coeff)
                .fold(BigInt::zero(), |a, b| a.gcd(&b));
            if f.is_one() {
                return Ok(e.clone());
            }
            let parts = terms
                .iter()
                .map(|t| div(t, &f))
                .collect::<PyResult<Vec<_>>>()?;
            expr::add(&parts)
        }
        Node::Int(_) => Ok(expr::int(1)),
        Node::Mul(_) => div(e, &coeff(e)),
        _ => Ok(e.clone()),
    }
}

fn sum(terms: &[Ex]) -> PyResult<Ex> {
    match terms {
        [] => Ok(expr::int(0)),
        [one] => Ok(one.clone()),
        _ => expr::add(terms),
    }
}

/// `canonicalize_bool_expr` of a relational.
pub(crate) fn canonicalize(e: &Ex) -> PyResult<Ex> {
    let Node::Rel(op, l, r) = &**e else {
        return match &**e {
            Node::True | Node::False => Ok(e.clone()),
            _ => unsupported("canonicalizing a boolean that is not a relational"),
        };
    };
    let (t, lhs, rhs) = match op {
        Rel::Gt => (Rel::Lt, r, l),
        Rel::Ge => (Rel::Le, r, l),
        _ => (*op, l, r),
    };
    if lhs.is_boolean() || rhs.is_boolean() {
        return unsupported("a relational between booleans");
    }
    let diff = reduce_to_lowest_terms(&expr::sub(rhs, lhs)?)?;
    let (lhs, rhs) = match &*diff {
        Node::Add(terms) => {
            let (mut pos, mut neg) = (Vec::new(), Vec::new());
            for t in terms {
                if is_neg(t) {
                    neg.push(expr::neg(t)?);
                } else {
                    pos.push(t.clone());
                }
            }
            (sum(&neg)?, sum(&pos)?)
        }
        _ if is_neg(&diff) => (expr::neg(&diff)?, expr::int(0)),
        _ => (expr::int(0), diff),
    };
    Ok(Rc::new(Node::Rel(t, lhs, rhs)))
}

/// `get_implications(e)`: `e` and each implied form canonicalized, the
/// implied forms built from `e`'s own sides.
fn implications(e: &Ex) -> PyResult<Vec<(Ex, bool)>> {
    let mut out = Vec::new();
    let add = |x: &Ex, out: &mut Vec<(Ex, bool)>| -> PyResult<()> {
        let c = canonicalize(x)?;
        let Node::Rel(op, l, r) = &*c else {
            return Ok(());
        };
        match op {
            Rel::Eq | Rel::Ne => {
                let opp = if *op == Rel::Eq { Rel::Ne } else { Rel::Eq };
                out.push((Rc::new(Node::Rel(*op, l.clone(), r.clone())), true));
                out.push((Rc::new(Node::Rel(*op, r.clone(), l.clone())), true));
                out.push((Rc::new(Node::Rel(opp, l.clone(), r.clone())), false));
                out.push((Rc::new(Node::Rel(opp, r.clone(), l.clone())), false));
            }
            _ => {
                out.push((c.clone(), true));
                let not = Rc::new(Node::Rel(op.negated(), l.clone(), r.clone()));
                out.push((canonicalize(&not)?, false));
            }
        }
        Ok(())
    };
    add(e, &mut out)?;
    if let Node::Rel(op, l, r) = &**e {
        let raw = |op: Rel, a: &Ex, b: &Ex| Rc::new(Node::Rel(op, a.clone(), b.clone()));
        match op {
            Rel::Eq => {
                add(&raw(Rel::Le, l, r), &mut out)?;
                add(&raw(Rel::Ge, l, r), &mut out)?;
            }
            Rel::Lt => {
                add(&raw(Rel::Le, l, r), &mut out)?;
                add(&raw(Rel::Ne, l, r), &mut out)?;
                add(&raw(Rel::Le, l, &expr::sub(r, &expr::int(1))?), &mut out)?;
            }
            Rel::Le => add(
                &raw(Rel::Lt, l, &expr::add(&[r.clone(), expr::int(1)])?),
                &mut out,
            )?,
            _ => {}
        }
    }
    Ok(out)
}

/// What `try_solve` isolates: the relation with the symbol alone on the
/// left, and the right-hand side (`None` when it is not an integer).
struct Solved {
    op: Rel,
    rhs: Option<Ex>,
    /// The right-hand side as `num / den` when it is a fraction.
    frac: Option<(Ex, BigInt)>,
}

fn mirror(op: Rel) -> Rel {
    op.reversed()
}

fn has(e: &Ex, thing: &str) -> bool {
    free(e).iter().any(|n| n == thing)
}

/// `try_solve(Rel(op, lhs, rhs), thing)` for the forms a spec makes:
/// `thing` times an integer plus terms without it, on one side.
fn try_solve(
    op: Rel,
    lhs: &Ex,
    rhs: &Ex,
    thing: &str,
    floordiv_ineq: bool,
) -> PyResult<Option<Solved>> {
    let (l_has, r_has) = (has(lhs, thing), has(rhs, thing));
    if l_has && r_has {
        return Ok(None);
    }
    let (op, mut l, mut r) = if l_has {
        (op, lhs.clone(), rhs.clone())
    } else if r_has {
        (mirror(op), rhs.clone(), lhs.clone())
    } else {
        return Ok(None);
    };
    // Move the terms without `thing` to the right.
    if let Node::Add(terms) = &*l {
        let rest: Vec<Ex> = terms.iter().filter(|t| !has(t, thing)).cloned().collect();
        if !rest.is_empty() {
            let c = sum(&rest)?;
            l = expr::sub(&l, &c)?;
            r = expr::sub(&r, &c)?;
            if is_number(&l) {
                return Ok(None);
            }
        }
    }
    let mut op = op;
    let mut den = BigInt::one();
    if let Node::Mul(factors) = &*l {
        let other: Vec<Ex> = factors.iter().filter(|t| !has(t, thing)).cloned().collect();
        match other.as_slice() {
            [] => {}
            [c] => match &**c {
                Node::Int(k) => {
                    let ineq = !matches!(op, Rel::Eq | Rel::Ne);
                    if !ineq && is_zero(&r) {
                        return Ok(None);
                    }
                    l = expr::mul(
                        &factors
                            .iter()
                            .filter(|t| has(t, thing))
                            .cloned()
                            .collect::<Vec<_>>(),
                    )?;
                    if ineq && k.is_negative() {
                        op = mirror(op);
                    }
                    den = k.clone();
                }
                _ => return Ok(None),
            },
            _ => return Ok(None),
        }
    }
    if let Node::Fn(Func::FloorDiv, _) = &*l {
        if floordiv_ineq {
            return Ok(None);
        }
    }
    if !matches!(&*l, Node::Sym(s) if s.name == thing) {
        return Ok(None);
    }
    if den.is_one() {
        return Ok(Some(Solved {
            op,
            rhs: Some(r),
            frac: None,
        }));
    }
    match divide_exact(&r, &den)? {
        Some(q) => Ok(Some(Solved {
            op,
            rhs: Some(q),
            frac: None,
        })),
        None => Ok(Some(Solved {
            op,
            rhs: None,
            frac: Some((r, den)),
        })),
    }
}

fn is_zero(e: &Ex) -> bool {
    matches!(&**e, Node::Int(i) if i.is_zero())
}

/// `e / k` when every term's integer coefficient is a multiple of `k`.
fn divide_exact(e: &Ex, k: &BigInt) -> PyResult<Option<Ex>> {
    let terms: Vec<Ex> = match &**e {
        Node::Add(t) => t.to_vec(),
        _ => vec![e.clone()],
    };
    let mut out = Vec::new();
    for t in &terms {
        let (c, rest): (BigInt, Vec<Ex>) = match &**t {
            Node::Int(i) => (i.clone(), vec![]),
            Node::Mul(a) => match &*a[0] {
                Node::Int(i) => (i.clone(), a[1..].to_vec()),
                _ => (BigInt::one(), a.to_vec()),
            },
            _ => (BigInt::one(), vec![t.clone()]),
        };
        if !(&c % k).is_zero() {
            return Ok(None);
        }
        let mut f = vec![expr::int(&c / k)];
        f.extend(rest);
        out.push(expr::mul(&f)?);
    }
    Ok(Some(sum(&out)?))
}

fn ext_of(b: &Option<BigInt>, lower: bool) -> Ext {
    match b {
        Some(v) => Ext::Fin(v.clone()),
        None if lower => Ext::NegInf,
        None => Ext::PosInf,
    }
}

/// `ValueRanges(lo, hi)`, which raises `ValueRangeError` when `lo > hi`.
fn checked_range(lo: Ext, hi: Ext) -> PyResult<Range> {
    if lo > hi {
        let text = format!("Invalid ranges [{}:{}]", ext_text(&lo), ext_text(&hi));
        return Err(Raise::new("ValueRangeError", text));
    }
    Ok(Range::new(lo, hi))
}

/// A sum of two bounds of the same side (`ValueRanges` addition): never
/// `oo + -oo`, as a lower bound is never `oo` nor an upper one `-oo`.
fn ext_sum(a: &Ext, b: &Ext) -> PyResult<Ext> {
    Ok(match (a, b) {
        (Ext::Fin(x), Ext::Fin(y)) => Ext::Fin(x + y),
        (Ext::NegInf, Ext::PosInf) | (Ext::PosInf, Ext::NegInf) => {
            return unsupported("a sum of opposite infinities")
        }
        (Ext::NegInf, _) | (_, Ext::NegInf) => Ext::NegInf,
        _ => Ext::PosInf,
    })
}

/// `k * e` for a positive `k`.
fn ext_scale(k: &Ext, e: &Ext) -> Ext {
    match (k, e) {
        (Ext::Fin(k), Ext::Fin(x)) => Ext::Fin(k * x),
        _ => e.clone(),
    }
}

fn ext_add(e: &Ext, k: i64) -> Ext {
    match e {
        Ext::Fin(v) => Ext::Fin(v + k),
        other => other.clone(),
    }
}

impl ShapeEnv {
    pub fn new() -> ShapeEnv {
        ShapeEnv {
            syms: Vec::new(),
            deferred: Vec::new(),
            axioms: Vec::new(),
            divisible: Vec::new(),
        }
    }

    /// `create_unbacked_symint`: a fresh `uK` with its initial range.
    pub fn new_symbol(&mut self, range: Range, size_like: bool, input: bool) -> (usize, Ex) {
        let k = self.syms.len();
        let ex: Ex = Rc::new(Node::Sym(Rc::new(Symbol {
            name: format!("u{k}"),
            lower: None,
            upper: None,
            integer: true,
        })));
        self.syms.push(SymInfo {
            ex: ex.clone(),
            range,
            size_like,
            input,
            replacement: None,
        });
        (k, ex)
    }

    pub fn range(&self, k: usize) -> &Range {
        &self.syms[k].range
    }

    fn index_of(&self, name: &str) -> PyResult<usize> {
        match sym_index(name) {
            Some(k) if k < self.syms.len() => Ok(k),
            _ => unsupported("a symbol that is not an unbacked input symbol"),
        }
    }

    /// `_find(u)`: the expression a symbol stands for after replacements.
    fn find(&self, k: usize) -> PyResult<Ex> {
        match &self.syms[k].replacement {
            None => Ok(self.syms[k].ex.clone()),
            Some(r) => self.replace(r),
        }
    }

    /// `_find(e)` as `_maybe_guard_rel` calls it on a whole side: a
    /// symbol's replacement, any other expression as it is.
    fn find_expr(&self, e: &Ex) -> PyResult<Ex> {
        match &**e {
            Node::Sym(s) => self.find(self.index_of(&s.name)?),
            _ => Ok(e.clone()),
        }
    }

    /// `replace(expr)`: every symbol by what it stands for.
    pub fn replace(&self, e: &Ex) -> PyResult<Ex> {
        if self.syms.iter().all(|s| s.replacement.is_none()) {
            return Ok(e.clone());
        }
        let names = free(e);
        let mut map: Vec<(String, Ex)> = Vec::new();
        for n in &names {
            let k = self.index_of(n)?;
            if self.syms[k].replacement.is_some() {
                map.push((n.clone(), self.find(k)?));
            }
        }
        if map.is_empty() {
            return Ok(e.clone());
        }
        // `safe_expand(expr.xreplace(replacements))`.
        expand::fast_expand(&xreplace(e, &|s: &Symbol| {
            map.iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, x)| x.clone())
        })?)
    }

    /// `bound_sympy(e)` with the current ranges (size-like symbols at
    /// least 2 when `size_oblivious`).
    pub fn bounds(&self, e: &Ex, size_oblivious: bool) -> PyResult<Range> {
        let names = free(e);
        let mut ranged: Vec<(String, Ex)> = Vec::new();
        for n in &names {
            let k = self.index_of(n)?;
            let info = &self.syms[k];
            let r = if size_oblivious && info.size_like {
                Range::new(Ext::Fin(BigInt::from(2)), Ext::PosInf)
            } else {
                info.range.clone()
            };
            let fin = |x: &Ext| match x {
                Ext::Fin(v) => Some(v.clone()),
                _ => None,
            };
            ranged.push((
                n.clone(),
                Rc::new(Node::Sym(Rc::new(Symbol {
                    name: n.clone(),
                    lower: fin(&r.lo),
                    upper: fin(&r.hi),
                    integer: true,
                }))),
            ));
        }
        let with = xreplace(e, &|s: &Symbol| {
            ranged
                .iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, x)| x.clone())
        })?;
        match ranges::try_bounds(&with) {
            Ok((lo, hi)) => Ok(Range::new(lo, hi)),
            Err(_) => unsupported("a value range bound_sympy cannot give"),
        }
    }

    /// `e` as the traced graph computes it again from sizes: `%` of a
    /// non-negative operand is `Mod`, not `PythonMod` (`sym_node`'s mod).
    pub fn recomputed(&self, e: &Ex) -> PyResult<Ex> {
        let args: Vec<Ex> = match &**e {
            Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => a.to_vec(),
            Node::Pow(a, b) | Node::Rel(_, a, b) => vec![a.clone(), b.clone()],
            Node::Not(a) => vec![a.clone()],
            _ => return Ok(e.clone()),
        };
        let new = args
            .iter()
            .map(|a| self.recomputed(a))
            .collect::<PyResult<Vec<_>>>()?;
        if let Node::Fn(Func::PythonMod, _) = &**e {
            let nonneg = self.bounds(&new[0], false)?.lo >= Ext::Fin(BigInt::zero());
            let pos = matches!(&*new[1], Node::Int(q) if q.is_positive());
            if nonneg && pos {
                return expr::modulo(false, &new[0], &new[1]);
            }
        }
        if new == args {
            return Ok(e.clone());
        }
        let rebuilt: Ex = match &**e {
            Node::Add(_) => expr::add(&new)?,
            Node::Mul(_) => expr::mul(&new)?,
            Node::Rel(op, _, _) => expr::relational(*op, &new[0], &new[1])?,
            Node::Fn(Func::Mod, _) => expr::modulo(false, &new[0], &new[1])?,
            Node::Fn(Func::PythonMod, _) => expr::modulo(true, &new[0], &new[1])?,
            Node::Fn(Func::FloorDiv, _) => expr::floordiv(&new[0], &new[1])?,
            _ => return unsupported("recomputing an expression of this form"),
        };
        Ok(rebuilt)
    }

    /// `_maybe_evaluate_static(expr)` for a relational: replacements,
    /// canonical form, axioms, then the range of `rhs - lhs`.
    pub fn evaluate_static(&self, e: &Ex) -> PyResult<Option<bool>> {
        let e = self.simplify_div(&self.replace(e)?)?;
        match &*e {
            Node::True => return Ok(Some(true)),
            Node::False => return Ok(Some(false)),
            Node::Rel(..) => {}
            _ => return unsupported("a fact that is not a relational"),
        }
        let c = canonicalize(&e)?;
        if let Some((_, v)) = self.axioms.iter().find(|(a, _)| *a == c) {
            return Ok(Some(*v));
        }
        let Node::Rel(op, l, r) = &*c else {
            return Ok(None);
        };
        let diff = expr::sub(r, l)?;
        let d = self.bounds(&diff, false)?;
        let zero = Ext::Fin(BigInt::zero());
        let one = Ext::Fin(BigInt::one());
        if self.shift_may_loosen(&diff)? {
            return self.shifted_decide(*op, &diff);
        }
        Ok(self.decide(*op, &d, &zero, &one))
    }

    /// `_maybe_evaluate_static_worker` on a polynomial fact `0 op diff`:
    /// each symbol with a finite lower bound `lo` becomes `s + lo - 1`
    /// (`s` positive, in `[1, hi - lo + 1]`), one without keeps its own
    /// range, the difference is expanded, its negative terms moved left
    /// (`canonicalize_bool_expr`), and the two sides' ranges compared
    /// (`bound_sympy` of the relational).
    fn shifted_decide(&self, op: Rel, diff: &Ex) -> PyResult<Option<bool>> {
        let poly = match self.shifted_poly(diff)? {
            Some(p) => p,
            None => return unsupported("static evaluation of a nonlinear fact"),
        };
        let zero = || Ext::Fin(BigInt::zero());
        let (mut lhs, mut rhs) = ((zero(), zero()), (zero(), zero()));
        for (c, mono) in &poly {
            let (lo, hi) = self.mono_range(mono)?;
            let side = if c.is_negative() { &mut lhs } else { &mut rhs };
            let k = Ext::Fin(c.abs());
            side.0 = ext_sum(&side.0, &ext_scale(&k, &lo))?;
            side.1 = ext_sum(&side.1, &ext_scale(&k, &hi))?;
        }
        let ((lo_l, hi_l), (lo_r, hi_r)) = (lhs, rhs);
        let le_true = hi_l <= lo_r;
        let le_false = lo_l > hi_r;
        let lt_true = hi_l < lo_r;
        let lt_false = lo_l >= hi_r;
        Ok(match op {
            Rel::Le if le_true => Some(true),
            Rel::Le if le_false => Some(false),
            Rel::Lt if lt_true => Some(true),
            Rel::Lt if lt_false => Some(false),
            Rel::Eq | Rel::Ne => {
                let single = |l: &Ext, h: &Ext| matches!(l, Ext::Fin(_)) && l == h;
                let eq = if single(&lo_l, &hi_l) && single(&lo_r, &hi_r) {
                    Some(lo_l == lo_r)
                } else if le_false || hi_l < lo_r {
                    Some(false)
                } else {
                    None
                };
                eq.map(|b| b == (op == Rel::Eq))
            }
            _ => None,
        })
    }

    /// The range of a monomial (`ValueRangeAnalysis` of its product of
    /// powers): a shifted symbol in `[1, hi - lo + 1]`, a symbol without a
    /// lower bound in its own range.
    fn mono_range(&self, mono: &[(usize, u32)]) -> PyResult<(Ext, Ext)> {
        let mut factors = Vec::with_capacity(mono.len());
        for (k, e) in mono {
            let r = &self.syms[*k].range;
            let (lower, upper) = match (&r.lo, &r.hi) {
                (Ext::Fin(l), Ext::Fin(h)) => (Some(BigInt::one()), Some(h - l + 1)),
                (Ext::Fin(_), _) => (Some(BigInt::one()), None),
                (_, Ext::Fin(h)) => (None, Some(h.clone())),
                _ => (None, None),
            };
            let sym = Rc::new(Node::Sym(Rc::new(Symbol {
                name: format!("evaluate_static_shape_{k}"),
                lower,
                upper,
                integer: true,
            })));
            factors.push(match e {
                1 => sym,
                _ => Rc::new(Node::Pow(sym, expr::int(*e))),
            });
        }
        match ranges::try_bounds(&Rc::new(Node::Mul(factors))) {
            Ok(b) => Ok(b),
            Err(_) => unsupported("a value range bound_sympy cannot give"),
        }
    }

    /// `diff` as a polynomial in the shifted symbols: monomial (symbol
    /// index, power) sorted, to coefficient; `None` outside polynomials.
    fn shifted_poly(&self, e: &Ex) -> PyResult<Option<Poly>> {
        let walk = |e: &Ex| self.shifted_poly(e);
        Ok(Some(match &**e {
            Node::Int(i) => polynomial::norm(polynomial::constant(i.clone())),
            Node::Sym(sym) => {
                let k = self.index_of(&sym.name)?;
                let one = (BigInt::one(), vec![(k, 1)]);
                match &self.syms[k].range.lo {
                    Ext::Fin(lo) => polynomial::norm(vec![one, (lo - 1, vec![])]),
                    _ => vec![one],
                }
            }
            Node::Add(a) => {
                let mut out = Vec::new();
                for x in a {
                    let Some(p) = walk(x)? else { return Ok(None) };
                    out = polynomial::add(&out, &p);
                }
                out
            }
            Node::Mul(a) => {
                let mut out = polynomial::constant(BigInt::one());
                for x in a {
                    let Some(p) = walk(x)? else { return Ok(None) };
                    out = polynomial::mul(&out, &p);
                }
                out
            }
            Node::Pow(b, x) => {
                let n = x.as_int().and_then(|n| u32::try_from(n.clone()).ok());
                match (walk(b)?, n) {
                    (Some(p), Some(n)) if n <= 8 => polynomial::pow(&p, n),
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Whether `e` has a power or a product of symbols over a symbol whose
    /// range does not start at 1.
    fn shift_may_loosen(&self, e: &Ex) -> PyResult<bool> {
        fn nonlinear(e: &Ex) -> bool {
            match &**e {
                Node::Pow(..) => true,
                Node::Mul(f) => {
                    f.iter().filter(|x| !matches!(&***x, Node::Int(_))).count() > 1
                        || f.iter().any(nonlinear)
                }
                Node::Add(a) | Node::Fn(_, a) => a.iter().any(nonlinear),
                _ => false,
            }
        }
        if !nonlinear(e) {
            return Ok(false);
        }
        for n in free(e) {
            if self.syms[self.index_of(&n)?].range.lo != Ext::Fin(BigInt::one()) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn decide(&self, op: Rel, d: &Range, zero: &Ext, one: &Ext) -> Option<bool> {
        match op {
            Rel::Lt if d.lo >= *one => Some(true),
            Rel::Lt if d.hi <= *zero => Some(false),
            Rel::Le if d.lo >= *zero => Some(true),
            Rel::Le if d.hi < *zero => Some(false),
            Rel::Eq | Rel::Ne => {
                let eq = if d.lo == *zero && d.hi == *zero {
                    Some(true)
                } else if d.lo > *zero || d.hi < *zero {
                    Some(false)
                } else {
                    None
                };
                eq.map(|b| b == (op == Rel::Eq))
            }
            _ => None,
        }
    }

    /// `_maybe_fast_eval_comparison`: `sum >= 0` of non-negative terms.
    fn fast_true(&self, e: &Ex) -> PyResult<bool> {
        let Some(sum_expr) = nonneg_side(e) else {
            return Ok(false);
        };
        let terms: Vec<Ex> = match &**sum_expr {
            Node::Add(t) => t.to_vec(),
            _ => vec![sum_expr.clone()],
        };
        for t in &terms {
            let ok = match &**t {
                Node::Sym(s) => {
                    let k = self.index_of(&s.name)?;
                    self.syms[k].range.lo >= Ext::Fin(BigInt::zero())
                }
                Node::Int(i) => !i.is_negative(),
                _ => false,
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `_should_skip_static_eval`: `u >= 0` (or `0 <= u`) on a symbol whose
    /// range is still `[-int_oo, int_oo]` is recorded without asking the
    /// axioms, so it refines the range even where a deferred assert
    /// (`Eq(0, u0)`) implies it.
    fn skips_static_eval(&self, e: &Ex) -> PyResult<bool> {
        let Some(Node::Sym(s)) = nonneg_side(e).map(|x| &**x) else {
            return Ok(false);
        };
        let range = &self.syms[self.index_of(&s.name)?].range;
        Ok(range.lo == Ext::NegInf && range.hi == Ext::PosInf)
    }

    /// `guard_or_defer_runtime_assert(expr)` for an expression over
    /// unbacked symbols only: `false` when the expression is statically
    /// false (nothing is recorded then).
    pub fn guard_or_defer(&mut self, e: &Ex) -> PyResult<bool> {
        if self.fast_true(e)? {
            return Ok(true);
        }
        if !self.skips_static_eval(e)? {
            if let Some(v) = self.evaluate_static(e)? {
                return Ok(v);
            }
        }
        let c = canonicalize(e)?;
        let cached = self.cached_simplify(e, &c)?;
        self.maybe_guard_rel(e)?;
        let key = free(&c)
            .iter()
            .filter_map(|n| sym_index(n))
            .max()
            .ok_or_else(|| Raise::unsupported("a runtime assert without unbacked symbols"))?;
        self.deferred.push((key, c.clone()));
        let simplified = match cached {
            Some((key, s)) if key == self.cache_key() => s,
            _ => {
                let r = self.replace_mut(&c)?;
                self.simplify_div(&r)?
            }
        };
        if let Node::Rel(..) = &*simplified {
            // `get_implications(self.simplify(expr))`: the implied forms are
            // built from the simplified sides as they are (`3*u1 <= u1`
            // implies `2*u1 < 1`, not the canonical `u1 <= 0`'s `u1 < 1`).
            let imp = implications(&simplified)?;
            for (k, v) in imp {
                match self.axioms.iter_mut().find(|(a, _)| *a == k) {
                    Some(slot) => slot.1 = v,
                    None => self.axioms.push((k, v)),
                }
            }
        }
        Ok(true)
    }

    /// `_get_key()` as far as the model changes it: the number of replaced
    /// symbols and of divisible atoms. Overwriting a replacement leaves it
    /// as it was, so `_version_counter` does not move.
    fn cache_key(&self) -> (usize, usize) {
        let replaced = self.syms.iter().filter(|s| s.replacement.is_some()).count();
        (replaced, self.divisible.len())
    }

    /// What `simplify(canonical)` returns from `_lru_cache` when
    /// `guard_or_defer_runtime_assert` adds the axioms: `_refine_ranges`
    /// cached `simplify(expr)` before `_maybe_guard_rel` replaced anything,
    /// and the cache is cleared only if `_get_key()` changed since. `None`
    /// when the canonical form is another expression (another cache key).
    fn cached_simplify(&self, e: &Ex, c: &Ex) -> PyResult<Option<((usize, usize), Ex)>> {
        if e != c {
            return Ok(None);
        }
        let s = self.simplify_div(&self.replace(e)?)?;
        Ok(Some((self.cache_key(), s)))
    }

    /// `_maybe_guard_rel(expr)`.
    fn maybe_guard_rel(&mut self, e: &Ex) -> PyResult<()> {
        let Node::Rel(op, lhs, rhs) = &**e else {
            return unsupported("a fact that is not a relational");
        };
        if *op == Rel::Ne {
            return Ok(());
        }
        let names = free(e);
        if names.is_empty() || names.len() > 5 {
            return unsupported("a fact over no or many symbols");
        }
        self.refine_ranges(e)?;
        if *op != Rel::Eq {
            return Ok(());
        }
        if has_fn(e, Func::Mod) {
            return self.maybe_add_divisible(lhs, rhs);
        }
        if has_fn(e, Func::PythonMod) {
            return Ok(());
        }
        if has_floordiv(lhs) || has_floordiv(rhs) {
            return Ok(());
        }
        if let Some(k) = self.trivial_solve(lhs, rhs)? {
            let tgt = self.find_expr(rhs)?;
            return self.set_replacement(k, tgt);
        }
        if let Some(k) = self.trivial_solve(rhs, lhs)? {
            let tgt = self.find_expr(lhs)?;
            return self.set_replacement(k, tgt);
        }
        // Solving for the (name-)largest symbol: only a number may replace
        // an unbacked symbol.
        let mut sorted = names.clone();
        sorted.sort();
        let target = sorted.last().cloned().unwrap_or_default();
        if let Some(solved) = try_solve(*op, lhs, rhs, &target, false)? {
            if let Some(r) = solved.rhs.filter(is_number) {
                let k = self.index_of(&target)?;
                self.set_replacement(k, r)?;
            }
        }
        Ok(())
    }

    /// `trivial_solve(lhs, rhs)`: `lhs` a symbol, and `rhs` free of
    /// unbacked symbols that are not graph inputs.
    fn trivial_solve(&self, lhs: &Ex, rhs: &Ex) -> PyResult<Option<usize>> {
        let Node::Sym(s) = &**lhs else {
            return Ok(None);
        };
        for n in free(rhs) {
            if !self.syms[self.index_of(&n)?].input {
                return Ok(None);
            }
        }
        Ok(Some(self.index_of(&s.name)?))
    }

    /// `_refine_ranges(expr)`.
    fn refine_ranges(&mut self, e: &Ex) -> PyResult<()> {
        let e = self.simplify_div(&self.replace(e)?)?;
        let Node::Rel(op, lhs, rhs) = &*e else {
            return Ok(());
        };
        let mut names = free(&e);
        names.sort();
        for n in names {
            let k = self.index_of(&n)?;
            let Some(solved) = try_solve(*op, lhs, rhs, &n, true)? else {
                continue;
            };
            let Some(rhs) = solved.rhs else { continue };
            let vr = self.syms[k].range.clone();
            let rb = self.bounds(&rhs, false)?;
            let (mut lower, mut upper) = (vr.lo.clone(), vr.hi.clone());
            if lower <= rb.lo && matches!(solved.op, Rel::Eq | Rel::Ge | Rel::Gt) {
                lower = ext_add(&rb.lo, i64::from(solved.op == Rel::Gt));
            }
            if upper >= rb.hi && matches!(solved.op, Rel::Eq | Rel::Le | Rel::Lt) {
                upper = ext_add(&rb.hi, -i64::from(solved.op == Rel::Lt));
            }
            let new = Range::new(lower, upper);
            if new == vr {
                continue;
            }
            self.update_range(k, &checked_range(new.lo, new.hi)?)?;
            if let Some(v) = self.syms[k].range.singleton().cloned() {
                self.set_replacement(k, expr::int(v))?;
            }
        }
        Ok(())
    }

    /// `_update_var_to_range(s, vr)`: intersect (a size-like symbol's
    /// upper bound is never refined below 2).
    pub fn update_range(&mut self, k: usize, vr: &Range) -> PyResult<()> {
        let mut vr = vr.clone();
        if vr.hi < Ext::Fin(BigInt::from(2)) && self.syms[k].size_like {
            vr = Range::new(vr.lo, Ext::Fin(BigInt::from(2)));
        }
        let new = self.syms[k].range.intersect(&vr);
        if new.lo > new.hi {
            return Err(Raise::new(
                "ValueRangeError",
                format!(
                    "Invalid ranges [{}:{}]",
                    ext_text(&new.lo),
                    ext_text(&new.hi)
                ),
            ));
        }
        self.syms[k].range = new;
        Ok(())
    }

    /// `_set_replacement(a, tgt)`.
    fn set_replacement(&mut self, a: usize, tgt: Ex) -> PyResult<()> {
        if self.syms[a].replacement.as_ref() == Some(&tgt) {
            return Ok(());
        }
        let name = format!("u{a}");
        if has(&tgt, &name) {
            return Ok(());
        }
        let src = self.syms[a].range.clone();
        let mut tgt_bound = self.bounds(&tgt, false)?;
        self.update_range(a, &tgt_bound)?;
        let tfree = free(&tgt);
        if !tgt_bound.is_subset(&src) && tfree.len() == 1 {
            let b = self.index_of(&tfree[0])?;
            // `try_solve` finding no inverse (`u3 == u0**2`): no assert,
            // the replacement is skipped below.
            let solved = self.invert_into(a, &tgt, b)?;
            tgt_bound = self.bounds(&tgt, false)?;
            if solved && !tgt_bound.is_subset(&src) {
                // f"{tgt_bound=} not a subset of {src_bound=}"
                let tgt = format!("tgt_bound={}", vr_text(&tgt_bound));
                let src = format!("src_bound={}", vr_text(&src));
                return Err(Raise::new(
                    "AssertionError",
                    format!("{tgt} not a subset of {src}"),
                ));
            }
        }
        self.propagate_size_like(a, &tgt)?;
        if !tgt_bound.is_subset(&src) {
            return Ok(());
        }
        if self.syms[a].size_like {
            let t = self.bounds(&tgt, true)?;
            let s = self.bounds(&self.syms[a].ex.clone(), true)?;
            if !t.is_subset(&s) {
                return Ok(());
            }
        }
        if self.reaches(&tgt, &name)? {
            // `u1 := 3*u2` then `u2 := 3*u1`: the replacement is set, and
            // the next `_find` of either (`simplify` of the very fact that
            // set it) recurses until CPython's limit. The overflow lands in
            // a Python frame of `_find`/`free_symbols`, whose message has
            // no context suffix at any starting depth; dynamo wraps it as
            // `InternalTorchDynamoError` (`compile.rs`'s `internal`).
            return Err(Raise::new(
                "RecursionError",
                "maximum recursion depth exceeded",
            ));
        }
        self.syms[a].replacement = Some(tgt);
        Ok(())
    }

    /// Whether `name` is among the symbols `e`'s replacements lead to.
    fn reaches(&self, e: &Ex, name: &str) -> PyResult<bool> {
        let mut seen: Vec<String> = Vec::new();
        let mut todo = free(e);
        while let Some(n) = todo.pop() {
            if n == name {
                return Ok(true);
            }
            if seen.contains(&n) {
                continue;
            }
            let k = self.index_of(&n)?;
            if let Some(r) = &self.syms[k].replacement {
                todo.extend(free(r));
            }
            seen.push(n);
        }
        Ok(false)
    }

    /// `_set_replacement`'s size-like propagation for `a == tgt` with `tgt`
    /// a symbol, done before it decides whether to replace.
    fn propagate_size_like(&mut self, a: usize, tgt: &Ex) -> PyResult<()> {
        let Node::Sym(s) = &**tgt else {
            return Ok(());
        };
        let b = self.index_of(&s.name)?;
        if self.syms[a].size_like {
            self.syms[b].size_like = true;
        } else if self.syms[b].size_like {
            self.syms[a].size_like = true;
        }
        Ok(())
    }

    /// The range of `b` from `a == tgt` solved for `b`, requantized to
    /// integers (`CeilToInt` / `FloorToInt` of the rational bounds).
    fn invert_into(&mut self, a: usize, tgt: &Ex, b: usize) -> PyResult<bool> {
        let bname = format!("u{b}");
        let a_ex = self.syms[a].ex.clone();
        let Some(solved) = try_solve(Rel::Eq, &a_ex, tgt, &bname, false)? else {
            return Ok(false);
        };
        let (num, den) = match (solved.rhs, solved.frac) {
            (Some(r), _) => (r, BigInt::one()),
            (None, Some((n, d))) => (n, d),
            _ => return unsupported("inverting a replacement into a non-integer bound"),
        };
        let nb = self.bounds(&num, false)?;
        let (lo, hi) = if den.is_negative() {
            (div_ext(&nb.hi, &den, true), div_ext(&nb.lo, &den, false))
        } else {
            (div_ext(&nb.lo, &den, true), div_ext(&nb.hi, &den, false))
        };
        // `ValueRanges(CeilToInt(lo), FloorToInt(hi))` refuses an empty
        // range when it is built, before `_update_var_to_range` could
        // widen a size-like symbol's upper bound to 2.
        self.update_range(b, &checked_range(lo, hi)?)?;
        Ok(true)
    }

    /// What `_find` does when a replacement's target was itself replaced
    /// since: the replacement is set again through `_set_replacement`,
    /// whose range update narrows the symbol (`u0 := 2*u2`, then
    /// `u2 := 3*u3`, gives `u0 := 6*u3` and `u0 <= 24`). Run before the
    /// graph is read.
    pub fn settle_replacements(&mut self) -> PyResult<()> {
        for k in 0..self.syms.len() {
            self.settle_replacement(k)?;
        }
        Ok(())
    }

    /// `_find(uK)` for one symbol: its replacement set again if its target
    /// was replaced since (see [`ShapeEnv::settle_replacements`]).
    pub fn settle_replacement(&mut self, k: usize) -> PyResult<()> {
        self.find_mut(k).map(drop)
    }

    /// `_find(uK)` as PyTorch runs it: the symbols its replacement names
    /// are found first, and a replacement whose target moved is set again
    /// through `_set_replacement(a, replaced, "find")`, range update and
    /// inversion into the target's one symbol included (`u1 := 2*u4 - 1`
    /// with `u4 := 2*u0` becomes `u1 := 4*u0 - 1`, and `u1 >= 1` lifts
    /// `u0` to `>= 1`).
    fn find_mut(&mut self, k: usize) -> PyResult<Ex> {
        let Some(old) = self.syms[k].replacement.clone() else {
            return Ok(self.syms[k].ex.clone());
        };
        let mut map: Vec<(String, Ex)> = Vec::new();
        for n in free(&old) {
            let j = self.index_of(&n)?;
            map.push((n, self.find_mut(j)?));
        }
        let replaced = xreplace(&old, &|s: &Symbol| {
            map.iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, x)| x.clone())
        })?;
        if replaced != old {
            self.set_replacement(k, replaced)?;
        }
        Ok(self.syms[k].replacement.clone().unwrap_or(old))
    }

    /// `replace(expr)` with `_find`'s side effects: every replaced symbol
    /// of `e` is found (and settled) before it is substituted.
    fn replace_mut(&mut self, e: &Ex) -> PyResult<Ex> {
        for n in free(e) {
            let k = self.index_of(&n)?;
            self.find_mut(k)?;
        }
        self.replace(e)
    }

    /// The ranges of every symbol, in allocation order.
    pub fn ranges(&self) -> Vec<(String, Range)> {
        (0..self.syms.len())
            .map(|k| (format!("u{k}"), self.syms[k].range.clone()))
            .collect()
    }

    /// `str` of `node.expr` for the symbol `uK`: `replace(uK)`, expanded.
    pub fn printed(&self, k: usize) -> PyResult<Ex> {
        self.replace(&self.syms[k].ex)
    }
}

/// `v / d` rounded up (`ceil`) or down, infinities kept (and flipped by a
/// negative divisor).
fn div_ext(v: &Ext, d: &BigInt, ceil: bool) -> Ext {
    match v {
        Ext::Fin(x) => {
            let (q, r) = x.div_mod_floor(d);
            if ceil && !r.is_zero() {
                Ext::Fin(q + 1)
            } else {
                Ext::Fin(q)
            }
        }
        Ext::NegInf if d.is_negative() => Ext::PosInf,
        Ext::PosInf if d.is_negative() => Ext::NegInf,
        other => other.clone(),
    }
}

fn has_fn(e: &Ex, f: Func) -> bool {
    match &**e {
        Node::Fn(g, args) => *g == f || args.iter().any(|a| has_fn(a, f)),
        Node::Add(a) | Node::Mul(a) | Node::And(a) | Node::Or(a) => a.iter().any(|x| has_fn(x, f)),
        Node::Pow(a, b) | Node::Rel(_, a, b) => has_fn(a, f) || has_fn(b, f),
        Node::Not(a) => has_fn(a, f),
        _ => false,
    }
}

fn has_floordiv(e: &Ex) -> bool {
    match &**e {
        Node::Fn(Func::FloorDiv, args) => {
            !matches!(&*args[1], Node::Int(i) if i.is_one()) || has_floordiv(&args[0])
        }
        Node::Fn(_, a) | Node::Add(a) | Node::Mul(a) => a.iter().any(has_floordiv),
        Node::Pow(a, b) => has_floordiv(a) || has_floordiv(b),
        _ => false,
    }
}

/// A bound as sympy prints it in a `ValueRanges` message.
fn ext_text(e: &Ext) -> String {
    match e {
        Ext::Fin(v) => v.to_string(),
        Ext::NegInf => "-int_oo".into(),
        Ext::PosInf => "int_oo".into(),
    }
}

/// `repr(ValueRanges)`: `VR[lo, hi]`.
fn vr_text(r: &Range) -> String {
    format!("VR[{}, {}]", ext_text(&r.lo), ext_text(&r.hi))
}

/// A bound for `range_constraints`: `None` for an infinite one.
pub(crate) fn fin(e: &Ext) -> Option<BigInt> {
    match e {
        Ext::Fin(v) => Some(v.clone()),
        _ => None,
    }
}

/// The range a fresh symbol starts with: `[lo, hi]` (`None`: infinite).
pub(crate) fn range_of(lo: Option<BigInt>, hi: Option<BigInt>) -> Range {
    Range::new(ext_of(&lo, true), ext_of(&hi, false))
}
