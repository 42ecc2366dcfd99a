//! `torch/fx/experimental/_spec_binding.py`: `_walk_spec` pairs each input
//! leaf with its leaf spec, `_bind_spec_to_args` walks the call in
//! signature order. Every check and message is PyTorch's, in its order.

use torchspec_pyval::{Dict, PyResult, Raise, Value};
use torchspec_spec::{DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, TensorSpec};

use crate::keys::{self, Key};
use crate::{Param, ParamKind};

/// A leaf's spec: `None` is static.
pub(crate) type LeafSpec = Option<Value>;

/// `_walk_spec(user_spec, arg_value, where)`.
pub(crate) fn walk_spec(spec: &Value, arg: &Value, at: &str) -> PyResult<Vec<LeafSpec>> {
    if matches!(spec, Value::None) {
        return Ok(vec![None; keys::leaf_count(arg)?]);
    }
    if let Some(seq) = spec.downcast::<SeqSpec>() {
        return walk_seq(seq, arg, at);
    }
    if let Some(d) = spec.downcast::<DictSpec>() {
        return walk_dict(d, arg, at);
    }
    if let Some(o) = spec.downcast::<ObjectSpec>() {
        return walk_object(o, arg, at);
    }
    walk_leaf(spec, arg, at)
}

fn walk_seq(seq: &SeqSpec, arg: &Value, at: &str) -> PyResult<Vec<LeafSpec>> {
    let items = match arg {
        Value::List(v) | Value::Tuple(v) => v.to_vec(),
        other => match keys::children(other)? {
            // A namedtuple is a tuple.
            Some(kids) if is_namedtuple(other) => kids.into_iter().map(|(_, v)| v).collect(),
            _ => {
                return Err(Raise::value_error(format!(
                    "{at}: SeqSpec expected list/tuple, got {}",
                    keys::type_name(other)
                )))
            }
        },
    };
    if seq.entries.len() > items.len() {
        return Err(Raise::value_error(format!(
            "{at}: SeqSpec has {} entries beyond runtime sequence length {}",
            seq.entries.len(),
            items.len()
        )));
    }
    let mut out = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let sub = seq.entries.get(i).cloned().unwrap_or(Value::None);
        out.extend(walk_spec(&sub, v, &format!("{at}[{i}]"))?);
    }
    Ok(out)
}

fn is_namedtuple(v: &Value) -> bool {
    v.downcast::<torchspec_export::pytree::Container>()
        .is_some_and(|c| {
            matches!(
                c.ty.kind,
                torchspec_export::pytree::NodeKind::NamedTuple { .. }
            )
        })
}

fn walk_dict(spec: &DictSpec, arg: &Value, at: &str) -> PyResult<Vec<LeafSpec>> {
    let Value::Dict(d) = arg else {
        return Err(Raise::value_error(format!(
            "{at}: DictSpec expected dict, got {}",
            keys::type_name(arg)
        )));
    };
    let mut unmatched = Vec::new();
    for k in spec.entries.keys() {
        if !d.contains(k)? {
            unmatched.push(k.clone());
        }
    }
    if !unmatched.is_empty() {
        let runtime: Vec<Value> = d.keys().cloned().collect();
        return Err(Raise::value_error(format!(
            "{at}: DictSpec has entries {} that do not match any key in the runtime dict. Runtime keys: {}",
            sorted_by_repr(unmatched)?,
            sorted_by_repr(runtime)?
        )));
    }
    let mut out = Vec::new();
    for (k, v) in d.iter() {
        let sub = spec.entries.get(k).cloned().unwrap_or(Value::None);
        out.extend(walk_spec(&sub, v, &format!("{at}[{}]", k.repr()?))?);
    }
    Ok(out)
}

/// `repr(sorted(xs, key=repr))`.
fn sorted_by_repr(xs: Vec<Value>) -> PyResult<String> {
    let mut keyed = xs
        .into_iter()
        .map(|x| Ok((x.repr()?, x)))
        .collect::<PyResult<Vec<_>>>()?;
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    Value::List(std::rc::Rc::new(
        keyed.into_iter().map(|(_, x)| x).collect(),
    ))
    .repr()
}

fn walk_object(spec: &ObjectSpec, arg: &Value, at: &str) -> PyResult<Vec<LeafSpec>> {
    let Some(kids) = keys::children(arg)? else {
        return Err(Raise::value_error(format!(
            "{at}: ObjectSpec requires the runtime value's type to be pytree-registered, but {} is not registered. Register it via `torch.export.register_dataclass(<cls>)` (for dataclasses) or `pytree.register_pytree_node(...)`.",
            keys::type_name(arg)
        )));
    };
    let names: Vec<&String> = kids
        .iter()
        .filter_map(|(k, _)| match k {
            Key::Attr(a) => Some(a),
            _ => None,
        })
        .collect();
    let mut unmatched: Vec<String> = Vec::new();
    for k in spec.fields.keys() {
        let name = k.py_str()?;
        if !names.contains(&&name) {
            unmatched.push(name);
        }
    }
    if !unmatched.is_empty() {
        unmatched.sort();
        let unmatched: Vec<String> = unmatched
            .iter()
            .map(|n| Value::str(n).repr())
            .collect::<PyResult<_>>()?;
        let mut sorted_names: Vec<&String> = names.clone();
        sorted_names.sort();
        sorted_names.dedup();
        let available: Vec<String> = sorted_names
            .iter()
            .map(|n| Value::str(n).repr())
            .collect::<PyResult<_>>()?;
        return Err(Raise::value_error(format!(
            "{at}: ObjectSpec has entries [{}] that do not match any attribute on the runtime object of type {}. Available attributes: [{}]",
            unmatched.join(", "),
            keys::type_name(arg),
            available.join(", ")
        )));
    }
    let mut out = Vec::new();
    for (k, child) in &kids {
        match k {
            Key::Attr(a) if spec.fields.get_str(a).is_some() => {
                let sub = spec.fields.get_str(a).cloned().unwrap_or(Value::None);
                out.extend(walk_spec(&sub, child, &format!("{at}.{a}"))?);
            }
            _ => out.extend(vec![None; keys::leaf_count(child)?]),
        }
    }
    Ok(out)
}

fn walk_leaf(spec: &Value, arg: &Value, at: &str) -> PyResult<Vec<LeafSpec>> {
    if spec.downcast::<TensorSpec>().is_some() {
        if keys::tensor(arg).is_none() {
            return Err(Raise::value_error(format!(
                "{at}: spec is TensorSpec but the actual arg is {}, not a Tensor.",
                keys::type_name(arg)
            )));
        }
    } else if spec.downcast::<IntVar>().is_some() || matches!(spec, Value::Int(_) | Value::Bool(_))
    {
        if !matches!(arg, Value::Int(_) | Value::Bool(_)) {
            let spec_type = if spec.downcast::<IntVar>().is_some() {
                "IntVar".to_string()
            } else {
                spec.type_name().to_string()
            };
            return Err(Raise::value_error(format!(
                "{at}: spec is {spec_type} (scalar spec) but the actual arg is {}, not int.",
                keys::type_name(arg)
            )));
        }
    } else {
        return Err(Raise::new(
            "AssertionError",
            format!("{at}: unexpected leaf spec type {}", leaf_type_name(spec)),
        ));
    }
    Ok(vec![Some(spec.clone())])
}

/// `type(spec).__name__` of a leaf spec (a `ShapeVar` is an `IntVar`
/// subclass; derived values are `SymInt` / `SymBool` / `SymFloat`).
fn leaf_type_name(spec: &Value) -> String {
    match torchspec_spec::sym::expr_of(spec) {
        Ok(Some((_, t))) => match t {
            torchspec_spec::sym::PyType::Int => "SymInt".into(),
            torchspec_spec::sym::PyType::Float => "SymFloat".into(),
            torchspec_spec::sym::PyType::Bool => "SymBool".into(),
        },
        _ => keys::type_name(spec),
    }
}

/// The outcome of `_bind_spec_to_args`: one leaf spec per flat input.
pub(crate) struct Bound {
    /// `out_leaf_specs`, aligned with `tree_flatten((args, kwargs))`.
    pub leaf_specs: Vec<LeafSpec>,
}

/// `_bind_spec_to_args(f, args, kwargs, shapes_spec)` for a spec whose
/// `params` is `params` (`None`: every leaf static).
pub(crate) fn bind(
    signature: &[Param],
    args: &[Value],
    kwargs: &[(Value, Value)],
    params: Option<&ParamsSpec>,
) -> PyResult<Bound> {
    let total = args
        .iter()
        .chain(kwargs.iter().map(|(_, v)| v))
        .map(keys::leaf_count)
        .sum::<PyResult<usize>>()?;
    let Some(params) = params else {
        return Ok(Bound {
            leaf_specs: vec![None; total],
        });
    };
    let named = &params.named_args;
    let varargs_idx = signature
        .iter()
        .position(|p| p.kind == ParamKind::VarPositional)
        .unwrap_or(signature.len());
    let mut out = Vec::new();
    let mut matched_named: Vec<Value> = Vec::new();
    let mut matched_varkw: Vec<Value> = Vec::new();
    for (i, v) in args.iter().take(varargs_idx).enumerate() {
        let name = Value::str(&signature[i].name);
        let spec = match named.get(&name) {
            Some(s) => {
                matched_named.push(name.clone());
                s.clone()
            }
            None => Value::None,
        };
        out.extend(walk_spec(
            &spec,
            v,
            &format!("shapes_spec[{}]", name.repr()?),
        )?);
    }
    let varargs = params.varargs.clone().unwrap_or_default();
    for (j, v) in args.iter().skip(varargs_idx).enumerate() {
        let spec = varargs.get(j).cloned().unwrap_or(Value::None);
        out.extend(walk_spec(&spec, v, &format!("shapes_spec['*args'][{j}]"))?);
    }
    for (k, v) in kwargs {
        let spec = if let Some(s) = named.get(k) {
            matched_named.push(k.clone());
            s.clone()
        } else if let Some(s) = params.varkw.as_ref().and_then(|d| d.get(k)) {
            matched_varkw.push(k.clone());
            s.clone()
        } else {
            Value::None
        };
        out.extend(walk_spec(&spec, v, &format!("shapes_spec[{}]", k.repr()?))?);
    }
    check_unmatched(
        signature,
        args,
        kwargs,
        params,
        varargs_idx,
        &matched_named,
        &matched_varkw,
    )?;
    if out.len() != total {
        return Err(Raise::new(
            "AssertionError",
            format!(
                "_bind_spec_to_args leaf-count drift: walked {} leaves but pytree.tree_flatten((args, kwargs)) yields {total}. This means the translator and the export tracer disagree on the flat input layout.",
                out.len()
            ),
        ));
    }
    Ok(Bound { leaf_specs: out })
}

fn unmatched_in(d: &Dict, matched: &[Value]) -> Vec<Value> {
    d.keys()
        .filter(|k| !matched.iter().any(|m| m.key_eq(k)))
        .cloned()
        .collect()
}

fn check_unmatched(
    signature: &[Param],
    args: &[Value],
    kwargs: &[(Value, Value)],
    params: &ParamsSpec,
    varargs_idx: usize,
    matched_named: &[Value],
    matched_varkw: &[Value],
) -> PyResult<()> {
    let mut unmatched = unmatched_in(&params.named_args, matched_named);
    if let Some(varkw) = &params.varkw {
        for k in unmatched_in(varkw, matched_varkw) {
            if !unmatched.iter().any(|u| u.key_eq(&k)) {
                unmatched.push(k);
            }
        }
    }
    if unmatched.is_empty() {
        return Ok(());
    }
    let mut names = unmatched
        .iter()
        .map(|k| Ok((k.py_str()?, k.repr()?)))
        .collect::<PyResult<Vec<_>>>()?;
    names.sort();
    let passed: Vec<String> = signature
        .iter()
        .take(args.len().min(varargs_idx))
        .map(|p| Value::str(&p.name).repr())
        .chain(kwargs.iter().map(|(k, _)| k.repr()))
        .collect::<PyResult<_>>()?;
    Err(Raise::value_error(format!(
        "ParamsSpec has entries [{}] that do not match any argument passed to export(). Spec keys must be forward parameter names that were actually passed. Inputs received: [{}].",
        names.iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>().join(", "),
        passed.join(", ")
    )))
}
