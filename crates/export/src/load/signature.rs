//! Mirrors serialize.py's `deserialize_signature`: `deserialize_input_spec`,
//! `deserialize_output_spec` and `deserialize_argument_spec`.

use super::raw::{field_not_set, raw_list_use, Use};
use super::state::R;
use crate::failure::LoadFailure;
use crate::schema as wire;
use crate::signature::{
    ArgumentSpec, Constant, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
};
use torchspec_pyval::pyjson::{PyInt, PyJson};

pub(super) fn constant(v: &wire::ConstantValue) -> Constant {
    match v {
        wire::ConstantValue::AsNone(_) => Constant::None,
        wire::ConstantValue::AsInt(PyInt::Small(i)) => Constant::Int(*i),
        wire::ConstantValue::AsInt(PyInt::Big(b)) => Constant::BigInt(b.to_string()),
        wire::ConstantValue::AsFloat(f) => Constant::Float(*f),
        wire::ConstantValue::AsString(s) => Constant::Str(s.clone()),
        wire::ConstantValue::AsBool(b) => Constant::Bool(*b),
    }
}

/// `deserialize_argument_spec`: non-symbolic arguments become
/// `ConstantArgument(name="", value=deserialize_input(x))`.
pub(super) fn deserialize_argument_spec(x: &wire::Argument) -> R<ArgumentSpec> {
    use wire::Argument as A;
    Ok(match x {
        A::AsTensor(t) => ArgumentSpec::Tensor {
            name: t.name.clone(),
        },
        A::AsSymInt(s) => match s {
            wire::SymIntArgument::AsName(n) => ArgumentSpec::SymInt { name: n.clone() },
            wire::SymIntArgument::AsInt(_) => return Err(field_not_set("as_name")),
        },
        A::AsSymFloat(s) => match s {
            wire::SymFloatArgument::AsName(n) => ArgumentSpec::SymFloat { name: n.clone() },
            wire::SymFloatArgument::AsFloat(_) => return Err(field_not_set("as_name")),
        },
        A::AsCustomObj(c) => {
            return Err(LoadFailure::unsupported(format!(
                "custom object `{}` in a signature",
                c.name
            )))
        }
        A::AsNone(_) => const_spec(Constant::None),
        A::AsInt(PyInt::Small(i)) => const_spec(Constant::Int(*i)),
        A::AsInt(PyInt::Big(b)) => const_spec(Constant::BigInt(b.to_string())),
        A::AsFloat(f) => const_spec(Constant::Float(*f)),
        A::AsBool(b) => const_spec(Constant::Bool(*b)),
        A::AsString(s) => const_spec(Constant::Str(s.clone())),
        other => {
            return Err(LoadFailure::unsupported(format!(
                "a `{}` argument in a signature",
                other.tag()
            )))
        }
    })
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
        .map(deserialize_input_spec)
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
fn deserialize_input_spec(i: &wire::InputSpec) -> R<InputSpec> {
    use wire::InputSpec as I;
    Ok(match i {
        I::UserInput(u) => InputSpec {
            kind: InputKind::UserInput,
            arg: deserialize_argument_spec(&u.arg)?,
            target: None,
            persistent: None,
        },
        I::Parameter(p) => InputSpec {
            kind: InputKind::Parameter,
            arg: ArgumentSpec::Tensor {
                name: p.arg.name.clone(),
            },
            target: Some(p.parameter_name.clone()),
            persistent: None,
        },
        I::Buffer(b) => InputSpec {
            kind: InputKind::Buffer,
            arg: ArgumentSpec::Tensor {
                name: b.arg.name.clone(),
            },
            target: Some(b.buffer_name.clone()),
            persistent: Some(persistent(&b.persistent)?),
        },
        I::TensorConstant(t) => InputSpec {
            kind: InputKind::ConstantTensor,
            arg: ArgumentSpec::Tensor {
                name: t.arg.name.clone(),
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
                value: constant(&c.value),
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
        wire::Loose::Raw(PyJson::Null) => Err(LoadFailure::py(
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
    let tensor = |t: &wire::TensorArgument| ArgumentSpec::Tensor {
        name: t.name.clone(),
    };
    Ok(match o {
        O::UserOutput(u) => OutputSpec {
            kind: OutputKind::UserOutput,
            arg: deserialize_argument_spec(&u.arg)?,
            target: None,
        },
        O::LossOutput(l) => OutputSpec {
            kind: OutputKind::LossOutput,
            arg: tensor(&l.arg),
            target: None,
        },
        O::BufferMutation(b) => OutputSpec {
            kind: OutputKind::BufferMutation,
            arg: tensor(&b.arg),
            target: Some(b.buffer_name.clone()),
        },
        O::ParameterMutation(p) => OutputSpec {
            kind: OutputKind::ParameterMutation,
            arg: tensor(&p.arg),
            target: Some(p.parameter_name.clone()),
        },
        O::GradientToParameter(g) => OutputSpec {
            kind: OutputKind::GradientToParameter,
            arg: tensor(&g.arg),
            target: Some(g.parameter_name.clone()),
        },
        O::GradientToUserInput(g) => OutputSpec {
            kind: OutputKind::GradientToUserInput,
            arg: tensor(&g.arg),
            target: Some(g.user_input_name.clone()),
        },
        O::UserInputMutation(u) => OutputSpec {
            kind: OutputKind::UserInputMutation,
            arg: tensor(&u.arg),
            target: Some(u.user_input_name.clone()),
        },
        O::Token(t) => OutputSpec {
            kind: OutputKind::Token,
            arg: token(&t.arg),
            target: None,
        },
    })
}
