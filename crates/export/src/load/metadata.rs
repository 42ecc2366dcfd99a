//! Mirrors serialize.py's `deserialize_metadata` (what it raises on a
//! node's metadata) and the graph module's `metadata` and
//! `treespec_namedtuple_fields` at the end of `deserialize_graph_module`.

use super::raw::{json_loads, no_attribute, truthy};
use super::state::R;
use crate::ops::{self, Resolved};
use crate::registrations::Registrations;
use crate::schema as wire;
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

/// The end of `deserialize_graph_module`: `metadata.get("custom")` and
/// `json.loads` of it when truthy, then `treespec_namedtuple_fields.items()`
/// (each value's `field_names`).
pub(super) fn graph_module_meta(gm: &wire::GraphModule) -> R<()> {
    use torchspec_pyval::pyjson::PyJson;
    match &gm.metadata {
        wire::Loose::Typed(m) => {
            if let Some(text) = meta_get(m, "custom").filter(|t| !t.is_empty()) {
                json_loads(&PyJson::Str(text.to_string()))?;
            }
        }
        wire::Loose::Raw(PyJson::Object(entries)) => {
            let custom = entries.iter().rev().find(|(k, _)| k == "custom");
            if let Some((_, v)) = custom.filter(|(_, v)| truthy(v)) {
                json_loads(v)?;
            }
        }
        wire::Loose::Raw(v) => return Err(no_attribute(v, "get")),
    }
    match &gm.treespec_namedtuple_fields {
        wire::Loose::Typed(_) => Ok(()),
        // `NamedTupleDef(field_names=...)` keeps a `field_names` of any
        // type, and `meta[...][type_] = fields.field_names` only stores it.
        wire::Loose::Raw(PyJson::Object(entries)) => {
            for (k, v) in entries {
                let fits =
                    matches!(v, PyJson::Object(f) if f.iter().any(|(n, _)| n == "field_names"));
                if !fits {
                    return Err(Raise::unsupported(format!(
                        "$.graph_module.treespec_namedtuple_fields[{}]: a {} where the schema has a NamedTupleDef",
                        torchspec_pyval::repr::str_repr(k),
                        v.type_name()
                    )));
                }
            }
            Ok(())
        }
        wire::Loose::Raw(v) => Err(no_attribute(v, "items")),
    }
}

/// `metadata.get(key)` of the node's metadata dict (a repeated key keeps
/// its last value), when truthy.
pub(super) fn meta_get<'a, V: AsRef<str>>(
    metadata: &'a [(String, V)],
    key: &str,
) -> Option<&'a str> {
    metadata
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_ref())
        .filter(|v| !v.is_empty())
}

/// `metadata_split` of `deserialize_metadata`: splits at the commas
/// outside `[(`…`)]` nesting (one counter for both kinds).
pub(super) fn metadata_split_len(item: &str) -> usize {
    let mut parts = 1;
    let mut depth = 0i64;
    for c in item.chars() {
        match c {
            '[' | '(' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => parts += 1,
            _ => {}
        }
    }
    parts
}

/// What `GraphModuleDeserializer.deserialize_metadata` raises on a node's
/// metadata (the values it keeps are not modelled: the report does not
/// show them).
pub(super) fn check_metadata(
    metadata: &wire::Loose<Vec<(String, std::sync::Arc<str>)>>,
    registrations: &Registrations,
) -> R<()> {
    let raw = match metadata {
        wire::Loose::Typed(m) => return check_str_metadata(m, registrations),
        wire::Loose::Raw(raw) => raw,
    };
    // `metadata.get(key)` on what `_dict_to_dataclass` kept: a dict of raw
    // values, or something with no `.get`.
    let PyJson::Object(entries) = raw else {
        return Err(Raise::new(
            "AttributeError",
            format!("'{}' object has no attribute 'get'", raw.type_name()),
        ));
    };
    let mut strs = Vec::with_capacity(entries.len());
    for key in [
        "nn_module_stack",
        "source_fn_stack",
        "torch_fn",
        "custom",
        "from_node",
    ] {
        let Some((_, v)) = entries.iter().rev().find(|(k, _)| k == key) else {
            continue;
        };
        match v {
            PyJson::Str(s) => strs.push((key.to_string(), s.clone())),
            v if !truthy(v) => {}
            // `nn_module_stack_str.split(ST_DELIMITER)`, `json.loads(custom_str)`.
            v if key == "custom" || key == "from_node" => {
                // The checks before this key run first.
                check_str_metadata(&strs, registrations)?;
                return Err(Raise::new(
                    "TypeError",
                    format!(
                        "the JSON object must be str, bytes or bytearray, not {}",
                        v.type_name()
                    ),
                ));
            }
            v => {
                check_str_metadata(&strs, registrations)?;
                return Err(Raise::new(
                    "AttributeError",
                    format!("'{}' object has no attribute 'split'", v.type_name()),
                ));
            }
        }
    }
    check_str_metadata(&strs, registrations)
}

/// `deserialize_metadata` on a `dict[str, str]`.
pub(super) fn check_str_metadata<V: AsRef<str>>(
    metadata: &[(String, V)],
    registrations: &Registrations,
) -> R<()> {
    if let Some(stack) = meta_get(metadata, "nn_module_stack") {
        for item in stack.split(';') {
            let n = metadata_split_len(item);
            if n != 3 {
                return Err(Raise::new(
                    "AssertionError",
                    format!("expected metadata_split to return 3 parts, got {n}"),
                ));
            }
        }
    }
    if let Some(stack) = meta_get(metadata, "source_fn_stack") {
        for item in stack.split(';') {
            // `name, target_str = source_fn_str.split(",")`
            let parts: Vec<&str> = item.split(',').collect();
            match parts.len() {
                1 => {
                    return Err(Raise::new(
                        "ValueError",
                        "not enough values to unpack (expected 2, got 1)",
                    ))
                }
                2 => {}
                _ => {
                    return Err(Raise::new(
                        "ValueError",
                        "too many values to unpack (expected 2)",
                    ))
                }
            }
            // `deserialize_meta_func`: a target not under `torch` goes
            // through `deserialize_operator`, which raises only for `#…`.
            let target = parts[1];
            if !target.starts_with("torch") {
                if let Resolved::Raises(exception, message) = ops::resolve(target, registrations) {
                    return Err(Raise::new(exception, message));
                }
            }
        }
    }
    for key in ["custom", "from_node"] {
        if let Some(text) = meta_get(metadata, key) {
            let value = json_loads(&torchspec_pyval::pyjson::PyJson::Str(text.to_string()))?;
            if key == "from_node" {
                match &value {
                    PyJson::Null => {}
                    PyJson::List(items) => {
                        for item in items {
                            node_source_from_dict(item, 0)?;
                        }
                    }
                    other => {
                        return Err(Raise::new(
                            "AssertionError",
                            format!("expected list, got {}", other.type_name()),
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

/// How deep a `from_node` chain is followed before the answer is
/// unsupported (CPython's recursion limit decides past it).
const MAX_FROM_NODE_DEPTH: usize = 200;

/// `NodeSource._from_dict(d)` (torch/fx/traceback.py): None is skipped, a
/// non-dict refused, `d.get("action")` split at `+` when truthy, and a
/// `from_node` that is not None iterated, each item read the same way.
fn node_source_from_dict(d: &PyJson, depth: usize) -> R<()> {
    let entries = match d {
        PyJson::Null => return Ok(()),
        PyJson::Object(entries) => entries,
        other => {
            return Err(Raise::new(
                "AssertionError",
                format!("Expected a dict, got <class '{}'>", other.type_name()),
            ))
        }
    };
    if depth >= MAX_FROM_NODE_DEPTH {
        return Err(Raise::unsupported(format!(
            "a `from_node` chain nested more than {MAX_FROM_NODE_DEPTH} levels"
        )));
    }
    // A repeated key keeps its last value (`json.loads` builds a dict).
    let get = |key: &str| entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
    if let Some(action) = get("action").filter(|v| truthy(v)) {
        if !matches!(action, PyJson::Str(_)) {
            return Err(no_attribute(action, "split"));
        }
    }
    match get("from_node") {
        None | Some(PyJson::Null) => Ok(()),
        Some(PyJson::List(items)) => {
            for item in items {
                node_source_from_dict(item, depth + 1)?;
            }
            Ok(())
        }
        // Iterating a str or dict gives strs.
        Some(PyJson::Str(s)) if s.is_empty() => Ok(()),
        Some(PyJson::Object(o)) if o.is_empty() => Ok(()),
        Some(PyJson::Str(_) | PyJson::Object(_)) => Err(Raise::new(
            "AssertionError",
            "Expected a dict, got <class 'str'>",
        )),
        Some(other) => Err(Raise::new(
            "TypeError",
            format!("'{}' object is not iterable", other.type_name()),
        )),
    }
}
