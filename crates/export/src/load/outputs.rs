//! Mirrors serialize.py's `deserialize_outputs`,
//! `deserialize_multiple_outputs` and `generate_getitems`: a node's
//! outputs synced to its name, or getitem nodes for each.

use super::metadata::check_metadata;
use super::raw::{
    field_not_set, name_regex_error, raw_key_error, raw_list_use, tensor_name, Name, Use,
};
use super::state::{Deserializer, R};
use crate::failure::LoadFailure;
use crate::fx::{self, Arg, NodeId, Op};
use crate::schema as wire;
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

/// `arg.type == "as_none"`: the union's tag, whatever its payload
/// (`_dict_to_dataclass` keeps `{"as_none": 1}` as it came).
pub(super) fn is_as_none(a: &wire::Argument) -> bool {
    match a {
        wire::Argument::AsNone(_) => true,
        wire::Argument::Raw(r) => r.tag == "as_none",
        _ => false,
    }
}

/// `deserialize_multiple_outputs` of one output that is not
/// `as_tensors`: `isinstance(outputs[0].value, list)`, then
/// `isinstance(value[0], TensorArgument)`, each an `AssertionError` naming
/// `type(...).__name__` (an enum value `_dict_to_dataclass` kept as a raw
/// int is an `int`).
pub(super) fn single_output_refusal(a: &wire::Argument) -> LoadFailure {
    use wire::Argument as A;
    let not_list = |ty: &str| Raise::new("AssertionError", format!("expected list, got {ty}"));
    let first = |ty: Option<&str>| match ty {
        Some(ty) => Raise::new(
            "AssertionError",
            format!("expected TensorArgument, got {ty}"),
        ),
        None => Raise::new("IndexError", "list index out of range"),
    };
    let some_if = |empty: bool, ty: &'static str| (!empty).then_some(ty);
    match a {
        A::AsInt(_) => not_list("int"),
        A::AsFloat(_) => not_list("float"),
        A::AsBool(_) => not_list("bool"),
        A::AsString(_) | A::AsOperator(_) => not_list("str"),
        A::AsStringToArgument(_) => not_list("dict"),
        A::AsDevice(_) => not_list("Device"),
        A::AsComplex(_) => not_list("ComplexValue"),
        A::AsCustomObj(_) => not_list("CustomObjArgument"),
        A::AsGraph(_) => not_list("GraphArgument"),
        A::AsOptionalTensor(_) => not_list("OptionalTensorArgument"),
        // `_dict_to_dataclass` returns an enum field's int as it came.
        A::AsScalarType(_) | A::AsLayout(_) | A::AsMemoryFormat(_) => not_list("int"),
        A::AsInts(v) => first(some_if(v.is_empty(), "int")),
        A::AsFloats(v) => first(some_if(v.is_empty(), "float")),
        A::AsBools(v) => first(some_if(v.is_empty(), "bool")),
        A::AsStrings(v) => first(some_if(v.is_empty(), "str")),
        A::AsSymInts(v) => first(some_if(v.is_empty(), "SymIntArgument")),
        A::AsSymBools(v) => first(some_if(v.is_empty(), "SymBoolArgument")),
        A::AsSymFloats(v) => first(some_if(v.is_empty(), "SymFloatArgument")),
        A::AsOptionalTensors(v) => first(some_if(v.is_empty(), "OptionalTensorArgument")),
        A::AsNestedTensors(v) => first(some_if(v.is_empty(), "list")),
        A::AsIntLists(v) => first(some_if(v.is_empty(), "list")),
        A::AsFloatLists(v) => first(some_if(v.is_empty(), "list")),
        A::Raw(r) => match &r.value {
            PyJson::List(_) if r.tag == "as_tensors" => crate::failure::untyped(
                "an `as_tensors` output whose items' fields are not of the schema's types",
            ),
            PyJson::List(items) => first(items.first().map(PyJson::type_name)),
            v => not_list(v.type_name()),
        },
        other => Raise::unsupported(format!(
            "a single `{}` node output (a node's `outputs[0]`)",
            other.tag()
        )),
    }
}

pub(super) fn sym_int_name(s: &wire::SymIntArgument) -> R<Name<'_>> {
    match s {
        wire::SymIntArgument::AsName(n) => Ok(Ok(n)),
        wire::SymIntArgument::Raw(r) => raw_as_name(r),
        wire::SymIntArgument::AsInt(_) => Err(field_not_set("as_name")),
    }
}

/// `SymBoolArgument.as_name`.
pub(super) fn sym_bool_name(s: &wire::SymBoolArgument) -> R<Name<'_>> {
    match s {
        wire::SymBoolArgument::AsName(n) => Ok(Ok(n)),
        wire::SymBoolArgument::Raw(r) => raw_as_name(r),
        wire::SymBoolArgument::AsBool(_) => Err(field_not_set("as_name")),
    }
}

/// `SymFloatArgument.as_name`.
pub(super) fn sym_float_name(s: &wire::SymFloatArgument) -> R<Name<'_>> {
    match s {
        wire::SymFloatArgument::AsName(n) => Ok(Ok(n)),
        wire::SymFloatArgument::Raw(r) => raw_as_name(r),
        wire::SymFloatArgument::AsFloat(_) => Err(field_not_set("as_name")),
    }
}

/// `.as_name` of a symbolic union whose payload was kept as it came: the
/// value when `as_name` is the field set, else the union's refusal.
fn raw_as_name(r: &wire::load::RawPayload) -> R<Name<'_>> {
    match r.tag {
        "as_name" => Ok(Err(&r.value)),
        _ => Err(field_not_set("as_name")),
    }
}

/// `type(argument.value).__name__`: the Python class of a union payload
/// as `_dict_to_dataclass` built it (a raw payload's, as `json.loads`
/// made it). `None` for a class this does not name.
pub(super) fn payload_type_name(a: &wire::Argument) -> Option<&'static str> {
    use wire::Argument as A;
    Some(match a {
        A::Raw(r) => r.value.type_name(),
        A::AsNone(_) | A::AsBool(_) => "bool",
        A::AsInt(_) => "int",
        A::AsFloat(_) => "float",
        A::AsString(_) | A::AsOperator(_) => "str",
        A::AsTensor(_) => "TensorArgument",
        A::AsCustomObj(_) => "CustomObjArgument",
        A::AsGraph(_) => "GraphArgument",
        A::AsDevice(_) => "Device",
        A::AsComplex(_) => "ComplexValue",
        A::AsOptionalTensor(_) => "OptionalTensorArgument",
        A::AsStringToArgument(_) => "dict",
        // `_dict_to_dataclass` returns an enum field's int as it came.
        A::AsScalarType(_) | A::AsLayout(_) | A::AsMemoryFormat(_) => "int",
        A::AsTensors(_)
        | A::AsInts(_)
        | A::AsFloats(_)
        | A::AsBools(_)
        | A::AsStrings(_)
        | A::AsSymInts(_)
        | A::AsSymBools(_)
        | A::AsSymFloats(_)
        | A::AsOptionalTensors(_)
        | A::AsNestedTensors(_)
        | A::AsIntLists(_)
        | A::AsFloatLists(_) => "list",
        _ => return None,
    })
}

/// `serialized_node.outputs[0].value.as_name` of a symbolic op.
pub(super) fn sym_output_name(n: &wire::Node) -> R<Name<'_>> {
    use wire::Argument as A;
    match n.outputs.first() {
        Some(A::AsSymInt(s)) => sym_int_name(s),
        Some(A::AsSymBool(s)) => sym_bool_name(s),
        Some(A::AsSymFloat(s)) => sym_float_name(s),
        // `.as_name` of a payload that is not a symbolic union.
        Some(other) => Err(match payload_type_name(other) {
            Some(ty) => Raise::new(
                "AttributeError",
                format!("'{ty}' object has no attribute 'as_name'"),
            ),
            None => Raise::unsupported(format!("symbolic op output of type `{}`", other.tag())),
        }),
        None => Err(Raise::new("IndexError", "list index out of range")),
    }
}

impl<'w> Deserializer<'w> {
    /// `deserialize_outputs`.
    pub(super) fn deserialize_outputs(
        &mut self,
        n: &'w wire::Node,
        id: NodeId,
        printed: &str,
    ) -> R<()> {
        use wire::Argument as A;
        raw_list_use(n.raw_field("outputs"), Use::Len)?;
        let outputs = &n.outputs;
        if outputs.is_empty() {
            self.cx.valueless.push(id);
            return Ok(());
        }
        // `not getattr(node, "is_hop_single_tensor_return", True)`: the
        // field always exists, so a null counts as false here.
        if outputs.len() == 1
            && n.target.contains("torch.ops.higher_order")
            && !hop_single_tensor_return(n)
            && !is_as_none(&outputs[0])
        {
            // `_deserialize_hop_with_single_return`: the metadata first,
            // then `generate_getitem` of a tensor or any symbolic union
            // (its `.as_name`; a SymBoolArgument is an unknown type there).
            let symbolic = matches!(
                &outputs[0],
                A::AsSymInt(_) | A::AsSymFloat(_) | A::AsSymBool(_)
            );
            if symbolic || matches!(&outputs[0], A::AsTensor(_)) {
                check_metadata(&n.metadata, self.registrations)?;
            }
            let name = match &outputs[0] {
                A::AsTensor(t) => tensor_name(t),
                A::AsSymInt(s) => sym_int_name(s)?,
                A::AsSymFloat(s) => sym_float_name(s)?,
                A::AsSymBool(_) => {
                    return Err(Raise::new(
                        "AssertionError",
                        "generate_getitem got unknown argument type <class 'torch._export.serde.schema.SymBoolArgument'>",
                    ));
                }
                _ => {
                    check_metadata(&n.metadata, self.registrations)?;
                    return Err(Raise::new("AssertionError", "arg should not be None"));
                }
            };
            self.getitem_by(id, 0, name)?;
            let node_name = self.cx.graph.node(id).name.clone();
            self.cx.name_to_node.insert(node_name, id);
            return Ok(());
        }
        if outputs.len() == 1 {
            match &outputs[0] {
                A::AsTensor(t) => return self.sync_name(tensor_name(t), id),
                A::AsSymInt(s) => return self.sync_name(sym_int_name(s)?, id),
                // `sync_fx_node(value.as_name, ...)`: the union refuses
                // `.as_name` when another field is set.
                A::AsSymBool(s) => return self.sync_name(sym_bool_name(s)?, id),
                A::AsSymFloat(s) => return self.sync_name(sym_float_name(s)?, id),
                a if is_as_none(a) => {
                    let candidate =
                        format!("{}_unused", fx::target_to_str(Op::CallFunction, printed));
                    self.cx.graph.rename(id, &candidate);
                    return Ok(());
                }
                _ => {}
            }
        }
        // deserialize_multiple_outputs: its metadata first.
        check_metadata(&n.metadata, self.registrations)?;
        if outputs.len() == 1 {
            match &outputs[0] {
                A::AsTensors(ts) if !ts.is_empty() => {
                    for (idx, t) in ts.iter().enumerate() {
                        self.getitem_by(id, idx, tensor_name(t))?;
                    }
                }
                A::AsTensors(_) => return Err(Raise::new("IndexError", "list index out of range")),
                other => return Err(single_output_refusal(other)),
            }
        } else {
            self.getitems(id, outputs)?;
        }
        let node_name = self.cx.graph.node(id).name.clone();
        self.cx.name_to_node.insert(node_name, id);
        Ok(())
    }

    /// `generate_getitems` over `Argument`s.
    pub(super) fn getitems(&mut self, id: NodeId, outputs: &'w [wire::Argument]) -> R<()> {
        use wire::Argument as A;
        for (idx, out) in outputs.iter().enumerate() {
            match out {
                A::AsTensor(t) => self.getitem_by(id, idx, tensor_name(t))?,
                A::AsSymInt(s) => self.getitem_by(id, idx, sym_int_name(s)?)?,
                A::AsSymFloat(wire::SymFloatArgument::AsName(s)) => self.getitem(id, idx, s)?,
                A::AsTensors(ts) => {
                    let list = self.bare_getitem(id, idx, None);
                    for (j, t) in ts.iter().enumerate() {
                        self.getitem_by(list, j, tensor_name(t))?;
                    }
                }
                A::AsSymInts(ss) => {
                    let list = self.bare_getitem(id, idx, None);
                    for (j, s) in ss.iter().enumerate() {
                        self.getitem_by(list, j, sym_int_name(s)?)?;
                    }
                }
                a if is_as_none(a) => {
                    self.bare_getitem(id, idx, Some("as_none"));
                }
                // The other lists `generate_getitems` walks: a getitem for the
                // list, then its items, which are plain values, not
                // `Argument`s (`expected Argument, got int`).
                A::AsInts(v) if !v.is_empty() => return Err(not_an_argument("int")),
                A::AsFloats(v) if !v.is_empty() => return Err(not_an_argument("float")),
                A::AsStrings(v) if !v.is_empty() => return Err(not_an_argument("str")),
                A::AsBools(v) if !v.is_empty() => return Err(not_an_argument("bool")),
                A::AsSymBools(v) if !v.is_empty() => {
                    return Err(not_an_argument("SymBoolArgument"))
                }
                A::AsInts(_)
                | A::AsFloats(_)
                | A::AsStrings(_)
                | A::AsBools(_)
                | A::AsSymBools(_) => {
                    self.bare_getitem(id, idx, None);
                }
                other if other.tag() == "as_sym_floats" => {
                    return Err(Raise::unsupported(format!(
                        "a non-empty `as_sym_floats` among several node outputs \
                         ($.graph_module.graph.nodes[].outputs[{idx}])"
                    )))
                }
                other => {
                    let mut arg = String::new();
                    other.py_repr(&mut arg);
                    return Err(Raise::new(
                        "NotImplementedError",
                        format!("Unimplemented node output type: {arg}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// An `operator.getitem(of, idx)` node named `name` (or fx's default):
    /// `getitem` then syncs it with its output; a list of outputs and
    /// `as_none` use it as is.
    fn bare_getitem(&mut self, of: NodeId, idx: usize, name: Option<&str>) -> NodeId {
        self.cx.graph.create_node(
            Op::CallFunction,
            "operator.getitem",
            vec![Arg::Node(of), Arg::Int(idx as i64)],
            vec![],
            name,
        )
    }

    /// `generate_getitem` of a name that may be no str: null lets fx name
    /// the node, then `sync_fx_node(None, ...)` finds no meta (`KeyError`);
    /// any other value fails `create_node`'s `_name_regex.match`.
    fn getitem_by(&mut self, of: NodeId, idx: usize, name: Name<'_>) -> R<()> {
        match name {
            Ok(name) => self.getitem(of, idx, name),
            Err(v @ PyJson::Null) => Err(raw_key_error(v)),
            Err(v) => Err(name_regex_error(v)),
        }
    }

    /// `generate_getitem`.
    pub(super) fn getitem(&mut self, of: NodeId, idx: usize, name: &str) -> R<()> {
        let id = self.bare_getitem(of, idx, Some(name));
        self.sync(name, id)
    }
}

/// `generate_getitems` on an item that is not an `Argument`.
fn not_an_argument(ty: &str) -> LoadFailure {
    Raise::new("AssertionError", format!("expected Argument, got {ty}"))
}

/// `getattr(serialized_node, "is_hop_single_tensor_return", True)` as a
/// truth value (the field always exists: a null is false).
pub(super) fn hop_single_tensor_return(n: &wire::Node) -> bool {
    wire::load::loose_truth(&n.is_hop_single_tensor_return, |b| *b == Some(true))
}
