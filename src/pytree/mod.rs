//! Mirrors torch/utils/_pytree.py (PyTorch 2.15.0): `TreeSpec`, its `__repr__`,
//! `treespec_dumps` / `treespec_loads` (protocol 1), `tree_flatten` /
//! `tree_unflatten` and `treespec_pprint`, as the exported-program loader uses them.

mod flatten;
mod json;
mod serde;
mod tables;
mod types;

use std::fmt;
use std::rc::Rc;

use crate::pyval::{PyResult, Value};

pub use flatten::{tree_flatten, tree_unflatten, treespec_pprint, Container};
pub use serde::{treespec_dumps, treespec_dumps_protocol, treespec_loads};
pub use types::{import_attr, NodeKind, PyType, Registry};

/// `torch.utils._pytree.TreeSpec`: the structure of a pytree. A leaf has no
/// type, a `None` context and no children (`LeafSpec`, printed `*`).
#[derive(Clone, Debug)]
pub struct TreeSpec {
    node_type: Option<Rc<PyType>>,
    context: Value,
    children: Vec<TreeSpec>,
    num_nodes: usize,
    num_leaves: usize,
}

impl TreeSpec {
    /// `treespec_leaf()`.
    pub fn leaf() -> TreeSpec {
        TreeSpec {
            node_type: None,
            context: Value::None,
            children: Vec::new(),
            num_nodes: 1,
            num_leaves: 1,
        }
    }

    /// `TreeSpec(type, context, children_specs)` for a node type (`__post_init__`
    /// counts nodes and leaves; a node with no children holds no leaf).
    pub fn new(node_type: Rc<PyType>, context: Value, children: Vec<TreeSpec>) -> TreeSpec {
        let num_nodes = 1 + children.iter().map(|c| c.num_nodes).sum::<usize>();
        let num_leaves = children.iter().map(|c| c.num_leaves).sum();
        TreeSpec {
            node_type: Some(node_type),
            context,
            children,
            num_nodes,
            num_leaves,
        }
    }

    /// `.type` (`None` for a leaf).
    pub fn node_type(&self) -> Option<&Rc<PyType>> {
        self.node_type.as_ref()
    }
    /// `.context`.
    pub fn context(&self) -> &Value {
        &self.context
    }
    /// `.children()`.
    pub fn children(&self) -> &[TreeSpec] {
        &self.children
    }
    /// `.child(index)`.
    pub fn child(&self, index: usize) -> Option<&TreeSpec> {
        self.children.get(index)
    }
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }
    pub fn num_leaves(&self) -> usize {
        self.num_leaves
    }
    pub fn num_children(&self) -> usize {
        self.children.len()
    }
    /// `.is_leaf()`: one node holding one leaf.
    pub fn is_leaf(&self) -> bool {
        self.num_nodes == 1 && self.num_leaves == 1
    }

    /// `str(spec)` / `repr(spec)`; fails only where a context's repr is not
    /// reproducible (a function object prints its address).
    pub fn to_str(&self) -> PyResult<String> {
        let mut out = String::new();
        self.write_repr(&mut out, 0)?;
        Ok(out)
    }

    /// `TreeSpec.__repr__(indent)`: children after the first start a new line
    /// indented by the nesting depth (two spaces per level); `LeafSpec` is `*`.
    fn write_repr(&self, out: &mut String, indent: usize) -> PyResult<()> {
        let Some(t) = &self.node_type else {
            out.push('*');
            return Ok(());
        };
        out.push_str("TreeSpec(");
        out.push_str(t.name());
        out.push_str(", ");
        // f"{self._context}": str(), so a str context prints without quotes.
        self.context.write_str(out)?;
        out.push_str(", [");
        if let Some((first, rest)) = self.children.split_first() {
            let indent = indent + 2;
            first.write_repr(out, indent)?;
            for child in rest {
                out.push_str(",\n");
                out.extend(std::iter::repeat_n(' ', indent));
                child.write_repr(out, indent)?;
            }
        }
        out.push_str("])");
        Ok(())
    }
}

/// `str(spec)`. Where `to_str` would report an unsupported repr, the text of
/// that report stands in for the context (the only case: a function object).
impl fmt::Display for TreeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_str() {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "<{e:?}>"),
        }
    }
}

/// `TreeSpec.__eq__`: same `str(type)`, equal contexts, equal children.
impl PartialEq for TreeSpec {
    fn eq(&self, other: &TreeSpec) -> bool {
        let same_type = match (&self.node_type, &other.node_type) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        same_type
            && value_eq(&self.context, &other.context)
            && self.children == other.children
    }
}

/// Python `==` on the values a context or a pytree holds: numbers across
/// int/float/bool, sequences of one type elementwise, dicts regardless of
/// order, type objects by identity of what they name, other objects by identity.
pub fn value_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    if let (Some(x), Some(y)) = (a.as_number(), b.as_number()) {
        return x.num_cmp(&y) == Some(std::cmp::Ordering::Equal);
    }
    match (a, b) {
        (None, None) => true,
        (Str(x), Str(y)) => x == y,
        (List(x), List(y)) | (Tuple(x), Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| value_eq(p, q))
        }
        (Dict(x), Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| value_eq(v, w)))
        }
        (Object(_), Object(_)) => {
            if let (Some(x), Some(y)) = (a.downcast::<PyType>(), b.downcast::<PyType>()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (a.downcast::<Container>(), b.downcast::<Container>()) {
                return x == y;
            }
            a.is(b)
        }
        _ => false,
    }
}
