//! What the traced graph shows: its placeholders (`meta["val"]` after
//! replacements), the `_assert_scalar` nodes that
//! `insert_deferred_runtime_asserts` (torch/fx/passes/runtime_assert.py)
//! adds, and `range_constraints`.

use std::collections::HashMap;

use num_bigint::BigInt;
use torchspec_pyval::{PyResult, Raise};
use torchspec_spec::sym::expr::{Ex, Node, Rel};
use torchspec_spec::sym::facts::{self, Ext};
use torchspec_spec::sym::print::sstr;

use crate::shape_env::{fin, sym_index, ShapeEnv};
use crate::wiring::{Fake, Size};
use crate::{Dim, Placeholder};

/// A graph input: its placeholder name and fake value.
pub(crate) struct Input {
    pub name: String,
    pub fake: Fake,
}

/// Every placeholder with its value, sizes printed after replacements.
pub(crate) fn placeholders(
    inputs: &[Input],
    env: &ShapeEnv,
) -> PyResult<Vec<(String, Placeholder)>> {
    inputs
        .iter()
        .map(|i| Ok((i.name.clone(), placeholder(&i.fake, env)?)))
        .collect()
}

fn placeholder(f: &Fake, env: &ShapeEnv) -> PyResult<Placeholder> {
    Ok(match f {
        Fake::Tensor(sizes, dtype) => Placeholder::Tensor(
            sizes
                .iter()
                .map(|s| match s {
                    Size::Static(v) => Ok(Dim::Int(BigInt::from(*v))),
                    Size::Sym(k) => Ok(Dim::Expr(sstr(&env.printed(*k)?))),
                })
                .collect::<PyResult<_>>()?,
            dtype.clone(),
        ),
        Fake::Sym(k) => Placeholder::SymInt(sstr(&env.printed(*k)?)),
        Fake::Const(v) => Placeholder::Const(v.clone()),
    })
}

/// `ep.range_constraints`: every allocated symbol in order.
pub(crate) fn range_constraints(env: &ShapeEnv) -> Vec<crate::RangeConstraint> {
    env.ranges()
        .into_iter()
        .map(|(n, r)| (n, fin(&r.lo), fin(&r.hi)))
        .collect()
}

/// FX's `_Namespace.create_name` for the comparison nodes the pass adds.
#[derive(Default)]
struct Names {
    used: std::collections::HashSet<String>,
    count: HashMap<String, u64>,
}

impl Names {
    fn create(&mut self, base: &str) -> String {
        let mut num = self.count.get(base).copied().unwrap_or(0);
        let mut candidate = base.to_string();
        while self.used.contains(&candidate) {
            num += 1;
            candidate = format!("{base}_{num}");
        }
        self.used.insert(candidate.clone());
        self.count.insert(base.to_string(), num);
        candidate
    }
}

fn free_syms(e: &Ex) -> Vec<usize> {
    let mut names = Vec::new();
    facts::free_symbols(e, &mut names);
    names.iter().filter_map(|n| sym_index(n)).collect()
}

/// The FX op `_sympy_interp` makes for a relational (a number on the left
/// makes Python call the reflected operator).
fn node_base(e: &Ex) -> PyResult<&'static str> {
    let Node::Rel(op, l, _) = &**e else {
        return Err(Raise::unsupported(
            "a runtime assert that is not a relational",
        ));
    };
    let num_left = matches!(&**l, Node::Int(_));
    Ok(match (op, num_left) {
        (Rel::Lt, false) | (Rel::Gt, true) => "lt",
        (Rel::Lt, true) | (Rel::Gt, false) => "gt",
        (Rel::Le, false) | (Rel::Ge, true) => "le",
        (Rel::Le, true) | (Rel::Ge, false) => "ge",
        (Rel::Eq, _) => "eq",
        (Rel::Ne, _) => "ne",
    })
}

/// `_is_bound_expr_for_symbol`: `u <= c` / `c <= u` (non-strict only).
fn is_bound_expr(e: &Ex) -> bool {
    match &**e {
        Node::Rel(Rel::Le | Rel::Ge, l, r) => matches!(
            (&**l, &**r),
            (Node::Sym(_), Node::Int(_)) | (Node::Int(_), Node::Sym(_))
        ),
        _ => false,
    }
}

struct Pass<'a> {
    env: &'a ShapeEnv,
    names: Names,
    out: Vec<String>,
    exprs: Vec<Ex>,
    /// The symbol whose definition each assert was emitted under.
    groups: Vec<usize>,
    /// The symbol being defined now.
    current: usize,
    bound: Vec<usize>,
    constrained: Vec<usize>,
    added: Vec<Ex>,
    by_symbol: Vec<(usize, Vec<Ex>)>,
}

impl Pass<'_> {
    fn emit(&mut self, e: &Ex, text: String) -> PyResult<()> {
        let name = self.names.create(node_base(e)?);
        self.out.push(format!(
            "Runtime assertion failed for expression {text} on node '{name}'"
        ));
        self.exprs.push(e.clone());
        self.groups.push(self.current);
        self.added.push(e.clone());
        Ok(())
    }

    fn take(&mut self, k: usize) -> Vec<Ex> {
        match self.by_symbol.iter().position(|(s, _)| *s == k) {
            Some(i) => self.by_symbol.remove(i).1,
            None => Vec::new(),
        }
    }

    fn push_key(&mut self, k: usize, e: Ex) {
        match self.by_symbol.iter_mut().find(|(s, _)| *s == k) {
            Some((_, v)) => v.push(e),
            None => self.by_symbol.push((k, vec![e])),
        }
    }

    fn add_runtime_asserts(&mut self, ras: Vec<Ex>) -> PyResult<()> {
        for ra in ras {
            let fs = free_syms(&ra);
            if self.added.contains(&ra)
                || fs.len() == 1 && self.constrained.contains(&fs[0]) && is_bound_expr(&ra)
            {
                continue;
            }
            let mut missing: Vec<usize> = fs
                .iter()
                .filter(|s| !self.bound.contains(s))
                .copied()
                .collect();
            if !missing.is_empty() {
                // `min(missing, key=str)`: by name, so u10 before u2.
                missing.sort_by_key(|k| format!("u{k}"));
                self.push_key(missing[0], ra);
                continue;
            }
            let text = sstr(&ra);
            self.emit(&ra, text)?;
        }
        Ok(())
    }

    fn define(&mut self, k: usize) -> PyResult<()> {
        if self.constrained.contains(&k) {
            return Ok(());
        }
        self.current = k;
        let r = self.env.range(k).clone();
        let max_minus_one = Ext::Fin(BigInt::from(i64::MAX) - 1);
        let hi = if r.hi == max_minus_one {
            Ext::PosInf
        } else {
            r.hi.clone()
        };
        if !(r.lo == Ext::NegInf && hi == Ext::PosInf) {
            let u = format!("u{k}");
            if let Ext::Fin(lo) = &r.lo {
                let e = ge_node(k, lo, true);
                self.emit(&e, format!("{u} >= {lo}"))?;
            }
            if let Ext::Fin(hi) = &hi {
                let e = ge_node(k, hi, false);
                self.emit(&e, format!("{u} <= {hi}"))?;
            }
        }
        self.constrained.push(k);
        let ras = self.take(k);
        self.add_runtime_asserts(ras)
    }
}

/// `i0 >= lo` / `i0 <= hi` as the pass builds them.
fn ge_node(k: usize, v: &BigInt, ge: bool) -> Ex {
    use std::rc::Rc;
    use torchspec_spec::sym::expr::Symbol;
    let u: Ex = Rc::new(Node::Sym(Rc::new(Symbol {
        name: format!("u{k}"),
        lower: None,
        upper: None,
        integer: true,
    })));
    let c = torchspec_spec::sym::expr::int(v.clone());
    Rc::new(Node::Rel(if ge { Rel::Ge } else { Rel::Le }, u, c))
}

/// The messages of the `_assert_scalar` nodes, in graph order: per
/// placeholder, per symbol it binds, its range checks then the deferred
/// asserts keyed under it.
pub(crate) fn asserts(inputs: &[Input], env: &ShapeEnv) -> PyResult<Vec<String>> {
    Ok(retraced(inputs, env)?.0)
}

/// The expressions of those asserts, in the same order.
pub(crate) fn assert_exprs(inputs: &[Input], env: &ShapeEnv) -> PyResult<Vec<Ex>> {
    Ok(retraced(inputs, env)?.1)
}

/// The asserts once the graph is traced again with them in it: each runs
/// on the inputs' sizes after replacements (`Eq(Mod(u0, 4), 0)` becomes
/// `Eq(Mod(2*u1, 4), 0)` once `u0 := 2*u1`): a statically false one raises
/// its own message, one that is neither true nor known is recorded anew
/// and lands at the end of its key symbol's group (`%` of a non-negative
/// size is `Mod` there, so `Eq(PythonMod(u0, 4), 0)` gains `Eq(Mod(u0, 4), 0)`).
fn retraced(inputs: &[Input], env: &ShapeEnv) -> PyResult<(Vec<String>, Vec<Ex>)> {
    let pass = run_pass(inputs, env)?;
    let mut env2 = env.clone();
    let before = env2.deferred.len();
    for (msg, e) in pass.out.iter().zip(&pass.exprs) {
        // A size's own `u >= 0` holds for a size-like symbol whatever it
        // is replaced by.
        if is_nonneg_size_check(e) {
            continue;
        }
        let again = env2.recomputed(&env2.replace(e)?)?;
        let fails = match &*again {
            Node::True => continue,
            Node::False => true,
            _ => match env2.evaluate_static(&again)? {
                Some(v) => !v,
                None if is_bound_expr(e) => {
                    // Which range asserts PyTorch records again on their
                    // replaced form (a power of the replacing symbol) is not
                    // modelled.
                    return Err(Raise::unsupported(
                        "a range assert over a replaced symbol traced again",
                    ));
                }
                None => {
                    env2.guard_or_defer(&again)?;
                    false
                }
            },
        };
        if fails {
            return Err(Raise::new("RuntimeError", msg.clone()));
        }
    }
    if env2.deferred.len() == before {
        return Ok((pass.out, pass.exprs));
    }
    // The new asserts join their key symbol's group; the pass over the
    // traced-again graph names every node in graph order.
    let again = run_pass(inputs, &env2)?;
    Ok((again.out, again.exprs))
}

fn is_nonneg_size_check(e: &Ex) -> bool {
    matches!(&**e, Node::Rel(Rel::Ge, l, r)
        if matches!(&**l, Node::Sym(_)) && matches!(&**r, Node::Int(i) if i.sign() != num_bigint::Sign::Minus && i.bits() == 0))
}

fn run_pass<'a>(inputs: &[Input], env: &'a ShapeEnv) -> PyResult<Pass<'a>> {
    let mut by_symbol: Vec<(usize, Vec<Ex>)> = Vec::new();
    for (k, e) in &env.deferred {
        match by_symbol.iter_mut().find(|(s, _)| s == k) {
            Some((_, v)) => v.push(e.clone()),
            None => by_symbol.push((*k, vec![e.clone()])),
        }
    }
    let mut pass = Pass {
        env,
        names: Names::default(),
        out: Vec::new(),
        exprs: Vec::new(),
        groups: Vec::new(),
        current: 0,
        bound: Vec::new(),
        constrained: Vec::new(),
        added: Vec::new(),
        by_symbol,
    };
    for input in inputs {
        let defs: Vec<usize> = match &input.fake {
            Fake::Tensor(sizes, _) => sizes
                .iter()
                .filter_map(|s| match s {
                    Size::Sym(k) => Some(*k),
                    Size::Static(_) => None,
                })
                .collect(),
            Fake::Sym(k) => vec![*k],
            Fake::Const(_) => vec![],
        };
        pass.bound.extend(&defs);
        for k in defs {
            pass.define(k)?;
        }
    }
    Ok(pass)
}
