//! `pytree.tree_flatten_with_path` over the call's inputs, and the names
//! PyTorch derives from a leaf's key path: dynamo-style sources
//! (`L['d']['k'][1]`, `L['p'].first`) and export's placeholder names
//! (`d_k_1`, `p_first`).

use torchspec_export::inputs::probe::Tensor;
use torchspec_export::pytree::{Container, NodeKind};
use torchspec_pyval::{PyResult, Raise, Value};

/// A pytree key entry (`SequenceKey`, `MappingKey`, `GetAttrKey`).
#[derive(Clone, Debug)]
pub(crate) enum Key {
    /// `SequenceKey(idx)`: `[idx]`.
    Seq(usize),
    /// `MappingKey(key)`: `[key!r]`.
    Map(Value),
    /// `GetAttrKey(name)`: `.name`.
    Attr(String),
}

/// The children of a pytree node with their keys (`flatten_with_keys_fn`),
/// or `None` for a leaf.
pub(crate) fn children(v: &Value) -> PyResult<Option<Vec<(Key, Value)>>> {
    Ok(Some(match v {
        Value::Tuple(items) | Value::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| (Key::Seq(i), x.clone()))
            .collect(),
        Value::Dict(d) => d
            .iter()
            .map(|(k, x)| (Key::Map(k.clone()), x.clone()))
            .collect(),
        Value::Object(_) => match v.downcast::<Container>() {
            Some(c) => container_children(c)?,
            None => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

fn container_children(c: &Container) -> PyResult<Vec<(Key, Value)>> {
    match &c.ty.kind {
        NodeKind::NamedTuple { fields } => Ok(fields
            .iter()
            .zip(&c.children)
            .map(|(f, x)| (Key::Attr(f.clone()), x.clone()))
            .collect()),
        NodeKind::Dataclass { .. } => Ok(c
            .dataclass_fields()?
            .into_iter()
            .map(|(f, x)| (Key::Attr(f), x))
            .collect()),
        _ => Err(Raise::unsupported(format!(
            "an input of the pytree type {}",
            c.ty.name()
        ))),
    }
}

/// `pytree.tree_leaves(v)` with each leaf's key path below `v`.
pub(crate) fn leaves_with_path(v: &Value) -> PyResult<Vec<(Vec<Key>, Value)>> {
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn walk(v: &Value, path: &mut Vec<Key>, out: &mut Vec<(Vec<Key>, Value)>) -> PyResult<()> {
    match children(v)? {
        None => out.push((path.clone(), v.clone())),
        Some(kids) => {
            for (k, x) in kids {
                path.push(k);
                walk(&x, path, out)?;
                path.pop();
            }
        }
    }
    Ok(())
}

/// `len(pytree.tree_leaves(v))`.
pub(crate) fn leaf_count(v: &Value) -> PyResult<usize> {
    Ok(leaves_with_path(v)?.len())
}

/// `type(v).__name__`.
pub(crate) fn type_name(v: &Value) -> String {
    if let Some(c) = v.downcast::<Container>() {
        return c.ty.name().to_string();
    }
    v.type_name().to_string()
}

/// The tensor behind an input leaf, if it is one.
pub(crate) fn tensor(v: &Value) -> Option<&Tensor> {
    v.downcast::<Tensor>()
}

/// An int or bool's value as an int (`0` for anything else).
pub(crate) fn int_of(v: &Value) -> num_bigint::BigInt {
    match v {
        Value::Int(i) => i.to_big(),
        Value::Bool(b) => num_bigint::BigInt::from(u8::from(*b)),
        _ => num_bigint::BigInt::default(),
    }
}

/// A source's `.name` below `base` (`L['x']`): `[idx]`, `[key!r]`, `.attr`.
pub(crate) fn source_name(base: &str, path: &[Key]) -> PyResult<String> {
    let mut s = base.to_string();
    for k in path {
        match k {
            Key::Seq(i) => s.push_str(&format!("[{i}]")),
            Key::Map(key) => s.push_str(&format!("[{}]", key.repr()?)),
            Key::Attr(a) => s.push_str(&format!(".{a}")),
        }
    }
    Ok(s)
}

/// `L['name']`: a `LocalSource`'s name.
pub(crate) fn local(name: &str) -> PyResult<String> {
    Ok(format!("L[{}]", Value::str(name).repr()?))
}

/// A key as export's placeholder naming writes it (`str` of the key).
pub(crate) fn key_text(k: &Key) -> PyResult<String> {
    Ok(match k {
        Key::Seq(i) => i.to_string(),
        Key::Map(key) => key.py_str()?,
        Key::Attr(a) => a.clone(),
    })
}
