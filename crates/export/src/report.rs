//! The program report of `shared/program-report.md`: what PyTorch says
//! about a loaded `ExportedProgram`, key by key, as one JSON object.
//!
//! The object is a [`PyJson`](torchspec_pyval::pyjson::PyJson) (big ints,
//! key order), so the crate needs no JSON library features: the harness
//! turns it into its own JSON values.

use torchspec_pyval::pyjson::{PyInt, PyJson as Json};

use crate::model::{ExportedProgram, StateDictEntry};
use crate::pytree::{treespec_dumps, treespec_loads};
use crate::signature::{Constant, ExportGraphSignature, UserValue};
use torchspec_pyval::{PyException, Raise};

fn error_json(type_name: &str, message: &str) -> Json {
    Json::object([(
        "error",
        Json::object([("type", type_name.into()), ("message", message.into())]),
    )])
}

fn unsupported_json(reason: &str) -> Json {
    Json::object([("unsupported", Json::object([("reason", reason.into())]))])
}

fn raise_json(r: &Raise) -> Json {
    match r {
        Raise::Exception(e) => error_json(&e.type_name, &e.message),
        Raise::Unsupported(what) => unsupported_json(what),
    }
}

fn exc_json(e: &PyException) -> Json {
    error_json(&e.type_name, &e.message)
}

fn constant_json(c: &Constant) -> Json {
    match c {
        Constant::None => Json::Null,
        Constant::Bool(b) => Json::Bool(*b),
        Constant::Int(i) => Json::from(*i),
        Constant::BigInt(s) => big_int_json(s),
        Constant::Float(f) if f.is_finite() => Json::Float(*f),
        Constant::Float(_) => unsupported_json("a non-finite float in JSON"),
        Constant::Str(s) => Json::Str(s.clone()),
        // `json.dumps` writes a tuple as a list.
        Constant::List(items) | Constant::Tuple(items) => {
            Json::List(items.iter().map(constant_json).collect())
        }
        Constant::Dict(items) => {
            Json::object(items.iter().map(|(k, v)| (k.clone(), constant_json(v))))
        }
        Constant::Torch(_) => unsupported_json("a torch object in JSON"),
        Constant::Complex(..) => unsupported_json("a complex in JSON"),
    }
}

fn user_values(v: &[UserValue]) -> Json {
    Json::List(
        v.iter()
            .map(|u| match u {
                UserValue::Name(n) => Json::Str(n.clone()),
                UserValue::Constant(c) => constant_json(c),
            })
            .collect(),
    )
}

/// `input_tokens` / `output_tokens`: a name kept as it came is its JSON
/// value (a non-finite float is not written as JSON).
fn token_names(v: Vec<Json>) -> Json {
    Json::List(
        v.into_iter()
            .map(|name| match name {
                Json::Float(f) if !f.is_finite() => unsupported_json("a non-finite float in JSON"),
                other => other,
            })
            .collect(),
    )
}

fn strings(v: Vec<String>) -> Json {
    Json::List(v.into_iter().map(Json::Str).collect())
}

fn mapping(v: Vec<(String, String)>) -> Json {
    Json::object(v.into_iter().map(|(k, v)| (k, Json::Str(v))))
}

/// The report of a loaded program, every key of the contract (`state_dict`
/// only when the weights config was read).
pub fn program_report(ep: &ExportedProgram) -> Json {
    let gm = &ep.graph_module;
    let mut r = Members::new();
    let v = &ep.serialized.schema_version;
    r.insert(
        "schema_version".into(),
        Json::List(vec![loose_int_json(&v.major), loose_int_json(&v.minor)]),
    );
    signature_keys(&gm.signature, &mut r);
    call_spec_keys(ep, &mut r);
    r.insert(
        "range_constraints".into(),
        Json::Str(gm.range_constraints.to_string()),
    );
    r.insert("graph".into(), Json::Str(gm.graph.to_python_string()));
    if let Some(sd) = &ep.state_dict {
        r.insert("state_dict".into(), state_dict_json(sd));
    }
    Json::object(r.0)
}

/// The report's members in insertion order (made a [`Json::object`] at the
/// end, so a repeated key would keep its first place and its last value).
struct Members(Vec<(String, Json)>);

impl Members {
    fn new() -> Members {
        Members(Vec::new())
    }

    fn insert(&mut self, key: String, value: Json) {
        self.0.push((key, value));
    }
}

/// The report's `graph_signature` and the signature's derived views, from
/// `parameters` to `backward_signature`.
fn signature_keys(sig: &ExportGraphSignature, r: &mut Members) {
    r.insert("graph_signature".into(), Json::Str(sig.to_string()));
    r.insert("parameters".into(), strings(sig.parameters()));
    r.insert("buffers".into(), strings(sig.buffers()));
    r.insert(
        "non_persistent_buffers".into(),
        strings(sig.non_persistent_buffers()),
    );
    r.insert(
        "lifted_tensor_constants".into(),
        strings(sig.lifted_tensor_constants()),
    );
    r.insert(
        "lifted_custom_objs".into(),
        strings(sig.lifted_custom_objs()),
    );
    r.insert(
        "input_tokens".into(),
        sig.input_tokens()
            .map_or_else(|e| exc_json(&e), token_names),
    );
    r.insert(
        "output_tokens".into(),
        sig.output_tokens()
            .map_or_else(|e| exc_json(&e), token_names),
    );
    r.insert("user_inputs".into(), user_values(&sig.user_inputs()));
    r.insert(
        "user_outputs".into(),
        sig.user_outputs()
            .map_or_else(|e| exc_json(&e), |v| user_values(&v)),
    );
    r.insert(
        "inputs_to_parameters".into(),
        mapping(sig.inputs_to_parameters()),
    );
    r.insert("inputs_to_buffers".into(), mapping(sig.inputs_to_buffers()));
    r.insert("buffers_to_mutate".into(), mapping(sig.buffers_to_mutate()));
    r.insert(
        "parameters_to_mutate".into(),
        mapping(sig.parameters_to_mutate()),
    );
    r.insert(
        "user_inputs_to_mutate".into(),
        mapping(sig.user_inputs_to_mutate()),
    );
    r.insert(
        "inputs_to_lifted_tensor_constants".into(),
        mapping(sig.inputs_to_lifted_tensor_constants()),
    );
    r.insert(
        "inputs_to_lifted_custom_objs".into(),
        mapping(sig.inputs_to_lifted_custom_objs()),
    );
    r.insert(
        "backward_signature".into(),
        match sig.backward_signature() {
            Ok(None) => Json::Null,
            Ok(Some(b)) => Json::object([
                (
                    "gradients_to_parameters",
                    mapping(b.gradients_to_parameters),
                ),
                (
                    "gradients_to_user_inputs",
                    mapping(b.gradients_to_user_inputs),
                ),
                ("loss_output", b.loss_output.into()),
            ]),
            Err(e) => exc_json(&e),
        },
    );
}

/// The report's `in_spec`, `in_spec_str`, `out_spec` and `out_spec_str`:
/// `treespec_dumps` and `str()` of the call spec's trees.
fn call_spec_keys(ep: &ExportedProgram, r: &mut Members) {
    let (in_spec, out_spec) = call_spec(ep);
    for (key, spec) in [("in_spec", in_spec), ("out_spec", out_spec)] {
        let (dumps, text) = match spec {
            Ok(Some(spec)) => (
                treespec_dumps(&spec).map_or_else(|e| raise_json(&e), Json::Str),
                spec.to_str().map_or_else(|e| raise_json(&e), Json::Str),
            ),
            // treespec_dumps(None) (its `_ensure_python_treespec_instance`,
            // torch/utils/_pytree.py) and str(None).
            Ok(None) => (
                error_json(
                    "TypeError",
                    "Expected `treespec` to be an instance of PyTreeSpec but got item of type \
                     <class 'NoneType'>.",
                ),
                Json::Str("None".into()),
            ),
            Err(e) => (raise_json(&e), raise_json(&e)),
        };
        r.insert(key.into(), dumps);
        r.insert(format!("{key}_str"), text);
    }
}

/// The report's `state_dict`: each entry's shape, dtype and
/// `Parameter`-ness, or why the reference cannot tell them.
fn state_dict_json(sd: &[StateDictEntry]) -> Json {
    Json::object(sd.iter().map(|e| {
        let meta = match &e.meta {
            Ok(meta) => Json::object([
                ("shape", meta.shape.clone().into()),
                ("dtype", meta.dtype.name().into()),
                ("parameter", meta.parameter.into()),
            ]),
            Err(why) => unsupported_json(why),
        };
        (e.name.as_str(), meta)
    }))
}

/// The value as `json.loads` read it (the oracle reads `schema_version`
/// from the file's JSON): an int, or whatever else the file holds there.
/// A float in it is Python's float, whose text is `repr`'s (`1e+16`).
fn loose_int_json(i: &crate::schema::Loose<PyInt>) -> Json {
    match i {
        crate::schema::Loose::Typed(i) => Json::Int(i.clone()),
        crate::schema::Loose::Raw(v) => v.clone(),
    }
}

/// A constant int beyond `i64`, from its decimal text.
fn big_int_json(s: &str) -> Json {
    match s.parse::<num_bigint::BigInt>() {
        Ok(b) if is_json_int(s) => Json::Int(PyInt::from_big(b)),
        _ => Json::Str(s.to_owned()),
    }
}

/// `s` is a JSON int literal: `-?(0|[1-9][0-9]*)`.
fn is_json_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

type Spec = Result<Option<crate::pytree::TreeSpec>, Raise>;

/// `ep.call_spec`: the specs of the root entry of the module call graph.
fn call_spec(ep: &ExportedProgram) -> (Spec, Spec) {
    let mcg = &ep.graph_module.module_call_graph;
    let Some(first) = mcg.first() else {
        return (Ok(None), Ok(None));
    };
    if !first.is_root() {
        let mut fqn = String::new();
        crate::schema::load::repr_loose(&first.fqn, &mut fqn, crate::schema::load::repr_str);
        let e = Raise::new(
            "AssertionError",
            format!("expected first module_call_graph fqn to be empty string, got {fqn}"),
        );
        return (Err(e.clone()), Err(e));
    }
    let Some(sig) = &first.signature else {
        let e = Raise::new(
            "AttributeError",
            "'NoneType' object has no attribute 'in_spec'",
        );
        return (Err(e.clone()), Err(e));
    };
    let registry = ep.registrations.pytree_registry();
    (
        treespec_loads(&sig.in_spec, &registry).map(Some),
        treespec_loads(&sig.out_spec, &registry).map(Some),
    )
}
