//! Mirrors `GraphModuleDeserializer`'s state (serialize.py): the value
//! tables of the graph being read, the symbols and ranges met so far, the
//! signature, and the graph being built (saved and restored around
//! subgraphs). The parts of `load/` each add their methods to it.

use std::collections::{HashMap, HashSet};

use crate::failure::LoadFailure;
use crate::fx::{Graph, NodeId};
use crate::model::SubGraph;
use crate::ranges::ValueRanges;
use crate::registrations::Registrations;
use crate::schema as wire;
use crate::signature::ExportGraphSignature;

pub(super) type R<T> = Result<T, LoadFailure>;

/// The state of one `deserialize_graph` (saved and restored around
/// subgraphs, as `save_graph_module` does).
pub(super) struct GraphCx {
    pub(super) graph: Graph,
    pub(super) name_to_node: HashMap<String, NodeId>,
    pub(super) submodules: Vec<SubGraph>,
    /// The call_function nodes `deserialize_outputs` gave no `val` (a node
    /// serialized with no outputs).
    pub(super) valueless: Vec<NodeId>,
    /// `self.unbacked_symbols`: the unbacked symbols first parsed in this
    /// graph, in order.
    pub(super) unbacked: Vec<String>,
}

impl GraphCx {
    pub(super) fn new() -> GraphCx {
        GraphCx {
            graph: Graph::new(),
            name_to_node: HashMap::new(),
            submodules: Vec::new(),
            valueless: Vec::new(),
            unbacked: Vec::new(),
        }
    }

    /// The graph as read: every node has its `val` but the valueless ones.
    pub(super) fn finish(mut self) -> (Graph, Vec<SubGraph>) {
        let ids: Vec<NodeId> = self.graph.node_ids().to_vec();
        for id in ids {
            self.graph.node_mut(id).meta.has_val = !self.valueless.contains(&id);
        }
        (self.graph, self.submodules)
    }
}

/// `GraphModuleDeserializer`'s state: the value tables of the graph being
/// read, the symbols met so far, and the graph being built.
pub(super) struct Deserializer<'w> {
    /// Metadata of the values of the graph being read.
    pub(super) tensor_values: HashMap<&'w str, &'w wire::TensorMeta>,
    pub(super) sym_int_values: HashMap<&'w str, &'w wire::SymInt>,
    pub(super) sym_float_values: HashMap<&'w str, &'w wire::SymFloat>,
    pub(super) sym_bool_values: HashMap<&'w str, &'w wire::SymBool>,
    pub(super) custom_obj_values: HashSet<&'w str>,
    /// `symbol_name_to_symbol`: every symbol name some loaded value parsed.
    pub(super) symbols: HashSet<String>,
    /// `symbol_name_to_range`, by the serialized key.
    pub(super) ranges: HashMap<&'w str, ValueRanges>,
    /// The symbols `shape_env.backed_var_to_val` holds a hint for.
    pub(super) hinted: HashSet<String>,
    /// The unbacked symbols a size check's deferred `u >= 0` refined to
    /// the single value 0 (a range `[lo < 0, 0]`): replaced by `0`, so no
    /// value binds them any more.
    pub(super) replaced: HashSet<String>,
    pub(super) signature: ExportGraphSignature,
    pub(super) cx: GraphCx,
    /// The custom ops of the loading process (node targets resolve against
    /// the built-in table and these).
    pub(super) registrations: &'w Registrations,
}
