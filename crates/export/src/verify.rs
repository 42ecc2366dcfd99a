//! The last step of the `ExportedProgram` constructor on load
//! (`self.validate()`): torch/_export/verifier.py's `Verifier.check` for
//! each dialect named in the program's `verifiers` (`load_verifier`):
//! `_check_graph_module` (each graph module's `Graph.lint()` and the
//! functional-op check), `_verify_exported_program_module_call_graph` and
//! `_verify_exported_program_signature`.
//!
//! The state dict and constants checks need the archive's weights and
//! constants configs; a program loaded from its JSON alone has neither,
//! and those checks are skipped.

use std::collections::HashSet;
use torchspec_pyval::Raise;

use crate::failure::LoadFailure;
use crate::fx::{Arg, Graph, Node, Op};
use crate::model::{LoadedGraphModule, StateDictEntry, SubGraph};
use crate::ops;
use crate::registrations::Registrations;
use crate::signature::{ArgumentSpec, Constant, ExportGraphSignature, InputKind, UserValue};
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::repr::str_repr;

type R<T> = Result<T, LoadFailure>;

fn py(exception: &str, message: impl Into<String>) -> LoadFailure {
    Raise::new(exception, message)
}

fn spec_violation(message: impl Into<String>) -> LoadFailure {
    py("SpecViolationError", message)
}

/// A verifier class by its `dialect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `"ATEN"` (and `""`): the base `Verifier`, which refuses mutating ops.
    Aten,
    /// `"TRAINING"`: `TrainingIRVerifier`, which allows them.
    Training,
}

/// `[load_verifier(v) for v in exported_program.verifiers]` (then the
/// constructor's `verifiers or [Verifier]`). The registry after `import
/// torch` holds `ATEN` and `TRAINING`; `""` is `Verifier`; any other name
/// is `_VerifierMeta._registry[dialect]`'s `KeyError`.
pub fn load_verifiers(names: &[String], raw: Option<&PyJson>) -> R<Vec<Dialect>> {
    let mut out = Vec::with_capacity(names.len());
    if let Some(v) = raw {
        raw_verifiers(v, &mut out)?;
    }
    for name in names {
        out.push(dialect(name)?);
    }
    if out.is_empty() {
        out.push(Dialect::Aten);
    }
    Ok(out)
}

/// `load_verifier(dialect)`: `_VerifierMeta._registry[dialect]`, with the
/// base `Verifier` for `"ATEN"` and `""`.
fn dialect(name: &str) -> R<Dialect> {
    match name {
        "ATEN" | "" => Ok(Dialect::Aten),
        "TRAINING" => Ok(Dialect::Training),
        other => Err(py("KeyError", str_repr(other))),
    }
}

/// `for v in exported_program.verifiers` over the value `_dict_to_dataclass`
/// kept: a str yields its characters, a list its items as they came (a key
/// that is no str is a `KeyError` of its repr, a list is unhashable), and
/// anything else is not iterable.
fn raw_verifiers(v: &PyJson, out: &mut Vec<Dialect>) -> R<()> {
    match v {
        PyJson::Str(s) => {
            for c in s.chars() {
                out.push(dialect(&c.to_string())?);
            }
            Ok(())
        }
        PyJson::List(items) => {
            for item in items {
                match item {
                    PyJson::Str(s) => out.push(dialect(s)?),
                    PyJson::List(_) => return Err(py("TypeError", "unhashable type: 'list'")),
                    PyJson::Object(_) => return Err(py("TypeError", "unhashable type: 'dict'")),
                    other => {
                        let mut key = String::new();
                        crate::schema::load::repr_raw(other, &mut key);
                        return Err(py("KeyError", key));
                    }
                }
            }
            Ok(())
        }
        other => Err(py(
            "TypeError",
            format!("'{}' object is not iterable", other.type_name()),
        )),
    }
}

/// What the checks know of the loaded program beyond its graph module.
pub struct Context<'a> {
    /// What the loading process registered (the custom ops' schemas).
    pub registrations: &'a Registrations,
    /// `ep.state_dict`, when the weights config was read.
    pub state_dict: Option<&'a [StateDictEntry]>,
    /// The keys of `ep.constants`, when the constants config was read.
    pub constants: Option<&'a HashSet<String>>,
}

/// `v().check(ep)` for each verifier.
pub fn check(gm: &LoadedGraphModule, verifiers: &[Dialect], cx: &Context<'_>) -> R<()> {
    for &dialect in verifiers {
        check_graph_module(gm, dialect, cx)?;
        check_module_call_graph(gm)?;
        check_signature(gm, cx)?;
    }
    Ok(())
}

/// `Verifier._check_graph_module`: `gm.modules()` is the top module, then
/// the submodules depth first in registration order; each graph is
/// linted, then its call_function targets checked.
fn check_graph_module(gm: &LoadedGraphModule, dialect: Dialect, cx: &Context<'_>) -> R<()> {
    fn walk<'g>(subs: &'g [SubGraph], out: &mut Vec<&'g Graph>) {
        for s in subs {
            out.push(&s.graph);
            walk(&s.submodules, out);
        }
    }
    let mut graphs = vec![&gm.graph];
    walk(&gm.submodules, &mut graphs);
    for g in graphs {
        lint(g)?;
        for (_, n) in g.nodes() {
            match n.op {
                Op::CallFunction => {
                    check_val(n, cx.registrations)?;
                    check_valid_op(&n.target, dialect, cx)?;
                }
                Op::Placeholder => check_val(n, cx.registrations)?,
                _ => {}
            }
        }
    }
    Ok(())
}

/// `_check_val`: a call_function or placeholder node needs `meta["val"]`,
/// unless it calls an `OpOverload` whose schema returns nothing
/// (`_no_returns`). (The value itself is one the loader built, which
/// `_check_correct_val` accepts.)
pub fn check_val(n: &Node, registrations: &Registrations) -> R<()> {
    let needs_val = matches!(n.op, Op::CallFunction | Op::Placeholder);
    if n.meta.has_val || !needs_val {
        return Ok(());
    }
    if n.op == Op::CallFunction && no_returns(&n.target, registrations) {
        return Ok(());
    }
    Err(spec_violation(format!(
        "Node.meta {} is missing val field.",
        n.name
    )))
}

/// `_no_returns(op)`: an `OpOverload` (built-in or registered) whose
/// schema declares no returns.
fn no_returns(target: &str, registrations: &Registrations) -> bool {
    if !target.starts_with("torch.ops.") || target.starts_with("torch.ops.higher_order.") {
        return false;
    }
    ops::op_schema(target)
        .or_else(|| registrations.op(target).map(|o| o.schema.as_str()))
        .and_then(ops::schema::parse)
        .is_some_and(|s| s.returns.is_empty())
}

/// The part of `Graph.lint` a loaded graph can fail: `sync_fx_node` sets
/// `fx_node.name` without the graph's namespace, so a serialized output
/// name can repeat a node name FX chose (`RuntimeError: Node redefined
/// name mul!`). (Topological order holds by construction: an argument
/// resolves only to an already deserialized node.)
fn lint(g: &Graph) -> R<()> {
    let mut seen: HashSet<&str> = HashSet::new();
    for (_, n) in g.nodes() {
        if !seen.insert(n.name.as_str()) {
            return Err(py(
                "RuntimeError",
                format!("Node redefined name {}!", n.name),
            ));
        }
    }
    Ok(())
}

/// `_check_valid_op`'s functional check: an `OpOverload` whose schema
/// `is_mutable` is refused unless the dialect is TRAINING; `str(op)` is
/// `ns.name.overload`.
fn check_valid_op(target: &str, dialect: Dialect, cx: &Context<'_>) -> R<()> {
    let Some(qualified) = target.strip_prefix("torch.ops.") else {
        return Ok(());
    };
    if qualified.starts_with("higher_order.") {
        return Ok(());
    }
    if qualified.split('.').count() == 2 {
        // An `OpOverloadPacket` (the loader resolves nothing else to two
        // names): `not isinstance(op, _allowed_op_types())`, in every dialect.
        return Err(spec_violation(not_allowed_op(qualified)));
    }
    if dialect == Dialect::Training {
        return Ok(());
    }
    let text =
        ops::op_schema(target).or_else(|| cx.registrations.op(target).map(|o| o.schema.as_str()));
    let Some(text) = text else {
        return Ok(());
    };
    let schema = ops::schema::parse(text)
        .ok_or_else(|| Raise::Unsupported(format!("the schema text `{text}`")))?;
    if schema.is_mutable() {
        return Err(spec_violation(format!(
            "operator '{qualified}' is not functional"
        )));
    }
    Ok(())
}

/// `_check_valid_op`'s refusal of an op that is neither an allowed type nor
/// an allowed function: `str(op)`, then the base verifier's allow-lists as
/// PyTorch 2.15.0 prints them (function addresses written `0x<address>`,
/// as the oracle records them).
fn not_allowed_op(op: &str) -> String {
    format!(
        "Operator '{op}' is not an allowed operator type: (<class 'torch._ops.OpOverload'>, \
         <class 'torch._ops.HigherOrderOperator'>)\nValid builtin ops: [{}]Valid torch \
         functions: ({})",
        ALLOWED_BUILTINS
            .iter()
            .map(|f| format!("<built-in function {f}>"))
            .collect::<Vec<_>>()
            .join(", "),
        ops::allowed_torch_functions()
            .map(|f| f.repr)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `Verifier.allowed_builtin_ops()`, by name.
const ALLOWED_BUILTINS: &[&str] = &[
    "getitem", "add", "mul", "sub", "truediv", "ge", "le", "gt", "lt", "eq", "ne", "floordiv",
    "mod", "and_", "or_", "not_", "pow", "neg", "abs", "lshift", "rshift", "ceil", "floor",
    "trunc", "round",
];

/// `_verify_exported_program_module_call_graph`.
fn check_module_call_graph(gm: &LoadedGraphModule) -> R<()> {
    let nodes: HashSet<&str> = gm.graph.nodes().map(|(_, n)| n.name.as_str()).collect();
    for entry in &gm.module_call_graph {
        let Some(sig) = &entry.signature else {
            continue;
        };
        for arg in &sig.inputs {
            let name = arg.name();
            if !name.is_empty() && !nodes.contains(name) {
                return Err(spec_violation(format!(
                    "Input {name} does not exist in the graph."
                )));
            }
        }
        for arg in &sig.outputs {
            let name = arg.name();
            if !name.is_empty() && !nodes.contains(name) {
                return Err(spec_violation(format!(
                    "Output {name} does not exist in the graph."
                )));
            }
        }
    }
    Ok(())
}

/// A Python value the output checks compare: a node's name or a constant.
#[derive(Clone, Debug)]
enum PyVal {
    Str(String),
    Int(i64),
    BigInt(String),
    Float(f64),
    Bool(bool),
    None,
    /// A list, dict or torch object by its repr: never equal to an
    /// output node's name or constant.
    Repr(String),
}

impl PyVal {
    fn of_constant(c: &Constant) -> PyVal {
        match c {
            Constant::None => PyVal::None,
            Constant::Bool(b) => PyVal::Bool(*b),
            Constant::Int(i) => PyVal::Int(*i),
            Constant::BigInt(s) => PyVal::BigInt(s.clone()),
            Constant::Float(f) => PyVal::Float(*f),
            Constant::Str(s) => PyVal::Str(s.clone()),
            other => PyVal::Repr(other.repr()),
        }
    }

    fn of_user(v: &UserValue) -> PyVal {
        match v {
            UserValue::Name(n) => PyVal::Str(n.clone()),
            UserValue::Constant(c) => PyVal::of_constant(c),
        }
    }

    /// A number as Python compares it (`True == 1 == 1.0`).
    fn number(&self) -> Option<f64> {
        match self {
            PyVal::Int(i) => Some(*i as f64),
            PyVal::Bool(b) => Some(f64::from(u8::from(*b))),
            PyVal::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// `==`.
    fn eq(&self, other: &PyVal) -> bool {
        match (self, other) {
            (PyVal::Str(a), PyVal::Str(b)) => a == b,
            (PyVal::None, PyVal::None) => true,
            (PyVal::BigInt(a), PyVal::BigInt(b)) => a == b,
            (PyVal::Int(a), PyVal::Int(b)) => a == b,
            _ => match (self.number(), other.number()) {
                (Some(a), Some(b)) => a == b,
                _ => false,
            },
        }
    }

    /// `str(v)`.
    fn str(&self) -> String {
        match self {
            PyVal::Str(s) => s.clone(),
            PyVal::Int(i) => i.to_string(),
            PyVal::BigInt(s) => s.clone(),
            PyVal::Float(f) => torchspec_pyval::repr::float_repr(*f),
            PyVal::Bool(b) => if *b { "True" } else { "False" }.into(),
            PyVal::None => "None".into(),
            PyVal::Repr(r) => r.clone(),
        }
    }

    /// `repr(v)`.
    fn repr(&self) -> String {
        match self {
            PyVal::Str(s) => str_repr(s),
            other => other.str(),
        }
    }
}

/// `repr(tuple(items))`.
fn tuple_repr(items: &[PyVal]) -> String {
    let inner: Vec<String> = items.iter().map(PyVal::repr).collect();
    match inner.len() {
        1 => format!("({},)", inner[0]),
        _ => format!("({})", inner.join(", ")),
    }
}

/// `repr(tuple_of_str)`: `gs.buffers` and `gs.parameters` are tuples.
fn str_tuple_repr(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| str_repr(s)).collect();
    match inner.len() {
        1 => format!("({},)", inner[0]),
        _ => format!("({})", inner.join(", ")),
    }
}

/// `repr(dict_of_str_to_str)`.
fn dict_repr(items: &[(String, String)]) -> String {
    let inner: Vec<String> = items
        .iter()
        .map(|(k, v)| format!("{}: {}", str_repr(k), str_repr(v)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// `repr(set(a) - set(b))` of strings, in the order CPython 3.11 iterates
/// it with `PYTHONHASHSEED=0` (`torchspec_pyval::set`), as the oracle runs.
fn set_difference_repr(a: &[String], b: &[String]) -> String {
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    let diff = torchspec_pyval::set::set_difference_order(&a, &b);
    if diff.is_empty() {
        return "set()".into();
    }
    let inner: Vec<String> = diff.iter().map(|s| str_repr(s)).collect();
    format!("{{{}}}", inner.join(", "))
}

fn exception(e: torchspec_pyval::PyException) -> LoadFailure {
    py(&e.type_name, e.message)
}

/// `_verify_exported_program_signature`: the input specs against the
/// placeholders, then the output specs against the output node.
fn check_signature(gm: &LoadedGraphModule, cx: &Context<'_>) -> R<()> {
    check_input_specs(gm, cx)?;
    check_output_specs(gm)
}

/// The input half of `_verify_exported_program_signature`: one spec per
/// placeholder, of the same name, each target where its kind says.
fn check_input_specs(gm: &LoadedGraphModule, cx: &Context<'_>) -> R<()> {
    let gs = &gm.signature;
    let input_node_names: Vec<String> = gm
        .graph
        .nodes()
        .filter(|(_, n)| n.op == Op::Placeholder)
        .map(|(_, n)| n.name.clone())
        .collect();
    if input_node_names.len() != gs.input_specs.len() {
        // `hasattr(spec.arg, "name")`: every argument class has one.
        let spec_names: Vec<String> = gs
            .input_specs
            .iter()
            .map(|s| s.arg.name().to_string())
            .collect();
        return Err(spec_violation(format!(
            "Number of graph inputs ({}) does not match number of inputs in the graph signature ({})\n\
             Placeholders missing input_specs: {}\n\
             Input_specs missing placeholders: {}",
            input_node_names.len(),
            gs.input_specs.len(),
            set_difference_repr(&input_node_names, &spec_names),
            set_difference_repr(&spec_names, &input_node_names),
        )));
    }
    for (spec, node) in gs.input_specs.iter().zip(&input_node_names) {
        if matches!(
            spec.arg,
            ArgumentSpec::Tensor { .. }
                | ArgumentSpec::SymInt { .. }
                | ArgumentSpec::SymFloat { .. }
                | ArgumentSpec::SymBool { .. }
        ) && spec.arg.name() != node
        {
            return Err(spec_violation(format!(
                "Input spec name {} does not match node name {node}",
                spec.arg.name()
            )));
        }
        let Some(target) = spec.target.as_deref() else {
            continue;
        };
        check_input_target(spec.kind, spec.persistent.as_ref(), target, cx)?;
    }
    Ok(())
}

/// An input spec's target in the state dict or the constants, as its kind
/// wants (skipped where the program came without them).
fn check_input_target(
    kind: InputKind,
    persistent: Option<&PyJson>,
    target: &str,
    cx: &Context<'_>,
) -> R<()> {
    let in_state_dict = |name: &str| cx.state_dict.map(|sd| sd.iter().find(|e| e.name == name));
    let in_constants = |name: &str| cx.constants.map(|c| c.contains(name));
    match kind {
        InputKind::Parameter => match in_state_dict(target) {
            Some(None) => {
                return Err(spec_violation(format!(
                    "Parameter {target} is not in the state dict."
                )))
            }
            Some(Some(entry)) => match &entry.meta {
                Ok(info) if !info.parameter => {
                    return Err(spec_violation(format!(
                        "State dict entry for parameter {target} is not an instance of torch.nn.Parameter."
                    )))
                }
                Ok(_) => {}
                Err(why) => {
                    return Err(Raise::Unsupported(format!(
                        "whether the state dict entry `{target}` is a Parameter ({why})"
                    )))
                }
            },
            None => {}
        },
        InputKind::Buffer => {
            // `persistent is True` / `persistent is False`: a value kept
            // as it came is neither.
            let is = |b: bool| persistent.is_none_or(|p| *p == PyJson::Bool(b));
            let held = in_state_dict(target).map(|e| e.is_some());
            if is(true) && held == Some(false) && in_constants(target) == Some(false) {
                // (`graph_module.state_dict()` holds no buffer of a
                // loaded program: the deserializer registers none.)
                return Err(spec_violation(format!(
                    "Buffer {target} is not in the state dict."
                )));
            }
            if persistent == Some(&PyJson::Bool(false)) && held == Some(true) {
                return Err(spec_violation(format!(
                    "Non-persistent buffer {target} is in the state dict, it should not be."
                )));
            }
        }
        InputKind::ConstantTensor if in_constants(target) == Some(false) => {
            return Err(spec_violation(format!(
                "Constant tensor {target} is not in the constants dictionary."
            )));
        }
        InputKind::CustomObj if in_constants(target) == Some(false) => {
            return Err(spec_violation(format!(
                "Custom object {target} is not in the constants dictionary."
            )));
        }
        _ => {}
    }
    Ok(())
}

/// The output half of `_verify_exported_program_signature`: one spec per
/// output, the mutations first (after the tokens), then the user outputs
/// in order.
fn check_output_specs(gm: &LoadedGraphModule) -> R<()> {
    let gs = &gm.signature;
    let output_nodes = output_values(gm)?;
    if output_nodes.len() != gs.output_specs.len() {
        let names: Option<Vec<String>> = output_nodes
            .iter()
            .map(|v| match v {
                PyVal::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        let Some(names) = names else {
            return Err(Raise::Unsupported(
                "the repr of a set of output names and constants".into(),
            ));
        };
        let spec_names: Vec<String> = gs
            .output_specs
            .iter()
            .map(|s| s.arg.name().to_string())
            .collect();
        return Err(spec_violation(format!(
            "Number of output nodes {} is different Than the number of outputs specified by the graph signature: {}\n\
             Nodes missing output_specs: {}\n\
             Output_specs missing nodes: {}",
            output_nodes.len(),
            gs.output_specs.len(),
            set_difference_repr(&names, &spec_names),
            set_difference_repr(&spec_names, &names),
        )));
    }
    let num_tokens = gs.output_tokens().map_err(exception)?.len();
    let buffers_to_mutate = gs.buffers_to_mutate();
    let parameters_to_mutate = gs.parameters_to_mutate();
    let user_inputs_to_mutate = gs.user_inputs_to_mutate();
    let user_outputs = gs.user_outputs().map_err(exception)?;
    let end = (buffers_to_mutate.len()
        + parameters_to_mutate.len()
        + user_inputs_to_mutate.len()
        + num_tokens)
        .min(output_nodes.len());
    let start = num_tokens.min(end);
    check_mutations(gs, &output_nodes[start..end])?;
    let user_values: Vec<PyVal> = user_outputs.iter().map(PyVal::of_user).collect();
    let user_output_nodes = &output_nodes[end..(end + user_values.len()).min(output_nodes.len())];
    for (node, name) in user_output_nodes.iter().zip(&user_values) {
        if !node.eq(name) {
            return Err(spec_violation(format!(
                "User output {} is not in the correct order or is not found in the \
                 exported program's user_output list: {}. ",
                node.str(),
                tuple_repr(&user_values),
            )));
        }
    }
    Ok(())
}

/// `[arg.name if isinstance(arg, torch.fx.Node) else arg for arg in
/// output_node.args[0]]` of the graph's last node, which must be the output.
fn output_values(gm: &LoadedGraphModule) -> R<Vec<PyVal>> {
    let Some((_, output)) = gm.graph.nodes().last().filter(|(_, n)| n.op == Op::Output) else {
        return Err(py("AssertionError", "last node must be output"));
    };
    let items = match output.args.first() {
        Some(Arg::Tuple(items)) | Some(Arg::List(items)) => items,
        Some(Arg::Node(_)) => {
            return Err(py("TypeError", "'Node' object is not iterable"));
        }
        _ => {
            return Err(Raise::Unsupported(
                "an output node whose argument is not a tuple".into(),
            ))
        }
    };
    let mut output_nodes = Vec::with_capacity(items.len());
    for a in items {
        output_nodes.push(match a {
            Arg::Node(id) => PyVal::Str(gm.graph.node(*id).name.clone()),
            Arg::None => PyVal::None,
            Arg::Bool(b) => PyVal::Bool(*b),
            Arg::Int(i) => PyVal::Int(*i),
            Arg::BigInt(b) => PyVal::BigInt(b.to_string()),
            Arg::Float(f) => PyVal::Float(*f),
            Arg::Str(s) => PyVal::Str(s.clone()),
            _ => {
                return Err(Raise::Unsupported(
                    "a graph output that is neither a node nor a constant".into(),
                ))
            }
        });
    }
    Ok(output_nodes)
}

/// Each mutation output names a buffer, a parameter or a user input to
/// mutate that exists.
fn check_mutations(gs: &ExportGraphSignature, mutate_nodes: &[PyVal]) -> R<()> {
    let buffers_to_mutate = gs.buffers_to_mutate();
    let parameters_to_mutate = gs.parameters_to_mutate();
    let user_inputs_to_mutate = gs.user_inputs_to_mutate();
    let lookup = |map: &[(String, String)], key: &PyVal| -> Option<String> {
        match key {
            PyVal::Str(k) => map.iter().find(|(n, _)| n == k).map(|(_, t)| t.clone()),
            _ => None,
        }
    };
    for node in mutate_nodes {
        if let Some(buffer) = lookup(&buffers_to_mutate, node) {
            let buffers = gs.buffers();
            if !buffers.contains(&buffer) {
                return Err(spec_violation(format!(
                    "Buffer output {} does not point to a buffer that exists. \n\
                     Dict of buffers that are mutated, in order: {} \n\
                     Buffer nodes available: {} \n",
                    node.str(),
                    dict_repr(&buffers_to_mutate),
                    str_tuple_repr(&buffers),
                )));
            }
        } else if let Some(param) = lookup(&parameters_to_mutate, node) {
            let params = gs.parameters();
            if !params.contains(&param) {
                return Err(spec_violation(format!(
                    "Parameter output {} does not point to a parameter that exists. \n\
                     Dict of parameters that are mutated, in order: {} \n\
                     Parameter nodes available: {} \n",
                    node.str(),
                    dict_repr(&parameters_to_mutate),
                    str_tuple_repr(&params),
                )));
            }
        } else if let Some(input) = lookup(&user_inputs_to_mutate, node) {
            let user_inputs = gs.user_inputs();
            if !user_inputs
                .iter()
                .any(|u| matches!(u, UserValue::Name(n) if *n == input))
            {
                return Err(Raise::Unsupported(
                    "the repr of `gs.user_inputs` in a user input mutation error".into(),
                ));
            }
        } else {
            return Err(spec_violation(format!(
                "Mutation node {} is neither a buffer nor a user input. \
                 Buffers to mutate: {}, User inputs to mutate: {}",
                node.str(),
                dict_repr(&buffers_to_mutate),
                dict_repr(&user_inputs_to_mutate),
            )));
        }
    }
    Ok(())
}
