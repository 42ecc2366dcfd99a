//! Mirrors serialize.py's `deserialize_signature`: `deserialize_input_spec`,
//! `deserialize_output_spec` and `deserialize_argument_spec`.

use super::inputs::{enum_input, unhandled};
use super::raw::{
    field_not_set, key_error, raw_key_error, raw_list_use, tensor_name, truthy, Name, Use,
};
use super::state::R;
use crate::failure::LoadFailure;
use crate::fx::Arg;
use crate::schema as wire;
use crate::signature::{
    ArgumentSpec, Constant, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
};
use torchspec_pyval::pyjson::{PyInt, PyJson};
use torchspec_pyval::Raise;

/// `deserialize_constant_input`: the constant of a constant input spec
/// (`at`: its JSON path, for a value the reference cannot convert).
pub(super) fn constant(v: &wire::ConstantValue, at: &str) -> R<Constant> {
    Ok(match v {
        wire::ConstantValue::AsNone(_) => Constant::None,
        wire::ConstantValue::AsInt(i) => int_constant(i),
        wire::ConstantValue::AsFloat(f) => Constant::Float(*f),
        wire::ConstantValue::AsString(s) => Constant::Str(s.clone()),
        wire::ConstantValue::AsBool(b) => Constant::Bool(*b),
        wire::ConstantValue::Raw(r) => match r.tag {
            "as_int" => py_int(&r.value, &format!("{at}.as_int"))?,
            "as_string" => Constant::Str(crate::signature::py_str(&r.value)),
            "as_bool" => Constant::Bool(truthy(&r.value)),
            _ => Constant::None,
        },
    })
}

fn int_constant(i: &PyInt) -> Constant {
    match i {
        PyInt::Small(i) => Constant::Int(*i),
        PyInt::Big(b) => Constant::BigInt(b.to_string()),
    }
}

/// `int(v)` of a value `json.loads` made, with CPython's errors.
fn py_int(v: &PyJson, at: &str) -> R<Constant> {
    let unsupported = || Raise::unsupported(format!("`int()` of the {} at {at}", v.type_name()));
    match v {
        PyJson::Int(i) => Ok(int_constant(i)),
        PyJson::Bool(b) => Ok(Constant::Int(i64::from(*b))),
        PyJson::Float(f) if f.is_nan() => Err(Raise::new(
            "ValueError",
            "cannot convert float NaN to integer",
        )),
        PyJson::Float(f) if f.is_infinite() => Err(Raise::new(
            "OverflowError",
            "cannot convert float infinity to integer",
        )),
        // Exact below 2**63; the exact digits of a larger float are not modelled.
        PyJson::Float(f) if f.abs() < 9.2e18 => Ok(Constant::Int(f.trunc() as i64)),
        PyJson::Float(_) => Err(unsupported()),
        PyJson::Str(s) => int_of_str(s).ok_or_else(unsupported)?,
        other => Err(Raise::new(
            "TypeError",
            format!(
                "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                other.type_name()
            ),
        )),
    }
}

/// `int(s)` of an ASCII str (`None`: one this reader does not decide, with
/// non-ASCII characters or past 4300 digits): an optional sign and decimal
/// digits, single underscores between them, surrounding whitespace.
fn int_of_str(s: &str) -> Option<R<Constant>> {
    if !s.is_ascii() {
        return None;
    }
    // The ASCII whitespace `int()` strips (`Py_ISSPACE`).
    let t = s.trim_matches(|c: char| " \t\n\x0b\x0c\r".contains(c));
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let well_formed = !body.is_empty()
        && body
            .split('_')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if !well_formed {
        return Some(Err(Raise::new(
            "ValueError",
            format!(
                "invalid literal for int() with base 10: {}",
                torchspec_pyval::repr::str_repr(s)
            ),
        )));
    }
    let digits: String = body.chars().filter(|c| *c != '_').collect();
    if digits.len() > 4300 {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let text = if negative && digits != "0" {
        format!("-{digits}")
    } else {
        digits.to_string()
    };
    Some(Ok(match text.parse::<i64>() {
        Ok(i) => Constant::Int(i),
        Err(_) => Constant::BigInt(text),
    }))
}

/// `deserialize_argument_spec`: non-symbolic arguments become
/// `ConstantArgument(name="", value=deserialize_input(x))`. `Names::None`:
/// the graph signature, deserialized before the graph, when
/// `serialized_name_to_node` is still empty.
pub(super) fn deserialize_argument_spec(x: &wire::Argument, names: Names) -> R<ArgumentSpec> {
    use wire::Argument as A;
    Ok(match x {
        A::AsTensor(t) => ArgumentSpec::Tensor {
            name: spec_tensor_name(t)?,
        },
        A::AsSymInt(s) => match s {
            wire::SymIntArgument::AsName(n) => ArgumentSpec::SymInt { name: n.clone() },
            wire::SymIntArgument::AsInt(_) => return Err(field_not_set("as_name")),
            wire::SymIntArgument::Raw(_) => {
                return Err(crate::failure::untyped(
                    "a symbolic argument's payload in a graph signature",
                ))
            }
        },
        A::AsSymFloat(s) => match s {
            wire::SymFloatArgument::AsName(n) => ArgumentSpec::SymFloat { name: n.clone() },
            wire::SymFloatArgument::AsFloat(_) => return Err(field_not_set("as_name")),
            wire::SymFloatArgument::Raw(_) => {
                return Err(crate::failure::untyped(
                    "a symbolic argument's payload in a graph signature",
                ))
            }
        },
        A::AsCustomObj(c) => {
            return Err(Raise::unsupported(format!(
                "custom object `{}` in a signature",
                c.name
            )))
        }
        other => const_spec(constant_input(other, names)?),
    })
}

/// What `serialized_name_to_node` holds when a signature is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Names {
    /// Nothing yet: every lookup is a `KeyError`.
    None,
    /// The graph's nodes (a constant that holds one is not modelled).
    Graph,
}

/// `self.serialized_name_to_node[name]`.
fn node_lookup(x: &wire::Argument, name: Name<'_>, names: Names) -> LoadFailure {
    match (names, name) {
        (Names::None, Ok(name)) => key_error(name),
        (Names::None, Err(v)) => raw_key_error(v),
        (Names::Graph, _) => in_signature(x),
    }
}

/// A signature's `TensorArgument.name`; what `str(sig)` and the verifier
/// make of one that is no str is not modelled.
fn spec_tensor_name(t: &wire::TensorArgument) -> R<String> {
    tensor_name(t)
        .map(str::to_string)
        .map_err(|_| crate::failure::untyped("a `TensorArgument.name` in a graph signature"))
}

/// `deserialize_input(x)` of an argument a signature holds as a
/// `ConstantArgument`: a value that needs no graph node (a list of
/// nodes, a graph or an operator is not modelled).
fn constant_input(x: &wire::Argument, names: Names) -> R<Constant> {
    use wire::Argument as A;
    let list = |items: Vec<Constant>| Ok(Constant::List(items));
    match x {
        A::AsNone(_) => Ok(Constant::None),
        A::AsInt(i) => Ok(int_constant(i)),
        A::AsFloat(f) => Ok(Constant::Float(*f)),
        A::AsBool(b) => Ok(Constant::Bool(*b)),
        A::AsString(s) => Ok(Constant::Str(s.clone())),
        A::AsScalarType(_) | A::AsMemoryFormat(_) | A::AsLayout(_) => match enum_input(x)? {
            Arg::Torch(repr) => Ok(Constant::Torch(repr)),
            _ => Err(in_signature(x)),
        },
        A::AsStringToArgument(items) => Ok(Constant::Dict(
            items
                .iter()
                .map(|(k, v)| Ok((k.clone(), constant_input(v, names)?)))
                .collect::<R<_>>()?,
        )),
        A::AsOptionalTensor(_) => Err(unhandled(x)),
        A::AsComplex(c) => Ok(Constant::Complex(c.real, c.imag)),
        A::AsInts(v) => list(v.iter().map(int_constant).collect()),
        A::AsFloats(v) => list(v.iter().map(|f| Constant::Float(*f)).collect()),
        A::AsBools(v) => list(v.iter().map(|b| Constant::Bool(*b)).collect()),
        A::AsStrings(v) => list(v.iter().map(|s| Constant::Str(s.clone())).collect()),
        A::AsFloatLists(v) => list(
            v.iter()
                .map(|fs| Constant::List(fs.iter().map(|f| Constant::Float(*f)).collect()))
                .collect(),
        ),
        A::AsSymInts(v) => v
            .iter()
            .map(|s| match s {
                wire::SymIntArgument::AsInt(i) => Ok(int_constant(i)),
                wire::SymIntArgument::AsName(n) => Err(node_lookup(x, Ok(n), names)),
                wire::SymIntArgument::Raw(_) => Err(crate::failure::untyped(
                    "a symbolic argument's payload in a graph signature",
                )),
            })
            .collect::<R<_>>()
            .map(Constant::List),
        A::AsSymFloats(v) => v
            .iter()
            .map(|s| match s {
                wire::SymFloatArgument::AsFloat(f) => Ok(Constant::Float(*f)),
                wire::SymFloatArgument::AsName(n) => Err(node_lookup(x, Ok(n), names)),
                wire::SymFloatArgument::Raw(_) => Err(crate::failure::untyped(
                    "a symbolic argument's payload in a graph signature",
                )),
            })
            .collect::<R<_>>()
            .map(Constant::List),
        A::AsSymBools(v) => v
            .iter()
            .map(|s| match s {
                wire::SymBoolArgument::AsBool(b) => Ok(Constant::Bool(*b)),
                wire::SymBoolArgument::AsName(n) => Err(node_lookup(x, Ok(n), names)),
                wire::SymBoolArgument::Raw(_) => Err(crate::failure::untyped(
                    "a symbolic argument's payload in a graph signature",
                )),
            })
            .collect::<R<_>>()
            .map(Constant::List),
        A::AsTensor(t) => Err(node_lookup(x, tensor_name(t), names)),
        A::AsSymBool(wire::SymBoolArgument::AsBool(b)) => Ok(Constant::Bool(*b)),
        A::AsSymBool(wire::SymBoolArgument::AsName(n)) => Err(node_lookup(x, Ok(n), names)),
        A::AsTensors(v) => match v.first() {
            // `if len(value) == 0: return []` comes before the list forms.
            None => list(Vec::new()),
            Some(t) => Err(node_lookup(x, tensor_name(t), names)),
        },
        A::AsOptionalTensors(v) => v
            .iter()
            .map(|o| match o {
                wire::OptionalTensorArgument::AsNone(_) => Ok(Constant::None),
                wire::OptionalTensorArgument::AsTensor(t) => {
                    Err(node_lookup(x, tensor_name(t), names))
                }
            })
            .collect::<R<_>>()
            .map(Constant::List),
        A::AsNestedTensors(v) => match v.iter().flatten().next() {
            None => list(v.iter().map(|_| Constant::List(Vec::new())).collect()),
            Some(t) => Err(node_lookup(x, tensor_name(t), names)),
        },
        A::AsIntLists(v) => list(
            v.iter()
                .map(|dims| Constant::Tuple(dims.iter().map(int_constant).collect()))
                .collect(),
        ),
        other => Err(in_signature(other)),
    }
}

fn in_signature(x: &wire::Argument) -> LoadFailure {
    Raise::unsupported(format!("a `{}` argument in a signature", x.tag()))
}

pub(super) fn const_spec(value: Constant) -> ArgumentSpec {
    ArgumentSpec::Constant {
        name: String::new(),
        value,
    }
}

/// `deserialize_signature`: the input specs, then the output specs.
pub(super) fn deserialize_signature(sig: &wire::GraphSignature) -> R<ExportGraphSignature> {
    raw_list_use(sig.raw_field("input_specs"), Use::Iter("type"))?;
    let input_specs = sig
        .input_specs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            deserialize_input_spec(i, &format!("$.graph_module.signature.input_specs[{k}]"))
        })
        .collect::<R<Vec<_>>>()?;
    raw_list_use(sig.raw_field("output_specs"), Use::Iter("type"))?;
    let output_specs = sig
        .output_specs
        .iter()
        .map(deserialize_output_spec)
        .collect::<R<Vec<_>>>()?;
    Ok(ExportGraphSignature {
        input_specs,
        output_specs,
    })
}

/// `deserialize_input_spec`.
fn deserialize_input_spec(i: &wire::InputSpec, at: &str) -> R<InputSpec> {
    use wire::InputSpec as I;
    Ok(match i {
        I::UserInput(u) => InputSpec {
            kind: InputKind::UserInput,
            arg: deserialize_argument_spec(&u.arg, Names::None)?,
            target: None,
            persistent: None,
        },
        I::Parameter(p) => InputSpec {
            kind: InputKind::Parameter,
            arg: ArgumentSpec::Tensor {
                name: spec_tensor_name(&p.arg)?,
            },
            target: Some(p.parameter_name.clone()),
            persistent: None,
        },
        I::Buffer(b) => InputSpec {
            kind: InputKind::Buffer,
            arg: ArgumentSpec::Tensor {
                name: spec_tensor_name(&b.arg)?,
            },
            target: Some(b.buffer_name.clone()),
            persistent: Some(persistent(&b.persistent)?),
        },
        I::TensorConstant(t) => InputSpec {
            kind: InputKind::ConstantTensor,
            arg: ArgumentSpec::Tensor {
                name: spec_tensor_name(&t.arg)?,
            },
            target: Some(t.tensor_constant_name.clone()),
            persistent: None,
        },
        I::CustomObj(c) => InputSpec {
            kind: InputKind::CustomObj,
            arg: ArgumentSpec::CustomObj {
                name: c.arg.name.clone(),
                class_fqn: c.arg.class_fqn.clone(),
            },
            target: Some(c.custom_obj_name.clone()),
            persistent: None,
        },
        I::Token(t) => InputSpec {
            kind: InputKind::Token,
            arg: token(&t.arg),
            target: None,
            persistent: None,
        },
        I::ConstantInput(c) => InputSpec {
            kind: InputKind::UserInput,
            arg: ArgumentSpec::Constant {
                name: c.name.clone(),
                value: constant(&c.value, &format!("{at}.constant_input.value"))?,
            },
            target: None,
            persistent: None,
        },
    })
}

/// `InputSpec(persistent=i.buffer.persistent)`: the value as it came,
/// which `InputSpec.__post_init__` refuses only when it is `None`.
fn persistent(p: &wire::Loose<bool>) -> R<PyJson> {
    match p {
        wire::Loose::Typed(b) => Ok(PyJson::Bool(*b)),
        wire::Loose::Raw(PyJson::Null) => Err(Raise::new(
            "AssertionError",
            "Failed to specify persistent flag on BUFFER.",
        )),
        wire::Loose::Raw(v) => Ok(v.clone()),
    }
}

/// `TokenArgument(name=...arg.name)`: the name as it came.
fn token(t: &wire::TokenArgument) -> ArgumentSpec {
    match &t.name {
        wire::Loose::Typed(name) => ArgumentSpec::Token {
            name: name.clone(),
            kept: None,
        },
        wire::Loose::Raw(v) => ArgumentSpec::Token {
            name: crate::signature::py_str(v),
            kept: Some(v.clone()),
        },
    }
}

/// `deserialize_output_spec`.
fn deserialize_output_spec(o: &wire::OutputSpec) -> R<OutputSpec> {
    use wire::OutputSpec as O;
    let tensor = |t: &wire::TensorArgument| -> R<ArgumentSpec> {
        Ok(ArgumentSpec::Tensor {
            name: spec_tensor_name(t)?,
        })
    };
    Ok(match o {
        O::UserOutput(u) => OutputSpec {
            kind: OutputKind::UserOutput,
            arg: deserialize_argument_spec(&u.arg, Names::None)?,
            target: None,
        },
        O::LossOutput(l) => OutputSpec {
            kind: OutputKind::LossOutput,
            arg: tensor(&l.arg)?,
            target: None,
        },
        O::BufferMutation(b) => OutputSpec {
            kind: OutputKind::BufferMutation,
            arg: tensor(&b.arg)?,
            target: Some(b.buffer_name.clone()),
        },
        O::ParameterMutation(p) => OutputSpec {
            kind: OutputKind::ParameterMutation,
            arg: tensor(&p.arg)?,
            target: Some(p.parameter_name.clone()),
        },
        O::GradientToParameter(g) => OutputSpec {
            kind: OutputKind::GradientToParameter,
            arg: tensor(&g.arg)?,
            target: Some(g.parameter_name.clone()),
        },
        O::GradientToUserInput(g) => OutputSpec {
            kind: OutputKind::GradientToUserInput,
            arg: tensor(&g.arg)?,
            target: Some(g.user_input_name.clone()),
        },
        O::UserInputMutation(u) => OutputSpec {
            kind: OutputKind::UserInputMutation,
            arg: tensor(&u.arg)?,
            target: Some(u.user_input_name.clone()),
        },
        O::Token(t) => OutputSpec {
            kind: OutputKind::Token,
            arg: token(&t.arg),
            target: None,
        },
    })
}
