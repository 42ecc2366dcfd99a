//! Mirrors serialize.py's `deserialize_inputs` (arguments placed by the
//! OpOverload's schema and `ArgumentKind`), `deserialize_hoo_inputs` and
//! `deserialize_input`: one argument by its union tag, subgraphs included.

use super::codegen::check_codegen;
use super::raw::{key_error, tensor_name};
use super::state::{Deserializer, GraphCx, R};
use super::values::{device_text, dtype_name, layout_name, memory_format_name};
use crate::failure::LoadFailure;
use crate::fx::{Arg, Op};
use crate::model::SubGraph;
use crate::ops::{self, Resolved};
use crate::schema as wire;
use crate::schema::load::raw_enum_key;
use torchspec_pyval::pyjson::{PyInt, PyJson};
use torchspec_pyval::Raise;

/// A call's `(args, kwargs)`.
pub(super) type ArgsKwargs = (Vec<Arg>, Vec<(String, Arg)>);

/// A value `json.loads` made, as an FX argument (`inp.as_int` kept raw).
/// `deserialize_sym_argument` of a payload `_dict_to_dataclass` passed
/// through: `serialized_name_to_node[sym_arg.as_name]`, or the `as_bool`
/// value as it came.
fn raw_sym_arg(d: &Deserializer<'_>, r: &wire::load::RawPayload) -> R<Arg> {
    match r.tag {
        "as_name" => d.node_by(Err(&r.value)).map(Arg::Node),
        _ => Ok(raw_arg(&r.value)),
    }
}

pub(super) fn raw_arg(v: &PyJson) -> Arg {
    match v {
        PyJson::Null => Arg::None,
        PyJson::Bool(b) => Arg::Bool(*b),
        PyJson::Int(i) => int_arg(i),
        PyJson::Float(f) => Arg::Float(*f),
        PyJson::Str(s) => Arg::Str(s.clone()),
        PyJson::List(items) => Arg::List(items.iter().map(raw_arg).collect()),
        PyJson::Object(entries) => Arg::Dict(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), raw_arg(v)))
                .collect(),
        ),
    }
}

/// `argument_kinds = {input.name: input.kind for input in ...}`, the
/// first line of `deserialize_inputs`: a name kept as a list cannot be a
/// dict key.
fn unhashable_name(inputs: &[wire::NamedArgument]) -> R<()> {
    for input in inputs {
        if let wire::Loose::Raw(v @ PyJson::List(_)) = &input.name {
            return Err(Raise::new(
                "TypeError",
                format!("unhashable type: '{}'", v.type_name()),
            ));
        }
    }
    Ok(())
}

/// `deserialize_input`'s last branch: `SerializeError(f"Unhandled argument {inp}")`.
pub(super) fn unhandled(a: &wire::Argument) -> LoadFailure {
    let mut repr = String::new();
    a.py_repr(&mut repr);
    Raise::new("SerializeError", format!("Unhandled argument {repr}"))
}

/// `deserialize_input` of a payload `_dict_to_dataclass` kept raw: an enum
/// table looked up by the raw key, `as_none` ignored, `list(value)` of a
/// list, any other value as it came.
pub(super) fn raw_input(a: &wire::Argument, r: &wire::load::RawPayload) -> R<Arg> {
    let table: fn(i64) -> Option<&'static str> = match r.tag {
        "as_none" => return Ok(Arg::None),
        "as_scalar_type" => dtype_name,
        "as_memory_format" => memory_format_name,
        "as_layout" => layout_name,
        "as_ints" | "as_tensors" => {
            return match &r.value {
                PyJson::List(_) if r.tag == "as_ints" => Ok(raw_arg(&r.value)),
                // TensorArguments with a field of another type.
                PyJson::List(_) => Err(crate::failure::untyped(
                    "an `as_tensors` argument whose items' fields are not of the schema's types",
                )),
                _ => Err(unhandled(a)),
            };
        }
        _ => return Ok(raw_arg(&r.value)),
    };
    let key = raw_enum_key(&r.value)?;
    match table(key) {
        Some(name) => Ok(Arg::Torch(name.into())),
        None => {
            let mut repr = String::new();
            wire::load::repr_raw(&r.value, &mut repr);
            Err(Raise::new("KeyError", repr))
        }
    }
}

pub(super) fn int_arg(i: &PyInt) -> Arg {
    match i {
        PyInt::Small(v) => Arg::Int(*v),
        PyInt::Big(b) => Arg::BigInt(b.clone()),
    }
}

/// An `as_scalar_type`, `as_memory_format` or `as_layout` argument through
/// its table. An unknown enum value stays the raw int `_dict_to_dataclass`
/// read, so `_SERIALIZE_TO_TORCH_DTYPE[inp.as_scalar_type]` (and the memory
/// format / layout maps) raise `KeyError(99)`: the message is `99`.
pub(super) fn enum_input(a: &wire::Argument) -> R<Arg> {
    let (value, name) = match a {
        wire::Argument::AsScalarType(s) => (s.value(), dtype_name(s.value())),
        wire::Argument::AsMemoryFormat(m) => (m.value(), memory_format_name(m.value())),
        wire::Argument::AsLayout(l) => (l.value(), layout_name(l.value())),
        other => return Err(Raise::unsupported(format!("argument `{}`", other.tag()))),
    };
    let name = name.ok_or_else(|| Raise::new("KeyError", value.to_string()))?;
    Ok(Arg::Torch(name.into()))
}

/// `deserialize_inputs`' `kind == ArgumentKind.POSITIONAL`: an `IntEnum`
/// equals the int, float or bool of its value; anything else (a string,
/// an unknown value) matches no kind.
pub(super) fn argument_kind(
    kind: &wire::Loose<Option<wire::ArgumentKind>>,
) -> Option<wire::ArgumentKind> {
    match kind {
        wire::Loose::Typed(k) => *k,
        wire::Loose::Raw(PyJson::Bool(b)) => Some(wire::ArgumentKind::from_value(i64::from(*b))),
        wire::Loose::Raw(PyJson::Float(f)) if f.fract() == 0.0 && f.abs() < 1e15 => {
            Some(wire::ArgumentKind::from_value(*f as i64))
        }
        wire::Loose::Raw(_) => None,
    }
}

impl<'w> Deserializer<'w> {
    /// `deserialize_inputs`: every serialized input is deserialized first,
    /// in file order, into `actual_args` (a dict by name: a repeated name
    /// keeps its last value and kind); then the schema's arguments are
    /// walked in schema order, each placed by its serialized
    /// `ArgumentKind`, or, without a POSITIONAL/KEYWORD kind, by the old
    /// rules (no default and not kwarg-only: positional, a missing one a
    /// `KeyError`). Inputs whose names the schema lacks are dropped.
    pub(super) fn op_inputs(
        &mut self,
        schema: &ops::schema::Schema,
        inputs: &'w [wire::NamedArgument],
    ) -> R<ArgsKwargs> {
        let mut actual: Vec<(&'w str, Option<wire::ArgumentKind>, Arg)> = Vec::new();
        unhashable_name(inputs)?;
        for input in inputs {
            let value = self.deserialize_input(&input.arg)?;
            // A name kept as it came is no schema argument's name.
            let wire::Loose::Typed(name) = &input.name else {
                continue;
            };
            match actual.iter_mut().find(|(k, _, _)| *k == name) {
                Some(slot) => {
                    slot.1 = argument_kind(&input.kind);
                    slot.2 = value;
                }
                None => actual.push((name, argument_kind(&input.kind), value)),
            }
        }
        let mut args = Vec::new();
        let mut kwargs: Vec<(String, Arg)> = Vec::new();
        let put = |kwargs: &mut Vec<(String, Arg)>, name: &str, value: Arg| match kwargs
            .iter_mut()
            .find(|(k, _)| k == name)
        {
            Some(slot) => slot.1 = value,
            None => kwargs.push((name.to_string(), value)),
        };
        for schema_arg in &schema.arguments {
            let name = schema_arg.name.as_str();
            let found = actual.iter().find(|(k, _, _)| *k == name);
            if let Some((_, kind, value)) = found {
                match kind {
                    Some(wire::ArgumentKind::POSITIONAL) => {
                        args.push(value.clone());
                        continue;
                    }
                    Some(wire::ArgumentKind::KEYWORD) if !torchspec_pyval::is_keyword(name) => {
                        put(&mut kwargs, name, value.clone());
                        continue;
                    }
                    _ => {}
                }
            }
            // "If there's no ArgumentKind found, fallback to the old cases."
            let is_positional = !schema_arg.has_default && !schema_arg.kwarg_only;
            if is_positional {
                let (_, _, value) = found.ok_or_else(|| key_error(name))?;
                args.push(value.clone());
            } else if torchspec_pyval::is_keyword(name) {
                if schema_arg.kwarg_only {
                    return Err(Raise::new(
                        "AssertionError",
                        format!("schema_arg {name} should not be kwarg_only"),
                    ));
                }
                // `kwargs = OrderedDict(); args.extend(list(kwargs.values()))`:
                // the kwargs so far are dropped, not moved.
                kwargs.clear();
                let (_, _, value) = found.ok_or_else(|| key_error(name))?;
                args.push(value.clone());
            } else if let Some((_, _, value)) = found {
                put(&mut kwargs, name, value.clone());
            }
        }
        Ok((args, kwargs))
    }

    /// `deserialize_hoo_inputs`.
    pub(super) fn hoo_inputs(&mut self, inputs: &'w [wire::NamedArgument]) -> R<ArgsKwargs> {
        let mut args = Vec::new();
        let mut kwargs: Vec<(String, Arg)> = Vec::new();
        for input in inputs {
            let value = self.deserialize_input(&input.arg)?;
            let positional = argument_kind(&input.kind) == Some(wire::ArgumentKind::POSITIONAL);
            let name = match &input.name {
                wire::Loose::Typed(name) => name,
                // `kwargs[input_.name]` with a key of another type.
                wire::Loose::Raw(_) if !positional => {
                    return Err(crate::failure::untyped(
                        "the name of a higher-order op's keyword input",
                    ))
                }
                wire::Loose::Raw(_) => "",
            };
            if positional || name.is_empty() {
                args.push(value);
            } else {
                match kwargs.iter_mut().find(|(k, _)| k == name) {
                    Some(slot) => slot.1 = value,
                    None => kwargs.push((name.to_string(), value)),
                }
            }
        }
        Ok((args, kwargs))
    }

    /// `deserialize_input`: one argument, by its union tag.
    pub(super) fn deserialize_input(&mut self, a: &'w wire::Argument) -> R<Arg> {
        use wire::Argument as A;
        Ok(match a {
            A::Raw(r) => raw_input(a, r)?,
            A::AsNone(_) => Arg::None,
            A::AsTensor(t) => Arg::Node(self.node_by(tensor_name(t))?),
            A::AsScalarType(_) | A::AsMemoryFormat(_) | A::AsLayout(_) => enum_input(a)?,
            A::AsGraph(g) => self.graph_input(g)?,
            A::AsDevice(d) => Arg::Device(device_text(d)?),
            A::AsInt(i) => int_arg(i),
            A::AsFloat(f) => Arg::Float(*f),
            A::AsBool(b) => Arg::Bool(*b),
            A::AsString(s) => Arg::Str(s.clone()),
            A::AsComplex(c) => Arg::Complex(c.real, c.imag),
            A::AsSymInt(s) => self.sym_int_arg(s)?,
            A::AsSymFloat(s) => self.sym_float_arg(s)?,
            A::AsSymBool(s) => self.sym_bool_arg(s)?,
            A::AsStringToArgument(items) => {
                let mut out: Vec<(String, Arg)> = Vec::with_capacity(items.len());
                for (k, v) in items {
                    out.push((k.clone(), self.deserialize_input(v)?));
                }
                Arg::Dict(out)
            }
            // No branch reads it: the payload is neither a dict nor a list.
            A::AsOptionalTensor(_) => return Err(unhandled(a)),
            A::AsCustomObj(c) => match self.cx.name_to_node.get(&c.name) {
                Some(id) => Arg::Node(*id),
                None => return Err(Raise::unsupported(
                    "a custom object argument that is not a graph input (a ScriptObject constant)",
                )),
            },
            A::AsOperator(op) => self.operator_input(op)?,
            _ => self.list_input(a)?,
        })
    }

    /// The list forms of `deserialize_input` (`as_tensors`, `as_ints`,
    /// `as_sym_ints`, `as_optional_tensors`, ...): each item as its scalar
    /// form is read.
    pub(super) fn list_input(&mut self, a: &'w wire::Argument) -> R<Arg> {
        use wire::Argument as A;
        let tensors = |this: &mut Self, ts: &[wire::TensorArgument]| -> R<Arg> {
            Ok(Arg::List(
                ts.iter()
                    .map(|t| this.node_by(tensor_name(t)).map(Arg::Node))
                    .collect::<R<_>>()?,
            ))
        };
        Ok(match a {
            A::AsTensors(ts) => tensors(self, ts)?,
            A::AsInts(v) => Arg::List(v.iter().map(int_arg).collect()),
            A::AsFloats(v) => Arg::List(v.iter().map(|f| Arg::Float(*f)).collect()),
            A::AsBools(v) => Arg::List(v.iter().map(|b| Arg::Bool(*b)).collect()),
            A::AsStrings(v) => Arg::List(v.iter().map(|s| Arg::Str(s.clone())).collect()),
            A::AsIntLists(v) => Arg::List(
                v.iter()
                    .map(|l| Arg::Tuple(l.iter().map(int_arg).collect()))
                    .collect(),
            ),
            A::AsFloatLists(v) => Arg::List(
                v.iter()
                    .map(|l| Arg::List(l.iter().map(|f| Arg::Float(*f)).collect()))
                    .collect(),
            ),
            A::AsNestedTensors(v) => {
                let mut out = Vec::with_capacity(v.len());
                for inner in v {
                    out.push(tensors(self, inner)?);
                }
                Arg::List(out)
            }
            A::AsSymInts(v) => Arg::List(v.iter().map(|s| self.sym_int_arg(s)).collect::<R<_>>()?),
            A::AsSymFloats(v) => {
                Arg::List(v.iter().map(|s| self.sym_float_arg(s)).collect::<R<_>>()?)
            }
            A::AsSymBools(v) => {
                Arg::List(v.iter().map(|s| self.sym_bool_arg(s)).collect::<R<_>>()?)
            }
            A::AsOptionalTensors(v) => Arg::List(
                v.iter()
                    .map(|o| self.optional_tensor_arg(o))
                    .collect::<R<_>>()?,
            ),
            // deserialize_input reads every other form itself.
            other => return Err(Raise::unsupported(format!("argument `{}`", other.tag()))),
        })
    }

    /// An `as_graph` argument: the subgraph deserialized with its own value
    /// tables, registered as a submodule, and a `get_attr` node naming it.
    pub(super) fn graph_input(&mut self, g: &'w wire::GraphArgument) -> R<Arg> {
        let saved = std::mem::replace(&mut self.cx, GraphCx::new());
        let saved_values = (
            std::mem::take(&mut self.tensor_values),
            std::mem::take(&mut self.sym_int_values),
            std::mem::take(&mut self.sym_float_values),
            std::mem::take(&mut self.sym_bool_values),
            std::mem::take(&mut self.custom_obj_values),
        );
        let result = self.deserialize_graph(&g.graph);
        let sub = std::mem::replace(&mut self.cx, saved);
        (
            self.tensor_values,
            self.sym_int_values,
            self.sym_float_values,
            self.sym_bool_values,
            self.custom_obj_values,
        ) = saved_values;
        result?;
        check_codegen(&sub.graph)?;
        self.register_module(&g.name)?;
        let (graph, submodules) = sub.finish();
        self.cx.submodules.push(SubGraph {
            name: g.name.clone(),
            graph,
            submodules,
        });
        let id = self
            .cx
            .graph
            .create_node(Op::GetAttr, &g.name, vec![], vec![], Some(&g.name));
        Ok(Arg::Node(id))
    }

    /// `self.module.register_module(name, submodule)` (`Module.add_module`):
    /// a name the fresh `torch.nn.Module` already has as an attribute
    /// (`forward`, `training`; not a submodule registered before, which
    /// is replaced), then a dotted or empty name, is a `KeyError`.
    fn register_module(&self, name: &str) -> R<()> {
        let registered = self.cx.submodules.iter().any(|s| s.name == name);
        let message = if MODULE_ATTRIBUTES.contains(&name) && !registered {
            format!("attribute '{name}' already exists")
        } else if name.contains('.') {
            format!("module name can't contain \".\", got: {name}")
        } else if name.is_empty() {
            "module name can't be empty string \"\"".to_string()
        } else {
            return Ok(());
        };
        Err(Raise::new(
            "KeyError",
            torchspec_pyval::repr::str_repr(&message),
        ))
    }

    /// An `as_operator` argument, through `deserialize_operator`: an
    /// overload the process has prints as `str(OpOverload)`
    /// (`testlib.foo.default`); one it cannot resolve stays the target
    /// string, which `_format_arg` prints as is
    /// (`torch.ops.testlib.foo.default`).
    pub(super) fn operator_input(&self, op: &str) -> R<Arg> {
        let unsupported = || Raise::unsupported(format!("operator argument `{op}`"));
        match ops::resolve(op, self.registrations) {
            Resolved::OpOverload(t) => match t.strip_prefix("torch.ops.") {
                Some(rest) => Ok(Arg::Torch(rest.to_string())),
                None => Err(unsupported()),
            },
            Resolved::Str(s) => Ok(Arg::Str(s)),
            _ => Err(unsupported()),
        }
    }

    pub(super) fn sym_float_arg(&mut self, s: &wire::SymFloatArgument) -> R<Arg> {
        Ok(match s {
            wire::SymFloatArgument::AsFloat(f) => Arg::Float(*f),
            wire::SymFloatArgument::AsName(n) => Arg::Node(self.node_named(n)?),
            wire::SymFloatArgument::Raw(r) => raw_sym_arg(self, r)?,
        })
    }

    pub(super) fn sym_bool_arg(&mut self, s: &wire::SymBoolArgument) -> R<Arg> {
        Ok(match s {
            wire::SymBoolArgument::AsBool(b) => Arg::Bool(*b),
            wire::SymBoolArgument::AsName(n) => Arg::Node(self.node_named(n)?),
            wire::SymBoolArgument::Raw(r) => raw_sym_arg(self, r)?,
        })
    }

    pub(super) fn optional_tensor_arg(&mut self, o: &wire::OptionalTensorArgument) -> R<Arg> {
        Ok(match o {
            wire::OptionalTensorArgument::AsNone(_) => Arg::None,
            wire::OptionalTensorArgument::AsTensor(t) => Arg::Node(self.node_by(tensor_name(t))?),
        })
    }

    pub(super) fn sym_int_arg(&mut self, s: &wire::SymIntArgument) -> R<Arg> {
        Ok(match s {
            wire::SymIntArgument::AsInt(i) => int_arg(i),
            wire::SymIntArgument::AsName(n) => Arg::Node(self.node_named(n)?),
            wire::SymIntArgument::Raw(r) => raw_sym_arg(self, r)?,
        })
    }
}

/// `dir(torch.nn.Module())` in torch 2.15.0 (the same 117 names in 2.14.1
/// and 2.13.0): the attributes `hasattr` finds on the fresh module a
/// subgraph is registered on.
const MODULE_ATTRIBUTES: &[&str] = &[
    "T_destination",
    "__annotations__",
    "__call__",
    "__class__",
    "__delattr__",
    "__dict__",
    "__dir__",
    "__doc__",
    "__eq__",
    "__format__",
    "__ge__",
    "__getattr__",
    "__getattribute__",
    "__getstate__",
    "__gt__",
    "__hash__",
    "__init__",
    "__init_subclass__",
    "__le__",
    "__lt__",
    "__module__",
    "__ne__",
    "__new__",
    "__reduce__",
    "__reduce_ex__",
    "__repr__",
    "__setattr__",
    "__setstate__",
    "__sizeof__",
    "__str__",
    "__subclasshook__",
    "__weakref__",
    "_apply",
    "_backward_hooks",
    "_backward_pre_hooks",
    "_buffers",
    "_call_impl",
    "_compiled_call_impl",
    "_forward_hooks",
    "_forward_hooks_always_called",
    "_forward_hooks_with_kwargs",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_get_backward_hooks",
    "_get_backward_pre_hooks",
    "_get_name",
    "_is_full_backward_hook",
    "_load_from_state_dict",
    "_load_state_dict_post_hooks",
    "_load_state_dict_pre_hooks",
    "_maybe_warn_non_full_backward_hook",
    "_modules",
    "_named_members",
    "_non_persistent_buffers_set",
    "_parameters",
    "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook",
    "_replicate_for_data_parallel",
    "_save_to_state_dict",
    "_slow_forward",
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_version",
    "_wrapped_call_impl",
    "add_module",
    "apply",
    "bfloat16",
    "buffers",
    "call_super_init",
    "children",
    "compile",
    "cpu",
    "cuda",
    "double",
    "dump_patches",
    "eval",
    "extra_repr",
    "float",
    "forward",
    "get_buffer",
    "get_extra_state",
    "get_parameter",
    "get_submodule",
    "half",
    "ipu",
    "load_state_dict",
    "modules",
    "mtia",
    "named_buffers",
    "named_children",
    "named_modules",
    "named_parameters",
    "parameters",
    "register_backward_hook",
    "register_buffer",
    "register_forward_hook",
    "register_forward_pre_hook",
    "register_full_backward_hook",
    "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook",
    "register_module",
    "register_parameter",
    "register_state_dict_post_hook",
    "register_state_dict_pre_hook",
    "requires_grad_",
    "set_extra_state",
    "set_submodule",
    "share_memory",
    "state_dict",
    "to",
    "to_empty",
    "train",
    "training",
    "type",
    "xpu",
    "zero_grad",
];
