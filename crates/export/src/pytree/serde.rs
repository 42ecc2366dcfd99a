//! Mirrors torch/utils/_pytree.py `treespec_dumps` / `treespec_loads` with
//! protocol 1 (`_treespec_to_json`, `_json_to_treespec`) and the context
//! (de)serializers of namedtuple and defaultdict. Each Python operation on the
//! loaded JSON (unpacking, subscripting, `len`, `in` on a dict) raises what
//! CPython raises for a value of the wrong shape.

use std::rc::Rc;

use super::json;
use super::types::{import_attr, NodeKind, PyType, Registry};
use super::TreeSpec;
use torchspec_pyval::{Dict, PyObject, PyResult, Raise, Value};

const DEFAULT_PROTOCOL: i64 = 1;
const NO_SERIALIZED_TYPE_NAME_FOUND: &str = "NO_SERIALIZED_TYPE_NAME_FOUND";

/// `treespec_dumps(spec)`: the default protocol, 1.
pub fn treespec_dumps(spec: &TreeSpec) -> PyResult<String> {
    treespec_dumps_protocol(spec, DEFAULT_PROTOCOL)
}

/// `treespec_dumps(spec, protocol)`.
pub fn treespec_dumps_protocol(spec: &TreeSpec, protocol: i64) -> PyResult<String> {
    if protocol != 1 {
        return Err(unknown_protocol(&Value::int(protocol)));
    }
    let schema = to_json(spec)?;
    json::dumps(&Value::Tuple(Rc::new(vec![Value::int(protocol), schema])))
}

fn unknown_protocol(protocol: &Value) -> Raise {
    let shown = protocol.py_str().unwrap_or_default();
    Raise::value_error(format!(
        "Unknown protocol {shown}. Available protocols: [1]"
    ))
}

/// `dataclasses.asdict(_treespec_to_json(spec))`.
fn to_json(spec: &TreeSpec) -> PyResult<Value> {
    let Some(t) = spec.node_type() else {
        return Ok(schema(Value::None, Value::None, Vec::new()));
    };
    let name = match &t.serialized_type_name {
        None => {
            return Err(Raise::new(
                "NotImplementedError",
                format!("Serializing {} in pytree is not registered.", t.repr()?),
            ))
        }
        Some(n) if n == NO_SERIALIZED_TYPE_NAME_FOUND => {
            return Err(Raise::new(
                "NotImplementedError",
                format!(
                    "No registered serialization name for {} found. Please update your \
                     _register_pytree_node call with a `serialized_type_name` kwarg.",
                    t.repr()?
                ),
            ))
        }
        Some(n) => n,
    };
    let context = match t.kind {
        NodeKind::NamedTupleFn | NodeKind::NamedTuple { .. } => {
            namedtuple_serialize(spec.context())?
        }
        NodeKind::DefaultDict => defaultdict_serialize(spec.context())?,
        _ => Value::str(&json::dumps(spec.context()).map_err(|e| match e {
            Raise::Exception(x) if x.type_name == "TypeError" => Raise::type_error(
                "Unable to serialize context. Please make the context json dump-able, \
                 or register a custom serializer using _register_pytree_node.",
            ),
            e => e,
        })?),
    };
    let children = spec
        .children()
        .iter()
        .map(to_json)
        .collect::<PyResult<Vec<_>>>()?;
    Ok(schema(Value::str(name), context, children))
}

fn schema(type_name: Value, context: Value, children: Vec<Value>) -> Value {
    Value::Dict(Rc::new(Dict::from_static_pairs([
        ("type", type_name),
        ("context", context),
        ("children_spec", Value::List(Rc::new(children))),
    ])))
}

/// `_namedtuple_serialize`: the context is a class; its serialized name.
fn namedtuple_serialize(context: &Value) -> PyResult<Value> {
    context.check_hashable()?;
    let shown = context.py_str()?;
    match context
        .downcast::<PyType>()
        .and_then(|t| t.serialized_type_name.as_deref())
    {
        Some(NO_SERIALIZED_TYPE_NAME_FOUND) => Err(Raise::new(
            "NotImplementedError",
            format!(
                "Can't serialize TreeSpec of namedtuple class {shown} because we couldn't \
                 find a serialized_type_name. Please register using `_register_namedtuple`."
            ),
        )),
        Some(name) => Ok(Value::str(name)),
        None => Err(Raise::new(
            "NotImplementedError",
            format!(
                "Can't serialize TreeSpec of namedtuple class {shown} because we didn't \
                 register a serialized_type_name. Please register using `_register_namedtuple`."
            ),
        )),
    }
}

/// `_defaultdict_serialize`: `[default_factory, dict_context]` → a JSON object
/// (not a string: the only context protocol 1 stores unquoted).
fn defaultdict_serialize(context: &Value) -> PyResult<Value> {
    let (factory, dict_context) = unpack2(context)?;
    let Some(t) = factory.downcast::<PyType>() else {
        return Err(torchspec_pyval::no_attribute(&factory, "__module__"));
    };
    Ok(Value::Dict(Rc::new(Dict::from_static_pairs([
        ("default_factory_module", Value::str(&t.module)),
        ("default_factory_name", Value::str(&t.qualname)),
        ("dict_context", dict_context),
    ]))))
}

/// `treespec_loads(serialized)` in a process whose pytree registries are `registry`.
pub fn treespec_loads(serialized: &str, registry: &Registry) -> PyResult<TreeSpec> {
    loads(serialized, registry, Chain::Outer)
}

/// [`treespec_loads`], raising the end of a re-raised exception's
/// `__cause__` chain: what `torch.export.load` reports (it logs the
/// deserializer's real error, as the oracle records it).
pub fn treespec_loads_cause(serialized: &str, registry: &Registry) -> PyResult<TreeSpec> {
    loads(serialized, registry, Chain::Cause)
}

/// Which exception of a `raise ... from ex` to raise.
#[derive(Clone, Copy, PartialEq)]
enum Chain {
    Outer,
    Cause,
}

fn loads(serialized: &str, registry: &Registry, chain: Chain) -> PyResult<TreeSpec> {
    let loaded = json::loads(serialized)?;
    let (protocol, json_schema) = unpack2(&loaded)?;
    // `protocol in _SUPPORTED_PROTOCOLS`: a dict lookup (`True` and `1.0` are `1`).
    protocol.check_hashable()?;
    if !protocol.key_eq(&Value::int(1)) {
        return Err(unknown_protocol(&protocol));
    }
    json_to_treespec(&json_schema, registry, chain)
}

fn json_to_treespec(json_schema: &Value, registry: &Registry, chain: Chain) -> PyResult<TreeSpec> {
    let type_name = subscript(json_schema, "type")?;
    if matches!(type_name, Value::None)
        && matches!(subscript(json_schema, "context")?, Value::None)
        && py_len(&subscript(json_schema, "children_spec")?)? == 0
    {
        return Ok(TreeSpec::leaf());
    }
    type_name.check_hashable()?;
    let typ = match &type_name {
        Value::Str(s) => registry.lookup(s),
        _ => None,
    };
    let Some(typ) = typ else {
        let shown = type_name.py_str()?;
        let quoted = type_name.repr()?;
        return Err(Raise::new(
            "NotImplementedError",
            format!(
                "Deserializing {shown} in pytree failed because the serialized type is not \
                 registered in this process. If this type is defined in another package, import \
                 that package before loading this artifact so its pytree registrations run. If \
                 you control the type, register it with \
                 `torch.utils._pytree.register_pytree_node(..., serialized_type_name=...)` or \
                 `torch.export.register_dataclass(..., serialized_type_name=...)` before \
                 deserializing. The `serialized_type_name` must match {quoted}."
            ),
        ));
    };
    let dumpable = subscript(json_schema, "context")?;
    let context = match typ.kind {
        NodeKind::NamedTupleFn | NodeKind::NamedTuple { .. } => {
            namedtuple_deserialize(&dumpable, registry)?
        }
        NodeKind::DefaultDict => defaultdict_deserialize(&dumpable)?,
        _ => {
            // `json.loads(json_schema["context"])`, its `TypeError`
            // re-raised `from ex`.
            let Value::Str(text) = &dumpable else {
                return Err(Raise::type_error(match chain {
                    Chain::Outer => "Unable to deserialize context. Please make the context json \
                                     load-able, or register a custom serializer using \
                                     _register_pytree_node."
                        .to_string(),
                    Chain::Cause => format!(
                        "the JSON object must be str, bytes or bytearray, not {}",
                        dumpable.type_name()
                    ),
                }));
            };
            let loaded = json::loads(text)?;
            enum_object_hook(&loaded)?;
            loaded
        }
    };
    let children = subscript(json_schema, "children_spec")?
        .iterate()?
        .iter()
        .map(|c| json_to_treespec(c, registry, chain))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(TreeSpec::new(typ.clone(), context, children))
}

/// `_namedtuple_deserialize`: the name is looked up among *all* serialized
/// types, so `"builtins.tuple"` gives the class `tuple` (a PyTorch quirk, kept).
fn namedtuple_deserialize(dumpable: &Value, registry: &Registry) -> PyResult<Value> {
    dumpable.check_hashable()?;
    let found = match dumpable {
        Value::Str(s) => registry.lookup(s),
        _ => None,
    };
    match found {
        Some(t) => Ok(Value::Object(t.clone() as Rc<dyn PyObject>)),
        None => Err(Raise::new(
            "NotImplementedError",
            format!(
                "Can't deserialize TreeSpec of namedtuple class {} because we couldn't find a \
                 serialized name.",
                dumpable.py_str()?
            ),
        )),
    }
}

/// `_defaultdict_deserialize`.
fn defaultdict_deserialize(dumpable: &Value) -> PyResult<Value> {
    let Value::Dict(d) = dumpable else {
        return Err(Raise::new(
            "AssertionError",
            "dumpable_context must be a dict",
        ));
    };
    const KEYS: [&str; 3] = [
        "default_factory_module",
        "default_factory_name",
        "dict_context",
    ];
    if d.len() != 3 || KEYS.iter().any(|k| d.get_str(k).is_none()) {
        // The message prints two sets of str, whose order depends on the
        // process's string hash seed.
        return Err(Raise::unsupported(
            "the AssertionError of a defaultdict context with other keys (it prints sets)",
        ));
    }
    let module = d.get_str(KEYS[0]).cloned().unwrap_or(Value::None);
    let name = d.get_str(KEYS[1]).cloned().unwrap_or(Value::None);
    let (Value::Str(module), Value::Str(name)) = (&module, &name) else {
        let which = if matches!(module, Value::Str(_)) {
            "default_factory_name"
        } else {
            "default_factory_module"
        };
        return Err(Raise::new(
            "AssertionError",
            format!("{which} must be a string"),
        ));
    };
    let factory = import_attr(module, name)?;
    let dict_context = d.get_str(KEYS[2]).cloned().unwrap_or(Value::None);
    Ok(Value::List(Rc::new(vec![factory, dict_context])))
}

/// `enum_object_hook`, applied to every JSON object of a loaded context.
fn enum_object_hook(v: &Value) -> PyResult<()> {
    match v {
        Value::List(items) => items.iter().try_for_each(enum_object_hook),
        Value::Dict(d) => {
            for (_, x) in d.iter() {
                enum_object_hook(x)?;
            }
            if d.get_str("__enum__").is_none() {
                return Ok(());
            }
            if d.get_str("fqn").is_none() {
                return Err(Raise::new("KeyError", "'fqn'"));
            }
            Err(Raise::unsupported("an enum member in a pytree context"))
        }
        _ => Ok(()),
    }
}

/// `a, b = v`.
pub(super) fn unpack2(v: &Value) -> PyResult<(Value, Value)> {
    let items = match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
            return Err(Raise::type_error(format!(
                "cannot unpack non-iterable {} object",
                v.type_name()
            )))
        }
        _ => v.iterate()?,
    };
    match items.len() {
        2 => Ok((items[0].clone(), items[1].clone())),
        n if n > 2 => Err(Raise::value_error("too many values to unpack (expected 2)")),
        n => Err(Raise::value_error(format!(
            "not enough values to unpack (expected 2, got {n})"
        ))),
    }
}

/// `v[key]` with a str key.
fn subscript(v: &Value, key: &str) -> PyResult<Value> {
    match v {
        Value::Dict(d) => d
            .get_str(key)
            .cloned()
            .ok_or_else(|| Raise::new("KeyError", torchspec_pyval::str_repr(key))),
        Value::List(_) | Value::Tuple(_) => Err(Raise::type_error(format!(
            "{} indices must be integers or slices, not str",
            v.type_name()
        ))),
        Value::Str(_) => Err(Raise::type_error(
            "string indices must be integers, not 'str'",
        )),
        _ => Err(Raise::type_error(format!(
            "'{}' object is not subscriptable",
            v.type_name()
        ))),
    }
}

/// `len(v)`.
fn py_len(v: &Value) -> PyResult<usize> {
    match v {
        Value::Str(s) => Ok(s.chars().count()),
        Value::List(x) | Value::Tuple(x) => Ok(x.len()),
        Value::Dict(d) => Ok(d.len()),
        _ => Err(Raise::type_error(format!(
            "object of type '{}' has no len()",
            v.type_name()
        ))),
    }
}
