//! Mirrors the graph passes of torch.export 2.15.0 that the loader and
//! `ExportedProgram._transform_do_not_use` run; see `shared/passes.md`.

use std::collections::HashMap;

use crate::export::fx::{Arg, Graph, NodeId, Op};
use crate::export::load::{LoadedGraphModule, ModuleCallEntry};
use crate::export::signature::{ArgumentSpec, ExportGraphSignature};

/// `torch.export.exported_program._common_getitem_elimination_pass`: a
/// second `getitem` of the same source and index is replaced by the first
/// (signature outputs renamed through the replace hook, module call
/// signatures renamed) and erased. Runs on every graph module.
pub fn common_getitem_elimination(gm: &mut LoadedGraphModule) {
    eliminate_in(
        &mut gm.graph,
        Some(&mut gm.signature),
        &mut gm.module_call_graph,
    );
    let mut stack: Vec<&mut crate::export::load::SubGraph> = gm.submodules.iter_mut().collect();
    while let Some(sub) = stack.pop() {
        eliminate_in(&mut sub.graph, None, &mut gm.module_call_graph);
        stack.extend(sub.submodules.iter_mut());
    }
}

fn eliminate_in(
    graph: &mut Graph,
    mut signature: Option<&mut ExportGraphSignature>,
    module_call_graph: &mut [ModuleCallEntry],
) {
    let mut node_id: HashMap<NodeId, String> = HashMap::new();
    let mut getitems: HashMap<String, NodeId> = HashMap::new();
    let ids: Vec<NodeId> = graph.node_ids().to_vec();
    for id in ids {
        let node = graph.node(id);
        if node.op == Op::CallFunction && node.target == "operator.getitem" {
            let (Some(Arg::Node(source)), Some(idx)) = (node.args.first(), node.args.get(1)) else {
                node_id.insert(id, node.name.clone());
                continue;
            };
            let mut idx_str = String::new();
            graph.str_arg(idx, &mut idx_str);
            let new_id = format!(
                "{}.{idx_str}",
                node_id.get(source).cloned().unwrap_or_default()
            );
            if let Some(&keep) = getitems.get(&new_id) {
                let old_name = graph.node(id).name.clone();
                let new_name = graph.node(keep).name.clone();
                let users = graph.replace_all_uses_with(id, keep);
                if let Some(sig) = signature.as_deref_mut() {
                    for u in users {
                        if graph.node(u).op == Op::Output {
                            sig.replace_all_uses(&old_name, &new_name);
                        }
                    }
                }
                for entry in module_call_graph.iter_mut() {
                    if let Some(s) = &mut entry.signature {
                        for a in s.inputs.iter_mut().chain(s.outputs.iter_mut()) {
                            rename_spec(a, &old_name, &new_name);
                        }
                    }
                }
                let _ = graph.erase_node(id);
            } else {
                getitems.insert(new_id.clone(), id);
                node_id.insert(id, new_id);
            }
        } else {
            node_id.insert(id, node.name.clone());
        }
    }
}

fn rename_spec(a: &mut ArgumentSpec, old: &str, new: &str) {
    let name = match a {
        ArgumentSpec::Tensor { name }
        | ArgumentSpec::SymInt { name }
        | ArgumentSpec::SymFloat { name }
        | ArgumentSpec::SymBool { name }
        | ArgumentSpec::Constant { name, .. }
        | ArgumentSpec::CustomObj { name, .. }
        | ArgumentSpec::Token { name } => name,
    };
    if name == old {
        *name = new.to_string();
    }
}
