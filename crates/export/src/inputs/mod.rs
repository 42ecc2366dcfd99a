//! Mirrors what `ep.module()(*args, **kwargs)` decides before its graph's
//! first kernel (`torch/export/_unlift.py`): `reorder_kwargs` and
//! `_check_inputs_match` (the pytree structure against the in_spec), then
//! the `_guards_fn` built by `_get_input_guards_for_graph` (static dims,
//! ranges, equal dims) followed by the program's `guards_code`, then the
//! graph's leading `_assert_scalar` nodes on the inputs' sizes and ints
//! (`asserts.rs`).

mod asserts;
mod derived;
pub mod probe;
pub mod program_probes;
pub mod pyexpr;

use std::rc::Rc;

use num_bigint::BigInt;

use crate::model::ExportedProgram;
use crate::pytree::{tree_flatten, treespec_loads, value_eq, NodeKind, PyType, Registry, TreeSpec};
use crate::ranges::Bound;
use crate::schema::{Argument, InputSpec, Loose, SymInt, SymIntArgument};
use crate::srepr::{linear_form, subexpression_strs};
use probe::{Probe, ProbeLine, Tensor};
use pyexpr::{EvalStop, Expr, GVal};
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::{Raise, Value};

/// What the reference says about one probe: the checks pass, or the
/// [`Raise`] that stops the call (what PyTorch raises before any kernel, or
/// what the reference does not model; never a guess).
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The input checks pass: the graph body runs (what its kernels do is
    /// out of scope).
    Runs,
    /// PyTorch raises before any kernel ([`Raise::Exception`]), or the
    /// reference does not model the call ([`Raise::Unsupported`]).
    Stopped(Raise),
}

impl Outcome {
    /// The result line of probe-format v1: `{"id", "ok": true, "note":
    /// "runs"}`, `{"id", "error": {"type", "message"}}` or `{"id",
    /// "unsupported": {"reason"}}`.
    pub fn to_json(&self, id: &str) -> PyJson {
        let id = ("id", PyJson::from(id));
        match self {
            Outcome::Runs => PyJson::object([id, ("ok", true.into()), ("note", "runs".into())]),
            Outcome::Stopped(Raise::Exception(e)) => PyJson::object([
                id,
                (
                    "error",
                    PyJson::object([
                        ("type", e.type_name.as_str().into()),
                        ("message", e.message.as_str().into()),
                    ]),
                ),
            ]),
            Outcome::Stopped(Raise::Unsupported(w)) => PyJson::object([
                id,
                (
                    "unsupported",
                    PyJson::object([("reason", w.as_str().into())]),
                ),
            ]),
        }
    }
}

struct Guard {
    actual: Expr,
    message: String,
}

/// The checks of one program, built once (as `ep.module()` builds them).
pub struct InputChecker {
    in_spec: TreeSpec,
    /// The guard function, or what building it raises (every call of
    /// `ep.module()` raises it) or leaves unsupported.
    guards: Result<Vec<Guard>, EvalStop>,
    /// The pytree registry `tree_flatten` consults, built once.
    registry: Registry,
    /// The graph's runtime assertions that run before its first kernel.
    asserts: asserts::InputAsserts,
}

fn raise_str(r: Raise) -> String {
    match r {
        Raise::Exception(e) => format!("{}: {}", e.type_name, e.message),
        Raise::Unsupported(w) => w,
    }
}

/// One step of a pytree key path, as `pytree.keystr` prints it.
fn key_str(k: &Value, out: &mut String) -> Result<(), String> {
    out.push('[');
    k.write_repr(out).map_err(raise_str)?;
    out.push(']');
    Ok(())
}

/// The key-path suffixes of every leaf under `spec`.
fn leaf_paths(spec: &TreeSpec, prefix: String, out: &mut Vec<String>) -> Result<(), String> {
    let Some(ty) = spec.node_type() else {
        out.push(prefix);
        return Ok(());
    };
    // The key entries of each type's `flatten_with_keys_fn`: SequenceKey
    // `[i]`, MappingKey `[k!r]`, GetAttrKey `.name`.
    match &ty.kind {
        NodeKind::Tuple | NodeKind::List => {
            for (i, c) in spec.children().iter().enumerate() {
                leaf_paths(c, format!("{prefix}[{i}]"), out)?;
            }
        }
        NodeKind::Dict | NodeKind::OrderedDict => {
            let Value::List(keys) = spec.context() else {
                return Err("a dict spec without a key list".into());
            };
            for (k, c) in keys.iter().zip(spec.children()) {
                let mut p = prefix.clone();
                key_str(k, &mut p)?;
                leaf_paths(c, p, out)?;
            }
        }
        // `_namedtuple_flatten_with_keys`: the context is the class.
        NodeKind::NamedTupleFn => {
            let fields = spec
                .context()
                .downcast::<PyType>()
                .and_then(|t| t.fields().map(<[String]>::to_vec))
                .ok_or("a namedtuple spec whose context is not a namedtuple class")?;
            for (f, c) in fields.iter().zip(spec.children()) {
                leaf_paths(c, format!("{prefix}.{f}"), out)?;
            }
        }
        // `register_dataclass`'s `_flatten_fn_with_keys`: GetAttrKey of
        // each non-None field (the context's `flat_names`).
        NodeKind::Dataclass { .. } => {
            let flat = match spec.context() {
                Value::List(parts) if parts.len() == 2 => parts[0].iterate().map_err(raise_str)?,
                _ => return Err("a dataclass spec whose context is not [flat, none]".into()),
            };
            for (f, c) in flat.iter().zip(spec.children()) {
                let Value::Str(f) = f else {
                    return Err("a non-string dataclass field name".into());
                };
                leaf_paths(c, format!("{prefix}.{f}"), out)?;
            }
        }
        _ => return Err(format!("key paths under a `{}` node", ty.name())),
    }
    Ok(())
}

/// `_convert_range_to_int`: (min, max), `None` for an infinite end.
fn range_ints(lower: &Bound, upper: &Bound) -> (Option<BigInt>, Option<BigInt>) {
    let f = |b: &Bound| match b {
        Bound::Int(i) => Some(i.clone()),
        _ => None,
    };
    (f(lower), f(upper))
}

impl InputChecker {
    /// The checks of `ep`: its root in_spec, forward argument names and guards;
    /// fails without a root signature, or with an in_spec or forward argument
    /// names `ep.module()` could not use.
    pub fn new(ep: &ExportedProgram) -> Result<InputChecker, String> {
        let entry = ep
            .graph_module
            .root_signature()
            .ok_or("no root module call signature")?;
        let registry = ep.registrations.pytree_registry();
        let in_spec = treespec_loads(&entry.in_spec, &registry).map_err(raise_str)?;
        let names = match &entry.forward_arg_names {
            None => None,
            Some(Loose::Typed(names)) => Some(&names[..]),
            Some(Loose::Raw(v)) => {
                return Err(format!(
                    "forward_arg_names that is a {} (ep.module() uses it as the list of names)",
                    v.type_name()
                ))
            }
        };
        let guards = build_guards(ep, &in_spec, names);
        let asserts =
            asserts::InputAsserts::new(&ep.serialized.graph_module.graph, placeholder_names(ep));
        Ok(InputChecker {
            in_spec,
            guards,
            registry,
            asserts,
        })
    }

    /// `ep.module()(*args, **kwargs)` up to the first kernel.
    pub fn check(&self, probe: &Probe) -> Outcome {
        if let (Some(w), Ok(_) | Err(Raise::Unsupported(_))) = (&probe.unsupported, &self.guards) {
            return Outcome::Stopped(Raise::Unsupported(w.clone()));
        }
        match self.check_inner(probe) {
            Ok(()) => Outcome::Runs,
            Err(stop) => Outcome::Stopped(stop),
        }
    }

    fn check_inner(&self, probe: &Probe) -> Result<(), EvalStop> {
        // `ep.module()` itself: generated guard code that does not compile.
        if let Err(e @ Raise::Exception(_)) = &self.guards {
            return Err(e.clone());
        }
        let unsupported = |r: Raise| Raise::Unsupported(raise_str(r));
        // reorder_kwargs
        let kw_spec = self
            .in_spec
            .child(1)
            .filter(|_| self.in_spec.num_children() == 2)
            .ok_or_else(|| Raise::Unsupported("an in_spec not shaped (args, kwargs)".into()))?;
        let Value::List(expected) = kw_spec.context() else {
            return Err(Raise::Unsupported(
                "a kwargs spec that is not a dict".into(),
            ));
        };
        let same_set = probe.kwargs.len() == dedup_len(expected)
            && expected
                .iter()
                .all(|k| probe.kwargs.contains(k).unwrap_or(false));
        if !same_set {
            let got = Value::List(Rc::new(probe.kwargs.keys().cloned().collect()));
            let mut message =
                "Ran into a kwarg keyword mismatch: Got the following keywords ".to_string();
            got.write_repr(&mut message).map_err(unsupported)?;
            message.push_str(" but expected ");
            kw_spec
                .context()
                .write_repr(&mut message)
                .map_err(unsupported)?;
            return Err(Raise::new("ValueError", message));
        }
        let mut reordered = torchspec_pyval::Dict::new();
        for k in expected.iter() {
            let v = probe.kwargs.get(k).cloned().unwrap_or(Value::None);
            reordered.insert(k.clone(), v).map_err(unsupported)?;
        }
        // _check_inputs_match
        let tree = Value::Tuple(Rc::new(vec![
            Value::Tuple(Rc::new(probe.args.clone())),
            Value::Dict(Rc::new(reordered)),
        ]));
        let (leaves, received) = tree_flatten(&tree, &self.registry);
        if !eq_spec(&received, &self.in_spec) {
            let message = format!(
                "Trying to flatten user inputs with exported input tree spec: \n{}\n\
                 but actually got inputs with tree spec of: \n{}.\n\
                 Please check that the inputs have the same number and type of args and \
                 kwargs as the ones you used when tracing.",
                self.in_spec.to_str().map_err(unsupported)?,
                received.to_str().map_err(unsupported)?
            );
            return Err(Raise::new("ValueError", message));
        }
        // _guards_fn
        let guards = self.guards.as_ref().map_err(Clone::clone)?;
        if guards.is_empty() && self.asserts.is_empty() {
            return Ok(());
        }
        let mut order = Vec::new();
        spec_leaf_order(&received, &self.in_spec, 0, &mut order);
        let args: Vec<GVal> = order.iter().map(|&i| gval(&leaves[i])).collect();
        for g in guards {
            let v = pyexpr::eval(&g.actual, &args)?;
            if !pyexpr::truth(&v)? {
                return Err(Raise::new("AssertionError", g.message.clone()));
            }
        }
        // The graph body: its leading `_assert_scalar` nodes.
        self.asserts.check(&args)
    }
}

/// The unlifted module's placeholders (user and constant inputs, as
/// `build_guards` lists them) by name, with their index.
fn placeholder_names(ep: &ExportedProgram) -> Vec<(String, usize)> {
    let program = &ep.serialized;
    let graph = &program.graph_module.graph;
    let specs = &program.graph_module.signature.input_specs;
    graph
        .inputs
        .iter()
        .zip(specs)
        .filter(|(_, spec)| matches!(spec, InputSpec::UserInput(_) | InputSpec::ConstantInput(_)))
        .enumerate()
        .filter_map(|(i, (arg, _))| match arg {
            Argument::AsTensor(t) => Some((t.name.clone(), i)),
            Argument::AsSymInt(SymIntArgument::AsName(n)) => Some((n.clone(), i)),
            _ => None,
        })
        .collect()
}

fn dedup_len(keys: &[Value]) -> usize {
    let mut seen: Vec<&Value> = Vec::new();
    for k in keys {
        if !seen.iter().any(|s| value_eq(s, k)) {
            seen.push(k);
        }
    }
    seen.len()
}

fn gval(v: &Value) -> GVal {
    match v {
        Value::Bool(b) => GVal::Bool(*b),
        Value::Int(i) => GVal::Int(i.to_big()),
        Value::Float(f) => GVal::Float(*f),
        Value::Str(s) => GVal::Str(s.to_string()),
        Value::Object(_) => match v.downcast::<Tensor>() {
            Some(t) => GVal::Tensor(t.shape.clone()),
            None => GVal::Other,
        },
        _ => GVal::Other,
    }
}

/// `eq_spec` of `_unlift.py`: dict keys in any order.
fn eq_spec(a: &TreeSpec, b: &TreeSpec) -> bool {
    match (a.node_type(), b.node_type()) {
        (None, None) => true,
        (Some(ta), Some(tb)) => {
            if ta.name() != tb.name() {
                return false;
            }
            if ta.name() == "dict" {
                let (Value::List(ka), Value::List(kb)) = (a.context(), b.context()) else {
                    return false;
                };
                let sub =
                    |x: &[Value], y: &[Value]| x.iter().all(|k| y.iter().any(|j| value_eq(k, j)));
                if !(sub(ka, kb) && sub(kb, ka)) {
                    return false;
                }
            } else if !value_eq(a.context(), b.context()) {
                return false;
            }
            a.num_children() == b.num_children()
                && a.children()
                    .iter()
                    .zip(b.children())
                    .all(|(x, y)| eq_spec(x, y))
        }
        _ => false,
    }
}

/// The forward's `fx_pytree.tree_flatten_spec(args, in_spec)`, which binds
/// the placeholders: a dict's values in the in_spec's key order
/// (`_dict_flatten_spec`: `[d[k] for k in spec.context]`), whatever order
/// `_check_inputs_match` accepted them in (`eq_spec`). `out` gets, per
/// placeholder, the index of its leaf in the received flattening.
fn spec_leaf_order(received: &TreeSpec, spec: &TreeSpec, base: usize, out: &mut Vec<usize>) {
    let Some(ty) = spec.node_type() else {
        out.push(base);
        return;
    };
    let kids = received.children();
    let offset = |j: usize| base + kids[..j].iter().map(TreeSpec::num_leaves).sum::<usize>();
    let keys = match (spec.context(), received.context()) {
        (Value::List(want), Value::List(got)) if ty.name() == "dict" => Some((want, got)),
        _ => None,
    };
    for (i, child) in spec.children().iter().enumerate() {
        let j = keys
            .and_then(|(want, got)| got.iter().position(|k| value_eq(k, &want[i])))
            .unwrap_or(i);
        spec_leaf_order(&kids[j], child, offset(j), out);
    }
}

/// `_get_input_guards_for_graph` + `guards_code`, as `_convert_guards_code_to_fn`
/// turns them into (actual expression, message) pairs.
fn build_guards(
    ep: &ExportedProgram,
    in_spec: &TreeSpec,
    forward_arg_names: Option<&[String]>,
) -> Result<Vec<Guard>, EvalStop> {
    let (names, paths) = input_paths(in_spec, forward_arg_names)?;
    let graph = &ep.serialized.graph_module.graph;
    let metas = user_placeholders(&ep.serialized)?;
    // `_unlift_exported_program_lifted_states`: no placeholder, no
    // `_guards_fn` (the pre-hook's `_check_input_constraints_for_graph`
    // then has nothing to check).
    if metas.is_empty() {
        return Ok(Vec::new());
    }
    if metas.len() != paths.len() {
        let counts = (metas.len(), paths.len());
        return Err(Raise::unsupported(format!(
            "{} placeholders but {} input paths",
            counts.0, counts.1
        )));
    }
    let mut g = SizeGuards {
        ranges: &ep.graph_module.range_constraints,
        code: Vec::new(),
        sources: Vec::new(),
        deferred: Vec::new(),
    };
    for (arg, path) in metas.iter().zip(&paths) {
        let src = format!("L{}", keystr(path));
        match arg {
            Argument::AsInt(i) => g.code.push(format!("{src} == {}", i.to_bigint())),
            Argument::AsBool(b) => g
                .code
                .push(format!("{src} == {}", if *b { "True" } else { "False" })),
            Argument::AsNone(_) => {}
            // `f"{src} == {meta}"`: str() of a float is its repr.
            Argument::AsFloat(f) if f.is_nan() => g.code.push(format!("math.isnan({src})")),
            Argument::AsFloat(f) if f.is_infinite() => g.code.push(format!(
                "{src} == {}math.inf",
                if *f < 0.0 { "-" } else { "" }
            )),
            Argument::AsFloat(f) => g.code.push(format!(
                "{src} == {}",
                torchspec_pyval::repr::float_repr(*f)
            )),
            // `f"{src} == '{meta}'"`, with no escaping.
            Argument::AsString(s) => g.code.push(format!("{src} == '{s}'")),
            Argument::AsSymInt(SymIntArgument::AsInt(i)) => {
                g.code.push(format!("{src} == {}", i.to_bigint()))
            }
            Argument::AsSymInt(SymIntArgument::AsName(n)) => {
                match graph.sym_int_values.iter().find(|(k, _)| k == n) {
                    Some((_, SymInt::AsExpr(e))) => {
                        g.symint(&e.expr_text(), src).map_err(Raise::Unsupported)?
                    }
                    Some((_, SymInt::AsInt(i))) => {
                        g.code.push(format!("{src} == {}", i.to_bigint()))
                    }
                    // The loader refuses a raw int (`expected int, got ...`).
                    Some((_, SymInt::Raw(_))) => {
                        return Err(Raise::unsupported("a sym_int_values entry that is no int"))
                    }
                    None => {
                        return Err(Raise::unsupported(format!("no sym_int_values entry `{n}`")))
                    }
                }
            }
            Argument::AsTensor(t) => {
                let Some((_, meta)) = graph.tensor_values.iter().find(|(k, _)| *k == t.name) else {
                    return Err(Raise::unsupported(format!(
                        "no tensor_values entry `{}`",
                        t.name
                    )));
                };
                for (i, dim) in meta.sizes.items().iter().enumerate() {
                    let src = format!("{src}.size()[{i}]");
                    match dim {
                        SymInt::AsInt(n) => g.code.push(format!("{src} == {}", n.to_bigint())),
                        SymInt::AsExpr(e) => {
                            g.symint(&e.expr_text(), src).map_err(Raise::Unsupported)?
                        }
                        SymInt::Raw(_) => return Err(Raise::unsupported("a size that is no int")),
                    }
                }
            }
            other => {
                return Err(Raise::unsupported(format!(
                    "a placeholder of kind `{}`",
                    other.tag()
                )))
            }
        }
    }
    let mut code = g.code;
    code.extend(hidden_root_equations(&g.deferred, &g.sources)?);
    code.extend(signature_matched_guards_code(ep, &paths, &names)?);
    convert_guards_code_to_fn(code, &paths, &keystr)
}

/// The guard lines `_get_input_guards_for_graph` makes of the placeholders'
/// sizes: each expression's range at its first source (`>= min` only when
/// `min > 2`), `==` that source at a later one, and the one-symbol
/// expressions kept for the hidden roots (`deferred`).
struct SizeGuards<'a> {
    ranges: &'a crate::ranges::RangeConstraints,
    code: Vec<String>,
    /// Expression text -> its first source.
    sources: Vec<(String, String)>,
    deferred: Vec<Deferred>,
}

impl SizeGuards<'_> {
    /// The guards of the size `expr_srepr` (sympy `srepr`) read at `src`.
    fn symint(&mut self, expr_srepr: &str, src: String) -> Result<(), String> {
        let subs = subexpression_strs(expr_srepr);
        let Some(expr) = subs.last().cloned() else {
            return Err(format!("an unreadable size expression `{expr_srepr}`"));
        };
        let Some(range) = self.ranges.get(&expr) else {
            return Ok(());
        };
        let free: Vec<String> = subs
            .iter()
            .filter(|s| {
                s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .cloned()
            .collect();
        let mut free_set = free.clone();
        free_set.sort();
        free_set.dedup();
        if free_set.len() == 1 {
            self.deferred.push(Deferred {
                expr: expr.clone(),
                srepr: expr_srepr.to_string(),
                src: src.clone(),
                symbol: free_set[0].clone(),
            });
        }
        if let Some((_, orig)) = self.sources.iter().find(|(e, _)| *e == expr) {
            self.code.push(format!("{src} == {orig}"));
        } else {
            self.sources.push((expr.clone(), src.clone()));
            let (min, max) = range_ints(&range.lower, &range.upper);
            if let Some(min) = min.filter(|m| *m > BigInt::from(2)) {
                self.code.push(format!("{src} >= {min}"));
            }
            if let Some(max) = max {
                self.code.push(format!("{src} <= {max}"));
            }
        }
        Ok(())
    }
}

/// An input leaf's key path: its first key (a parameter or kwarg name) and
/// the rest as `keystr` prints it (`[0]`, `['k']`).
type KeyPath = (String, String);

/// A placeholder's key path as `keystr` prints it: `['x'][0]`.
fn keystr((first, rest): &(String, String)) -> String {
    format!("[{}]{rest}", torchspec_pyval::repr::str_repr(first))
}

/// The forward's parameter names and each input leaf's key path (first
/// key, rest): `signature.bind(*example_args, **kwargs)` names each
/// positional argument by the forward's parameter names.
fn input_paths(
    in_spec: &TreeSpec,
    forward_arg_names: Option<&[String]>,
) -> Result<(Vec<String>, Vec<KeyPath>), Raise> {
    let (Some(args_spec), Some(kw_spec)) = (in_spec.child(0), in_spec.child(1)) else {
        return Err(Raise::unsupported("an in_spec not shaped (args, kwargs)"));
    };
    let names = codegen_names(forward_arg_names, args_spec, kw_spec)?;
    let mut paths: Vec<(String, String)> = Vec::new(); // (first key, rest)
    if names.len() < args_spec.num_children() {
        return Err(Raise::unsupported(
            "fewer forward_arg_names than positional inputs (varargs)",
        ));
    }
    for (name, c) in names.iter().zip(args_spec.children()) {
        let mut rest = Vec::new();
        leaf_paths(c, String::new(), &mut rest).map_err(Raise::Unsupported)?;
        paths.extend(rest.into_iter().map(|r| (name.clone(), r)));
    }
    if let Value::List(keys) = kw_spec.context() {
        for (k, c) in keys.iter().zip(kw_spec.children()) {
            let Value::Str(k) = k else {
                return Err(Raise::unsupported("a non-string kwarg name"));
            };
            let mut rest = Vec::new();
            leaf_paths(c, String::new(), &mut rest).map_err(Raise::Unsupported)?;
            paths.extend(rest.into_iter().map(|r| (k.to_string(), r)));
        }
    }
    Ok((names, paths))
}

/// The placeholders of the unlifted module: the inputs that stay inputs.
/// `_remove_effect_tokens` (a dialect other than TRAINING) drops the token
/// placeholders before `_unlift`.
fn user_placeholders(program: &crate::schema::ExportedProgram) -> Result<Vec<&Argument>, Raise> {
    let graph = &program.graph_module.graph;
    let specs = &program.graph_module.signature.input_specs;
    let training = program.verifiers.first().is_some_and(|v| v == "TRAINING");
    let mut metas: Vec<&Argument> = Vec::new();
    for (arg, spec) in graph.inputs.iter().zip(specs) {
        match spec {
            InputSpec::UserInput(_) | InputSpec::ConstantInput(_) => metas.push(arg),
            InputSpec::Token(_) if training => {
                return Err(Raise::unsupported(
                    "an effect token input of a TRAINING-dialect program",
                ))
            }
            _ => {}
        }
    }
    Ok(metas)
}

/// The program's `guards_code`, rewritten by `_force_ep_signature_match`
/// (`L['flat_args'][i]` to the input's path), then
/// `_force_gm_signature_match` (`L['x'][0]` to `L['x_0']` for a forward parameter named `x_0`).
fn signature_matched_guards_code(
    ep: &ExportedProgram,
    paths: &[(String, String)],
    names: &[String],
) -> Result<Vec<String>, Raise> {
    let Some(guards_code) = ep.guards_code.typed() else {
        return Err(Raise::unsupported(
            "a `guards_code` that is not a list of strings",
        ));
    };
    let mut out = Vec::new();
    for g in guards_code {
        let mut g = g.clone();
        for (idx, p) in paths.iter().enumerate() {
            g = g.replace(
                &format!("L['flat_args'][{idx}]"),
                &format!("L{}", keystr(p)),
            );
        }
        if g.contains("'][") && names.iter().any(|n| split_numbered(n).is_some()) {
            for n in names {
                if let Some((base, idx)) = split_numbered(n) {
                    g = g.replace(&format!("L['{base}'][{idx}]"), &format!("L['{n}']"));
                }
            }
        }
        out.push(g);
    }
    Ok(out)
}

/// A dim expression with one free symbol (`deferred_expressions`).
struct Deferred {
    expr: String,
    srepr: String,
    src: String,
    symbol: String,
}

/// `_get_input_guards_for_graph`'s "complex equations": derived dims whose
/// one symbol has no input of its own (see `derived.rs`). `deferred` holds
/// the single-symbol dims in placeholder order.
fn hidden_root_equations(
    deferred: &[Deferred],
    sources: &[(String, String)],
) -> Result<Vec<String>, EvalStop> {
    let mut unification: Vec<(String, derived::Solved)> = Vec::new();
    let mut code = Vec::new();
    for Deferred {
        expr,
        srepr,
        src,
        symbol,
    } in deferred
    {
        if sources.iter().any(|(e, _)| e == symbol) {
            continue;
        }
        let Some((a, symbol, b)) = linear_form(srepr).filter(|l| l.1 == *symbol) else {
            return Err(Raise::unsupported(format!(
                "a derived dim `{expr}` not of the form a*s + b (`try_solve`)"
            )));
        };
        let dim = derived::Linear { a, symbol, b };
        match unification.iter().find(|(s, _)| *s == dim.symbol) {
            Some((_, solved)) => code.push(solved.equation(&dim, src)),
            None => unification.push((dim.symbol.clone(), derived::Solved::new(&dim, src))),
        }
    }
    Ok(code)
}

/// The names of the unlifted forward's parameters (`_get_codegen`): the
/// program's `forward_arg_names` when not empty, else `arg_0`, `arg_1`, ...
/// for the positional inputs followed by the kwarg names.
fn codegen_names(
    forward_arg_names: Option<&[String]>,
    args_spec: &TreeSpec,
    kw_spec: &TreeSpec,
) -> Result<Vec<String>, EvalStop> {
    if let Some(names) = forward_arg_names.filter(|n| !n.is_empty()) {
        return Ok(names.to_vec());
    }
    let mut names: Vec<String> = (0..args_spec.num_children())
        .map(|i| format!("arg_{i}"))
        .collect();
    if let Value::List(keys) = kw_spec.context() {
        for k in keys.iter() {
            let Value::Str(k) = k else {
                return Err(Raise::unsupported("a non-string kwarg name"));
            };
            names.push(k.to_string());
        }
    }
    Ok(names)
}

/// `_convert_guards_code_to_fn`: each guard's shadow text (the user's paths)
/// through `ast.parse` / `ast.unparse` for its message, then `exec` of the
/// generated function, one `torch._assert(actual, "Guard failed: ...")`
/// line per guard. Either's `SyntaxError` is what `ep.module()` raises.
fn convert_guards_code_to_fn(
    code: Vec<String>,
    paths: &[(String, String)],
    keystr: &dyn Fn(&(String, String)) -> String,
) -> Result<Vec<Guard>, EvalStop> {
    let mut lines = Vec::new();
    for c in code {
        let (mut actual, mut shadow) = (c.clone(), c);
        for (idx, p) in paths.iter().enumerate() {
            let from = format!("L{}", keystr(p));
            actual = actual.replace(&from, &format!("args[{idx}]"));
            shadow = shadow.replace(&from, &format!("{}{}", p.0, p.1));
        }
        let shadow = shadow.replace('\n', "");
        let shadow_expr = pyexpr::parse(&shadow).map_err(|e| e.into_stop("<unknown>", 1))?;
        lines.push((
            actual,
            format!("Guard failed: {}", pyexpr::unparse(&shadow_expr)),
        ));
    }
    // code_str: line 1 is empty, line 2 `def _(*args):`, then the guards.
    let mut line = 3;
    let mut out = Vec::new();
    for (actual, message) in lines {
        pyexpr::check_assert_line(&actual, &message).map_err(|e| e.into_stop("<string>", line))?;
        let expr = pyexpr::parse(&actual).map_err(|e| e.into_stop("<string>", line))?;
        line += 1 + actual.matches('\n').count();
        out.push(Guard {
            actual: expr,
            message,
        });
    }
    Ok(out)
}

/// `re.findall(r"(.+)_([0-9]+)", name)` for a name that is all `base_digits`.
fn split_numbered(name: &str) -> Option<(&str, &str)> {
    let (base, idx) = name.rsplit_once('_')?;
    (!base.is_empty() && !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()))
        .then_some((base, idx))
}

/// The result line of every line of a probe file, in order: a probe's
/// outcome, or the `bad_probe` result of a line that could not be read.
pub fn check_probe_lines(ep: &ExportedProgram, lines: &[ProbeLine]) -> Vec<PyJson> {
    let checker = InputChecker::new(ep);
    lines
        .iter()
        .map(|line| match (line, &checker) {
            (Ok(p), Ok(c)) => c.check(p).to_json(&p.id),
            (Ok(p), Err(w)) => Outcome::Stopped(Raise::Unsupported(w.clone())).to_json(&p.id),
            (Err(bad), _) => bad.to_json(),
        })
        .collect()
}

/// Runs every probe of a file against a program.
pub fn check_probes(ep: &ExportedProgram, probes: &[Probe]) -> Vec<Outcome> {
    match InputChecker::new(ep) {
        Ok(c) => probes.iter().map(|p| c.check(p)).collect(),
        Err(w) => probes
            .iter()
            .map(|_| Outcome::Stopped(Raise::Unsupported(w.clone())))
            .collect(),
    }
}
