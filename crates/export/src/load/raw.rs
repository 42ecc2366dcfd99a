//! The fields `_dict_to_dataclass` passed through as they came
//! (`wire::Loose::Raw`): what Python raises at their first use
//! (`for x in v`, `len(v)`, `v[0]`, `v.items()`, `json.loads(v)`), and the
//! `KeyError` / `AttributeError` helpers the deserializer shares.

use super::state::R;
use crate::failure::LoadFailure;
use crate::schema as wire;
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

pub(super) fn key_error(name: &str) -> LoadFailure {
    Raise::new("KeyError", torchspec_pyval::repr::str_repr(name))
}

/// `d[key]` of a dict keyed by str, with a key `_dict_to_dataclass`
/// passed through as it came: `KeyError(key)`, or the `TypeError` of a
/// list or dict, which cannot be hashed.
pub(super) fn raw_key_error(key: &PyJson) -> LoadFailure {
    match key {
        PyJson::List(_) | PyJson::Object(_) => Raise::new(
            "TypeError",
            format!("unhashable type: '{}'", key.type_name()),
        ),
        _ => {
            let mut text = String::new();
            wire::load::repr_raw(key, &mut text);
            Raise::new("KeyError", text)
        }
    }
}

/// `serialized_name_to_node[name]` or `serialized_name_to_meta[name]`
/// of a str field `_dict_to_dataclass` passed through: the str, or the
/// value as it came.
pub(super) type Name<'w> = Result<&'w str, &'w PyJson>;

/// `TensorArgument.name` as the deserializer reads it.
pub(super) fn tensor_name(t: &wire::TensorArgument) -> Name<'_> {
    t.raw_field("name").map_or(Ok(t.name.as_str()), Err)
}

/// `Graph.create_node(..., name=v)` of a name that is no str:
/// `_Namespace.create_name`'s `_name_regex.match(v)`.
pub(super) fn name_regex_error(v: &PyJson) -> LoadFailure {
    Raise::new(
        "TypeError",
        format!(
            "expected string or bytes-like object, got '{}'",
            v.type_name()
        ),
    )
}

/// `Graph.placeholder(v)` of a name that is no str: `_target_to_str`.
pub(super) fn target_not_str(v: &PyJson) -> LoadFailure {
    Raise::new(
        "AssertionError",
        format!("Expected target to be str, got <class '{}'>", v.type_name()),
    )
}

/// `for val in v` over a list field `_dict_to_dataclass` passed through:
/// the items, or what Python raises iterating the raw value (`""` is empty;
/// a longer str yields one-character strs, which have no `.value`).
pub(super) fn iterated<T>(v: &wire::Loose<Vec<T>>) -> R<&[T]> {
    match v {
        wire::Loose::Typed(items) => Ok(items),
        wire::Loose::Raw(raw) => raw_list_use(Some(raw), Use::Iter("value")).map(|()| &[][..]),
    }
}

/// How the deserializer first uses a list field.
#[derive(Clone, Copy)]
pub(super) enum Use {
    /// `for x in v`, then `x.ATTR`.
    Iter(&'static str),
    /// `len(v)`.
    Len,
    /// `v[0].ATTR`.
    Index(&'static str),
}

/// The first use of a list field `_dict_to_dataclass` passed through as
/// it came (`raw`; `None`: it was a list): Python's `TypeError` on a value
/// it cannot iterate or measure, or on a non-empty str the
/// `AttributeError` of its first character (`""` is an empty list).
pub(super) fn raw_list_use(raw: Option<&torchspec_pyval::pyjson::PyJson>, how: Use) -> R<()> {
    use torchspec_pyval::pyjson::PyJson;
    let Some(v) = raw else {
        return Ok(());
    };
    match (v, how) {
        (PyJson::Str(s), Use::Index(_)) if s.is_empty() => {
            Err(Raise::new("IndexError", "string index out of range"))
        }
        (PyJson::Str(_), Use::Index(attr)) => Err(Raise::new(
            "AttributeError",
            format!("'str' object has no attribute '{attr}'"),
        )),
        (PyJson::Str(s), _) if s.is_empty() => Ok(()),
        (PyJson::Str(_), Use::Iter(attr)) => Err(Raise::new(
            "AttributeError",
            format!("'str' object has no attribute '{attr}'"),
        )),
        (PyJson::Str(_) | PyJson::List(_) | PyJson::Object(_), _) => Err(crate::failure::untyped(
            format_args!("a {} where the schema has a list", v.type_name()),
        )),
        (_, Use::Iter(_)) => Err(Raise::new(
            "TypeError",
            format!("'{}' object is not iterable", v.type_name()),
        )),
        (_, Use::Len) => Err(Raise::new(
            "TypeError",
            format!("object of type '{}' has no len()", v.type_name()),
        )),
        (_, Use::Index(_)) => Err(Raise::new(
            "TypeError",
            format!("'{}' object is not subscriptable", v.type_name()),
        )),
    }
}

/// `v.items()` of a dict field `_dict_to_dataclass` passed through as it
/// came (`raw`; `None`: it was a dict of the schema's values): a dict whose
/// values the reader could not type is not modelled; anything else (a list
/// comes back a list) has no `items`.
pub(super) fn raw_dict_use(raw: Option<&torchspec_pyval::pyjson::PyJson>) -> R<()> {
    match raw {
        None => Ok(()),
        Some(torchspec_pyval::pyjson::PyJson::Object(_)) => Err(crate::failure::untyped(
            "a dict where the schema has a dict",
        )),
        Some(v) => Err(no_attribute(v, "items")),
    }
}

/// `v.ATTR` of a value that has no such attribute.
pub(super) fn no_attribute(v: &torchspec_pyval::pyjson::PyJson, attr: &str) -> LoadFailure {
    Raise::new(
        "AttributeError",
        format!("'{}' object has no attribute '{attr}'", v.type_name()),
    )
}

/// `json.loads(v)` of a value `json.loads` made: a str is parsed, anything
/// else is CPython's `TypeError`.
pub(super) fn json_loads(
    v: &torchspec_pyval::pyjson::PyJson,
) -> R<torchspec_pyval::pyjson::PyJson> {
    use torchspec_pyval::pyjson::PyJson;
    let PyJson::Str(text) = v else {
        return Err(Raise::new(
            "TypeError",
            format!(
                "the JSON object must be str, bytes or bytearray, not {}",
                v.type_name()
            ),
        ));
    };
    torchspec_pyval::pyjson::loads(text).map_err(|e| {
        Raise::new(
            e.exception.as_deref().unwrap_or("JSONDecodeError"),
            e.message.clone(),
        )
    })
}

/// `_Union.__getattribute__` of a field other than the one set.
pub(super) fn field_not_set(field: &str) -> LoadFailure {
    Raise::new("AttributeError", format!("Field {field} is not set."))
}

/// Python's truth value of a value `json.loads` made.
pub(super) fn truthy(v: &PyJson) -> bool {
    wire::load::truthy(v)
}
