//! Mirrors serialize.py's `deserialize_module_call_graph` and
//! `deserialize_module_call_signature` (`treespec_loads` of the specs).

use super::raw::{json_loads, raw_list_use, truthy, Use};
use super::signature::{deserialize_argument_spec, Names};
use super::state::R;
use crate::model::{ModuleCallEntry, ModuleCallSignature};
use crate::schema as wire;
use torchspec_pyval::Raise;

/// `deserialize_module_call_graph`: `for entry in module_call_graph`, each
/// entry's `fqn`, then its signature's inputs and outputs.
pub(super) fn deserialize_module_call_graph(
    gm: &wire::GraphModule,
    registry: &crate::pytree::Registry,
) -> R<Vec<ModuleCallEntry>> {
    raw_list_use(gm.raw_field("module_call_graph"), Use::Iter("fqn"))?;
    let mut entries = Vec::with_capacity(gm.module_call_graph.len());
    for e in &gm.module_call_graph {
        let signature = match &e.signature {
            Some(s) => Some(deserialize_module_call_signature(s, registry)?),
            None => None,
        };
        entries.push(ModuleCallEntry {
            fqn: e.fqn.clone(),
            signature,
        });
    }
    Ok(entries)
}

/// `deserialize_module_call_signature`: the argument specs of `inputs`,
/// then of `outputs` (`x.type` of each), then `treespec_loads` of the in
/// and out specs.
pub(super) fn deserialize_module_call_signature(
    s: &wire::ModuleCallSignature,
    registry: &crate::pytree::Registry,
) -> R<ModuleCallSignature> {
    let specs = |field: &str, args: &[wire::Argument]| {
        raw_list_use(s.raw_field(field), Use::Iter("type"))?;
        args.iter()
            .map(|x| deserialize_argument_spec(x, Names::Graph))
            .collect::<R<_>>()
    };
    let inputs = specs("inputs", &s.inputs)?;
    let outputs = specs("outputs", &s.outputs)?;
    let in_spec = treespec_text(&s.in_spec)?;
    let out_spec = treespec_text(&s.out_spec)?;
    for spec in [in_spec, out_spec] {
        crate::pytree::treespec_loads_cause(spec, registry).map_err(|e| match e {
            torchspec_pyval::Raise::Exception(e) => Raise::new(&e.type_name, e.message),
            torchspec_pyval::Raise::Unsupported(w) => Raise::unsupported(w),
        })?;
    }
    Ok(ModuleCallSignature {
        inputs,
        outputs,
        in_spec: in_spec.to_string(),
        out_spec: out_spec.to_string(),
        forward_arg_names: match &s.forward_arg_names {
            wire::Loose::Typed(names) => names
                .clone()
                .filter(|n| !n.is_empty())
                .map(wire::Loose::Typed),
            wire::Loose::Raw(v) => truthy(v).then(|| wire::Loose::Raw(v.clone())),
        },
    })
}

/// The text `treespec_loads` passes to `json.loads`: a spec kept as it
/// came is never a str, so `json.loads` raises.
pub(super) fn treespec_text(spec: &wire::Loose<String>) -> R<&str> {
    match spec {
        wire::Loose::Typed(text) => Ok(text),
        wire::Loose::Raw(v) => Err(json_loads(v)
            .err()
            .unwrap_or_else(|| Raise::unsupported("a treespec kept as it came"))),
    }
}
