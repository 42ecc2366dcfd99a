//! Mirrors the graph passes of torch.export 2.15.0 that the loader and
//! `ExportedProgram._transform_do_not_use` run; see `shared/passes.md`.

mod impure_ops;
mod inline_constraints;

use std::collections::HashMap;

use crate::registrations::Registrations;
use crate::signature::{InputSpec, OutputSpec};
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

use crate::fx::{Arg, Graph, NodeId, Op};
use crate::model::{ExportedProgram, LoadedGraphModule, ModuleCallEntry, SubGraph};
use crate::signature::{ArgumentSpec, ExportGraphSignature};

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
    let mut stack: Vec<&mut SubGraph> = gm.submodules.iter_mut().collect();
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
    if a.name_mut() == old {
        *a.name_mut() = new.to_string();
    }
}

/// Why a pass pipeline stopped: PyTorch raises ([`Raise::Exception`]), or
/// the reference does not model the pass on this program
/// ([`Raise::Unsupported`]). The one "Python raised this / not modelled"
/// type of the workspace, under the name the pass API has always used.
pub type PassError = Raise;

fn py(type_name: &str, message: impl Into<String>) -> PassError {
    Raise::new(type_name, message)
}

/// The passes `torchspec transform --pass NAME` knows (`shared/passes.md`),
/// in the order `--help` lists them. This is the one declaration of their
/// names: the oracle reads them from `oracle/names.json`, written from it
/// (`torchspec::names`, kept in step by `tests/it/names.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// `gm.graph.eliminate_dead_code()`.
    Dce,
    /// `_RemoveRuntimeAssertionsPass`.
    RemoveRuntimeAssertions,
    /// `_AddRuntimeAssertionsForInlineConstraintsPass(ep.range_constraints)`.
    AddInlineConstraintAssertions,
    /// `_common_getitem_elimination_pass`.
    CommonGetitemElimination,
    /// `_remove_unnecessary_copy_op_pass`.
    RemoveUnnecessaryCopy,
}

impl Pass {
    /// Every pass, in the order of their declaration.
    pub const ALL: [Pass; 5] = [
        Pass::Dce,
        Pass::RemoveRuntimeAssertions,
        Pass::AddInlineConstraintAssertions,
        Pass::CommonGetitemElimination,
        Pass::RemoveUnnecessaryCopy,
    ];

    /// The name `--pass` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Pass::Dce => "dce",
            Pass::RemoveRuntimeAssertions => "remove-runtime-assertions",
            Pass::AddInlineConstraintAssertions => "add-inline-constraint-assertions",
            Pass::CommonGetitemElimination => "common-getitem-elimination",
            Pass::RemoveUnnecessaryCopy => "remove-unnecessary-copy",
        }
    }

    /// The pass named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The names, comma-separated, in declaration order (`--help`, errors).
    pub fn names() -> String {
        Pass::ALL.map(Pass::name).join(", ")
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `Node.is_impure()` for the nodes a loaded program has; `None` for an
/// operator neither torch nor `registrations` defines (a custom op of the
/// saving process: its schema says, and the program does not carry it).
fn is_impure(graph: &Graph, id: NodeId, registrations: &Registrations) -> Option<bool> {
    let node = graph.node(id);
    Some(match node.op {
        Op::Placeholder | Op::Output => true,
        Op::GetAttr => false,
        Op::CallFunction => {
            let t = node.target.as_str();
            if t == "operator.setitem" {
                return Some(true);
            }
            if let Some(f) = crate::ops::allowed_torch_function(t) {
                return Some(f.impure);
            }
            if let Some(op) = registrations.op(t) {
                return Some(op.impure);
            }
            if let Some(rest) = t.strip_prefix("torch.ops.") {
                let ns = rest.split('.').next().unwrap_or("");
                if impure_ops::TORCH_NAMESPACES.binary_search(&ns).is_err() {
                    return None;
                }
            }
            if matches!(
                t,
                "torch.ops.higher_order.auto_functionalized"
                    | "torch.ops.higher_order.auto_functionalized_v2"
            ) {
                // Impure when the wrapped operator is a side-effectful function.
                return Some(matches!(
                    node.args.first(),
                    Some(Arg::Torch(op)) if SIDE_EFFECTFUL_OPS.contains(&op.as_str())
                ));
            }
            impure_ops::IMPURE_OPS.binary_search(&t).is_ok()
        }
    })
}

/// The operator overloads in `torch.fx.node._side_effectful_functions`, as
/// `str()` prints them.
const SIDE_EFFECTFUL_OPS: &[&str] = &[
    "aten._assert_async.msg",
    "aten._assert_scalar.default",
    "aten._assert_tensor_metadata.default",
    "aten.sym_constrain_range.default",
    "aten.sym_constrain_range_for_size.default",
    "profiler._record_function_enter.default",
    "profiler._record_function_enter_new.default",
    "profiler._record_function_exit._RecordFunction",
    "inductor.accumulate_grad_.default",
    "inductor.resize_storage_bytes_.default",
];

/// `Graph.eliminate_dead_code()`: reverse order, erase pure nodes without
/// users; then the subgraphs its get_attr nodes name. Whether a custom
/// operator without users is pure is `registrations`' to say; not knowing
/// is `Unsupported`, never a guess.
pub fn eliminate_dead_code(
    graph: &mut Graph,
    submodules: &mut [SubGraph],
    registrations: &Registrations,
) -> Result<bool, PassError> {
    let mut changed = false;
    let ids: Vec<NodeId> = graph.node_ids().to_vec();
    for &id in ids.iter().rev() {
        if !graph.node(id).users().is_empty() {
            continue;
        }
        match is_impure(graph, id, registrations) {
            Some(true) => {}
            Some(false) => {
                let _ = graph.erase_node(id);
                changed = true;
            }
            None => {
                return Err(Raise::Unsupported(format!(
                    "Node.is_impure of `{}`: a custom operator of the saving process, whose \
                     schema the program does not carry (give it in a registrations file, \
                     `--registrations`; oracle/registrations.py writes one)",
                    graph.node(id).target
                )))
            }
        }
    }
    let live_attrs: Vec<String> = graph
        .nodes()
        .filter(|(_, n)| n.op == Op::GetAttr)
        .map(|(_, n)| n.target.clone())
        .collect();
    for sub in submodules.iter_mut() {
        if live_attrs.contains(&sub.name) {
            changed |= eliminate_dead_code(&mut sub.graph, &mut sub.submodules, registrations)?;
        }
    }
    Ok(changed)
}

/// The assertion targets `_RemoveRuntimeAssertionsPass` erases.
const RUNTIME_ASSERTIONS: &[&str] = &[
    "torch.ops.aten._assert_async.msg",
    "torch.ops.aten._assert_scalar.default",
    "torch.ops.aten.sym_constrain_range_for_size.default",
    "torch.ops.aten.sym_constrain_range.default",
    "torch.ops.aten._assert_tensor_metadata.default",
];

fn remove_runtime_assertions_in(graph: &mut Graph) -> bool {
    let mut modified = false;
    let ids: Vec<NodeId> = graph.node_ids().to_vec();
    for id in ids {
        let node = graph.node(id);
        if node.op == Op::CallFunction
            && RUNTIME_ASSERTIONS.contains(&node.target.as_str())
            && node.users().is_empty()
        {
            let _ = graph.erase_node(id);
            modified = true;
        }
    }
    modified
}

/// `_RemoveRuntimeAssertionsPass`, on every graph module.
pub fn remove_runtime_assertions(gm: &mut LoadedGraphModule) -> bool {
    let mut modified = remove_runtime_assertions_in(&mut gm.graph);
    let mut stack: Vec<&mut SubGraph> = gm.submodules.iter_mut().collect();
    while let Some(sub) = stack.pop() {
        modified |= remove_runtime_assertions_in(&mut sub.graph);
        stack.extend(sub.submodules.iter_mut());
    }
    modified
}

/// `_remove_unnecessary_copy_op_pass`: a mutated buffer or parameter
/// output produced by `aten.copy.default` is replaced by the copy's source.
pub fn remove_unnecessary_copy(gm: &mut LoadedGraphModule) {
    let mutated: Vec<String> = gm
        .signature
        .buffers_to_mutate()
        .into_iter()
        .chain(gm.signature.parameters_to_mutate())
        .map(|(k, _)| k)
        .collect();
    let Some(output) = gm.graph.output_node() else {
        return;
    };
    let mut outs = Vec::new();
    for a in &gm.graph.node(output).args {
        a.for_each_node(&mut |id| outs.push(id));
    }
    for out in outs {
        if gm.graph.is_erased(out) {
            continue;
        }
        let node = gm.graph.node(out);
        if !mutated.contains(&node.name) || !node.is_call_to("torch.ops.aten.copy.default") {
            continue;
        }
        let Some(Arg::Node(src)) = node.args.get(1).cloned() else {
            continue;
        };
        let old_name = node.name.clone();
        let new_name = gm.graph.node(src).name.clone();
        let users = gm.graph.replace_all_uses_with(out, src);
        for u in users {
            if gm.graph.node(u).op == Op::Output {
                gm.signature.replace_all_uses(&old_name, &new_name);
            }
        }
        let _ = gm.graph.erase_node(out);
    }
}

/// Runs one named pass; returns `PassResult.modified`. `values` is the
/// serialized top-level graph, whose value metadata the nodes' `meta.val` name.
pub fn run_pass(
    name: &str,
    gm: &mut LoadedGraphModule,
    values: &crate::schema::Graph,
    registrations: &Registrations,
) -> Result<bool, PassError> {
    let Some(pass) = Pass::from_name(name) else {
        return Err(Raise::Unsupported(format!(
            "unknown pass `{name}` (one of {})",
            Pass::names()
        )));
    };
    match pass {
        Pass::Dce => eliminate_dead_code(&mut gm.graph, &mut gm.submodules, registrations),
        Pass::RemoveRuntimeAssertions => Ok(remove_runtime_assertions(gm)),
        Pass::CommonGetitemElimination => {
            common_getitem_elimination(gm);
            Ok(true)
        }
        Pass::RemoveUnnecessaryCopy => {
            remove_unnecessary_copy(gm);
            Ok(true)
        }
        Pass::AddInlineConstraintAssertions => inline_constraints::run(gm, values),
    }
}

/// `ExportedProgram._transform_do_not_use(*passes)`: runs the passes in
/// order and, when one changed something, builds the new program: the
/// signature from the placeholder and output names, the constructor's
/// getitem elimination, the range constraints carried over.
pub fn transform(ep: &ExportedProgram, passes: &[String]) -> Result<ExportedProgram, PassError> {
    let mut gm = ep.graph_module.clone();
    let mut modified = false;
    for p in passes {
        modified |= run_pass(
            p,
            &mut gm,
            &ep.serialized.graph_module.graph,
            &ep.registrations,
        )?;
    }
    if !modified {
        return Ok(ep.clone());
    }
    gm.signature = updated_signature(&ep.graph_module.signature, &gm.graph)?;
    // `_get_updated_range_constraints`: with no value metadata on any node
    // there is no shape env, and the constraints are dropped.
    if !gm.graph.nodes().any(|(_, n)| n.meta.val.is_some()) {
        gm.range_constraints = Default::default();
    }
    common_getitem_elimination(&mut gm);
    verify(&gm, &ep.registrations)?;
    Ok(ExportedProgram {
        serialized: ep.serialized.clone(),
        graph_module: gm,
        state_dict: ep.state_dict.clone(),
        diagnostics: ep.diagnostics.clone(),
        // The new `ExportedProgram(...)` is built without `guards_code`.
        guards_code: crate::schema::Loose::Typed(Vec::new()),
        archive: ep.archive.clone(),
        registrations: ep.registrations.clone(),
    })
}

/// The part of `Verifier._check_graph_module` a pass can break: every
/// call_function node needs a `val` (`_check_val`).
fn verify(gm: &LoadedGraphModule, registrations: &Registrations) -> Result<(), PassError> {
    let mut graphs: Vec<&Graph> = vec![&gm.graph];
    let mut stack: Vec<&SubGraph> = gm.submodules.iter().collect();
    while let Some(sub) = stack.pop() {
        graphs.push(&sub.graph);
        stack.extend(sub.submodules.iter());
    }
    for g in graphs {
        for (_, n) in g.nodes() {
            crate::verify::check_val(n, registrations)?;
        }
    }
    Ok(())
}

/// `_get_updated_graph_signature`.
fn updated_signature(
    old: &ExportGraphSignature,
    graph: &Graph,
) -> Result<ExportGraphSignature, PassError> {
    let mut input_specs = Vec::new();
    for (i, (_, node)) in graph.nodes().enumerate() {
        if node.op != Op::Placeholder {
            break;
        }
        let Some(spec) = old.input_specs.get(i) else {
            return Err(py(
                "AssertionError",
                format!(
                    "Number of inputs changed after transformation: got index {i} but only {} input_specs",
                    old.input_specs.len()
                ),
            ));
        };
        input_specs.push(InputSpec {
            kind: spec.kind,
            arg: renamed(&spec.arg, &node.name),
            target: spec.target.clone(),
            persistent: spec.persistent.clone(),
        });
    }
    let Some((_, last)) = graph.nodes().last() else {
        return Err(py("IndexError", "list index out of range"));
    };
    if last.op != Op::Output {
        return Err(py(
            "AssertionError",
            format!(
                "expected last node to have op='output', got '{}'",
                last.op.as_str()
            ),
        ));
    }
    let outputs: Vec<Arg> = match last.args.first() {
        Some(Arg::Tuple(items)) | Some(Arg::List(items)) => items.clone(),
        Some(Arg::Node(_)) => {
            return Err(py("TypeError", "'Node' object is not iterable"));
        }
        _ => return Err(Raise::Unsupported("an output that is not a tuple".into())),
    };
    let mut output_specs = Vec::new();
    for (i, out) in outputs.iter().enumerate() {
        let Some(spec) = old.output_specs.get(i) else {
            return Err(py(
                "AssertionError",
                format!(
                    "Number of outputs changed after transformation: got index {i} but only {} output_specs",
                    old.output_specs.len()
                ),
            ));
        };
        let arg = match (&spec.arg, out) {
            (ArgumentSpec::Constant { .. } | ArgumentSpec::CustomObj { .. }, _) => spec.arg.clone(),
            (_, Arg::Node(id)) => renamed(&spec.arg, &graph.node(*id).name),
            (_, other) => {
                return Err(py(
                    "AttributeError",
                    format!("'{}' object has no attribute 'name'", py_type_name(other)),
                ))
            }
        };
        output_specs.push(OutputSpec {
            kind: spec.kind,
            arg,
            target: spec.target.clone(),
        });
    }
    Ok(ExportGraphSignature {
        input_specs,
        output_specs,
    })
}

fn py_type_name(a: &Arg) -> &'static str {
    match a {
        Arg::None => "NoneType",
        Arg::Bool(_) => "bool",
        Arg::Int(_) | Arg::BigInt(_) => "int",
        Arg::Float(_) => "float",
        Arg::Str(_) => "str",
        Arg::Complex(..) => "complex",
        Arg::Node(_) => "Node",
        Arg::List(_) => "list",
        Arg::Tuple(_) => "tuple",
        Arg::Dict(_) => "dict",
        Arg::Torch(_) => "object",
        Arg::Device(_) => "device",
    }
}

/// `type(old.arg)(node.name)` for non-constant arguments.
fn renamed(arg: &ArgumentSpec, name: &str) -> ArgumentSpec {
    let name = name.to_string();
    match arg {
        ArgumentSpec::Tensor { .. } => ArgumentSpec::Tensor { name },
        ArgumentSpec::SymInt { .. } => ArgumentSpec::SymInt { name },
        ArgumentSpec::SymFloat { .. } => ArgumentSpec::SymFloat { name },
        ArgumentSpec::SymBool { .. } => ArgumentSpec::SymBool { name },
        ArgumentSpec::Token { .. } => ArgumentSpec::Token { name, kept: None },
        other => other.clone(),
    }
}

/// The report of `program` after the named passes (`shared/passes.md`): a
/// pass PyTorch raises in makes the whole report `{"error": ...}`.
pub fn transform_report(program: &ExportedProgram, passes: &[String]) -> Result<PyJson, String> {
    match transform(program, passes) {
        Ok(ep) => Ok(ep.report()),
        Err(Raise::Exception(e)) => Ok(PyJson::object([(
            "error",
            PyJson::object([("type", e.type_name.into()), ("message", e.message.into())]),
        )])),
        Err(Raise::Unsupported(why)) => Err(why),
    }
}
