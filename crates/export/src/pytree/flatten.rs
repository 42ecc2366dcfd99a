//! Mirrors torch/utils/_pytree.py `tree_flatten`, `TreeSpec.unflatten` /
//! `tree_unflatten` and `treespec_pprint` over `pyval::Value`, with the
//! container types `Value` lacks (namedtuple, OrderedDict, defaultdict,
//! deque, structseq) as one [`Container`] object.

use std::any::Any;
use std::rc::Rc;

use super::serde::unpack2;
use super::types::{NodeKind, PyType, Registry};
use super::{value_eq, TreeSpec};
use torchspec_pyval::{Dict, PyObject, PyResult, Raise, Value};

/// An instance of a registered container type `Value` has no variant for,
/// stored as what its flatten function returns: children and context
/// (namedtuple class, dict keys, `[default_factory, keys]`, deque `maxlen`).
#[derive(Clone, Debug)]
pub struct Container {
    /// The container's registered type.
    pub ty: Rc<PyType>,
    /// The flatten function's context.
    pub context: Value,
    /// The flatten function's children, in order.
    pub children: Vec<Value>,
}

impl PartialEq for Container {
    fn eq(&self, other: &Container) -> bool {
        self.ty == other.ty
            && value_eq(&self.context, &other.context)
            && self.children.len() == other.children.len()
            && self
                .children
                .iter()
                .zip(&other.children)
                .all(|(a, b)| value_eq(a, b))
    }
}

impl Container {
    /// An instance of the dataclass `cls` from its field values by name (a
    /// field not given is None), as `tree_flatten` sees it: children the
    /// non-None values, context `[flat_names, none_names]`.
    pub fn dataclass(cls: Rc<PyType>, values: &[(String, Value)]) -> PyResult<Value> {
        let fields = cls.fields().unwrap_or(&[]).to_vec();
        if let Some((extra, _)) = values.iter().find(|(n, _)| !fields.contains(n)) {
            return Err(Raise::type_error(format!(
                "{}.__init__() got an unexpected keyword argument '{extra}'",
                cls.qualname
            )));
        }
        let (mut children, mut flat, mut none) = (Vec::new(), Vec::new(), Vec::new());
        for f in &fields {
            match values.iter().find(|(n, _)| n == f) {
                Some((_, v)) if !matches!(v, Value::None) => {
                    children.push(v.clone());
                    flat.push(Value::str(f));
                }
                _ => none.push(Value::str(f)),
            }
        }
        let context = Value::List(Rc::new(vec![
            Value::List(Rc::new(flat)),
            Value::List(Rc::new(none)),
        ]));
        Ok(Value::object(Container {
            ty: cls,
            context,
            children,
        }))
    }

    /// A dataclass instance's non-None fields, (name, value) in context order.
    pub fn dataclass_fields(&self) -> PyResult<Vec<(String, Value)>> {
        let (flat, _) = unpack2(&self.context)?;
        let names = flat.iterate()?;
        Ok(names
            .iter()
            .zip(&self.children)
            .map(|(n, v)| (n.py_str().unwrap_or_default(), v.clone()))
            .collect())
    }

    /// An instance of the namedtuple class `cls` (`cls(*values)`).
    pub fn namedtuple(cls: Rc<PyType>, values: Vec<Value>) -> PyResult<Value> {
        let fields = cls.fields().unwrap_or(&[]);
        if values.len() < fields.len() {
            let missing: Vec<String> = fields[values.len()..]
                .iter()
                .map(|f| format!("'{f}'"))
                .collect();
            let list = match missing.as_slice() {
                [one] => one.clone(),
                [a, b] => format!("{a} and {b}"),
                [init @ .., last] => format!("{}, and {last}", init.join(", ")),
                [] => String::new(),
            };
            return Err(Raise::type_error(format!(
                "{}.__new__() missing {} required positional argument{}: {list}",
                cls.name(),
                missing.len(),
                if missing.len() == 1 { "" } else { "s" }
            )));
        }
        if values.len() > fields.len() {
            return Err(Raise::type_error(format!(
                "{}.__new__() takes {} positional arguments but {} were given",
                cls.name(),
                fields.len() + 1,
                values.len() + 1
            )));
        }
        Ok(Value::object(Container {
            ty: cls.clone(),
            context: Value::Object(cls as Rc<dyn PyObject>),
            children: values,
        }))
    }

    /// `cls(values)` for a `torch.return_types` structseq.
    pub fn structseq(cls: Rc<PyType>, values: Vec<Value>) -> PyResult<Value> {
        let n = cls.fields().map_or(0, <[String]>::len);
        if values.len() != n {
            return Err(Raise::type_error(format!(
                "{}.{}() takes a {n}-sequence ({}-sequence given)",
                cls.module,
                cls.qualname,
                values.len()
            )));
        }
        Ok(Value::object(Container {
            ty: cls,
            context: Value::None,
            children: values,
        }))
    }

    /// `OrderedDict(zip(keys, values))`.
    pub fn ordered_dict(registry: &Registry, pairs: Vec<(Value, Value)>) -> PyResult<Value> {
        let ty = registry
            .lookup("collections.OrderedDict")
            .cloned()
            .expect("registered at import");
        let (keys, values) = dedup_pairs(pairs)?;
        Ok(Value::object(Container {
            ty,
            context: Value::List(Rc::new(keys)),
            children: values,
        }))
    }

    /// `defaultdict(factory, zip(keys, values))`.
    pub fn defaultdict(
        registry: &Registry,
        factory: Value,
        pairs: Vec<(Value, Value)>,
    ) -> PyResult<Value> {
        let ty = registry
            .lookup("collections.defaultdict")
            .cloned()
            .expect("registered at import");
        let (keys, values) = dedup_pairs(pairs)?;
        Ok(Value::object(Container {
            ty,
            context: Value::List(Rc::new(vec![factory, Value::List(Rc::new(keys))])),
            children: values,
        }))
    }

    /// `deque(values, maxlen=maxlen)`: keeps the last `maxlen` values.
    pub fn deque(registry: &Registry, values: Vec<Value>, maxlen: Value) -> PyResult<Value> {
        let ty = registry
            .lookup("collections.deque")
            .cloned()
            .expect("registered at import");
        Container::deque_of(ty, values, maxlen)
    }

    fn deque_of(ty: Rc<PyType>, values: Vec<Value>, maxlen: Value) -> PyResult<Value> {
        let maxlen = match maxlen {
            Value::None => Value::None,
            Value::Bool(b) => Value::int(i64::from(b)),
            Value::Int(i) if i.is_negative() => {
                return Err(Raise::value_error("maxlen must be non-negative"))
            }
            Value::Int(i) => Value::Int(i),
            _ => return Err(Raise::type_error("an integer is required")),
        };
        let mut values = values;
        if let Value::Int(i) = &maxlen {
            let cap = i.to_usize().unwrap_or(usize::MAX);
            if values.len() > cap {
                values.drain(..values.len() - cap);
            }
        }
        Ok(Value::object(Container {
            ty,
            context: maxlen,
            children: values,
        }))
    }

    fn keys(&self) -> Vec<Value> {
        let keys = match self.ty.kind {
            NodeKind::DefaultDict => match &self.context {
                Value::List(c) if c.len() == 2 => &c[1],
                _ => return Vec::new(),
            },
            _ => &self.context,
        };
        match keys {
            Value::List(k) => k.as_ref().clone(),
            _ => Vec::new(),
        }
    }
}

fn dedup_pairs(pairs: Vec<(Value, Value)>) -> PyResult<(Vec<Value>, Vec<Value>)> {
    let mut d = Dict::new();
    for (k, v) in pairs {
        d.insert(k, v)?;
    }
    Ok(d.iter().map(|(k, v)| (k.clone(), v.clone())).unzip())
}

/// The reprs of the container kinds whose `__repr__` is more than a line.
impl Container {
    /// `name=value` for each field and child, joined by `sep`.
    fn write_fields(&self, out: &mut String, fields: &[String], sep: &str) -> PyResult<()> {
        for (i, (f, v)) in fields.iter().zip(&self.children).enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(f);
            out.push('=');
            v.write_repr(out)?;
        }
        Ok(())
    }

    /// The dataclass __repr__: f"{self.__class__.__qualname__}(a=..., b=...)"
    /// over every field, a None one included.
    fn write_dataclass(&self, out: &mut String, fields: &[String]) -> PyResult<()> {
        out.push_str(&self.ty.qualname);
        out.push('(');
        let values = self.dataclass_fields()?;
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(f);
            out.push('=');
            match values.iter().find(|(n, _)| n == f) {
                Some((_, v)) => v.write_repr(out)?,
                None => out.push_str("None"),
            }
        }
        out.push(')');
        Ok(())
    }

    /// CPython 3.11's OrderedDict repr: a list of pairs, `OrderedDict()` when empty.
    fn write_ordered_dict(&self, out: &mut String) -> PyResult<()> {
        out.push_str("OrderedDict(");
        if !self.children.is_empty() {
            out.push('[');
            for (i, (k, v)) in self.keys().iter().zip(&self.children).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('(');
                k.write_repr(out)?;
                out.push_str(", ");
                v.write_repr(out)?;
                out.push(')');
            }
            out.push(']');
        }
        out.push(')');
        Ok(())
    }

    /// `defaultdict(factory, {k: v, ...})`, `None` for a missing factory.
    fn write_defaultdict(&self, out: &mut String) -> PyResult<()> {
        out.push_str("defaultdict(");
        match &self.context {
            Value::List(c) if c.len() == 2 => c[0].write_repr(out)?,
            _ => out.push_str("None"),
        }
        out.push_str(", {");
        for (i, (k, v)) in self.keys().iter().zip(&self.children).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            k.write_repr(out)?;
            out.push_str(": ");
            v.write_repr(out)?;
        }
        out.push_str("})");
        Ok(())
    }
}

impl PyObject for Container {
    fn type_name(&self) -> &'static str {
        match self.ty.kind {
            NodeKind::OrderedDict => "OrderedDict",
            NodeKind::DefaultDict => "defaultdict",
            NodeKind::Deque => "deque",
            _ => "tuple",
        }
    }

    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match &self.ty.kind {
            // namedtuple.__repr__: f"{self.__class__.__name__}(x=..., y=...)".
            NodeKind::NamedTuple { fields } => {
                out.push_str(self.ty.name());
                out.push('(');
                self.write_fields(out, fields, ", ")?;
                out.push(')');
            }
            NodeKind::Dataclass { fields } => self.write_dataclass(out, fields)?,
            // torch's structseq repr (torch/csrc/utils/structseq.cpp): one field a line.
            NodeKind::StructSeq { fields } => {
                out.push_str(&self.ty.module);
                out.push('.');
                out.push_str(&self.ty.qualname);
                out.push_str("(\n");
                self.write_fields(out, fields, ",\n")?;
                out.push(')');
            }
            NodeKind::OrderedDict => self.write_ordered_dict(out)?,
            NodeKind::DefaultDict => self.write_defaultdict(out)?,
            NodeKind::Deque => {
                out.push_str("deque([");
                for (i, v) in self.children.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_repr(out)?;
                }
                out.push(']');
                if let Value::Int(n) = &self.context {
                    out.push_str(&format!(", maxlen={n}"));
                }
                out.push(')');
            }
            _ => {
                return Err(Raise::unsupported(format!(
                    "repr of a `{}` instance",
                    self.ty.qualname
                )))
            }
        }
        Ok(())
    }

    fn len(&self) -> Option<usize> {
        Some(self.children.len())
    }

    fn iterate(&self) -> Option<PyResult<Vec<Value>>> {
        Some(Ok(match self.ty.kind {
            NodeKind::OrderedDict | NodeKind::DefaultDict => self.keys(),
            _ => self.children.clone(),
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The `*` placeholder leaf of `treespec_pprint` (`_Asterisk`, a str whose repr has no quotes).
#[derive(Debug)]
struct Asterisk;

impl PyObject for Asterisk {
    fn type_name(&self) -> &'static str {
        "_Asterisk"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push('*');
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tree_flatten(tree)`: leaves in order and the structure. Anything that is
/// not a registered container is a leaf (tensors included).
pub fn tree_flatten(tree: &Value, registry: &Registry) -> (Vec<Value>, TreeSpec) {
    let mut leaves = Vec::new();
    let spec = flatten_into(tree, registry, &mut leaves);
    (leaves, spec)
}

fn flatten_into(node: &Value, registry: &Registry, leaves: &mut Vec<Value>) -> TreeSpec {
    let (ty, context, children): (Rc<PyType>, Value, Vec<Value>) = match node {
        Value::Tuple(items) => (registry.tuple().clone(), Value::None, items.to_vec()),
        Value::List(items) => (registry.list().clone(), Value::None, items.to_vec()),
        Value::Dict(d) => (
            registry.dict().clone(),
            Value::List(Rc::new(d.keys().cloned().collect())),
            d.iter().map(|(_, v)| v.clone()).collect(),
        ),
        Value::Object(_) => match node.downcast::<Container>() {
            // Every namedtuple instance has the node type `namedtuple`
            // (`_get_node_type`), its class being the context.
            Some(c) if matches!(c.ty.kind, NodeKind::NamedTuple { .. }) => (
                registry.namedtuple().clone(),
                c.context.clone(),
                c.children.clone(),
            ),
            Some(c) => (c.ty.clone(), c.context.clone(), c.children.clone()),
            None => {
                leaves.push(node.clone());
                return TreeSpec::leaf();
            }
        },
        _ => {
            leaves.push(node.clone());
            return TreeSpec::leaf();
        }
    };
    let specs = children
        .iter()
        .map(|c| flatten_into(c, registry, leaves))
        .collect();
    TreeSpec::new(ty, context, specs)
}

/// `tree_unflatten(leaves, spec)` (`TreeSpec.unflatten`).
pub fn tree_unflatten(leaves: &[Value], spec: &TreeSpec) -> PyResult<Value> {
    if leaves.len() != spec.num_leaves() {
        return Err(Raise::value_error(format!(
            "treespec.unflatten(leaves): `leaves` has length {} but the spec refers to a \
             pytree that holds {} items ({}).",
            leaves.len(),
            spec.num_leaves(),
            spec.to_str()?
        )));
    }
    let Some(ty) = spec.node_type() else {
        return Ok(leaves[0].clone());
    };
    let mut start = 0;
    let mut children = Vec::with_capacity(spec.num_children());
    for child in spec.children() {
        let end = start + child.num_leaves();
        children.push(tree_unflatten(&leaves[start..end], child)?);
        start = end;
    }
    unflatten_node(ty, spec.context(), children)
}

/// The node type's `unflatten_fn(children, context)`.
fn unflatten_node(ty: &Rc<PyType>, context: &Value, children: Vec<Value>) -> PyResult<Value> {
    Ok(match &ty.kind {
        NodeKind::Tuple | NodeKind::Size => Value::Tuple(Rc::new(children)),
        // immutable_list / immutable_dict are list / dict subclasses with the
        // same repr; the model does not keep them apart from their bases.
        NodeKind::List | NodeKind::ImmutableList => Value::List(Rc::new(children)),
        NodeKind::Dict | NodeKind::ImmutableDict => {
            Value::Dict(Rc::new(zip_dict(context, children)?))
        }
        // `_ConstantFunction`'s unflatten reads `context.value`; no loaded
        // context (JSON) has that attribute.
        NodeKind::ConstantFunction => {
            return Err(torchspec_pyval::no_attribute(context, "value"));
        }
        NodeKind::OrderedDict => {
            let d = zip_dict(context, children)?;
            Value::object(Container {
                ty: ty.clone(),
                context: Value::List(Rc::new(d.keys().cloned().collect())),
                children: d.iter().map(|(_, v)| v.clone()).collect(),
            })
        }
        NodeKind::DefaultDict => {
            let (factory, dict_context) = unpack2(context)?;
            let d = zip_dict(&dict_context, children)?;
            let keys = Value::List(Rc::new(d.keys().cloned().collect()));
            Value::object(Container {
                ty: ty.clone(),
                context: Value::List(Rc::new(vec![factory, keys])),
                children: d.iter().map(|(_, v)| v.clone()).collect(),
            })
        }
        NodeKind::Deque => Container::deque_of(ty.clone(), children, context.clone())?,
        NodeKind::NamedTupleFn => match context.downcast::<PyType>() {
            Some(cls) if matches!(cls.kind, NodeKind::NamedTuple { .. }) => {
                Container::namedtuple(Rc::new(cls.clone()), children)?
            }
            // `tuple()`: a namedtuple context naming `builtins.tuple`.
            Some(cls) if cls.kind == NodeKind::Tuple && children.is_empty() => {
                Value::Tuple(Rc::new(Vec::new()))
            }
            _ => {
                return Err(Raise::unsupported(format!(
                    "calling the namedtuple context {}",
                    context.repr().unwrap_or_default()
                )))
            }
        },
        NodeKind::NamedTuple { .. } => Container::namedtuple(ty.clone(), children)?,
        // `cls(**dict(zip(flat_names, values)), **dict.fromkeys(none_names))`.
        NodeKind::Dataclass { .. } => {
            let (flat, none) = unpack2(context)?;
            let flat = flat.iterate()?;
            let mut values: Vec<(String, Value)> = Vec::new();
            for (n, v) in flat.iter().zip(children) {
                let Value::Str(n) = n else {
                    return Err(Raise::type_error("keywords must be strings"));
                };
                values.push((n.to_string(), v));
            }
            for n in none.iterate()? {
                let Value::Str(n) = n else {
                    return Err(Raise::type_error("keywords must be strings"));
                };
                values.push((n.to_string(), Value::None));
            }
            Container::dataclass(ty.clone(), &values)?
        }
        NodeKind::StructSeq { .. } => Container::structseq(ty.clone(), children)?,
        _ => {
            return Err(Raise::unsupported(format!(
                "unflattening a `{}.{}` node",
                ty.module, ty.qualname
            )))
        }
    })
}

/// `dict(zip(context, values, strict=True))`.
fn zip_dict(context: &Value, values: Vec<Value>) -> PyResult<Dict> {
    let keys = context.iterate()?;
    if keys.len() != values.len() {
        let rel = if keys.len() < values.len() {
            "longer"
        } else {
            "shorter"
        };
        return Err(Raise::value_error(format!(
            "zip() argument 2 is {rel} than argument 1"
        )));
    }
    let mut d = Dict::with_capacity(keys.len());
    for (k, v) in keys.into_iter().zip(values) {
        d.insert(k, v)?;
    }
    Ok(d)
}

/// `treespec_pprint(spec)`: the repr of the tree with `*` at every leaf.
pub fn treespec_pprint(spec: &TreeSpec) -> PyResult<String> {
    let star = Value::object(Asterisk);
    let leaves = vec![star; spec.num_leaves()];
    tree_unflatten(&leaves, spec)?.repr()
}
