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
//! `range_constraints`, and `raw` (fields kept as they came).
//!
//! An OpOverload's arguments are placed by its schema (`ops::schema`, from
//! the generated table or the registration). Where the reconstruction
//! needs what only PyTorch's op registry knows (a target that is not an
//! operator PyTorch ships or the process registered), the result is
//! [`LoadFailure::Unsupported`], never a guess.

mod graph;
mod inputs;
mod metadata;
mod module_call_graph;
mod nodes;
mod outputs;
mod range_constraints;
mod raw;
mod signature;
mod symbols;
mod values;

use std::collections::{HashMap, HashSet};

pub use crate::failure::LoadFailure;
use crate::fx::{Graph, NodeId};
// The model types under the paths they had when this module held them.
pub use crate::model::{LoadedGraphModule, ModuleCallEntry, ModuleCallSignature, SubGraph};
use crate::ranges::ValueRanges;
use crate::registrations::Registrations;
use crate::schema as wire;
use crate::signature::ExportGraphSignature;

pub use graph::check_codegen;
pub use nodes::printed_target;
pub use values::{dtype_name, enum_key, raw_enum_key};

type R<T> = Result<T, LoadFailure>;

/// The state of one `deserialize_graph` (saved and restored around
/// subgraphs, as `save_graph_module` does).
struct GraphCx {
    graph: Graph,
    name_to_node: HashMap<String, NodeId>,
    submodules: Vec<SubGraph>,
    /// The call_function nodes `deserialize_outputs` gave no `val` (a node
    /// serialized with no outputs).
    valueless: Vec<NodeId>,
    /// `self.unbacked_symbols`: the unbacked symbols first parsed in this
    /// graph, in order.
    unbacked: Vec<String>,
}

impl GraphCx {
    fn new() -> GraphCx {
        GraphCx {
            graph: Graph::new(),
            name_to_node: HashMap::new(),
            submodules: Vec::new(),
            valueless: Vec::new(),
            unbacked: Vec::new(),
        }
    }

    /// The graph as read: every node has its `val` but the valueless ones.
    fn finish(mut self) -> (Graph, Vec<SubGraph>) {
        let ids: Vec<NodeId> = self.graph.node_ids().to_vec();
        for id in ids {
            self.graph.node_mut(id).meta.has_val = !self.valueless.contains(&id);
        }
        (self.graph, self.submodules)
    }
}

/// `GraphModuleDeserializer`'s state: the value tables of the graph being
/// read, the symbols met so far, and the graph being built.
struct Deserializer<'w> {
    /// Metadata of the values of the graph being read.
    tensor_values: HashMap<&'w str, &'w wire::TensorMeta>,
    sym_int_values: HashMap<&'w str, &'w wire::SymInt>,
    sym_float_values: HashMap<&'w str, &'w wire::SymFloat>,
    sym_bool_values: HashMap<&'w str, &'w wire::SymBool>,
    custom_obj_values: HashSet<&'w str>,
    /// `symbol_name_to_symbol`: every symbol name some loaded value parsed.
    symbols: HashSet<String>,
    /// `symbol_name_to_range`, by the serialized key.
    ranges: HashMap<&'w str, ValueRanges>,
    /// The symbols `shape_env.backed_var_to_val` holds a hint for.
    hinted: HashSet<String>,
    signature: ExportGraphSignature,
    cx: GraphCx,
    /// The custom ops of the loading process (node targets resolve against
    /// the built-in table and these).
    registrations: &'w Registrations,
}

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
