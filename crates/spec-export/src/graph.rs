//! What the traced graph shows: its placeholders (`meta["val"]` after
//! replacements), the `_assert_scalar` nodes that
//! `insert_deferred_runtime_asserts` (torch/fx/passes/runtime_assert.py)
//! adds, and `range_constraints`.

use std::collections::HashMap;

use num_bigint::BigInt;
use torchspec_pyval::{PyResult, Raise};
use torchspec_spec::sym::expr::facts;
use torchspec_spec::sym::expr::{Ex, Node, Rel};
use torchspec_spec::sym::print::sstr;
use torchspec_spec::sym::ranges::Ext;

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

struct Pass {
    /// The ShapeEnv as the pass sees it: each inserted assert is run on
    /// the fake sizes (`_node_metadata_hook`), which may record more.
    env: ShapeEnv,
    names: Names,
    out: Vec<String>,
    exprs: Vec<Ex>,
    bound: Vec<usize>,
    constrained: Vec<usize>,
    added: Vec<Ex>,
    /// `ras_by_symbol`: a copy of the keys at the start, sharing the lists.
    by_symbol: Vec<(usize, Vec<Ex>)>,
    /// Keys whose list was taken (popped) already: what is recorded under
    /// them later is lost.
    taken: Vec<usize>,
    /// The list being run now (the popped list of the symbol defined now).
    running: Option<(usize, Vec<Ex>)>,
    /// The condition node and the index of the `_assert_scalar` node whose
    /// metadata hook is running (set while it runs on the fakes).
    hooked: Option<(String, usize)>,
}

impl Pass {
    fn emit(&mut self, e: &Ex, text: String) -> PyResult<()> {
        let name = self.names.create(node_base(e)?);
        let msg = format!("Runtime assertion failed for expression {text} on node '{name}'");
        self.out.push(msg.clone());
        self.exprs.push(e.clone());
        self.added.push(e.clone());
        // Raised by the node's metadata hook, so compile's cleanup
        // replaces whatever it raises (`cleanup_error`).
        self.hooked = Some((name, self.out.len() - 1));
        if is_nonneg_size_check(e) {
            // A size's own `u >= 0` holds for a size-like symbol whatever
            // it is replaced by (the hook decides it size-obliviously),
            // unless an axiom makes it false (`u2 < 1` recorded, then
            // `u0 >= 0` as `2*u2 - 2 >= 0`, i.e. `1 <= u2`: False).
            if self.verdict(e)? == Some(false) {
                return Err(Raise::new("RuntimeError", msg));
            }
        } else {
            self.run_on_fakes(e, msg)?;
        }
        self.hooked = None;
        Ok(())
    }

    /// The inserted `_assert_scalar` run on the fake sizes: the expression
    /// after replacements, `%` of a non-negative size being `Mod`; false
    /// raises its message, unknown is recorded (and lands in its key
    /// symbol's list if that list is still to run).
    fn run_on_fakes(&mut self, e: &Ex, msg: String) -> PyResult<()> {
        let again = self.env.recomputed(&self.env.replace(&reflected(e))?)?;
        match self.static_verdict(&again)? {
            Some(true) => Ok(()),
            Some(false) => Err(Raise::new("RuntimeError", msg)),
            None => {
                let before = self.env.deferred.len();
                self.env.guard_or_defer(&again)?;
                let fresh: Vec<(usize, Ex)> = self.env.deferred[before..].to_vec();
                for (k, c) in fresh {
                    self.route(k, c);
                }
                Ok(())
            }
        }
    }

    /// The inserted assert recomputed on the fakes, decided statically
    /// (ranges and axioms), or `None`.
    fn verdict(&self, e: &Ex) -> PyResult<Option<bool>> {
        let again = self.env.recomputed(&self.env.replace(&reflected(e))?)?;
        self.static_verdict(&again)
    }

    fn static_verdict(&self, again: &Ex) -> PyResult<Option<bool>> {
        match &**again {
            Node::True => Ok(Some(true)),
            Node::False => Ok(Some(false)),
            _ => self.env.evaluate_static(again),
        }
    }

    fn route(&mut self, k: usize, c: Ex) {
        if let Some((r, list)) = &mut self.running {
            if *r == k {
                list.push(c);
                return;
            }
        }
        if self.taken.contains(&k) {
            return;
        }
        if let Some((_, v)) = self.by_symbol.iter_mut().find(|(s, _)| *s == k) {
            v.push(c);
        }
    }

    fn take(&mut self, k: usize) -> Vec<Ex> {
        self.taken.push(k);
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

    /// One runtime assert of the list being run.
    fn add_runtime_assert(&mut self, ra: Ex) -> PyResult<()> {
        let fs = free_syms(&ra);
        if self.added.contains(&ra)
            || fs.len() == 1 && self.constrained.contains(&fs[0]) && is_bound_expr(&ra)
        {
            return Ok(());
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
            return Ok(());
        }
        let text = sstr(&ra);
        self.emit(&ra, text)
    }

    fn define(&mut self, k: usize) -> PyResult<()> {
        if self.constrained.contains(&k) {
            return Ok(());
        }
        let ras = self.take(k);
        self.running = Some((k, ras));
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
        let mut i = 0;
        loop {
            let next = match &self.running {
                Some((_, list)) if i < list.len() => list[i].clone(),
                _ => break,
            };
            self.add_runtime_assert(next)?;
            i += 1;
        }
        self.running = None;
        Ok(())
    }
}

/// A relational as the graph computes it: `_sympy_interp` hands Python
/// `0 == u0`, where `int.__eq__` gives way to the symbol's reflected
/// method, so the node is `eq(u0, 0)` (and `0 <= u0` is `ge(u0, 0)`).
fn reflected(e: &Ex) -> Ex {
    use std::rc::Rc;
    match &**e {
        Node::Rel(op, l, r) if matches!(&**l, Node::Int(_)) && !matches!(&**r, Node::Int(_)) => {
            Rc::new(Node::Rel(op.reversed(), r.clone(), l.clone()))
        }
        _ => e.clone(),
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

/// The messages of the `_assert_scalar` nodes torch.compile's graph gets,
/// in graph order: per placeholder, per symbol it binds, its range checks
/// then the deferred asserts keyed under it (see [`cleanup_error`] for
/// what a failing one raises there).
pub(crate) fn compile_asserts(inputs: &[Input], env: &ShapeEnv) -> PyResult<Vec<String>> {
    Ok(run_pass(inputs, env, true)?.out)
}

/// The ShapeEnv after compile's pass, its replacement chains settled.
pub(crate) fn compile_env(inputs: &[Input], env: &ShapeEnv) -> PyResult<ShapeEnv> {
    let mut pass = run_pass(inputs, env, true)?;
    pass.env.settle_replacements()?;
    Ok(pass.env)
}

/// Those messages and the ShapeEnv after the pass: running the asserts on
/// the fakes may replace more symbols (`_maybe_guard_rel`), and a
/// placeholder's `meta["val"]` prints `replace(expr)` when it is read, after
/// the pass (`_find`'s chains settled).
pub(crate) fn asserts_and_env(
    inputs: &[Input],
    env: &ShapeEnv,
) -> PyResult<(Vec<String>, ShapeEnv)> {
    let mut pass = run_pass(inputs, env, false)?;
    pass.env.settle_replacements()?;
    Ok((pass.out, pass.env))
}

/// The expressions of those asserts, in the same order.
pub(crate) fn assert_exprs(inputs: &[Input], env: &ShapeEnv) -> PyResult<Vec<Ex>> {
    Ok(run_pass(inputs, env, false)?.exprs)
}

fn run_pass(inputs: &[Input], env: &ShapeEnv, compile: bool) -> PyResult<Pass> {
    let mut by_symbol: Vec<(usize, Vec<Ex>)> = Vec::new();
    for (k, e) in &env.deferred {
        match by_symbol.iter_mut().find(|(s, _)| s == k) {
            Some((_, v)) => v.push(e.clone()),
            None => by_symbol.push((*k, vec![e.clone()])),
        }
    }
    let mut pass = Pass {
        env: env.clone(),
        names: Names::default(),
        out: Vec::new(),
        exprs: Vec::new(),
        bound: Vec::new(),
        constrained: Vec::new(),
        added: Vec::new(),
        by_symbol,
        taken: Vec::new(),
        running: None,
        hooked: None,
    };
    match drive(&mut pass, inputs) {
        Ok(()) => Ok(pass),
        Err(r) => Err(match (compile, r, pass.hooked.take()) {
            (true, Raise::Exception(_), Some((cond, i))) => cleanup_error(&cond, i),
            (_, r, _) => r,
        }),
    }
}

/// What torch.compile raises when an inserted assert's metadata hook
/// raises: the `_assert_scalar` node already took its condition as an
/// argument (`Node.__init__`) but never joined the graph, and `_compile`'s
/// cleanup (`_cleanup_output_graph` → `Graph._clear_nodes`, erasing in
/// reverse) fails on the condition's dangling user, replacing the error.
fn cleanup_error(cond: &str, index: usize) -> Raise {
    let user = match index {
        0 => "_assert_scalar_default".to_string(),
        i => format!("_assert_scalar_default_{i}"),
    };
    Raise::new(
        "RuntimeError",
        format!(
            "Tried to erase Node {cond} but it still had 1 users in the graph: {{{user}: None}}!"
        ),
    )
}

/// The pass over the placeholders: each symbol defined, its range checks
/// and deferred asserts inserted.
fn drive(pass: &mut Pass, inputs: &[Input]) -> PyResult<()> {
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
        if let Fake::Tensor(..) = &input.fake {
            // `match_symbol` makes a `sym_size` node per symbolic size, and
            // its `_node_metadata_hook` reads the size's `expr` (`_find`).
            for &k in &defs {
                pass.env.settle_replacement(k)?;
            }
        }
        for k in defs {
            pass.define(k)?;
        }
    }
    Ok(())
}

/// `u >= c` with `c <= 0`: a size's own lower bound check.
fn is_nonneg_size_check(e: &Ex) -> bool {
    matches!(&**e, Node::Rel(Rel::Ge, l, r)
        if matches!(&**l, Node::Sym(_)) && matches!(&**r, Node::Int(i) if i.sign() != num_bigint::Sign::Plus))
}
