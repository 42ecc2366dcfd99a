//! Mirrors torch/_export/serde/serialize.py `GraphModuleDeserializer` and
//! `ExportedProgramDeserializer.deserialize` up to the `ExportedProgram`
//! constructor: the FX graph `torch.export.load` rebuilds, with the
//! loader's node names (placeholders and synced values keep their
//! serialized names; getitem nodes for multi-output ops; `<op>_unused` for
//! ops returning None), the graph signature, the module call graph and the
//! range constraints that survive loading (only symbols some loaded value
//! mentions). The constructor's getitem elimination and verifiers run after
//! (`ExportedProgram::load_*`, `passes`, `verify`).
//!
//! One file per part of the deserializer, by what it reads: `graph`
//! (`deserialize_graph`), `nodes` (`deserialize_node`), `inputs` and
//! `outputs` (a node's arguments and results), `values` (tensor metadata,
//! devices, enum tables), `symbols` (`deserialize_sym_int` and the
//! ShapeEnv), `signature`, `module_call_graph`, `metadata`,
//! `range_constraints`, and `raw` (fields kept as they came), each adding
//! its methods to the deserializer's `state`; `codegen` is what
//! `GraphModule(root, graph)` then refuses. This file is the sequence.
//!
//! An OpOverload's arguments are placed by its schema (`ops::schema`, from
//! the generated table or the registration). Where the reconstruction
//! needs what only PyTorch's op registry knows (a target that is not an
//! operator PyTorch ships or the process registered), the result is
//! [`LoadFailure::Unsupported`], never a guess.

mod codegen;
mod graph;
mod inputs;
mod metadata;
mod module_call_graph;
mod nodes;
mod outputs;
mod range_constraints;
mod raw;
mod signature;
mod state;
mod symbols;
mod values;

use std::collections::{HashMap, HashSet};

pub use crate::failure::LoadFailure;
// The model types under the paths they had when this module held them.
pub use crate::model::{LoadedGraphModule, ModuleCallEntry, ModuleCallSignature, SubGraph};
use crate::registrations::Registrations;
use crate::schema as wire;

pub use codegen::{check_codegen, lost_attribute};
pub use nodes::printed_target;
pub use values::dtype_name;

use state::{Deserializer, GraphCx, R};

/// Loads the graph module of a serialized program as `torch.export.load`
/// rebuilds it in a process with `registrations`, before the
/// `ExportedProgram` constructor's passes and verifiers.
pub fn load_graph_module<'w>(
    program: &'w wire::ExportedProgram,
    registrations: &'w Registrations,
) -> R<LoadedGraphModule> {
    let gm = &program.graph_module;
    let ranges = range_constraints::symbol_name_to_range(program)?;
    range_constraints::unbacked_counters(program)?;
    let signature = signature::deserialize_signature(&gm.signature)?;
    let mut d = Deserializer {
        registrations,
        ranges,
        hinted: HashSet::new(),
        replaced: HashSet::new(),
        tensor_values: HashMap::new(),
        sym_int_values: HashMap::new(),
        sym_float_values: HashMap::new(),
        sym_bool_values: HashMap::new(),
        custom_obj_values: HashSet::new(),
        symbols: HashSet::new(),
        signature,
        cx: GraphCx::new(),
    };
    d.deserialize_graph(&gm.graph)?;
    let module_call_graph =
        module_call_graph::deserialize_module_call_graph(gm, &registrations.pytree_registry())?;
    let (graph, submodules) = d.cx.finish();
    // `ep._create_graph_module_for_export(self.module, self.graph)`.
    check_codegen(&graph)?;
    metadata::graph_module_meta(gm)?;
    Ok(LoadedGraphModule {
        graph,
        submodules,
        signature: d.signature,
        module_call_graph,
        range_constraints: range_constraints::surviving(program, &d.symbols),
    })
}
