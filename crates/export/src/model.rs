//! Mirrors torch/export/exported_program.py's `ExportedProgram` as
//! `torch.export.load` leaves it: the graph module (graph, submodules,
//! signature, module call graph, range constraints) and the state dict.
//! `load` builds these types, `passes` rewrites them and `verify` checks
//! them; none of the three owns them, and they know none of the three.

use std::sync::Arc;

use crate::archive::ArchiveBytes;
use crate::fx::Graph;
use crate::ranges::RangeConstraints;
use crate::registrations::Registrations;
use crate::schema as wire;
use crate::signature::{ArgumentSpec, ExportGraphSignature};

/// An exported program as `torch.export.load` has it.
#[derive(Clone, Debug)]
pub struct ExportedProgram {
    /// The serialized program as read (schema 8.20 wire types). A
    /// transform keeps its input's: the serializer takes what the loader
    /// keeps verbatim from it (`Meta.origin`), so it is not this program's
    /// JSON after passes; [`ExportedProgram::to_json`] is.
    pub serialized: Arc<wire::ExportedProgram>,
    /// The graph, signature, module call graph and range constraints the
    /// loader rebuilt.
    pub graph_module: LoadedGraphModule,
    /// `ep.state_dict`, when the program came from an archive.
    pub state_dict: Option<Vec<StateDictEntry>>,
    /// Strict mode's findings (empty in the default mode).
    pub diagnostics: Vec<wire::Diagnostic>,
    /// `ep._guards_code`: the serialized program's, until a transform
    /// builds a new program without it.
    pub guards_code: wire::Loose<Vec<String>>,
    /// The `.pt2` the program was loaded from (its weights, constants and
    /// sample inputs go into a `.pt2` written back).
    pub archive: Option<Arc<ArchiveBytes>>,
    /// What the loading process registered (custom ops, pytree types):
    /// [`Registrations::plain`] unless loaded with `*_in`.
    pub registrations: Arc<Registrations>,
}

/// One `ep.state_dict` entry as the weights config describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct StateDictEntry {
    /// The state dict key: the parameter's or buffer's FQN.
    pub name: String,
    /// The tensor's metadata, or why the reference cannot tell it (a
    /// pickled weight).
    pub meta: std::result::Result<TensorInfo, String>,
}

/// A weight's metadata as the weights config records it (`PayloadMeta`).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    /// `t.shape`, every size concrete.
    pub shape: Vec<i64>,
    /// `t.dtype` (its `Display` is `str(t.dtype)`, `torch.float32`).
    pub dtype: crate::weights::Dtype,
    /// `isinstance(t, torch.nn.Parameter)`: the config's `is_param`.
    pub parameter: bool,
}

/// `ModuleCallSignature` after loading (specs kept as the serialized
/// strings; `crate::pytree` reads them).
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleCallSignature {
    /// `ModuleCallSignature.inputs`.
    pub inputs: Vec<ArgumentSpec>,
    /// `ModuleCallSignature.outputs`.
    pub outputs: Vec<ArgumentSpec>,
    /// `ModuleCallSignature.in_spec`: the serialized pytree spec of the inputs.
    pub in_spec: String,
    /// `ModuleCallSignature.out_spec`: the serialized pytree spec of the outputs.
    pub out_spec: String,
    /// `names if names else None`: a non-empty list of names, or the truthy
    /// value `_dict_to_dataclass` kept as it came (`ep.module()` trips on it).
    pub forward_arg_names: Option<wire::Loose<Vec<String>>>,
}

/// `ModuleCallEntry`: one entry of `ep.module_call_graph`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleCallEntry {
    /// `entry.fqn`: a str, or whatever JSON value `_dict_to_dataclass` kept.
    pub fqn: wire::Loose<String>,
    /// `entry.signature`, when the export kept one for this module.
    pub signature: Option<ModuleCallSignature>,
}

impl ModuleCallEntry {
    /// Whether `fqn == ""` (the root module's call).
    pub fn is_root(&self) -> bool {
        self.fqn.typed().is_some_and(|f| f.is_empty())
    }
}

impl LoadedGraphModule {
    /// The signature of the root module's call (`fqn == ""`), where
    /// `ep.module()` takes its in_spec and forward argument names.
    pub fn root_signature(&self) -> Option<&ModuleCallSignature> {
        self.module_call_graph
            .iter()
            .find(|e| e.is_root())
            .and_then(|e| e.signature.as_ref())
    }
}

/// A submodule graph registered by an `as_graph` argument (`get_attr`).
#[derive(Clone, Debug)]
pub struct SubGraph {
    /// The `get_attr` target the graph is registered under (`true_graph_0`).
    pub name: String,
    /// The submodule's graph.
    pub graph: Graph,
    /// The graphs its own `as_graph` arguments register.
    pub submodules: Vec<SubGraph>,
}

/// What `GraphModuleDeserializer.deserialize` + the `ExportedProgram`
/// constructor produce.
#[derive(Clone, Debug)]
pub struct LoadedGraphModule {
    /// `ep.graph`.
    pub graph: Graph,
    /// The submodule graphs its `as_graph` arguments register (`cond` branches).
    pub submodules: Vec<SubGraph>,
    /// `ep.graph_signature`.
    pub signature: ExportGraphSignature,
    /// `ep.module_call_graph`.
    pub module_call_graph: Vec<ModuleCallEntry>,
    /// `ep.range_constraints`.
    pub range_constraints: RangeConstraints,
}
