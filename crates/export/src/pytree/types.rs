//! Mirrors the Python type objects `torch.utils._pytree` keys its registries
//! by (`SUPPORTED_NODES`, `SUPPORTED_SERIALIZED_TYPES`,
//! `SERIALIZED_TYPE_TO_PYTHON_TYPE`) and the registry state after `import torch`.

use std::any::Any;
use std::collections::HashMap;
use std::rc::Rc;

use super::tables::{AttrKind, BUILTINS, COLLECTIONS, RETURN_TYPES};
use torchspec_pyval::{PyObject, PyResult, Raise, Value};

/// How a registered type flattens, unflattens and (de)serializes its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// `builtins.tuple`: children the items, no context.
    Tuple,
    /// `builtins.list`: children the items, no context.
    List,
    /// `builtins.dict`: children the values, context the keys.
    Dict,
    /// The `collections.namedtuple` function: the node type of every namedtuple
    /// instance (`_get_node_type`); its context is the namedtuple class.
    NamedTupleFn,
    /// `collections.OrderedDict`: children the values, context the keys.
    OrderedDict,
    /// `collections.defaultdict`: context the default factory and the keys.
    DefaultDict,
    /// `collections.deque`: children the items, context the `maxlen`.
    Deque,
    /// A namedtuple class registered under its own name (`_register_namedtuple`).
    NamedTuple {
        /// The class's `_fields`, in order.
        fields: Vec<String>,
    },
    /// A dataclass registered with `torch.export.register_dataclass`: its
    /// context is `[flat_names, none_names]` (fields that are not None, and
    /// those that are), its children the non-None field values.
    Dataclass {
        /// The dataclass's field names, in declaration order.
        fields: Vec<String>,
    },
    /// A `torch.return_types` structseq (`pytree_register_structseq`).
    StructSeq {
        /// The structseq's field names, in order.
        fields: Vec<String>,
    },
    /// `torch.fx.immutable_collections.immutable_list`.
    ImmutableList,
    /// `torch.fx.immutable_collections.immutable_dict`.
    ImmutableDict,
    /// `torch.Size` (`proxy_tensor.py`: flattens to a list, unflattens to a tuple).
    Size,
    /// `torch._higher_order_ops.flat_apply._ConstantFunction`, registered without
    /// a serialized name, which is why `SERIALIZED_TYPE_TO_PYTHON_TYPE` maps
    /// `"NO_SERIALIZED_TYPE_NAME_FOUND"` to it (the last such registration wins).
    ConstantFunction,
    /// Not a pytree node: a class named by a context (a `defaultdict` factory).
    Class,
    /// A builtin function named by a context (`defaultdict(len)`).
    BuiltinFunction,
    /// A Python function (`collections.namedtuple`): its repr holds an address.
    Function,
}

/// A Python type (or function) object as the pytree registries see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyType {
    /// `__module__`.
    pub module: String,
    /// `__qualname__`.
    pub qualname: String,
    /// How the type flattens, or what else it is when it is not a pytree node.
    pub kind: NodeKind,
    /// Its `SUPPORTED_SERIALIZED_TYPES` entry's `serialized_type_name`, if any.
    pub serialized_type_name: Option<String>,
}

impl PyType {
    /// A type object `module.qualname` of `kind`, with its serialized type name if any.
    pub fn new(module: &str, qualname: &str, kind: NodeKind, serialized: Option<&str>) -> PyType {
        PyType {
            module: module.to_string(),
            qualname: qualname.to_string(),
            kind,
            serialized_type_name: serialized.map(str::to_string),
        }
    }

    /// `__name__`: what `TreeSpec.__repr__` prints for the node type.
    pub fn name(&self) -> &str {
        self.qualname.rsplit('.').next().unwrap_or(&self.qualname)
    }

    /// Whether `tree_flatten` treats instances as nodes (`SUPPORTED_NODES`).
    pub fn is_node(&self) -> bool {
        !matches!(
            self.kind,
            NodeKind::Class | NodeKind::BuiltinFunction | NodeKind::Function
        )
    }

    /// `repr(cls)` (also `str(cls)`).
    pub fn repr(&self) -> PyResult<String> {
        match self.kind {
            NodeKind::BuiltinFunction => Ok(format!("<built-in function {}>", self.name())),
            // `<function namedtuple at 0x7f...>`: the address is not reproducible.
            NodeKind::Function | NodeKind::NamedTupleFn => Err(Raise::unsupported(format!(
                "repr of the function `{}.{}` (it prints an address)",
                self.module, self.qualname
            ))),
            _ if self.module == "builtins" => Ok(format!("<class '{}'>", self.qualname)),
            _ => Ok(format!("<class '{}.{}'>", self.module, self.qualname)),
        }
    }

    /// Namedtuple, structseq and dataclass fields.
    pub fn fields(&self) -> Option<&[String]> {
        match &self.kind {
            NodeKind::NamedTuple { fields }
            | NodeKind::StructSeq { fields }
            | NodeKind::Dataclass { fields } => Some(fields),
            _ => None,
        }
    }
}

impl PyObject for PyType {
    fn type_name(&self) -> &'static str {
        match self.kind {
            NodeKind::BuiltinFunction => "builtin_function_or_method",
            NodeKind::Function | NodeKind::NamedTupleFn => "function",
            _ => "type",
        }
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str(&self.repr()?);
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The pytree registries of one Python process: `SERIALIZED_TYPE_TO_PYTHON_TYPE`
/// (serialized name → type) and the types `tree_flatten` knows by kind.
#[derive(Clone, Debug)]
pub struct Registry {
    by_name: HashMap<String, Rc<PyType>>,
    tuple: Rc<PyType>,
    list: Rc<PyType>,
    dict: Rc<PyType>,
    namedtuple: Rc<PyType>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::torch()
    }
}

impl Registry {
    /// The registries right after `import torch` in PyTorch 2.15.0.
    pub fn torch() -> Registry {
        let node = |module: &str, qualname: &str, kind: NodeKind, name: &str| {
            Rc::new(PyType::new(module, qualname, kind, Some(name)))
        };
        let tuple = node("builtins", "tuple", NodeKind::Tuple, "builtins.tuple");
        let list = node("builtins", "list", NodeKind::List, "builtins.list");
        let dict = node("builtins", "dict", NodeKind::Dict, "builtins.dict");
        let namedtuple = node(
            "collections",
            "namedtuple",
            NodeKind::NamedTupleFn,
            "collections.namedtuple",
        );
        let mut by_name = HashMap::new();
        for t in [&tuple, &list, &dict, &namedtuple] {
            by_name.insert(
                t.serialized_type_name.clone().unwrap_or_default(),
                t.clone(),
            );
        }
        let mut add = |t: Rc<PyType>| {
            by_name.insert(t.serialized_type_name.clone().unwrap_or_default(), t);
        };
        add(node(
            "collections",
            "OrderedDict",
            NodeKind::OrderedDict,
            "collections.OrderedDict",
        ));
        add(node(
            "collections",
            "defaultdict",
            NodeKind::DefaultDict,
            "collections.defaultdict",
        ));
        add(node(
            "collections",
            "deque",
            NodeKind::Deque,
            "collections.deque",
        ));
        add(node(
            "torch.fx.immutable_collections",
            "immutable_list",
            NodeKind::ImmutableList,
            "torch.fx.immutable_collections.immutable_list",
        ));
        add(node(
            "torch.fx.immutable_collections",
            "immutable_dict",
            NodeKind::ImmutableDict,
            "torch.fx.immutable_collections.immutable_dict",
        ));
        for (name, module, qualname, fields) in RETURN_TYPES {
            let fields = fields.iter().map(|f| f.to_string()).collect();
            add(node(module, qualname, NodeKind::StructSeq { fields }, name));
        }
        add(node("torch", "Size", NodeKind::Size, "torch.Size"));
        add(node(
            "torch._higher_order_ops.flat_apply",
            "_ConstantFunction",
            NodeKind::ConstantFunction,
            "NO_SERIALIZED_TYPE_NAME_FOUND",
        ));
        Registry {
            by_name,
            tuple,
            list,
            dict,
            namedtuple,
        }
    }

    /// `_register_namedtuple(cls, serialized_type_name=...)` for a namedtuple
    /// class `module.qualname` with `fields`. In PyTorch the program's
    /// `treespec_namedtuple_fields` only records the fields; a loading process
    /// must register the class itself before `treespec_loads` can find it.
    pub fn register_namedtuple(
        &mut self,
        serialized_type_name: &str,
        module: &str,
        qualname: &str,
        fields: &[&str],
    ) -> Rc<PyType> {
        let fields = fields.iter().map(|f| f.to_string()).collect();
        self.register(
            serialized_type_name,
            module,
            qualname,
            NodeKind::NamedTuple { fields },
        )
    }

    /// `torch.export.register_dataclass(cls, serialized_type_name=...)` for a
    /// dataclass `module.qualname` with `fields` (the default flatten: None
    /// fields go into the context, not the children).
    pub fn register_dataclass(
        &mut self,
        serialized_type_name: &str,
        module: &str,
        qualname: &str,
        fields: &[&str],
    ) -> Rc<PyType> {
        let fields = fields.iter().map(|f| f.to_string()).collect();
        self.register(
            serialized_type_name,
            module,
            qualname,
            NodeKind::Dataclass { fields },
        )
    }

    /// `SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls` for a class registered
    /// by a library (the last registration of a name wins).
    fn register(
        &mut self,
        serialized_type_name: &str,
        module: &str,
        qualname: &str,
        kind: NodeKind,
    ) -> Rc<PyType> {
        let t = Rc::new(PyType::new(
            module,
            qualname,
            kind,
            Some(serialized_type_name),
        ));
        self.by_name
            .insert(serialized_type_name.to_string(), t.clone());
        t
    }

    /// Registers every entry of a program's `treespec_namedtuple_fields`
    /// (serialized name → field names), taking the class to be
    /// `module.qualname` split at the last dot of its serialized name (the
    /// convention `f"{cls.__module__}.{cls.__qualname__}"`).
    pub fn register_namedtuple_fields<'a>(
        &mut self,
        entries: impl IntoIterator<Item = (&'a str, &'a [String])>,
    ) {
        for (name, fields) in entries {
            let (module, qualname) = name.rsplit_once('.').unwrap_or(("__main__", name));
            let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
            self.register_namedtuple(name, module, qualname, &fields);
        }
    }

    /// `SERIALIZED_TYPE_TO_PYTHON_TYPE[name]`.
    pub fn lookup(&self, serialized_type_name: &str) -> Option<&Rc<PyType>> {
        self.by_name.get(serialized_type_name)
    }

    /// `builtins.tuple`.
    pub fn tuple(&self) -> &Rc<PyType> {
        &self.tuple
    }
    /// `builtins.list`.
    pub fn list(&self) -> &Rc<PyType> {
        &self.list
    }
    /// `builtins.dict`.
    pub fn dict(&self) -> &Rc<PyType> {
        &self.dict
    }
    /// `collections.namedtuple`, the node type of every namedtuple instance.
    pub fn namedtuple(&self) -> &Rc<PyType> {
        &self.namedtuple
    }
}

/// `getattr(importlib.import_module(module), name)` for the modules a
/// `defaultdict` factory is modelled from (`builtins`, `collections`).
pub fn import_attr(module: &str, name: &str) -> PyResult<Value> {
    let table = match module {
        "builtins" => BUILTINS,
        "collections" => COLLECTIONS,
        _ => {
            return Err(Raise::unsupported(format!(
                "importing the module `{module}` for a defaultdict factory"
            )))
        }
    };
    let Some((_, kind, m, q)) = table.iter().find(|(n, ..)| *n == name) else {
        return Err(Raise::new(
            "AttributeError",
            format!("module '{module}' has no attribute '{name}'"),
        ));
    };
    let kind = match kind {
        AttrKind::Class => NodeKind::Class,
        AttrKind::BuiltinFunction => NodeKind::BuiltinFunction,
        AttrKind::Other => {
            return Err(Raise::unsupported(format!(
                "the defaultdict factory `{module}.{name}`"
            )))
        }
    };
    // The node types among them keep their node kind (a factory `OrderedDict`).
    let kind = match (module, name) {
        ("collections", "OrderedDict") => NodeKind::OrderedDict,
        ("collections", "defaultdict") => NodeKind::DefaultDict,
        ("collections", "deque") => NodeKind::Deque,
        ("builtins", "tuple") => NodeKind::Tuple,
        ("builtins", "list") => NodeKind::List,
        ("builtins", "dict") => NodeKind::Dict,
        _ => kind,
    };
    let serialized = match kind {
        NodeKind::Class | NodeKind::BuiltinFunction => None,
        _ => Some(format!("{m}.{q}")),
    };
    Ok(Value::object(PyType {
        module: m.to_string(),
        qualname: q.to_string(),
        kind,
        serialized_type_name: serialized,
    }))
}
