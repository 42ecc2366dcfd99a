//! Mirrors serialize.py's `GraphModuleDeserializer.deserialize_graph`: the
//! graph's inputs as placeholders, its nodes, its outputs, and
//! `sync_fx_node`.

use super::inputs::{int_arg, raw_arg};
use super::outputs::{sym_bool_name, sym_float_name, sym_int_name};
use super::raw::{
    key_error, raw_dict_use, raw_key_error, raw_list_use, target_not_str, tensor_name, Name, Use,
};
use super::state::{Deserializer, R};
use crate::fx::{Arg, NodeId, Op};
use crate::schema as wire;
use torchspec_pyval::Raise;

impl<'w> Deserializer<'w> {
    /// `sync_fx_node`.
    pub(super) fn sync(&mut self, name: &str, id: NodeId) -> R<()> {
        if self.cx.name_to_node.contains_key(name) {
            return Err(Raise::new(
                "SerializeError",
                format!("Node {name} has already been deserialized before."),
            ));
        }
        self.cx.graph.node_mut(id).name = name.to_string();
        self.cx.name_to_node.insert(name.to_string(), id);
        self.eval_meta(name)?;
        self.cx.graph.node_mut(id).meta.val = Some(name.to_string());
        Ok(())
    }

    /// `sync_fx_node` of a name that may be no str: a value
    /// `_dict_to_dataclass` passed through is in neither table.
    pub(super) fn sync_name(&mut self, name: Name<'_>, id: NodeId) -> R<()> {
        match name {
            Ok(name) => self.sync(name, id),
            Err(v) => Err(raw_key_error(v)),
        }
    }

    /// `serialized_name_to_node[name]` of a name that may be no str.
    pub(super) fn node_by(&self, name: Name<'_>) -> R<NodeId> {
        match name {
            Ok(name) => self.node_named(name),
            Err(v) => Err(raw_key_error(v)),
        }
    }

    pub(super) fn node_named(&self, name: &str) -> R<NodeId> {
        self.cx
            .name_to_node
            .get(name)
            .copied()
            .ok_or_else(|| key_error(name))
    }

    pub(super) fn deserialize_graph(&mut self, g: &'w wire::Graph) -> R<()> {
        for table in [
            "tensor_values",
            "sym_int_values",
            "sym_float_values",
            "sym_bool_values",
            "custom_obj_values",
        ] {
            raw_dict_use(g.raw_field(table))?;
        }
        self.index_values(g);
        self.graph_inputs(g)?;
        raw_list_use(g.raw_field("nodes"), Use::Iter("target"))?;
        for (i, node) in g.nodes.iter().enumerate() {
            self.deserialize_node(node, i as u32)?;
        }
        let result = self.graph_outputs(g)?;
        self.cx
            .graph
            .create_node(Op::Output, "output", vec![result], vec![], None);
        self.unbound_unbacked()
    }

    /// `deserialize_graph`'s inputs: a placeholder for each, synced to its
    /// value, or named by the signature for a constant input.
    fn graph_inputs(&mut self, g: &'w wire::Graph) -> R<()> {
        raw_list_use(g.raw_field("inputs"), Use::Iter("type"))?;
        for (i, input) in g.inputs.iter().enumerate() {
            match input {
                wire::Argument::AsTensor(t) => match tensor_name(t) {
                    Ok(name) => self.placeholder(name)?,
                    Err(v) => return Err(target_not_str(v)),
                },
                wire::Argument::AsCustomObj(wire::CustomObjArgument { name, .. }) => {
                    self.placeholder(name)?;
                }
                wire::Argument::AsSymInt(s) => match s {
                    wire::SymIntArgument::AsName(name) => self.placeholder(name)?,
                    wire::SymIntArgument::Raw(r) if r.tag == "as_name" => {
                        return Err(target_not_str(&r.value))
                    }
                    wire::SymIntArgument::Raw(_) => {
                        return Err(Raise::unsupported(
                            "a constant symint graph input kept as it came",
                        ))
                    }
                    wire::SymIntArgument::AsInt(i) => {
                        return Err(Raise::new(
                            "SerializeError",
                            format!("Deserializing a constant symint SymIntArgument(as_int={i}) as an input"),
                        ))
                    }
                },
                // `input_.type in ("as_int", ...)`: the payload is not read.
                a if matches!(
                    a.tag(),
                    "as_int" | "as_float" | "as_bool" | "as_none" | "as_string"
                ) =>
                {
                    let spec_name = self
                        .signature
                        .input_specs
                        .get(i)
                        .map(|s| s.arg.name().to_string())
                        .ok_or_else(|| Raise::new("IndexError", "list index out of range"))?;
                    let name = if spec_name.is_empty() {
                        format!("arg{i}")
                    } else {
                        spec_name
                    };
                    self.cx
                        .graph
                        .create_node(Op::Placeholder, &name, vec![], vec![], None);
                }
                // `raise SerializeError(f"Invalid input type {input_}")`.
                other => {
                    let mut repr = String::new();
                    other.py_repr(&mut repr);
                    return Err(Raise::new(
                        "SerializeError",
                        format!("Invalid input type {repr}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `deserialize_graph`'s outputs: the output node's argument (a tuple,
    /// or the single value of `is_single_tensor_return`).
    fn graph_outputs(&mut self, g: &'w wire::Graph) -> R<Arg> {
        raw_list_use(g.raw_field("outputs"), Use::Iter("type"))?;
        let mut outputs = Vec::with_capacity(g.outputs.len());
        for out in &g.outputs {
            outputs.push(match out {
                wire::Argument::AsTensor(t) => Arg::Node(self.node_by(tensor_name(t))?),
                // `serialized_name_to_node[output.as_sym_int.as_name]`: the
                // union refuses `.as_name` when another field is set.
                wire::Argument::AsSymInt(s) => Arg::Node(self.node_by(sym_int_name(s)?)?),
                wire::Argument::AsSymBool(s) => Arg::Node(self.node_by(sym_bool_name(s)?)?),
                wire::Argument::AsSymFloat(s) => Arg::Node(self.node_by(sym_float_name(s)?)?),
                wire::Argument::AsInt(i) => int_arg(i),
                wire::Argument::AsFloat(f) => Arg::Float(*f),
                wire::Argument::AsBool(b) => Arg::Bool(*b),
                wire::Argument::AsNone(_) => Arg::None,
                // `output.as_int` / `output.as_bool` as it came.
                wire::Argument::Raw(r) if matches!(r.tag, "as_int" | "as_bool") => {
                    raw_arg(&r.value)
                }
                wire::Argument::Raw(r) if r.tag == "as_none" => Arg::None,
                other => {
                    let mut repr = String::new();
                    other.py_repr(&mut repr);
                    return Err(Raise::new(
                        "SerializeError",
                        format!("Unable to deserialize output node {repr}"),
                    ));
                }
            });
        }
        Ok(
            if wire::load::loose_truth(&g.is_single_tensor_return, |b| *b) {
                if outputs.len() != 1 {
                    return Err(Raise::new(
                        "AssertionError",
                        format!(
                            "expected single output for single_tensor_return, got {}",
                            outputs.len()
                        ),
                    ));
                }
                outputs.pop().unwrap_or(Arg::None)
            } else {
                Arg::Tuple(outputs)
            },
        )
    }

    /// `Graph.placeholder(name)` then `sync_fx_node(name, ...)`.
    pub(super) fn placeholder(&mut self, name: &str) -> R<()> {
        let id = self
            .cx
            .graph
            .create_node(Op::Placeholder, name, vec![], vec![], None);
        self.sync(name, id)
    }
}
