//! The four entry points as PyTorch runs them on a spec: the decorator and
//! `_resolve_dynamic_shapes`, each API's own checks in its order, then the
//! binding, fakification and wiring of the inputs, and the traced graph.

use torchspec_pyval::{PyResult, Raise, Value};
use torchspec_spec::{ParamsSpec, ShapesSpec, ShapesSpecArgs, TensorSpec};

use crate::binding::{self, LeafSpec};
use crate::graph::{self, Input};
use crate::keys::{self, Key};
use crate::wiring::{fakify, Fake, IntSymbols, Size, Wirer};
use crate::{Api, Call, Outcome, ParamKind, Traced};

/// Run `call` as PyTorch would; never panics.
pub fn evaluate(call: &Call) -> Outcome {
    let mut wirer = Wirer::new();
    let result = run(call, &mut wirer);
    Outcome {
        result,
        wiring: wirer.trace,
    }
}

fn run(call: &Call, w: &mut Wirer) -> PyResult<Traced> {
    let attached = match &call.decorator {
        Some(d) => Some(dynamic_spec(d)?),
        None => None,
    };
    check_parameters(call)?;
    match call.api {
        Api::Export | Api::ExportStrict => export(call, attached, w),
        Api::MakeFx => make_fx(call, attached, w),
        Api::Compile => compile(call, attached, w),
    }
}

fn type_error(msg: String) -> Raise {
    Raise::type_error(msg)
}

/// `_coerce_to_shapes_spec(x)`: `None` stays `None`.
fn coerce(x: &Value) -> PyResult<Option<Value>> {
    if matches!(x, Value::None) {
        return Ok(None);
    }
    if x.downcast::<ShapesSpec>().is_some() {
        return Ok(Some(x.clone()));
    }
    if matches!(x, Value::Dict(_)) || x.downcast::<ParamsSpec>().is_some() {
        return Ok(Some(wrap(x)?));
    }
    Err(type_error(format!(
        "dynamic spec expects a dict, ShapesSpec, or ParamsSpec, got {}",
        keys::type_name(x)
    )))
}

/// `ShapesSpec(x)`.
fn wrap(x: &Value) -> PyResult<Value> {
    Ok(Value::object(ShapesSpec::construct(ShapesSpecArgs {
        params: Some(x.clone()),
        ..Default::default()
    })?))
}

/// `dynamic_spec(spec)`: the spec the decorator attaches.
fn dynamic_spec(spec: &Value) -> PyResult<Value> {
    match coerce(spec)? {
        Some(s) => Ok(s),
        None => Err(type_error(format!(
            "dynamic_spec(): `spec` must be a dict, ParamsSpec, or ShapesSpec, got {}.",
            keys::type_name(spec)
        ))),
    }
}

/// `_resolve_dynamic_shapes(fn, dynamic_shapes)`.
fn resolve(attached: Option<Value>, kwarg: Option<&Value>) -> PyResult<Value> {
    let kwarg = kwarg.cloned().unwrap_or(Value::None);
    match attached {
        None => Ok(kwarg),
        Some(_) if !matches!(kwarg, Value::None) => Err(Raise::value_error(
            "Both `@dynamic_spec(...)` is attached to the function/forward AND a `dynamic_shapes=` argument was passed. Provide only one.",
        )),
        Some(a) => Ok(a),
    }
}

/// `torch.nn.Parameter(t)`: only floating point and complex tensors can
/// require gradients.
fn check_parameters(call: &Call) -> PyResult<()> {
    for (_, t) in &call.parameters {
        let Some(t) = keys::tensor(t) else {
            return Err(Raise::unsupported(
                "a module parameter that is not a tensor",
            ));
        };
        let d = t.dtype.as_str();
        let float = d.starts_with("float") || d.starts_with("complex") || d == "bfloat16";
        if !float {
            return Err(Raise::new(
                "RuntimeError",
                "Only Tensors of floating point and complex dtype can require gradients",
            ));
        }
    }
    Ok(())
}

fn option<'a>(call: &'a Call, name: &str) -> Option<&'a Value> {
    call.options.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn only_options(call: &Call, allowed: &[&str]) -> PyResult<()> {
    match call
        .options
        .iter()
        .find(|(k, _)| !allowed.contains(&k.as_str()))
    {
        Some((k, _)) => Err(Raise::unsupported(format!("the option `{k}`"))),
        None => Ok(()),
    }
}

fn is_spec(v: &Value) -> bool {
    v.downcast::<ShapesSpec>().is_some() || v.downcast::<ParamsSpec>().is_some()
}

/// The Dim API (torch/export/dynamic_shapes.py) on a `dynamic_shapes` that
/// is not a dict, list or tuple: `_normalize_dynamic_shapes` passes a true
/// one on (no `**kwargs` to spread), the call binds (`_combine_args`), then
/// `_check_dynamic_shapes` takes its `len()` and raises its
/// AssertionError. The rest of the Dim API is not modelled.
fn dim_api(call: &Call, ds: &Value) -> Raise {
    let var_kw = call
        .signature
        .iter()
        .any(|p| p.kind == ParamKind::VarKeyword);
    match ds {
        _ if var_kw => Raise::unsupported("the Dim API with a **kwargs parameter"),
        Value::Int(i) if !i.is_zero() => Raise::type_error("object of type 'int' has no len()"),
        _ => match ds.downcast::<TensorSpec>() {
            Some(t) if !t.dims.is_empty() => Raise::new(
                "AssertionError",
                "expected dynamic_shapes to be dict, tuple, or list, got <class 'torch.fx.experimental.dynamic_spec.TensorSpec'>",
            ),
            _ if matches!(ds, Value::Dict(_) | Value::List(_) | Value::Tuple(_)) => {
                dim_api_entries(call, ds).unwrap_or_else(|e| e)
            }
            _ => Raise::unsupported(DIM_API),
        },
    }
}

const DIM_API: &str = "the Dim API (dynamic_shapes that is not a ShapesSpec)";

/// `_check_dynamic_shapes` on a dict, list or tuple lined up with the
/// call's positional arguments, each a tensor: the dict's keys checked,
/// then `_tree_map_with_path(check_shape, ...)` in argument order, where
/// the first entry that is a TensorSpec (not None, a list, tuple or dict)
/// raises `check_symbols`'s UserError.
fn dim_api_entries(call: &Call, ds: &Value) -> PyResult<Raise> {
    let positional = call.signature.iter().all(|p| {
        matches!(
            p.kind,
            ParamKind::PositionalOrKeyword | ParamKind::PositionalOnly
        )
    });
    if !positional || !call.kwargs.is_empty() || call.args.len() > call.signature.len() {
        return Err(Raise::unsupported(DIM_API));
    }
    let names: Vec<&str> = call.signature[..call.args.len()]
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    for ((path, entry), arg) in dim_api_paths(&names, ds)?.iter().zip(&call.args) {
        if keys::tensor(arg).is_none() {
            break;
        }
        match entry {
            Value::None => continue,
            _ if entry.downcast::<TensorSpec>().is_some() => {
                return Ok(Raise::new(
                    "UserError",
                    format!(
                        "Unexpected input tensor shape {} specified at `dynamic_shapes{path}` (expected either a list/tuple of dimensions, or a dict mapping indices to dimensions, where each dimension is an int, a Dim, Dim.AUTO, Dim.STATIC, or Dim.DYNAMIC)\nFor more information about this error, see: https://pytorch.org/docs/main/generated/exportdb/index.html#dynamic-shapes-validation",
                        entry.repr()?
                    ),
                ))
            }
            _ => break,
        }
    }
    Err(Raise::unsupported(DIM_API))
}

/// Each argument's entry of `dynamic_shapes` with its `keystr` path, when
/// the structure matches the arguments (a dict by its keys, a list or
/// tuple by position).
fn dim_api_paths(names: &[&str], ds: &Value) -> PyResult<Vec<(String, Value)>> {
    match ds {
        Value::Dict(_) => {
            let items = ds.items()?;
            let mut got = Vec::new();
            for (k, _) in &items {
                match k {
                    Value::Str(s) => got.push(s.to_string()),
                    _ => return Err(Raise::unsupported(DIM_API)),
                }
            }
            let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            got.sort();
            want.sort();
            if got != want {
                return Err(Raise::unsupported(DIM_API));
            }
            let mut out = Vec::new();
            for n in names {
                let v = items
                    .iter()
                    .find(|(k, _)| matches!(k, Value::Str(s) if &**s == *n))
                    .map(|(_, v)| v.clone())
                    .unwrap_or(Value::None);
                out.push((format!("[{}]", Value::str(n).repr()?), v));
            }
            Ok(out)
        }
        Value::List(xs) | Value::Tuple(xs) if xs.len() == names.len() => Ok(xs
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("[{i}]"), v.clone()))
            .collect()),
        _ => Err(Raise::unsupported(DIM_API)),
    }
}

fn export(call: &Call, attached: Option<Value>, w: &mut Wirer) -> PyResult<Traced> {
    const PREFER: &str = "prefer_deferred_runtime_asserts_over_guards";
    only_options(call, &[PREFER])?;
    let ds = resolve(attached, call.spec.as_ref())?;
    let prefer = match option(call, PREFER) {
        Some(v) => v.truth()?,
        None => false,
    };
    if is_spec(&ds) && prefer {
        return Err(Raise::value_error("`prefer_deferred_runtime_asserts_over_guards=True` cannot be combined with `dynamic_shapes=ShapesSpec(...)`. ShapesSpec currently uses unbacked symbols only, which already emit runtime assertions; the flag has no effect."));
    }
    if !is_spec(&ds) && !matches!(ds, Value::None) {
        check_call_binds(call)?;
        return Err(dim_api(call, &ds));
    }
    check_call_binds(call)?;
    let strict = call.api == Api::ExportStrict;
    if strict && call.body == crate::Body::TouchTensors {
        return Err(Raise::unsupported(
            "strict export of an int the body never reads",
        ));
    }
    let spec = coerce(&ds)?;
    let ints = IntSymbols {
        nonneg: strict,
        check_static: true,
    };
    let mut dynamo = || -> PyResult<_> {
        let leaves = trace_inputs(call, spec.as_ref(), w, ints, |i, path| {
            if strict {
                Ok(format!("L['flat_args'][{i}]"))
            } else {
                nonstrict_source(call, path)
            }
        })?;
        if strict {
            argument_names(call)?;
        }
        w.env.settle_replacements()?;
        Ok(leaves)
    };
    let leaves = match dynamo() {
        Err(r) if strict => return Err(constraint_violation(r)),
        other => other?,
    };
    let mut inputs = module_inputs(call)?;
    let names = export_names(call)?;
    for ((fake, _), name) in leaves.into_iter().zip(names) {
        inputs.push(Input { name, fake });
    }
    let (asserts, after) = graph::asserts_and_env(&inputs, &w.env)?;
    Ok(Traced {
        placeholders: graph::placeholders(&inputs, &after)?,
        range_constraints: Some(graph::range_constraints(&after)),
        asserts,
        calls: None,
    })
}

/// Strict export's `except (ConstraintViolationError, ValueRangeError)`
/// around `torch._dynamo.export(...)` (torch/export/_trace.py): a
/// `ValueRangeError` of the trace is re-raised as
/// `UserError(CONSTRAINT_VIOLATION, str(e))`.
fn constraint_violation(r: Raise) -> Raise {
    match r {
        Raise::Exception(e) if e.type_name == "ValueRangeError" => {
            Raise::new("UserError", e.message)
        }
        other => other,
    }
}

/// Dynamo's `argument_names(signature, args, kwargs)` (strict export,
/// after the trace): positional-only parameters are not `args` of its
/// `FullArgSpec`, and its slice `args[len(args):-len(defaults)]` is empty
/// when there are no defaults.
fn argument_names(call: &Call) -> PyResult<()> {
    let sig = &call.signature;
    let args: Vec<&crate::Param> = sig
        .iter()
        .filter(|p| p.kind == ParamKind::PositionalOrKeyword)
        .collect();
    let varargs = sig.iter().any(|p| p.kind == ParamKind::VarPositional);
    let defaults = args.iter().filter(|p| p.default.is_some()).count();
    let n = call.args.len();
    let kw_has = |name: &str| {
        call.kwargs
            .iter()
            .any(|(k, _)| matches!(k, Value::Str(s) if &**s == name))
    };
    let assertion = |m: String| Err(Raise::new("AssertionError", m));
    if n > args.len() && !varargs {
        return assertion("More arguments than expected".into());
    }
    if n < args.len() && defaults > 0 {
        for p in &args[n..args.len() - defaults.min(args.len() - n)] {
            if !kw_has(&p.name) {
                return assertion(format!("Missing argument {}", p.name));
            }
        }
    }
    for p in sig.iter().filter(|p| p.kind == ParamKind::KeywordOnly) {
        if !kw_has(&p.name) && p.default.is_none() {
            return assertion(format!("Missing keyword only argument {}", p.name));
        }
    }
    Ok(())
}

/// The flat leaves of `(args, kwargs)`: which top-level input, and the key
/// path below it.
struct FlatLeaf {
    top: Top,
    path: Vec<Key>,
    value: Value,
}

#[derive(Clone)]
enum Top {
    Arg(usize),
    Kwarg(Value),
}

fn flat_leaves(call: &Call) -> PyResult<Vec<FlatLeaf>> {
    let mut out = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        for (path, value) in keys::leaves_with_path(a)? {
            out.push(FlatLeaf {
                top: Top::Arg(i),
                path,
                value,
            });
        }
    }
    for (k, v) in &call.kwargs {
        for (path, value) in keys::leaves_with_path(v)? {
            out.push(FlatLeaf {
                top: Top::Kwarg(k.clone()),
                path,
                value,
            });
        }
    }
    Ok(out)
}

/// Bind, fakify every leaf (wiring its symbols) and finalize.
fn trace_inputs(
    call: &Call,
    spec: Option<&Value>,
    w: &mut Wirer,
    ints: IntSymbols,
    source: impl Fn(usize, &FlatLeaf) -> PyResult<String>,
) -> PyResult<Vec<(Fake, LeafSpec)>> {
    let shapes = spec.and_then(|s| s.downcast::<ShapesSpec>());
    if let Some(s) = shapes {
        if !s.assumptions.is_empty() {
            w.wire_assumptions(s)?;
        }
    }
    let params = shapes.and_then(|s| s.params_spec());
    let bound = binding::bind(&call.signature, &call.args, &call.kwargs, params)?;
    let leaves = flat_leaves(call)?;
    let mut out = Vec::with_capacity(leaves.len());
    for (i, (leaf, spec)) in leaves.iter().zip(bound.leaf_specs).enumerate() {
        let src = source(i, leaf)?;
        let fake = fakify(w, &leaf.value, spec.as_ref(), &src, ints)?;
        out.push((fake, spec));
    }
    if shapes.is_some() {
        w.finalize()?;
    }
    Ok(out)
}

/// Where each positional and keyword input lands in `forward`'s signature.
enum Slot {
    Named(String),
    VarArg(String, usize),
    VarKw(String, Value),
}

fn arg_slot(call: &Call, i: usize) -> PyResult<Slot> {
    let sig = &call.signature;
    let va = sig.iter().position(|p| p.kind == ParamKind::VarPositional);
    match va {
        Some(v) if i >= v => Ok(Slot::VarArg(sig[v].name.clone(), i - v)),
        _ => sig
            .get(i)
            .map(|p| Slot::Named(p.name.clone()))
            .ok_or_else(|| Raise::unsupported("more positional inputs than parameters")),
    }
}

fn kwarg_slot(call: &Call, k: &Value) -> PyResult<Slot> {
    let Value::Str(name) = k else {
        return Err(Raise::unsupported("a keyword input whose key is not a str"));
    };
    let name = name.to_string();
    let named = call.signature.iter().any(|p| {
        p.name == name
            && matches!(
                p.kind,
                ParamKind::PositionalOrKeyword | ParamKind::KeywordOnly
            )
    });
    if named {
        return Ok(Slot::Named(name));
    }
    match call
        .signature
        .iter()
        .find(|p| p.kind == ParamKind::VarKeyword)
    {
        Some(p) => Ok(Slot::VarKw(p.name.clone(), k.clone())),
        None => Err(Raise::unsupported(
            "a keyword input the signature does not take",
        )),
    }
}

/// `inspect.signature(forward).bind(*args, **kwargs)` must succeed (its
/// TypeError is not modelled).
fn check_call_binds(call: &Call) -> PyResult<()> {
    let mut filled: Vec<String> = Vec::new();
    for i in 0..call.args.len() {
        if let Slot::Named(n) = arg_slot(call, i)? {
            if call
                .signature
                .iter()
                .any(|p| p.name == n && p.kind == ParamKind::KeywordOnly)
            {
                return Err(Raise::unsupported(
                    "a positional input for a keyword-only parameter",
                ));
            }
            filled.push(n);
        }
    }
    for (k, _) in &call.kwargs {
        if let Slot::Named(n) = kwarg_slot(call, k)? {
            let pos_only = call
                .signature
                .iter()
                .any(|p| p.name == n && p.kind == ParamKind::PositionalOnly);
            if filled.contains(&n) || pos_only {
                return Err(Raise::unsupported(
                    "a call that does not bind to the signature",
                ));
            }
            filled.push(n);
        }
    }
    for p in &call.signature {
        let required = p.default.is_none()
            && matches!(
                p.kind,
                ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword | ParamKind::KeywordOnly
            );
        if required && !filled.contains(&p.name) {
            return Err(Raise::unsupported("a call missing a required input"));
        }
    }
    Ok(())
}

/// The non-strict source of a leaf (`make_sourced_prefixes`).
fn nonstrict_source(call: &Call, leaf: &FlatLeaf) -> PyResult<String> {
    let base = match &leaf.top {
        Top::Arg(i) => slot_source(arg_slot(call, *i)?)?,
        Top::Kwarg(k) => slot_source(kwarg_slot(call, k)?)?,
    };
    keys::source_name(&base, &leaf.path)
}

fn slot_source(s: Slot) -> PyResult<String> {
    Ok(match s {
        Slot::Named(n) => keys::local(&n)?,
        Slot::VarArg(n, j) => format!("{}[{j}]", keys::local(&n)?),
        Slot::VarKw(n, k) => format!("{}[{}]", keys::local(&n)?, k.repr()?),
    })
}

/// `re.sub(r"[^a-zA-Z0-9]", "_", s)`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// `placeholder_naming_pass`: user inputs by their path in
/// `{**sig.bind_partial(*args).arguments, **kwargs}`.
fn export_names(call: &Call) -> PyResult<Vec<String>> {
    let mut names = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for leaf in flat_leaves(call)? {
        let mut parts = match &leaf.top {
            Top::Arg(i) => match arg_slot(call, *i)? {
                Slot::VarArg(n, j) => vec![n, j.to_string()],
                Slot::Named(n) | Slot::VarKw(n, _) => vec![n],
            },
            Top::Kwarg(k) => vec![sanitize(&k.py_str()?)],
        };
        for k in &leaf.path {
            parts.push(match k {
                Key::Map(key) => sanitize(&key.py_str()?),
                other => keys::key_text(other)?,
            });
        }
        let name = parts
            .iter()
            .map(|p| p.to_lowercase())
            .collect::<Vec<_>>()
            .join("_");
        if used.contains(&name) {
            return Err(Raise::unsupported("placeholder names that collide"));
        }
        used.push(name.clone());
        names.push(name);
    }
    Ok(names)
}

/// The module's parameters and buffers as export's first placeholders.
fn module_inputs(call: &Call) -> PyResult<Vec<Input>> {
    let mut out = Vec::new();
    for (prefix, list) in [("p_", &call.parameters), ("b_", &call.buffers)] {
        for (name, t) in list.iter() {
            let Some(t) = keys::tensor(t) else {
                return Err(Raise::unsupported("a module tensor that is not a tensor"));
            };
            out.push(Input {
                name: format!("{prefix}{}", sanitize(&name.to_lowercase())),
                fake: Fake::Tensor(
                    t.shape.iter().map(|d| Size::Static(*d)).collect(),
                    t.dtype.clone(),
                ),
            });
        }
    }
    Ok(out)
}

fn make_fx(call: &Call, attached: Option<Value>, w: &mut Wirer) -> PyResult<Traced> {
    only_options(call, &["tracing_mode"])?;
    let mode = match option(call, "tracing_mode") {
        None => "fake".to_string(),
        Some(Value::Str(s)) => s.to_string(),
        Some(_) => return Err(Raise::unsupported("a tracing_mode that is not a str")),
    };
    if !["real", "fake", "symbolic"].contains(&mode.as_str()) {
        return Err(Raise::new(
            "AssertionError",
            format!("tracing_mode must be real/fake/symbolic, got {mode}"),
        ));
    }
    let ds = resolve(attached, call.spec.as_ref())?;
    let spec = coerce(&ds)?;
    if spec.is_some() && mode != "fake" {
        return Err(Raise::value_error(format!(
            "make_fx(dynamic_shapes=...) requires tracing_mode='fake' (got tracing_mode={}). 'real' would silently ignore the spec; 'symbolic' conflicts with the spec's unbacked-by-default semantics.",
            Value::str(&mode).repr()?
        )));
    }
    if mode == "symbolic" {
        return Err(Raise::unsupported("make_fx's symbolic tracing mode"));
    }
    let names = make_fx_names(call)?;
    let ints = IntSymbols {
        nonneg: false,
        check_static: false,
    };
    let leaves = if mode == "real" {
        flat_leaves(call)?
            .into_iter()
            .map(|l| Ok((fakify(w, &l.value, None, "", ints)?, None)))
            .collect::<PyResult<Vec<_>>>()?
    } else {
        trace_inputs(call, spec.as_ref(), w, ints, |i, _| Ok(format!("input{i}")))?
    };
    let plain = call
        .signature
        .iter()
        .filter(|p| p.kind != ParamKind::VarPositional)
        .count();
    if !call
        .signature
        .iter()
        .any(|p| p.kind == ParamKind::VarPositional)
        && call.args.len() != plain
    {
        return Err(Raise::new(
            "RuntimeError",
            format!(
                "Tracing expected {plain} arguments but got {} concrete arguments",
                call.args.len()
            ),
        ));
    }
    if mode == "fake" {
        real_tensor_in_body(call)?;
    }
    w.env.settle_replacements()?;
    let inputs: Vec<Input> = leaves
        .into_iter()
        .zip(names)
        .map(|((fake, _), name)| Input { name, fake })
        .collect();
    // The pass runs only when the fake mode is found among the inputs: a
    // call without a tensor input gets no asserts.
    let any_tensor = inputs.iter().any(|i| matches!(i.fake, Fake::Tensor(..)));
    let (asserts, after) = if any_tensor {
        graph::asserts_and_env(&inputs, &w.env)?
    } else {
        (Vec::new(), w.env.clone())
    };
    Ok(Traced {
        placeholders: graph::placeholders(&inputs, &after)?,
        range_constraints: None,
        asserts,
        calls: None,
    })
}

/// make_fx's placeholder names: `{arg}_{n}` for the n-th leaf of each
/// positional input, the arg named `argI` when the function has `*args`.
fn make_fx_names(call: &Call) -> PyResult<Vec<String>> {
    let sig = &call.signature;
    if sig
        .iter()
        .any(|p| matches!(p.kind, ParamKind::KeywordOnly | ParamKind::VarKeyword))
    {
        return Err(Raise::unsupported(
            "make_fx of a function with keyword-only parameters or **kwargs",
        ));
    }
    let varargs = sig.iter().any(|p| p.kind == ParamKind::VarPositional);
    let mut names = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        let base = if varargs {
            format!("arg{i}")
        } else {
            sig[i].name.clone()
        };
        for n in 1..=keys::leaf_count(a)? {
            names.push(format!("{base}_{n}"));
        }
    }
    Ok(names)
}

/// The fixed body sums the module's real tensors first: under make_fx's
/// fake mode the first one refuses (`FakeTensorMode`'s check of the
/// `aten.sum` arguments, the tensor printed as fake mode prints it).
fn real_tensor_in_body(call: &Call) -> PyResult<()> {
    let (t, param) = match (call.parameters.first(), call.buffers.first()) {
        (Some((_, t)), _) => (t, true),
        (None, Some((_, t))) => (t, false),
        (None, None) => return Ok(()),
    };
    let Some(t) = keys::tensor(t) else {
        return Err(Raise::unsupported("a module tensor that is not a tensor"));
    };
    if t.shape.is_empty() {
        return Err(Raise::unsupported("the repr of a 0-d module tensor"));
    }
    let data = if t.shape.contains(&0) { "[]" } else { "[...]" };
    let size = match t.shape.as_slice() {
        [one] => format!("({one},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dtype = match t.dtype.as_str() {
        "float32" | "int64" | "bool" | "complex64" => String::new(),
        d => format!(", dtype=torch.{d}"),
    };
    let (head, tail) = if param {
        ("Parameter containing:\n", ", requires_grad=True")
    } else {
        ("", "")
    };
    Err(Raise::new(
        "AssertionError",
        format!(
            "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.sum.default({head}tensor({data}, size={size}{dtype}{tail}))"
        ),
    ))
}

fn compile(call: &Call, attached: Option<Value>, w: &mut Wirer) -> PyResult<Traced> {
    only_options(call, &["dynamic"])?;
    let kwarg = match &call.spec {
        Some(s) if s.downcast::<ParamsSpec>().is_some() => Some(wrap(s)?),
        other => other.clone(),
    };
    let ds = resolve(attached, kwarg.as_ref())?;
    let spec = coerce(&ds)?;
    let dynamic = option(call, "dynamic").cloned().unwrap_or(Value::None);
    if !matches!(dynamic, Value::None) && spec.is_some() {
        return Err(Raise::value_error(
            "`dynamic` and `dynamic_shapes` cannot both be set. `dynamic_shapes` controls dynamic behavior.",
        ));
    }
    crate::compile::run(call, spec, w)
}
