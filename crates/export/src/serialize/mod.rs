//! Mirrors torch/_export/serde/serialize.py's writing side as
//! `torch.export.save` runs it on a loaded (and possibly transformed)
//! program: `GraphModuleSerializer` (graph, signature, module call graph)
//! and `ExportedProgramSerializer.serialize` (range constraints, versions,
//! verifiers, guards code), then `_to_json_bytes` through
//! [`schema::dump_program`](crate::schema::dump_program).
//!
//! PyTorch re-serializes from the in-memory `GraphModule`, not from the
//! file it read. What the loaded graph carries is rebuilt from it:
//! - node order, node names (`name` and the single-output names), the
//!   multi-output names from the getitem users that are left, and
//!   `{node}_unused_{i}` (`{node}_unused_{i}_{j}` inside a list) for an
//!   output whose getitem a pass removed (`_output_node_name_at_index`);
//! - every argument name through the uses passes replaced;
//! - value metadata (`tensor_values`, ...) in the order the serializer emits
//!   outputs, only for values still in the graph; a tensor's
//!   `storage_offset` is written as `0`, because the loader rebuilds each
//!   value with `torch.empty_strided`, which drops the serialized offset;
//! - the signature, the module call graph (specs through
//!   `treespec_loads`/`treespec_dumps`) and the range constraints of the
//!   loaded program; `guards_code` as the program has it (a transform
//!   drops it: `_transform_do_not_use` builds the new program without it);
//! - `opset_version`, `schema_version` and `torch_version` of the
//!   serializing PyTorch (2.15.0, not those of the file read).
//!
//! What a node's metadata (`stack_trace`, `nn_module_stack`, `torch_fn`,
//! ...), its target, the form of each argument (its `Argument` variant,
//! which upstream derives from the op schema) and a value's sizes and
//! strides are, the loader kept verbatim: they are the file's, as
//! PyTorch's round trip of them is for files PyTorch wrote.
//!
//! A node a pass inserted has no serialized form to start from; PyTorch's
//! verifier refuses every such node the passes of `shared/passes.md` make
//! (`Node.meta ge is missing val field`), so the reference refuses it too,
//! as unsupported.

pub mod pt2;

use std::collections::HashMap;

use crate::fx::{Arg, Graph, NodeId, Op};
use crate::model::{ExportedProgram, LoadedGraphModule, ModuleCallEntry, SubGraph};
use crate::ranges::Bound;
use crate::registrations::Registrations;
use crate::schema as wire;
use crate::signature::{
    ArgumentSpec, Constant, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
};
use torchspec_pyval::error::{Error, Result};
use torchspec_pyval::pyjson::PyInt;

/// `torch.__version__` of the oracle build whose writes the goldens record.
pub const TORCH_VERSION: &str = "2.15.0+cu132";
/// `torch._C._get_max_operator_version()` in 2.15.0: the `aten` opset.
pub const ATEN_OPSET_VERSION: i64 = 10;
/// `SCHEMA_VERSION` of torch/_export/serde/schema.py.
pub const SCHEMA_VERSION: (i64, i64) = (8, 20);

/// What `torchspec transform -o OUT` writes, by OUT's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// The program JSON (`serialize(ep).exported_program`).
    Json,
    /// A `.pt2` archive (`torch.export.save`).
    Pt2,
}

impl OutFormat {
    /// The format `path`'s extension names (`.json` or `.pt2`); any other is refused.
    pub fn of(path: &std::path::Path) -> Result<OutFormat> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Ok(OutFormat::Json),
            Some("pt2") => Ok(OutFormat::Pt2),
            _ => Err(Error::new(format!(
                "cannot write `{}`: the output name must end in `.json` (the program JSON) or \
                 `.pt2` (an archive, as torch.export.save writes it)",
                path.display()
            ))),
        }
    }
}

/// The bytes of `ep` written as `format` to `path` (the archive root of a
/// `.pt2` comes from the file name).
pub fn write_bytes(
    ep: &ExportedProgram,
    path: &std::path::Path,
    format: OutFormat,
) -> Result<Vec<u8>> {
    match format {
        OutFormat::Json => Ok(program_json(ep)?.into_bytes()),
        OutFormat::Pt2 => ep.serialize_pt2(&pt2::archive_root(path)),
    }
    .map_err(|e| Error::new(format!("cannot write `{}`: {e}", path.display())))
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::new(format!("unsupported by the reference serializer: {what}"))
}

/// The program JSON `torch.export.save` writes for this program
/// (`models/model.json`).
pub fn program_json(ep: &ExportedProgram) -> Result<String> {
    Ok(wire::dump_program(&serialize_program(ep)?))
}

/// `ExportedProgramSerializer().serialize(ep).exported_program`.
pub fn serialize_program(ep: &ExportedProgram) -> Result<wire::ExportedProgram> {
    let source = &ep.serialized;
    let gm = &ep.graph_module;
    let graph = serialize_graph(
        &source.graph_module.graph,
        &gm.graph,
        &gm.submodules,
        "graph",
        &ep.registrations,
    )?;
    let graph_module = wire::GraphModule {
        graph,
        signature: serialize_signature(&gm.signature)?,
        module_call_graph: serialize_module_call_graph(
            &gm.module_call_graph,
            &ep.registrations.pytree_registry(),
        )?,
        // `graph_module.meta["custom"]` and the namedtuple fields as loaded.
        metadata: source.graph_module.metadata.clone(),
        treespec_namedtuple_fields: source.graph_module.treespec_namedtuple_fields.clone(),
        raw: Default::default(),
    };
    Ok(wire::ExportedProgram {
        graph_module,
        opset_version: wire::Loose::Typed(vec![(
            "aten".to_string(),
            PyInt::Small(ATEN_OPSET_VERSION),
        )]),
        range_constraints: serialize_range_constraints(gm),
        schema_version: wire::SchemaVersion {
            major: wire::Loose::Typed(PyInt::Small(SCHEMA_VERSION.0)),
            minor: wire::Loose::Typed(PyInt::Small(SCHEMA_VERSION.1)),
        },
        verifiers: source.verifiers.clone(),
        torch_version: wire::Loose::Typed(TORCH_VERSION.to_string()),
        guards_code: ep.guards_code.clone(),
        raw: Default::default(),
    })
}

/// `serialize_range_constraints`: `_sympy_int_to_int` makes `±int_oo` None.
fn serialize_range_constraints(gm: &LoadedGraphModule) -> Vec<(String, wire::RangeConstraint)> {
    let end = |b: &Bound| match b {
        Bound::Int(i) => Some(match i64::try_from(i) {
            Ok(v) => PyInt::Small(v),
            Err(_) => PyInt::Big(Box::new(i.clone())),
        }),
        Bound::IntOo | Bound::NegIntOo => None,
    };
    gm.range_constraints
        .0
        .iter()
        .map(|(sym, vr)| {
            (
                sym.clone(),
                wire::RangeConstraint {
                    min_val: wire::Loose::Typed(end(&vr.lower)),
                    max_val: wire::Loose::Typed(end(&vr.upper)),
                },
            )
        })
        .collect()
}

/// The serialized values of one graph, by name.
struct Values<'w> {
    tensors: HashMap<&'w str, &'w wire::TensorMeta>,
    sym_ints: HashMap<&'w str, &'w wire::SymInt>,
    sym_floats: HashMap<&'w str, &'w wire::SymFloat>,
    sym_bools: HashMap<&'w str, &'w wire::SymBool>,
    custom_objs: HashMap<&'w str, &'w wire::CustomObjArgument>,
}

impl<'w> Values<'w> {
    fn of(g: &'w wire::Graph) -> Values<'w> {
        fn index<T>(v: &[(String, T)]) -> HashMap<&str, &T> {
            v.iter().map(|(k, v)| (k.as_str(), v)).collect()
        }
        Values {
            tensors: index(&g.tensor_values),
            sym_ints: index(&g.sym_int_values),
            sym_floats: index(&g.sym_float_values),
            sym_bools: index(&g.sym_bool_values),
            custom_objs: index(&g.custom_obj_values),
        }
    }
}

/// One `serialize_graph` (a `GraphState`): the loaded graph, the serialized
/// graph it was read from, and the state being built.
struct GraphSer<'a, 'w> {
    from: &'w wire::Graph,
    values: Values<'w>,
    graph: &'a Graph,
    submodules: &'a [SubGraph],
    /// Serialized value name → the node the loader synced to it.
    by_wire_name: HashMap<&'a str, NodeId>,
    where_: &'a str,
    /// What the loading process registered: which operator arguments
    /// resolved to an `OpOverload`.
    registrations: &'a Registrations,
    out: wire::Graph,
}

fn serialize_graph(
    from: &wire::Graph,
    graph: &Graph,
    submodules: &[SubGraph],
    where_: &str,
    registrations: &Registrations,
) -> Result<wire::Graph> {
    let mut by_wire_name = HashMap::new();
    for (id, n) in graph.arena() {
        if let Some(v) = &n.meta.val {
            by_wire_name.insert(v.as_str(), id);
        }
    }
    let mut s = GraphSer {
        from,
        values: Values::of(from),
        graph,
        submodules,
        by_wire_name,
        where_,
        registrations,
        out: wire::Graph {
            inputs: Vec::new(),
            outputs: Vec::new(),
            nodes: Vec::new(),
            tensor_values: Vec::new(),
            sym_int_values: Vec::new(),
            sym_bool_values: Vec::new(),
            is_single_tensor_return: wire::Loose::Typed(false),
            custom_obj_values: Vec::new(),
            sym_float_values: Vec::new(),
            raw: Default::default(),
        },
    };
    s.run()?;
    Ok(s.out)
}

fn tensor_name(name: String) -> wire::TensorArgument {
    wire::TensorArgument {
        name,
        raw: Default::default(),
    }
}

impl<'a, 'w> GraphSer<'a, 'w> {
    fn run(&mut self) -> Result<()> {
        let mut placeholders = 0usize;
        for (id, node) in self.graph.nodes() {
            match node.op {
                Op::Placeholder => {
                    self.placeholder(placeholders, &node.name)?;
                    placeholders += 1;
                }
                Op::CallFunction => {
                    // getitem has been handled in the producer node.
                    if node.target == "operator.getitem" {
                        continue;
                    }
                    self.call_function(id)?;
                }
                Op::GetAttr => {}
                Op::Output => self.output(id)?,
            }
        }
        if placeholders != self.from.inputs.len() {
            return Err(unsupported(format!(
                "{}: {placeholders} placeholders for {} serialized inputs",
                self.where_,
                self.from.inputs.len()
            )));
        }
        Ok(())
    }

    /// `handle_placeholder`: the i-th placeholder is the i-th serialized input.
    fn placeholder(&mut self, i: usize, name: &str) -> Result<()> {
        use wire::Argument as A;
        let Some(input) = self.from.inputs.get(i) else {
            return Err(unsupported(format!(
                "{}: placeholder `{name}` beyond the serialized inputs",
                self.where_
            )));
        };
        let arg = match input {
            A::AsTensor(t) => {
                self.tensor_value(&t.name, name)?;
                A::AsTensor(tensor_name(name.to_string()))
            }
            A::AsSymInt(wire::SymIntArgument::AsName(n)) => {
                self.sym_value(&A::AsSymInt(wire::SymIntArgument::AsName(n.clone())), name)?;
                A::AsSymInt(wire::SymIntArgument::AsName(name.to_string()))
            }
            A::AsCustomObj(c) => {
                let meta = self
                    .values
                    .custom_objs
                    .get(c.name.as_str())
                    .ok_or_else(|| {
                        unsupported(format!("custom object `{}` without metadata", c.name))
                    })?;
                self.out
                    .custom_obj_values
                    .push((name.to_string(), (*meta).clone()));
                A::AsCustomObj(wire::CustomObjArgument {
                    name: name.to_string(),
                    class_fqn: c.class_fqn.clone(),
                })
            }
            // A constant input: `serialize_input(val)`.
            other => other.clone(),
        };
        self.out.inputs.push(arg);
        Ok(())
    }

    /// `handle_output`.
    fn output(&mut self, _id: NodeId) -> Result<()> {
        let mut outputs = Vec::with_capacity(self.from.outputs.len());
        for o in &self.from.outputs {
            outputs.push(self.input(o)?);
        }
        self.out.outputs = outputs;
        self.out.is_single_tensor_return = self.from.is_single_tensor_return.clone();
        Ok(())
    }

    /// The current name of the node the loader synced to `wire_name`,
    /// through the uses passes replaced.
    fn current(&self, wire_name: &str) -> Result<String> {
        let id = self
            .by_wire_name
            .get(wire_name)
            .copied()
            .and_then(|id| self.graph.resolve(id))
            .ok_or_else(|| {
                unsupported(format!(
                    "{}: value `{wire_name}` has no node in the graph",
                    self.where_
                ))
            })?;
        Ok(self.graph.node(id).name.clone())
    }

    /// `serialize_input`: the argument as read, names through the graph.
    fn input(&mut self, a: &wire::Argument) -> Result<wire::Argument> {
        use wire::Argument as A;
        Ok(match a {
            A::AsTensor(t) => A::AsTensor(tensor_name(self.current(&t.name)?)),
            A::AsTensors(ts) => A::AsTensors(self.tensors(ts)?),
            A::AsNestedTensors(tss) => A::AsNestedTensors(
                tss.iter()
                    .map(|ts| self.tensors(ts))
                    .collect::<Result<_>>()?,
            ),
            A::AsSymInt(s) => A::AsSymInt(self.sym_int(s)?),
            A::AsSymInts(ss) => {
                A::AsSymInts(ss.iter().map(|s| self.sym_int(s)).collect::<Result<_>>()?)
            }
            A::AsSymBool(s) => A::AsSymBool(self.sym_bool(s)?),
            A::AsSymBools(ss) => {
                A::AsSymBools(ss.iter().map(|s| self.sym_bool(s)).collect::<Result<_>>()?)
            }
            A::AsSymFloat(s) => A::AsSymFloat(self.sym_float(s)?),
            A::AsSymFloats(ss) => A::AsSymFloats(
                ss.iter()
                    .map(|s| self.sym_float(s))
                    .collect::<Result<_>>()?,
            ),
            A::AsOptionalTensor(t) => A::AsOptionalTensor(self.optional_tensor(t)?),
            A::AsOptionalTensors(ts) => A::AsOptionalTensors(
                ts.iter()
                    .map(|t| self.optional_tensor(t))
                    .collect::<Result<_>>()?,
            ),
            // An operator argument the loader could not resolve is the
            // target string in the loaded graph: `serialize_input` writes a
            // str as `as_string`.
            A::AsOperator(op)
                if matches!(
                    crate::ops::resolve(op, self.registrations),
                    crate::ops::Resolved::Str(_)
                ) =>
            {
                A::AsString(op.clone())
            }
            A::AsCustomObj(c) => A::AsCustomObj(wire::CustomObjArgument {
                name: match self.by_wire_name.contains_key(c.name.as_str()) {
                    true => self.current(&c.name)?,
                    false => c.name.clone(),
                },
                class_fqn: c.class_fqn.clone(),
            }),
            A::AsGraph(g) => {
                let Some(sub) = self.submodules.iter().find(|s| s.name == g.name) else {
                    return Err(unsupported(format!(
                        "{}: subgraph `{}` is not in the graph module",
                        self.where_, g.name
                    )));
                };
                let graph = serialize_graph(
                    &g.graph,
                    &sub.graph,
                    &sub.submodules,
                    &sub.name,
                    self.registrations,
                )?;
                A::AsGraph(Box::new(wire::GraphArgument {
                    name: g.name.clone(),
                    graph,
                }))
            }
            A::AsStringToArgument(items) => A::AsStringToArgument(
                items
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.input(v)?)))
                    .collect::<Result<_>>()?,
            ),
            other => other.clone(),
        })
    }

    fn tensors(&self, ts: &[wire::TensorArgument]) -> Result<Vec<wire::TensorArgument>> {
        ts.iter()
            .map(|t| Ok(tensor_name(self.current(&t.name)?)))
            .collect()
    }

    fn optional_tensor(
        &self,
        t: &wire::OptionalTensorArgument,
    ) -> Result<wire::OptionalTensorArgument> {
        Ok(match t {
            wire::OptionalTensorArgument::AsTensor(t) => {
                wire::OptionalTensorArgument::AsTensor(tensor_name(self.current(&t.name)?))
            }
            other => other.clone(),
        })
    }

    fn sym_int(&self, s: &wire::SymIntArgument) -> Result<wire::SymIntArgument> {
        Ok(match s {
            wire::SymIntArgument::AsName(n) => wire::SymIntArgument::AsName(self.current(n)?),
            other => other.clone(),
        })
    }

    fn sym_bool(&self, s: &wire::SymBoolArgument) -> Result<wire::SymBoolArgument> {
        Ok(match s {
            wire::SymBoolArgument::AsName(n) => wire::SymBoolArgument::AsName(self.current(n)?),
            other => other.clone(),
        })
    }

    fn sym_float(&self, s: &wire::SymFloatArgument) -> Result<wire::SymFloatArgument> {
        Ok(match s {
            wire::SymFloatArgument::AsName(n) => wire::SymFloatArgument::AsName(self.current(n)?),
            other => other.clone(),
        })
    }

    /// `serialize_tensor_output(new, meta_val)`: the value read as `old`,
    /// rebuilt by `torch.empty_strided` (storage offset 0).
    fn tensor_value(&mut self, old: &str, new: &str) -> Result<()> {
        let meta = self
            .values
            .tensors
            .get(old)
            .ok_or_else(|| unsupported(format!("tensor `{old}` without metadata")))?;
        if self.out.tensor_values.iter().any(|(k, _)| k == new) {
            return Err(Error::python(
                "AssertionError",
                format!(
                    "name {} already in tensor_values",
                    torchspec_pyval::repr::str_repr(new)
                ),
            ));
        }
        let mut meta = (*meta).clone();
        meta.sizes = wire::Loose::Typed(meta.sizes.items().iter().map(loaded_sym_int).collect());
        meta.strides =
            wire::Loose::Typed(meta.strides.items().iter().map(loaded_sym_int).collect());
        meta.storage_offset = wire::SymInt::AsInt(PyInt::Small(0));
        self.out.tensor_values.push((new.to_string(), meta));
        Ok(())
    }

    /// `serialize_sym_*_output(new, meta_val)` for the value an output
    /// argument names.
    fn sym_value(&mut self, a: &wire::Argument, new: &str) -> Result<()> {
        use wire::Argument as A;
        let missing = |n: &str| unsupported(format!("symbolic value `{n}` without metadata"));
        match a {
            A::AsSymInt(wire::SymIntArgument::AsName(n)) => {
                let v = self
                    .values
                    .sym_ints
                    .get(n.as_str())
                    .ok_or_else(|| missing(n))?;
                self.out
                    .sym_int_values
                    .push((new.to_string(), loaded_sym_int(v)));
            }
            A::AsSymBool(wire::SymBoolArgument::AsName(n)) => {
                let v = self
                    .values
                    .sym_bools
                    .get(n.as_str())
                    .ok_or_else(|| missing(n))?;
                self.out
                    .sym_bool_values
                    .push((new.to_string(), (*v).clone()));
            }
            A::AsSymFloat(wire::SymFloatArgument::AsName(n)) => {
                let v = self
                    .values
                    .sym_floats
                    .get(n.as_str())
                    .ok_or_else(|| missing(n))?;
                self.out
                    .sym_float_values
                    .push((new.to_string(), (*v).clone()));
            }
            _ => {}
        }
        Ok(())
    }

    /// `serialize_output(new, meta_val)` for a serialized output `a`.
    fn output_value(&mut self, a: &wire::Argument, new: &str) -> Result<wire::Argument> {
        use wire::Argument as A;
        Ok(match a {
            A::AsNone(_) => a.clone(),
            A::AsTensor(t) => {
                self.tensor_value(&t.name, new)?;
                A::AsTensor(tensor_name(new.to_string()))
            }
            A::AsSymInt(wire::SymIntArgument::AsName(_)) => {
                self.sym_value(a, new)?;
                A::AsSymInt(wire::SymIntArgument::AsName(new.to_string()))
            }
            A::AsSymBool(wire::SymBoolArgument::AsName(_)) => {
                self.sym_value(a, new)?;
                A::AsSymBool(wire::SymBoolArgument::AsName(new.to_string()))
            }
            A::AsSymFloat(wire::SymFloatArgument::AsName(_)) => {
                self.sym_value(a, new)?;
                A::AsSymFloat(wire::SymFloatArgument::AsName(new.to_string()))
            }
            other => {
                return Err(unsupported(format!(
                    "a node output of type `{}`",
                    other.tag()
                )))
            }
        })
    }

    /// `_output_node_at_index`: the first getitem user taking `index`.
    fn user_at(&self, of: NodeId, index: usize) -> Result<Option<NodeId>> {
        let mut found = None;
        for &u in self.graph.node(of).users() {
            let user = self.graph.node(u);
            if !user.is_call_to("operator.getitem") {
                return Err(Error::python(
                    "SerializeError",
                    format!("{} is not a getitem node", user.name),
                ));
            }
            if found.is_none()
                && matches!(user.args.get(1), Some(Arg::Int(i)) if *i == index as i64)
            {
                found = Some(u);
            }
        }
        Ok(found)
    }

    /// `_output_node_name_at_index`.
    fn name_at(&self, of: NodeId, index: usize) -> Result<String> {
        Ok(match self.user_at(of, index)? {
            Some(u) => self.graph.node(u).name.clone(),
            None => format!("{}_unused_{index}", self.graph.node(of).name),
        })
    }

    /// `handle_call_function` for a node the loader read.
    fn call_function(&mut self, id: NodeId) -> Result<()> {
        let node = self.graph.node(id);
        let Some(w) = node
            .meta
            .origin
            .and_then(|i| self.from.nodes.get(i as usize))
        else {
            return Err(unsupported(format!(
                "{}: node `{}` ({}) was inserted by a pass; it has no serialized form to start from",
                self.where_, node.name, node.target
            )));
        };
        let name = node.name.clone();
        let mut inputs = Vec::with_capacity(w.inputs.len());
        for i in &w.inputs {
            inputs.push(wire::NamedArgument {
                name: i.name.clone(),
                arg: self.input(&i.arg)?,
                kind: i.kind.clone(),
            });
        }
        let outputs = self.node_outputs(id, w, &name)?;
        self.out.nodes.push(wire::Node {
            target: w.target.clone(),
            inputs,
            outputs,
            metadata: w.metadata.clone(),
            is_hop_single_tensor_return: w.is_hop_single_tensor_return.clone(),
            name: Some(name),
            raw: Default::default(),
        });
        Ok(())
    }

    /// `serialize_outputs` / `serialize_hoo_outputs` / the sym-op output,
    /// by the shape the loader read: a value synced to the node itself is
    /// named after it; otherwise each element after its getitem user.
    fn node_outputs(
        &mut self,
        id: NodeId,
        w: &wire::Node,
        name: &str,
    ) -> Result<Vec<wire::Argument>> {
        use wire::Argument as A;
        let outs = &w.outputs;
        if outs.is_empty() {
            return Ok(Vec::new());
        }
        let hop_tuple = outs.len() == 1
            && w.target.contains("torch.ops.higher_order")
            && !wire::load::loose_truth(&w.is_hop_single_tensor_return, |b| *b == Some(true))
            && !matches!(outs[0], A::AsNone(_));
        if outs.len() == 1 && !hop_tuple {
            if let A::AsTensors(ts) = &outs[0] {
                // `-> Tensor[]`
                let mut args = Vec::with_capacity(ts.len());
                for (idx, t) in ts.iter().enumerate() {
                    let n = self.name_at(id, idx)?;
                    self.tensor_value(&t.name, &n)?;
                    args.push(tensor_name(n));
                }
                return Ok(vec![A::AsTensors(args)]);
            }
            return Ok(vec![self.output_value(&outs[0], name)?]);
        }
        let mut out = Vec::with_capacity(outs.len());
        for (idx, o) in outs.iter().enumerate() {
            out.push(match o {
                A::AsNone(_) => o.clone(),
                A::AsTensors(ts) => {
                    let user = self.user_at(id, idx)?;
                    let mut args = Vec::with_capacity(ts.len());
                    for (j, t) in ts.iter().enumerate() {
                        let n = match user {
                            None => format!("{name}_unused_{idx}_{j}"),
                            Some(u) => self.name_at(u, j)?,
                        };
                        self.tensor_value(&t.name, &n)?;
                        args.push(tensor_name(n));
                    }
                    A::AsTensors(args)
                }
                _ => {
                    let n = self.name_at(id, idx)?;
                    self.output_value(o, &n)?
                }
            });
        }
        Ok(out)
    }
}

fn constant_argument(c: &Constant) -> Result<wire::Argument> {
    use wire::Argument as A;
    Ok(match c {
        Constant::None => A::AsNone(true),
        Constant::Bool(b) => A::AsBool(*b),
        Constant::Int(i) => A::AsInt(PyInt::Small(*i)),
        Constant::BigInt(s) => A::AsInt(big(s)?),
        Constant::Float(f) => A::AsFloat(*f),
        Constant::Str(s) => A::AsString(s.clone()),
        Constant::List(_)
        | Constant::Tuple(_)
        | Constant::Dict(_)
        | Constant::Torch(_)
        | Constant::Complex(..) => {
            return Err(unsupported(format!(
                "serializing the constant `{}`",
                c.repr()
            )))
        }
    })
}

fn big(s: &str) -> Result<PyInt> {
    s.parse::<num_bigint::BigInt>()
        .map(|b| PyInt::Big(Box::new(b)))
        .map_err(|_| unsupported(format!("integer constant `{s}`")))
}

/// A `SymInt` as `deserialize_sym_int` rebuilds it: sympy evaluates the
/// `Min`s and `Max`s of its `expr_str` under the symbols' assumptions
/// (`srepr::min_max_simplified`), so `Min(3, 3*s0)` comes back as `3`.
fn loaded_sym_int(s: &wire::SymInt) -> wire::SymInt {
    use crate::srepr::{min_max_simplified, Simplified};
    let wire::SymInt::AsExpr(e) = s else {
        return s.clone();
    };
    match min_max_simplified(&e.expr_text()) {
        Some(Simplified::Int(n)) => wire::SymInt::AsInt(PyInt::from_big(n)),
        Some(Simplified::Text(t)) => wire::SymInt::AsExpr(std::sync::Arc::new(wire::SymExpr {
            expr_str: wire::Loose::Typed(t),
            hint: e.hint.clone(),
        })),
        None => s.clone(),
    }
}

/// `serialize_argument_spec`.
fn argument_spec(x: &ArgumentSpec) -> Result<wire::Argument> {
    use wire::Argument as A;
    Ok(match x {
        ArgumentSpec::Tensor { name } => A::AsTensor(tensor_name(name.clone())),
        ArgumentSpec::SymInt { name } => A::AsSymInt(wire::SymIntArgument::AsName(name.clone())),
        ArgumentSpec::SymFloat { name } => {
            A::AsSymFloat(wire::SymFloatArgument::AsName(name.clone()))
        }
        ArgumentSpec::Constant { value, .. } => constant_argument(value)?,
        ArgumentSpec::CustomObj { name, class_fqn } => A::AsCustomObj(wire::CustomObjArgument {
            name: name.clone(),
            class_fqn: class_fqn.clone(),
        }),
        ArgumentSpec::SymBool { .. } | ArgumentSpec::Token { .. } => {
            return Err(Error::python("AssertionError", "TODO"))
        }
    })
}

fn tensor_spec_arg(s: &ArgumentSpec, kind: &str) -> Result<wire::TensorArgument> {
    match s {
        ArgumentSpec::Tensor { name } => Ok(tensor_name(name.clone())),
        other => Err(Error::python(
            "AssertionError",
            format!("expected TensorArgument, got {}", other.class_name()),
        )
        .with_path(kind.to_string())),
    }
}

fn target(t: &Option<String>, kind: &str) -> Result<String> {
    t.clone().ok_or_else(|| {
        Error::python(
            "AssertionError",
            format!("spec.target should not be None for {kind}"),
        )
    })
}

/// `serialize_input_spec`.
fn input_spec(s: &InputSpec) -> Result<wire::InputSpec> {
    use wire::InputSpec as I;
    Ok(match s.kind {
        InputKind::UserInput => match &s.arg {
            ArgumentSpec::Constant { name, value } => {
                I::ConstantInput(wire::InputToConstantInputSpec {
                    name: name.clone(),
                    value: match value {
                        Constant::None => wire::ConstantValue::AsNone(true),
                        Constant::Bool(b) => wire::ConstantValue::AsBool(*b),
                        Constant::Int(i) => wire::ConstantValue::AsInt(PyInt::Small(*i)),
                        Constant::BigInt(i) => wire::ConstantValue::AsInt(big(i)?),
                        Constant::Float(f) => wire::ConstantValue::AsFloat(*f),
                        Constant::Str(x) => wire::ConstantValue::AsString(x.clone()),
                        other => {
                            return Err(unsupported(format!(
                                "serializing the constant input `{}`",
                                other.repr()
                            )))
                        }
                    },
                })
            }
            other => I::UserInput(wire::UserInputSpec {
                arg: argument_spec(other)?,
            }),
        },
        InputKind::Parameter => I::Parameter(wire::InputToParameterSpec {
            parameter_name: target(&s.target, "PARAMETER")?,
            arg: tensor_spec_arg(&s.arg, "PARAMETER")?,
        }),
        InputKind::Buffer => I::Buffer(wire::InputToBufferSpec {
            buffer_name: target(&s.target, "BUFFER")?,
            arg: tensor_spec_arg(&s.arg, "BUFFER")?,
            persistent: match s.persistent.clone() {
                Some(torchspec_pyval::pyjson::PyJson::Bool(b)) => wire::Loose::Typed(b),
                Some(v) => wire::Loose::Raw(v),
                None => {
                    return Err(Error::python(
                        "AssertionError",
                        "spec.persistent should not be None for BUFFER",
                    ))
                }
            },
        }),
        InputKind::ConstantTensor => I::TensorConstant(wire::InputToTensorConstantSpec {
            tensor_constant_name: target(&s.target, "CONSTANT_TENSOR")?,
            arg: tensor_spec_arg(&s.arg, "CONSTANT_TENSOR")?,
        }),
        InputKind::CustomObj => match &s.arg {
            ArgumentSpec::CustomObj { name, class_fqn } => {
                I::CustomObj(wire::InputToCustomObjSpec {
                    custom_obj_name: target(&s.target, "CUSTOM_OBJ")?,
                    arg: wire::CustomObjArgument {
                        name: name.clone(),
                        class_fqn: class_fqn.clone(),
                    },
                })
            }
            other => {
                return Err(Error::python(
                    "AssertionError",
                    format!("expected CustomObjArgument, got {}", other.class_name()),
                ))
            }
        },
        InputKind::Token => I::Token(wire::InputTokenSpec {
            arg: token_argument(&s.arg),
        }),
    })
}

/// `TokenArgument(name=spec.arg.name)`: the name as the signature holds it.
fn token_argument(arg: &ArgumentSpec) -> wire::TokenArgument {
    wire::TokenArgument {
        name: match arg {
            ArgumentSpec::Token { kept: Some(v), .. } => wire::Loose::Raw(v.clone()),
            other => wire::Loose::Typed(other.name().to_string()),
        },
    }
}

/// `serialize_output_spec`.
fn output_spec(s: &OutputSpec) -> Result<wire::OutputSpec> {
    use wire::OutputSpec as O;
    Ok(match s.kind {
        OutputKind::UserOutput => O::UserOutput(wire::UserOutputSpec {
            arg: argument_spec(&s.arg)?,
        }),
        OutputKind::LossOutput => O::LossOutput(wire::LossOutputSpec {
            arg: tensor_spec_arg(&s.arg, "LOSS_OUTPUT")?,
        }),
        OutputKind::BufferMutation => O::BufferMutation(wire::BufferMutationSpec {
            buffer_name: target(&s.target, "BUFFER_MUTATION")?,
            arg: tensor_spec_arg(&s.arg, "BUFFER_MUTATION")?,
        }),
        OutputKind::ParameterMutation => O::ParameterMutation(wire::ParameterMutationSpec {
            parameter_name: target(&s.target, "PARAMETER_MUTATION")?,
            arg: tensor_spec_arg(&s.arg, "PARAMETER_MUTATION")?,
        }),
        OutputKind::GradientToParameter => O::GradientToParameter(wire::GradientToParameterSpec {
            parameter_name: target(&s.target, "GRADIENT_TO_PARAMETER")?,
            arg: tensor_spec_arg(&s.arg, "GRADIENT_TO_PARAMETER")?,
        }),
        OutputKind::GradientToUserInput => O::GradientToUserInput(wire::GradientToUserInputSpec {
            user_input_name: target(&s.target, "GRADIENT_TO_USER_INPUT")?,
            arg: tensor_spec_arg(&s.arg, "GRADIENT_TO_USER_INPUT")?,
        }),
        OutputKind::UserInputMutation => O::UserInputMutation(wire::UserInputMutationSpec {
            user_input_name: target(&s.target, "USER_INPUT_MUTATION")?,
            arg: tensor_spec_arg(&s.arg, "USER_INPUT_MUTATION")?,
        }),
        OutputKind::Token => O::Token(wire::OutputTokenSpec {
            arg: token_argument(&s.arg),
        }),
    })
}

/// `serialize_signature`.
fn serialize_signature(sig: &ExportGraphSignature) -> Result<wire::GraphSignature> {
    Ok(wire::GraphSignature {
        input_specs: sig
            .input_specs
            .iter()
            .map(input_spec)
            .collect::<Result<_>>()?,
        output_specs: sig
            .output_specs
            .iter()
            .map(output_spec)
            .collect::<Result<_>>()?,
        raw: Default::default(),
    })
}

/// `serialize_treespec`: `treespec_dumps` of the spec the loader read.
fn treespec(s: &str, registry: &crate::pytree::Registry) -> Result<String> {
    let raise = |e: torchspec_pyval::Raise| match e {
        torchspec_pyval::Raise::Exception(e) => Error::python(&e.type_name, e.message),
        torchspec_pyval::Raise::Unsupported(w) => unsupported(w),
    };
    let spec = crate::pytree::treespec_loads(s, registry).map_err(raise)?;
    crate::pytree::treespec_dumps(&spec).map_err(raise)
}

/// `serialize_module_call_graph`.
fn serialize_module_call_graph(
    entries: &[ModuleCallEntry],
    registry: &crate::pytree::Registry,
) -> Result<Vec<wire::ModuleCallEntry>> {
    entries
        .iter()
        .map(|e| {
            Ok(wire::ModuleCallEntry {
                fqn: e.fqn.clone(),
                signature: match &e.signature {
                    None => None,
                    Some(s) => Some(wire::ModuleCallSignature {
                        inputs: s.inputs.iter().map(argument_spec).collect::<Result<_>>()?,
                        outputs: s.outputs.iter().map(argument_spec).collect::<Result<_>>()?,
                        in_spec: wire::Loose::Typed(treespec(&s.in_spec, registry)?),
                        out_spec: wire::Loose::Typed(treespec(&s.out_spec, registry)?),
                        forward_arg_names: match &s.forward_arg_names {
                            None => wire::Loose::Typed(None),
                            Some(wire::Loose::Typed(names)) => {
                                wire::Loose::Typed(Some(names.clone()))
                            }
                            Some(wire::Loose::Raw(v)) => wire::Loose::Raw(v.clone()),
                        },
                        raw: Default::default(),
                    }),
                },
            })
        })
        .collect()
}
