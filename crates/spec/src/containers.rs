//! Mirrors torch/fx/experimental/dynamic_spec.py: `TensorSpec`, `ObjectSpec`,
//! `DictSpec`, `SeqSpec`, `ParamsSpec`, `ShapesSpec` — constructor checks,
//! `__repr__` nesting rules and `to_jsonable`.

use std::any::Any;
use std::fmt::Write;
use std::rc::Rc;

use super::{fastrepr, jsonable_or_self, INDENT};
use torchspec_pyval::{
    no_attribute, str_repr, write_indented_lines, Dict, PyObject, PyResult, Raise, Value,
};

const INDENT2: &str = "    ";

/// One `{_INDENT}{header}: {repr}` entry of a container repr. A child whose
/// repr has a `\n` goes on its own lines, split with `str.splitlines` (which
/// also splits on `\r`, `\x0b`, `\u2028`, ...) and indented two levels; any
/// other child stays on the header line verbatim.
fn write_entry(
    out: &mut String,
    header: impl FnOnce(&mut String) -> PyResult<()>,
    child: &Value,
) -> PyResult<()> {
    let child_repr = child.repr()?;
    out.push('\n');
    out.push_str(INDENT);
    header(out)?;
    if child_repr.contains('\n') {
        out.push(':');
        write_indented_lines(out, &child_repr, INDENT2);
    } else {
        out.push_str(": ");
        out.push_str(&child_repr);
    }
    Ok(())
}

fn jsonable_list(items: &[Value]) -> PyResult<Value> {
    Ok(Value::List(Rc::new(
        items
            .iter()
            .map(jsonable_or_self)
            .collect::<PyResult<_>>()?,
    )))
}

/// `{"type": ..., key: value}`, the shape of every `to_jsonable`.
fn typed(type_name: &'static str, key: &'static str, value: Value) -> Value {
    Value::Dict(Rc::new(Dict::from_two_static(
        "type",
        Value::static_str(type_name),
        key,
        value,
    )))
}

/// `dict(x) if x else {}`, as `ObjectSpec` and `DictSpec` copy their argument.
fn dict_if_truthy(x: &Value) -> PyResult<Dict> {
    if x.truth()? {
        Dict::from_value(x)
    } else {
        Ok(Dict::new())
    }
}

/// `TensorSpec(dims)`: per-dimension `LeafIntSpec`s.
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// // a = ShapeVar('a', min=2); t = TensorSpec([a, None, 4])
/// let t = Value::object(TensorSpec::construct(&list(vec![a, Value::None, Value::int(4)]))?);
/// assert_eq!(t.repr()?, "Tensor:\n  0: ShapeVar(a#0, min=2)\n  1: None\n  2: 4");
/// assert_eq!(
///     jsonable_or_self(&t)?.repr()?,
///     "{'type': 'TensorSpec', 'dims': [{'type': 'ShapeVar', 'name': 'a', 'min': 2, 'max': None, \
///      'optimization_hint': None}, None, 4]}"
/// );
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct TensorSpec {
    /// The per-dimension specs: `None`, an int, or a `SymInt` (an `IntVar` or
    /// an expression of vars).
    pub dims: Vec<Value>,
}

impl TensorSpec {
    /// `TensorSpec(dims)`: `TypeError` for a dim that is not a `LeafIntSpec`.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Raise, Value};
    /// use torchspec_spec::TensorSpec;
    /// let dims = Value::List(Rc::new(vec![Value::int(3), Value::str("x")]));
    /// assert_eq!(
    ///     TensorSpec::construct(&dims).unwrap_err(),
    ///     Raise::type_error("TensorSpec dim 1: expected LeafIntSpec, got str: 'x'")
    /// );
    /// ```
    pub fn construct(dims: &Value) -> PyResult<TensorSpec> {
        let dims = dims.iterate()?;
        for (i, d) in dims.iter().enumerate() {
            let ok = match d {
                Value::None | Value::Int(_) | Value::Bool(_) => true,
                Value::Object(o) => o.is_symint(),
                _ => false,
            };
            if !ok {
                return Err(Raise::type_error(format!(
                    "TensorSpec dim {i}: expected LeafIntSpec, got {}: {}",
                    d.type_name(),
                    d.repr()?
                )));
            }
        }
        Ok(TensorSpec { dims })
    }
}

impl PyObject for TensorSpec {
    fn type_name(&self) -> &'static str {
        "TensorSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str("Tensor:");
        for (i, d) in self.dims.iter().enumerate() {
            out.push('\n');
            out.push_str(INDENT);
            out.push_str(itoa::Buffer::new().format(i));
            out.push_str(": ");
            d.write_repr(out)?;
        }
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        Some(jsonable_list(&self.dims).map(|dims| typed("TensorSpec", "dims", dims)))
    }
    fn iterate(&self) -> Option<PyResult<Vec<Value>>> {
        Some(Ok(self.dims.clone()))
    }
    fn len(&self) -> Option<usize> {
        Some(self.dims.len())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `ObjectSpec(fields)`: attribute-keyed; keys are not checked, so any
/// hashable key is kept and printed with `str()`.
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// // ObjectSpec({'w': TensorSpec([a, 3])})
/// let t = Value::object(TensorSpec::construct(&list(vec![a, Value::int(3)]))?);
/// let o = Value::object(ObjectSpec::construct(&dict(vec![(Value::str("w"), t)])?)?);
/// assert_eq!(o.repr()?, "object_spec:\n  .w:\n    Tensor:\n      0: ShapeVar(a#0, min=2)\n      1: 3");
/// assert_eq!(
///     jsonable_or_self(&o)?.repr()?,
///     "{'type': 'ObjectSpec', 'fields': {'w': {'type': 'TensorSpec', 'dims': [{'type': 'ShapeVar', \
///      'name': 'a', 'min': 2, 'max': None, 'optimization_hint': None}, 3]}}}"
/// );
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct ObjectSpec {
    /// Field key (normally an attribute name) to child spec, in insertion
    /// order.
    pub fields: Dict,
}

impl ObjectSpec {
    /// `ObjectSpec(fields)`: copies `dict(fields) if fields else {}`.
    pub fn construct(fields: &Value) -> PyResult<ObjectSpec> {
        Ok(ObjectSpec {
            fields: dict_if_truthy(fields)?,
        })
    }
}

impl PyObject for ObjectSpec {
    fn type_name(&self) -> &'static str {
        "ObjectSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match fastrepr::write(fastrepr::Node::Object(self), out) {
            Err(fastrepr::Fast::Bail) => {}
            Err(fastrepr::Fast::Raise(r)) => return Err(r),
            Ok(()) => return Ok(()),
        }
        out.push_str("object_spec:");
        for (name, spec) in self.fields.iter() {
            write_entry(
                out,
                |out| {
                    out.push('.');
                    name.write_str(out)
                },
                spec,
            )?;
        }
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        Some(jsonable_dict_same_keys(&self.fields).map(|f| typed("ObjectSpec", "fields", f)))
    }
    fn iterate(&self) -> Option<PyResult<Vec<Value>>> {
        Some(Ok(self.fields.keys().cloned().collect()))
    }
    fn len(&self) -> Option<usize> {
        Some(self.fields.len())
    }
    fn items(&self) -> Option<Vec<(Value, Value)>> {
        Some(
            self.fields
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `{key(k): v.to_jsonable() ... for k, v in d.items()}`: a dict
/// comprehension, so keys that collide after `key` merge like dict keys do.
fn jsonable_dict(d: &Dict, key: impl Fn(&Value) -> PyResult<Value>) -> PyResult<Value> {
    let mut out = Dict::with_capacity(d.len());
    for (k, v) in d.iter() {
        out.insert(key(k)?, jsonable_or_self(v)?)?;
    }
    Ok(Value::Dict(Rc::new(out)))
}

/// `{k: v.to_jsonable() ... for k, v in d.items()}` with the keys kept:
/// they are a dict's keys already, so distinct.
fn jsonable_dict_same_keys(d: &Dict) -> PyResult<Value> {
    let mut out = Dict::with_capacity(d.len());
    for (k, v) in d.iter() {
        out.push_distinct(k.clone(), jsonable_or_self(v)?);
    }
    Ok(Value::Dict(Rc::new(out)))
}

/// `DictSpec(entries)`: keys must be `str` or `int` (a bool is an int).
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// // DictSpec({'k': TensorSpec([None]), 0: IntVar('n')})
/// let n = Value::object(IntVar::construct(VarKind::IntVar, VarArgs {
///     name: Some(Value::str("n")), ..VarArgs::default()
/// }, &mut uids)?);
/// let t = Value::object(TensorSpec::construct(&list(vec![Value::None]))?);
/// let d = Value::object(DictSpec::construct(&dict(vec![(Value::str("k"), t), (Value::int(0), n)])?)?);
/// assert_eq!(d.repr()?, "dict_spec:\n  ['k']:\n    Tensor:\n      0: None\n  [0]: IntVar(n#1)");
/// // to_jsonable() writes the int key as a str.
/// assert_eq!(
///     jsonable_or_self(&d)?.repr()?,
///     "{'type': 'DictSpec', 'entries': {'k': {'type': 'TensorSpec', 'dims': [None]}, \
///      '0': {'type': 'IntVar', 'name': 'n', 'min': None, 'max': None, 'optimization_hint': None}}}"
/// );
/// # let _ = a;
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct DictSpec {
    /// Key to child spec, in insertion order.
    pub entries: Dict,
}

impl DictSpec {
    /// `DictSpec(entries)`: copies the entries; `TypeError` for a key that is
    /// not a `str` or an `int`.
    pub fn construct(entries: &Value) -> PyResult<DictSpec> {
        let entries = dict_if_truthy(entries)?;
        for k in entries.keys() {
            if !matches!(k, Value::Str(_) | Value::Int(_) | Value::Bool(_)) {
                return Err(Raise::type_error(format!(
                    "DictSpec entries must have str or int keys, got {}: {}",
                    k.type_name(),
                    k.repr()?
                )));
            }
        }
        Ok(DictSpec { entries })
    }
}

impl PyObject for DictSpec {
    fn type_name(&self) -> &'static str {
        "DictSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match fastrepr::write(fastrepr::Node::Dict(self), out) {
            Err(fastrepr::Fast::Bail) => {}
            Err(fastrepr::Fast::Raise(r)) => return Err(r),
            Ok(()) => return Ok(()),
        }
        out.push_str("dict_spec:");
        for (key, spec) in self.entries.iter() {
            write_entry(
                out,
                |out| {
                    out.push('[');
                    key.write_repr(out)?;
                    out.push(']');
                    Ok(())
                },
                spec,
            )?;
        }
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        // `str(key)`: `1` and `"1"` collide, the later value wins.
        let entries = jsonable_dict(&self.entries, |k| Ok(Value::str(&k.py_str()?)));
        Some(entries.map(|e| typed("DictSpec", "entries", e)))
    }
    fn iterate(&self) -> Option<PyResult<Vec<Value>>> {
        Some(Ok(self.entries.keys().cloned().collect()))
    }
    fn len(&self) -> Option<usize> {
        Some(self.entries.len())
    }
    fn items(&self) -> Option<Vec<(Value, Value)>> {
        Some(
            self.entries
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `SeqSpec(entries)`: per-position; has `__len__` but no `__iter__`.
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// // SeqSpec([TensorSpec([a]), None, 5])
/// let t = Value::object(TensorSpec::construct(&list(vec![a]))?);
/// let s = Value::object(SeqSpec::construct(&list(vec![t, Value::None, Value::int(5)]))?);
/// assert_eq!(s.repr()?, "seq_spec:\n  [0]:\n    Tensor:\n      0: ShapeVar(a#0, min=2)\n  [1]: None\n  [2]: 5");
/// # let _ = dict;
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct SeqSpec {
    /// The child specs, by position.
    pub entries: Vec<Value>,
}

impl SeqSpec {
    /// `SeqSpec(entries)`: `list(entries)`.
    pub fn construct(entries: &Value) -> PyResult<SeqSpec> {
        Ok(SeqSpec {
            entries: entries.iterate()?,
        })
    }
}

impl PyObject for SeqSpec {
    fn type_name(&self) -> &'static str {
        "SeqSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match fastrepr::write(fastrepr::Node::Seq(self), out) {
            Err(fastrepr::Fast::Bail) => {}
            Err(fastrepr::Fast::Raise(r)) => return Err(r),
            Ok(()) => return Ok(()),
        }
        out.push_str("seq_spec:");
        for (i, spec) in self.entries.iter().enumerate() {
            write_entry(
                out,
                |out| {
                    let _ = write!(out, "[{i}]");
                    Ok(())
                },
                spec,
            )?;
        }
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        Some(jsonable_list(&self.entries).map(|e| typed("SeqSpec", "entries", e)))
    }
    fn len(&self) -> Option<usize> {
        Some(self.entries.len())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

const VARARGS_KEY: &str = "*args";
const VARKW_KEY: &str = "**kwargs";

/// `ParamsSpec(params)`: named args plus the `*args` list and `**kwargs` dict.
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// // ParamsSpec({'x': TensorSpec([a]), 'n': IntVar('n')})
/// let n = Value::object(IntVar::construct(VarKind::IntVar, VarArgs {
///     name: Some(Value::str("n")), ..VarArgs::default()
/// }, &mut uids)?);
/// let t = Value::object(TensorSpec::construct(&list(vec![a]))?);
/// let p = Value::object(ParamsSpec::construct(&dict(vec![(Value::str("x"), t), (Value::str("n"), n)])?)?);
/// assert_eq!(p.repr()?, "x:\n  Tensor:\n    0: ShapeVar(a#0, min=2)\nn: IntVar(n#1)");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug, Default)]
pub struct ParamsSpec {
    /// Keys are always `str` (anything else fails `key.startswith`).
    pub named_args: Dict,
    /// The `"*args"` entry, a list of specs, if given.
    pub varargs: Option<Vec<Value>>,
    /// The `"**kwargs"` entry, a dict of specs, if given.
    pub varkw: Option<Dict>,
}

impl ParamsSpec {
    /// `ParamsSpec(params)` from `None` or anything with `.items()`: splits off
    /// `*args` and `**kwargs`, with `ValueError` for a wrongly typed sentinel
    /// value or an unknown `*` key.
    pub fn construct(params: &Value) -> PyResult<ParamsSpec> {
        let mut spec = ParamsSpec::default();
        if let Value::None = params {
            return Ok(spec);
        }
        for (key, value) in params.items()? {
            match &key {
                Value::Str(k) if &**k == VARARGS_KEY => match &value {
                    Value::List(items) => spec.varargs = Some(items.as_ref().clone()),
                    other => {
                        return Err(Raise::value_error(format!(
                            "ParamsSpec '*args' value must be a list of leaf specs, got {}",
                            other.type_name()
                        )))
                    }
                },
                Value::Str(k) if &**k == VARKW_KEY => match &value {
                    Value::Dict(d) => spec.varkw = Some(d.as_ref().clone()),
                    other => {
                        return Err(Raise::value_error(format!(
                            "ParamsSpec '**kwargs' value must be a dict of leaf specs, got {}",
                            other.type_name()
                        )))
                    }
                },
                Value::Str(k) if k.starts_with('*') => {
                    return Err(Raise::value_error(format!(
                        "Unknown sentinel key {} in ParamsSpec; only '*args' and '**kwargs' are reserved",
                        str_repr(k)
                    )))
                }
                Value::Str(_) => spec.named_args.insert(key.clone(), value)?,
                Value::Object(o) if o.is_symint() || o.is_symbool() => {
                    // `key == "*args"` on a SymInt builds an expression first.
                    return Err(Raise::unsupported("a SymInt key in ParamsSpec"));
                }
                other => return Err(no_attribute(other, "startswith")),
            }
        }
        Ok(spec)
    }
}

/// `_indent_lines`: `"\n".join(prefix + line for line in text.splitlines())`.
fn indent_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    write_indented_lines(&mut out, text, INDENT);
    // The helper starts every line with `\n`; `_indent_lines` joins them.
    if out.starts_with('\n') {
        out.remove(0);
    }
    out
}

/// `_entry_repr`: `key: repr` or `key:` with the repr indented below.
fn entry_repr(key: &str, value: &Value) -> PyResult<String> {
    let v_repr = value.repr()?;
    Ok(if v_repr.contains('\n') {
        format!("{key}:\n{}", indent_lines(&v_repr))
    } else {
        format!("{key}: {v_repr}")
    })
}

impl PyObject for ParamsSpec {
    fn type_name(&self) -> &'static str {
        "ParamsSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match fastrepr::write(fastrepr::Node::Params(self), out) {
            Err(fastrepr::Fast::Bail) => {}
            Err(fastrepr::Fast::Raise(r)) => return Err(r),
            Ok(()) => return Ok(()),
        }
        let mut lines = Vec::new();
        for (k, v) in self.named_args.iter() {
            lines.push(entry_repr(&k.py_str()?, v)?);
        }
        if let Some(varargs) = &self.varargs {
            let inner: Vec<String> = varargs
                .iter()
                .enumerate()
                .map(|(i, v)| entry_repr(&i.to_string(), v))
                .collect::<PyResult<_>>()?;
            lines.push(format!(
                "{VARARGS_KEY}:\n{}",
                indent_lines(&inner.join("\n"))
            ));
        }
        if let Some(varkw) = &self.varkw {
            let inner: Vec<String> = varkw
                .iter()
                .map(|(k, v)| entry_repr(&k.py_str()?, v))
                .collect::<PyResult<_>>()?;
            lines.push(format!("{VARKW_KEY}:\n{}", indent_lines(&inner.join("\n"))));
        }
        out.push_str(&lines.join("\n"));
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        Some((|| {
            let mut params = match jsonable_dict_same_keys(&self.named_args)? {
                Value::Dict(d) => Rc::try_unwrap(d).unwrap_or_else(|d| d.as_ref().clone()),
                _ => unreachable!("jsonable_dict builds a dict"),
            };
            if let Some(varargs) = &self.varargs {
                params.insert(Value::static_str(VARARGS_KEY), jsonable_list(varargs)?)?;
            }
            if let Some(varkw) = &self.varkw {
                params.insert(
                    Value::static_str(VARKW_KEY),
                    jsonable_dict_same_keys(varkw)?,
                )?;
            }
            Ok(typed("ParamsSpec", "params", Value::Dict(Rc::new(params))))
        })())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The arguments of `ShapesSpec(params, *, globals, assumptions)`, each
/// `None` when not passed.
#[derive(Debug, Default)]
pub struct ShapesSpecArgs {
    /// `params`: a `ParamsSpec`, a dict, or `None`.
    pub params: Option<Value>,
    /// `globals=`: anything but `None` raises `NotImplementedError`.
    pub globals: Option<Value>,
    /// `assumptions=`: an iterable of `SymBool`s, or `None`.
    pub assumptions: Option<Value>,
}

/// `ShapesSpec`: the top-level spec.
///
/// ```
/// # use std::rc::Rc;
/// # use torchspec_pyval::{Dict, Value};
/// # use torchspec_spec::*;
/// # let mut uids = UidCounter::default();
/// # let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
/// #     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// # }, &mut uids)?);
/// # let list = |v: Vec<Value>| Value::List(Rc::new(v));
/// # let dict = |kv: Vec<(Value, Value)>| -> Result<Value, torchspec_pyval::Raise> {
/// #     let mut d = Dict::new();
/// #     for (k, v) in kv { d.insert(k, v)?; }
/// #     Ok(Value::Dict(Rc::new(d)))
/// # };
/// use torchspec_pyval::ops::Op;
/// // ShapesSpec({'x': TensorSpec([a, None, 4]), 'n': b}, assumptions=[a < 10])
/// let b = Value::object(IntVar::construct(VarKind::IntVar, VarArgs {
///     name: Some(Value::str("b")),
///     min: Some(Value::int(-1)),
///     max: Some(Value::int(8)),
///     optimization_hint: Some(Value::int(3)),
/// }, &mut uids)?);
/// let t = Value::object(TensorSpec::construct(&list(vec![a.clone(), Value::None, Value::int(4)]))?);
/// let lt = apply_op(Op::Lt, &[a, Value::int(10)])?;
/// let spec = Value::object(ShapesSpec::construct(ShapesSpecArgs {
///     params: Some(dict(vec![(Value::str("x"), t), (Value::str("n"), b)])?),
///     assumptions: Some(list(vec![lt])),
///     ..ShapesSpecArgs::default()
/// })?);
/// assert_eq!(spec.repr()?, "\
/// shapes_spec:
///   params:
///     x:
///       Tensor:
///         0: ShapeVar(a#0, min=2)
///         1: None
///         2: 4
///     n: IntVar(b#1, min=-1, max=8, optimization_hint=3)
///   assumptions:
///     a#0 < 10");
/// assert_eq!(
///     jsonable_or_self(&spec)?.repr()?,
///     "{'type': 'ShapesSpec', 'params': {'type': 'ParamsSpec', 'params': {'x': {'type': 'TensorSpec', \
///      'dims': [{'type': 'ShapeVar', 'name': 'a', 'min': 2, 'max': None, 'optimization_hint': None}, \
///      None, 4]}, 'n': {'type': 'IntVar', 'name': 'b', 'min': -1, 'max': 8, 'optimization_hint': 3}}}, \
///      'assumptions': ['a#0 < 10']}"
/// );
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct ShapesSpec {
    /// A `ParamsSpec` object, or `None`.
    pub params: Option<Value>,
    /// The `SymBool` assumptions, in the order given.
    pub assumptions: Vec<Value>,
}

impl ShapesSpec {
    /// `ShapesSpec(params, globals=..., assumptions=...)` with PyTorch's
    /// checks; a dict `params` becomes a `ParamsSpec`.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Dict, Raise, Value};
    /// use torchspec_spec::{jsonable_or_self, ShapesSpec, ShapesSpecArgs};
    /// let empty = Value::object(ShapesSpec::construct(ShapesSpecArgs::default())?);
    /// assert_eq!(empty.repr()?, "shapes_spec:");
    /// assert_eq!(
    ///     jsonable_or_self(&empty)?.repr()?,
    ///     "{'type': 'ShapesSpec', 'params': None, 'assumptions': []}"
    /// );
    /// // ShapesSpec([1]) and ShapesSpec({}, globals={})
    /// let args = ShapesSpecArgs {
    ///     params: Some(Value::List(Rc::new(vec![Value::int(1)]))),
    ///     ..ShapesSpecArgs::default()
    /// };
    /// assert_eq!(
    ///     ShapesSpec::construct(args).unwrap_err(),
    ///     Raise::type_error("shapes_spec must be ParamsSpec, dict, or None, got list")
    /// );
    /// let args = ShapesSpecArgs {
    ///     params: Some(Value::Dict(Rc::new(Dict::new()))),
    ///     globals: Some(Value::Dict(Rc::new(Dict::new()))),
    ///     ..ShapesSpecArgs::default()
    /// };
    /// assert_eq!(
    ///     ShapesSpec::construct(args).unwrap_err(),
    ///     Raise::new("NotImplementedError", "ShapesSpec.globals is not supported yet")
    /// );
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn construct(args: ShapesSpecArgs) -> PyResult<ShapesSpec> {
        if !matches!(args.globals, None | Some(Value::None)) {
            return Err(Raise::new(
                "NotImplementedError",
                "ShapesSpec.globals is not supported yet",
            ));
        }
        let params = match args.params {
            None | Some(Value::None) => None,
            Some(d @ Value::Dict(_)) => Some(Value::object(ParamsSpec::construct(&d)?)),
            Some(p) if p.downcast::<ParamsSpec>().is_some() => Some(p),
            Some(other) => {
                return Err(Raise::type_error(format!(
                    "shapes_spec must be ParamsSpec, dict, or None, got {}",
                    other.type_name()
                )))
            }
        };
        let mut assumptions = Vec::new();
        if let Some(a) = args.assumptions.filter(|a| !matches!(a, Value::None)) {
            for (i, a) in a.iterate()?.into_iter().enumerate() {
                let ok = matches!(&a, Value::Object(o) if o.is_symbool());
                if !ok {
                    return Err(Raise::type_error(format!(
                        "ShapesSpec.assumptions[{i}]: expected SymBool, got {}: {}",
                        a.type_name(),
                        a.repr()?
                    )));
                }
                assumptions.push(a);
            }
        }
        Ok(ShapesSpec {
            params,
            assumptions,
        })
    }

    /// The `params` as a `ParamsSpec`, if set.
    pub fn params_spec(&self) -> Option<&ParamsSpec> {
        self.params
            .as_ref()
            .and_then(|p| p.downcast::<ParamsSpec>())
    }
}

impl PyObject for ShapesSpec {
    fn type_name(&self) -> &'static str {
        "ShapesSpec"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match fastrepr::write(fastrepr::Node::Shapes(self), out) {
            Err(fastrepr::Fast::Bail) => {}
            Err(fastrepr::Fast::Raise(r)) => return Err(r),
            Ok(()) => return Ok(()),
        }
        out.push_str("shapes_spec:");
        if let Some(params) = &self.params {
            out.push('\n');
            out.push_str(INDENT);
            out.push_str("params:");
            write_indented_lines(out, &params.repr()?, INDENT2);
        }
        if !self.assumptions.is_empty() {
            out.push('\n');
            out.push_str(INDENT);
            out.push_str("assumptions:");
            for a in &self.assumptions {
                out.push('\n');
                out.push_str(INDENT);
                out.push_str(INDENT);
                a.write_repr(out)?;
            }
        }
        Ok(())
    }
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        Some((|| {
            let params = match &self.params {
                None => Value::None,
                Some(p) => jsonable_or_self(p)?,
            };
            let assumptions = self
                .assumptions
                .iter()
                .map(|a| a.repr().map(|s| Value::str(&s)))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Value::Dict(Rc::new(Dict::from_static_pairs([
                ("type", Value::static_str("ShapesSpec")),
                ("params", params),
                ("assumptions", Value::List(Rc::new(assumptions))),
            ]))))
        })())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
