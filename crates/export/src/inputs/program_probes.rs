//! Probes derived from a program alone (`torchspec probes`), in the spirit
//! of the zoo's `oracle/zoo.py probes_for`: the user inputs at the sizes the
//! program's metadata gives (a symbolic size at its saved hint), then one
//! probe per way `ep.module()`'s input checks can fail — each dynamic dim at
//! min−1, min, max and max+1 (every dim whose expression mentions the
//! symbol follows it, so only the range breaks), past a derived-dim
//! relation, at zero; each static dim off by one; wrong rank, dtype and
//! structure; a missing, an extra and a misnamed kwarg; scalar inputs out
//! of their range. The `program` fuzz target checks a loaded program's
//! inputs with them.

use std::collections::BTreeMap;
use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::ToPrimitive;
use torchspec_pyval::{Dict, Value};

use super::probe::{Probe, Tensor};
use super::pyexpr::{self, BinOp, Expr};
use crate::model::ExportedProgram;
use crate::pytree::{tree_unflatten, treespec_loads, TreeSpec};
use crate::ranges::Bound;
use crate::schema::{Argument, InputSpec, SymExprHint, SymInt, SymIntArgument};

/// At most this many probes per program.
pub const MAX_DERIVED_PROBES: usize = 64;

/// No probe tensor has more elements than this (the oracle allocates them).
const MAX_NUMEL: i64 = 1 << 22;

/// A size the deriver picks for a dim or a SymInt input without a hint.
const DEFAULT_SIZE: i64 = 2;

/// One dim of a user-input tensor as the program's metadata gives it.
#[derive(Clone, Debug)]
enum Dim {
    Static(i64),
    /// A plain symbol (`s0`), with its hint.
    Symbol(String),
    /// An expression over symbols (`2*s0 + 1`), with its hint.
    Derived(Expr, i64),
}

/// One flat user input.
#[derive(Clone, Debug)]
enum Leaf {
    Tensor {
        dims: Vec<Dim>,
        dtype: String,
    },
    /// A SymInt input: its symbol, if it is a plain one.
    SymInt(Option<String>),
    /// A value the program fixed (an int, float, bool, str or None).
    Fixed(Value),
}

/// What the deriver knows of a program's user inputs.
struct Plan {
    in_spec: TreeSpec,
    leaves: Vec<Leaf>,
    /// Each symbol's value in the base probe (its hint).
    values: BTreeMap<String, i64>,
    ranges: BTreeMap<String, (Option<i64>, Option<i64>)>,
}

/// The derived probes of `ep`, at most [`MAX_DERIVED_PROBES`] (none when its
/// inputs are of a form the deriver does not build: a custom object, a
/// token, an unregistered pytree type).
pub fn derive_probes(ep: &ExportedProgram) -> Vec<Probe> {
    let Some(plan) = Plan::new(ep) else {
        return Vec::new();
    };
    let mut out = Probes {
        plan: &plan,
        probes: Vec::new(),
    };
    out.push("ok", "hints".into(), &plan.values, |_| {});
    out.dim_ranges();
    out.derived_dims();
    out.static_dims();
    out.wrong_forms();
    out.structure();
    out.kwargs();
    out.scalar_ranges();
    out.probes.truncate(MAX_DERIVED_PROBES);
    out.probes
}

impl Plan {
    fn new(ep: &ExportedProgram) -> Option<Plan> {
        let in_spec = ep
            .graph_module
            .root_signature()
            .and_then(|s| treespec_loads(&s.in_spec, &ep.registrations.pytree_registry()).ok())?;
        let mut values = BTreeMap::new();
        let leaves = leaves(ep, &mut values)?;
        let ranges = ep
            .graph_module
            .range_constraints
            .0
            .iter()
            .map(|(s, vr)| (s.clone(), (finite(&vr.lower), finite(&vr.upper))))
            .collect();
        let mut plan = Plan {
            in_spec,
            leaves,
            values,
            ranges,
        };
        plan.solve_hidden_roots();
        Some(plan)
    }

    /// A symbol that only derived dims name (a hidden root) gets the value
    /// that gives the first such dim its hint, searched in its range.
    fn solve_hidden_roots(&mut self) {
        let mut derived: Vec<(&Expr, i64)> = Vec::new();
        for leaf in &self.leaves {
            if let Leaf::Tensor { dims, .. } = leaf {
                for d in dims {
                    if let Dim::Derived(e, hint) = d {
                        derived.push((e, *hint));
                    }
                }
            }
        }
        let mut solved = Vec::new();
        for (e, hint) in derived {
            let mut names = Vec::new();
            names_in(e, &mut names);
            let [name] = names.as_slice() else {
                continue;
            };
            if self.values.contains_key(name) || solved.iter().any(|(n, _)| n == name) {
                continue;
            }
            let (lo, hi) = self.ranges.get(name).copied().unwrap_or((None, None));
            let lo = lo.unwrap_or(0).max(0);
            let hi = hi.unwrap_or(i64::MAX).min(lo.saturating_add(1 << 12));
            let mut at = BTreeMap::new();
            let found = (lo..=hi).find(|v| {
                at.insert(name.clone(), *v);
                eval_size(e, &at) == Some(hint)
            });
            if let Some(v) = found {
                solved.push((name.clone(), v));
            }
        }
        self.values.extend(solved);
    }

    /// Every symbol a root dim or SymInt input names, in input order, then
    /// the hidden roots.
    fn symbols(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |s: &String| {
            if !out.contains(s) {
                out.push(s.clone());
            }
        };
        for leaf in &self.leaves {
            match leaf {
                Leaf::Tensor { dims, .. } => dims.iter().for_each(|d| {
                    if let Dim::Symbol(s) = d {
                        add(s)
                    }
                }),
                Leaf::SymInt(Some(s)) => add(s),
                _ => {}
            }
        }
        for s in self.values.keys() {
            add(s);
        }
        out
    }

    /// The flat input values with the symbols at `values`; `None` when a
    /// size cannot be computed or a tensor would be too large.
    fn values_at(&self, values: &BTreeMap<String, i64>) -> Option<Vec<Value>> {
        self.leaves
            .iter()
            .map(|leaf| match leaf {
                Leaf::Tensor { dims, dtype } => {
                    let shape = dims
                        .iter()
                        .map(|d| size_at(d, values))
                        .collect::<Option<Vec<i64>>>()?;
                    tensor(shape, dtype.clone())
                }
                Leaf::SymInt(Some(s)) => values.get(s).map(|v| Value::int(*v)),
                Leaf::SymInt(None) => Some(Value::int(DEFAULT_SIZE)),
                Leaf::Fixed(v) => Some(v.clone()),
            })
            .collect()
    }
}

fn finite(b: &Bound) -> Option<i64> {
    match b {
        Bound::Int(i) => i.to_i64(),
        Bound::IntOo | Bound::NegIntOo => None,
    }
}

fn tensor(shape: Vec<i64>, dtype: String) -> Option<Value> {
    let mut numel: i64 = 1;
    for &n in &shape {
        if n < 0 {
            return None;
        }
        numel = numel.checked_mul(n)?;
    }
    (numel <= MAX_NUMEL).then(|| Value::Object(Rc::new(Tensor { shape, dtype })))
}

fn size_at(d: &Dim, values: &BTreeMap<String, i64>) -> Option<i64> {
    match d {
        Dim::Static(n) => Some(*n),
        Dim::Symbol(s) => values.get(s).copied(),
        // A root that no input shows (a hidden root) keeps the hint.
        Dim::Derived(e, hint) => eval_size(e, values).or(Some(*hint)),
    }
}

/// A sympy size expression of `+`, `-`, `*`, `//`, `%` over symbols and
/// ints, at `values` (what `expr.subs` gives for such expressions).
fn eval_size(e: &Expr, values: &BTreeMap<String, i64>) -> Option<i64> {
    Some(match e {
        Expr::Int(i) => i.to_i64()?,
        Expr::Name(n) => *values.get(n)?,
        Expr::Neg(a) => eval_size(a, values)?.checked_neg()?,
        Expr::Bin(a, op, b) => {
            let (a, b) = (eval_size(a, values)?, eval_size(b, values)?);
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::FloorDiv if b > 0 => a.div_euclid(b),
                BinOp::Mod if b > 0 => a.rem_euclid(b),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The symbol names of a size expression, each once.
fn names_in(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) if !out.contains(n) => out.push(n.clone()),
        Expr::Neg(a) => names_in(a, out),
        Expr::Bin(a, _, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        _ => {}
    }
}

/// A hint, when it is a size the deriver can use.
fn hint_of(s: &SymInt) -> Option<i64> {
    let hint = match s {
        SymInt::AsInt(i) => i.to_i64(),
        SymInt::AsExpr(e) => match &e.hint {
            Some(SymExprHint::AsInt(i)) => i.to_i64(),
            _ => None,
        },
        SymInt::Raw(_) => None,
    };
    hint.filter(|n| (0..=1 << 20).contains(n))
}

/// A tensor dim from its metadata, recording a plain symbol's hint.
fn dim_of(s: &SymInt, values: &mut BTreeMap<String, i64>) -> Dim {
    let hint = hint_of(s).unwrap_or(DEFAULT_SIZE);
    let SymInt::AsExpr(e) = s else {
        return Dim::Static(hint);
    };
    match size_expr(&e.expr_text()) {
        Some(Expr::Name(n)) => {
            values.entry(n.clone()).or_insert(hint);
            Dim::Symbol(n)
        }
        Some(expr) => Dim::Derived(expr, hint),
        None => Dim::Derived(Expr::Int(BigInt::from(hint)), hint),
    }
}

/// A size's `expr_str` (sympy `srepr`, or plain text in older programs) as
/// an expression the deriver evaluates: a symbol, `a*s + b`, or what the
/// text parses to.
fn size_expr(expr_str: &str) -> Option<Expr> {
    if let Some(name) = crate::srepr::bare_symbol(expr_str) {
        return Some(Expr::Name(name));
    }
    if let Some((a, sym, b)) = crate::srepr::linear_form(expr_str) {
        let times = Expr::Bin(
            Box::new(Expr::Int(a)),
            BinOp::Mul,
            Box::new(Expr::Name(sym)),
        );
        return Some(Expr::Bin(
            Box::new(times),
            BinOp::Add,
            Box::new(Expr::Int(b)),
        ));
    }
    pyexpr::parse(expr_str).ok()
}

/// One leaf per user-input placeholder, in order; `None` for a form the
/// deriver does not build.
fn leaves(ep: &ExportedProgram, values: &mut BTreeMap<String, i64>) -> Option<Vec<Leaf>> {
    let graph = &ep.serialized.graph_module.graph;
    let specs = &ep.serialized.graph_module.signature.input_specs;
    let mut out = Vec::new();
    for (arg, spec) in graph.inputs.iter().zip(specs) {
        if !matches!(spec, InputSpec::UserInput(_) | InputSpec::ConstantInput(_)) {
            continue;
        }
        out.push(match arg {
            Argument::AsTensor(t) => {
                let (_, meta) = graph.tensor_values.iter().find(|(k, _)| *k == t.name)?;
                let dims = meta
                    .sizes
                    .items()
                    .iter()
                    .map(|s| dim_of(s, values))
                    .collect();
                let dtype = meta
                    .dtype
                    .enum_key(|d| d.value())
                    .ok()
                    .and_then(crate::load::dtype_name)
                    .unwrap_or("torch.float32")
                    .trim_start_matches("torch.")
                    .to_string();
                Leaf::Tensor { dims, dtype }
            }
            Argument::AsInt(i) => Leaf::Fixed(Value::int(i.to_i64()?)),
            Argument::AsFloat(f) => Leaf::Fixed(Value::Float(*f)),
            Argument::AsBool(b) => Leaf::Fixed(Value::Bool(*b)),
            Argument::AsString(s) => Leaf::Fixed(Value::Str(s.as_str().into())),
            Argument::AsNone(_) => Leaf::Fixed(Value::None),
            Argument::AsSymInt(SymIntArgument::AsInt(i)) => Leaf::Fixed(Value::int(i.to_i64()?)),
            Argument::AsSymInt(SymIntArgument::AsName(n)) => {
                let (_, s) = graph.sym_int_values.iter().find(|(k, _)| k == n)?;
                let hint = hint_of(s).unwrap_or(DEFAULT_SIZE);
                match s {
                    SymInt::AsExpr(e) => match size_expr(&e.expr_text()) {
                        Some(Expr::Name(sym)) => {
                            values.entry(sym.clone()).or_insert(hint);
                            Leaf::SymInt(Some(sym))
                        }
                        _ => Leaf::SymInt(None),
                    },
                    SymInt::AsInt(_) | SymInt::Raw(_) => Leaf::Fixed(Value::int(hint)),
                }
            }
            _ => return None,
        });
    }
    Some(out)
}

/// The probes built so far.
struct Probes<'p> {
    plan: &'p Plan,
    probes: Vec<Probe>,
}

impl Probes<'_> {
    /// A probe of kind `kind`: the inputs at `values`, then `edit` applied
    /// to the flat inputs (skipped when they cannot be built).
    fn push(
        &mut self,
        kind: &str,
        detail: String,
        values: &BTreeMap<String, i64>,
        edit: impl FnOnce(&mut Vec<Value>),
    ) {
        if self.probes.len() >= MAX_DERIVED_PROBES {
            return;
        }
        let Some(mut flat) = self.plan.values_at(values) else {
            return;
        };
        edit(&mut flat);
        let Some((args, kwargs)) = unflatten(&flat, &self.plan.in_spec) else {
            return;
        };
        self.push_call(kind, detail, args, kwargs);
    }

    fn push_call(&mut self, kind: &str, detail: String, args: Vec<Value>, kwargs: Dict) {
        if self.probes.len() >= MAX_DERIVED_PROBES {
            return;
        }
        self.probes.push(Probe {
            line: 0,
            id: format!("derived/{kind}/{detail}"),
            kind: Some(kind.into()),
            args,
            kwargs: Rc::new(kwargs),
            unsupported: None,
        });
    }

    /// Each root symbol at min−1, min, max, max+1 and 0.
    fn dim_ranges(&mut self) {
        for sym in self.plan.symbols() {
            let (lo, hi) = self.plan.ranges.get(&sym).copied().unwrap_or((None, None));
            let points = [
                ("dim-below-min", lo.and_then(|l| l.checked_sub(1))),
                ("dim-at-min", lo),
                ("dim-at-max", hi),
                ("dim-above-max", hi.and_then(|h| h.checked_add(1))),
                ("zero-size", Some(0)),
            ];
            for (kind, at) in points {
                let Some(at) = at.filter(|v| *v >= 0) else {
                    continue;
                };
                let mut values = self.plan.values.clone();
                values.insert(sym.clone(), at);
                self.push(kind, format!("{sym}={at}"), &values, |_| {});
            }
        }
    }

    /// Each derived dim one larger than its relation gives.
    fn derived_dims(&mut self) {
        self.each_dim(|d| matches!(d, Dim::Derived(..)), "derived-dim", &[1]);
    }

    /// Each static dim one larger and one smaller.
    fn static_dims(&mut self) {
        self.each_dim(|d| matches!(d, Dim::Static(_)), "static-dim", &[1, -1]);
    }

    fn each_dim(&mut self, pick: impl Fn(&Dim) -> bool, kind: &str, deltas: &[i64]) {
        let values = self.plan.values.clone();
        for (i, leaf) in self.plan.leaves.iter().enumerate() {
            let Leaf::Tensor { dims, .. } = leaf else {
                continue;
            };
            for (d, _) in dims.iter().enumerate().filter(|(_, dim)| pick(dim)) {
                for &delta in deltas {
                    let detail = format!("input{i}-dim{d}{delta:+}");
                    self.push(kind, detail, &values, |flat| {
                        resize(&mut flat[i], |shape| shape[d] += delta)
                    });
                }
            }
        }
    }

    /// The first tensor with one dim more and one fewer, and of another dtype.
    fn wrong_forms(&mut self) {
        let Some(i) = self
            .plan
            .leaves
            .iter()
            .position(|l| matches!(l, Leaf::Tensor { .. }))
        else {
            return;
        };
        let values = self.plan.values.clone();
        self.push("wrong-rank", format!("input{i}+1"), &values, |flat| {
            resize(&mut flat[i], |shape| shape.insert(0, 1))
        });
        self.push("wrong-rank", format!("input{i}-1"), &values, |flat| {
            resize(&mut flat[i], |shape| {
                shape.pop();
            })
        });
        self.push("dtype", format!("input{i}"), &values, |flat| {
            if let Some(t) = flat[i].downcast::<Tensor>() {
                let dtype = other_dtype(&t.dtype).to_string();
                flat[i] = Value::Object(Rc::new(Tensor {
                    shape: t.shape.clone(),
                    dtype,
                }));
            }
        });
        self.push("structure", format!("input{i}-as-int"), &values, |flat| {
            flat[i] = Value::int(1)
        });
    }

    /// One positional argument fewer, and one more.
    fn structure(&mut self) {
        let Some((args, kwargs)) = self.base() else {
            return;
        };
        if !args.is_empty() {
            let fewer = args[..args.len() - 1].to_vec();
            self.push_call("structure", "one-arg-fewer".into(), fewer, kwargs.clone());
        }
        let mut more = args;
        more.extend(tensor(vec![1], "float32".into()));
        self.push_call("structure", "one-arg-more".into(), more, kwargs);
    }

    /// The last kwarg missing, an extra one, and the last one misnamed.
    fn kwargs(&mut self) {
        let Some((args, kwargs)) = self.base() else {
            return;
        };
        let last = kwargs.iter().last().map(|(k, v)| (k.clone(), v.clone()));
        let mut extra = kwargs.clone();
        let _ = extra.insert(Value::Str("unexpected".into()), Value::int(1));
        self.push_call("extra-kwarg", "unexpected".into(), args.clone(), extra);
        let Some((key, value)) = last else {
            return;
        };
        let keep = |k: &Value| !matches!((k, &key), (Value::Str(a), Value::Str(b)) if **a == **b);
        let mut missing = Dict::default();
        for (k, v) in kwargs.iter().filter(|(k, _)| keep(k)) {
            let _ = missing.insert(k.clone(), v.clone());
        }
        let mut renamed = missing.clone();
        let new_key = match &key {
            Value::Str(s) => Value::Str(format!("{s}_misnamed").into()),
            other => other.clone(),
        };
        let _ = renamed.insert(new_key, value);
        self.push_call("missing-kwarg", "last".into(), args.clone(), missing);
        self.push_call("misnamed-kwarg", "last".into(), args, renamed);
    }

    /// Each SymInt input below its min and above its max, each fixed int
    /// one off.
    fn scalar_ranges(&mut self) {
        for (i, leaf) in self.plan.leaves.iter().enumerate() {
            match leaf {
                Leaf::SymInt(Some(sym)) => {
                    let (lo, hi) = self.plan.ranges.get(sym).copied().unwrap_or((None, None));
                    let below = lo.and_then(|l| l.checked_sub(1));
                    let above = hi.and_then(|h| h.checked_add(1));
                    for at in [below, above].into_iter().flatten() {
                        let values = self.plan.values.clone();
                        self.push("scalar-range", format!("input{i}={at}"), &values, |flat| {
                            flat[i] = Value::int(at)
                        });
                    }
                }
                Leaf::Fixed(Value::Int(n)) => {
                    let at = n.to_big() + 1;
                    let values = self.plan.values.clone();
                    self.push("scalar-range", format!("input{i}={at}"), &values, |flat| {
                        flat[i] = Value::big(at)
                    });
                }
                _ => {}
            }
        }
    }

    /// `(args, kwargs)` of the base probe.
    fn base(&self) -> Option<(Vec<Value>, Dict)> {
        unflatten(&self.plan.values_at(&self.plan.values)?, &self.plan.in_spec)
    }
}

/// The tensor `v` with its shape edited (nothing when `v` is no tensor).
fn resize(v: &mut Value, edit: impl FnOnce(&mut Vec<i64>)) {
    let Some(t) = v.downcast::<Tensor>() else {
        return;
    };
    let mut shape = t.shape.clone();
    edit(&mut shape);
    let dtype = t.dtype.clone();
    if let Some(new) = tensor(shape.iter().map(|n| (*n).max(0)).collect(), dtype) {
        *v = new;
    }
}

/// What `oracle/zoo.py _other_dtype` picks.
fn other_dtype(dtype: &str) -> &'static str {
    match dtype {
        "float64" => "float32",
        "float16" | "bfloat16" | "float32" => "float64",
        _ => "float32",
    }
}

/// `(args, kwargs)` of the call whose flat inputs are `flat`.
fn unflatten(flat: &[Value], in_spec: &TreeSpec) -> Option<(Vec<Value>, Dict)> {
    let Value::Tuple(top) = tree_unflatten(flat, in_spec).ok()? else {
        return None;
    };
    let [Value::Tuple(args), Value::Dict(kwargs)] = top.as_slice() else {
        return None;
    };
    Some((args.to_vec(), Dict::clone(kwargs)))
}
