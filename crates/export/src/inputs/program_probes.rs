//! Probes derived from a program alone: the user inputs at the sizes the
//! program's metadata gives (a symbolic size at its saved hint, else 2),
//! then each tensor dim one larger and one smaller. The `program` fuzz
//! target checks a loaded program's inputs with them; they are the start
//! of `torchspec probes`.

use std::rc::Rc;

use torchspec_pyval::{Dict, Value};

use super::probe::{Probe, Tensor};
use crate::pytree::{tree_unflatten, treespec_loads, TreeSpec};
use crate::schema::{Argument, InputSpec, SymExprHint, SymInt, SymIntArgument};
use crate::ExportedProgram;

/// At most this many probes per program (the fuzz target runs them all).
pub const MAX_DERIVED_PROBES: usize = 16;

/// A size the reference can pick for one dim: the hint, else 2.
fn size_of(s: &SymInt) -> i64 {
    let hint = match s {
        SymInt::AsInt(i) => i.to_i64(),
        SymInt::AsExpr(e) => match &e.hint {
            Some(SymExprHint::AsInt(i)) => i.to_i64(),
            _ => None,
        },
    };
    hint.filter(|n| (0..=1 << 20).contains(n)).unwrap_or(2)
}

/// One leaf per user-input placeholder, in order; `None` for a form the
/// deriver does not build (a custom object, a token).
fn leaves(ep: &ExportedProgram) -> Option<Vec<Value>> {
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
                let shape = meta.sizes.iter().map(size_of).collect();
                let dtype = "float32".to_string();
                Value::Object(Rc::new(Tensor { shape, dtype }))
            }
            Argument::AsInt(i) => Value::int(i.to_i64()?),
            Argument::AsFloat(f) => Value::Float(*f),
            Argument::AsBool(b) => Value::Bool(*b),
            Argument::AsString(s) => Value::Str(s.as_str().into()),
            Argument::AsNone(_) => Value::None,
            Argument::AsSymInt(SymIntArgument::AsInt(i)) => Value::int(i.to_i64()?),
            Argument::AsSymInt(SymIntArgument::AsName(n)) => {
                let (_, s) = graph.sym_int_values.iter().find(|(k, _)| k == n)?;
                Value::int(size_of(s))
            }
            _ => return None,
        });
    }
    Some(out)
}

/// `(args, kwargs)` of the probe whose flat inputs are `leaves`.
fn probe(id: String, leaves: &[Value], in_spec: &TreeSpec) -> Option<Probe> {
    let Value::Tuple(top) = tree_unflatten(leaves, in_spec).ok()? else {
        return None;
    };
    let [Value::Tuple(args), Value::Dict(kwargs)] = top.as_slice() else {
        return None;
    };
    Some(Probe {
        line: 0,
        id,
        kind: Some("derived".into()),
        args: args.to_vec(),
        kwargs: Rc::new(Dict::clone(kwargs)),
        unsupported: None,
    })
}

/// The derived probes of `ep` (empty when its inputs are of a form the
/// deriver does not build).
pub fn derive_probes(ep: &ExportedProgram) -> Vec<Probe> {
    let in_spec = ep
        .graph_module
        .module_call_graph
        .iter()
        .find(|e| e.fqn.is_empty())
        .and_then(|e| e.signature.as_ref())
        .and_then(|s| treespec_loads(&s.in_spec, &ep.registrations.pytree_registry()).ok());
    let (Some(in_spec), Some(base)) = (in_spec, leaves(ep)) else {
        return Vec::new();
    };
    let mut out: Vec<Probe> = probe("derived/hint".into(), &base, &in_spec)
        .into_iter()
        .collect();
    for (i, leaf) in base.iter().enumerate() {
        let Some(t) = leaf.downcast::<Tensor>() else {
            continue;
        };
        for d in 0..t.shape.len() {
            for (delta, name) in [(1, "plus"), (-1, "minus")] {
                if out.len() >= MAX_DERIVED_PROBES {
                    return out;
                }
                let mut shape = t.shape.clone();
                shape[d] = (shape[d] + delta).max(0);
                let mut leaves = base.clone();
                let dtype = t.dtype.clone();
                leaves[i] = Value::Object(Rc::new(Tensor { shape, dtype }));
                let id = format!("derived/leaf{i}-dim{d}-{name}");
                out.extend(probe(id, &leaves, &in_spec));
            }
        }
    }
    out
}
