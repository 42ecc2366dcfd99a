//! Mirrors `torch/_export/serde/serialize.py`: `_dict_to_dataclass` (the
//! read walk the generated `from_pyjson` methods follow) and
//! `_dataclass_to_dict` + `_to_json_bytes` (the write side of `write_json`
//! and `to_pyjson`). The helpers here are what `generated.rs` calls.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::Arc;

use torchspec_pyval::pyjson::dump::{write_int as json_int, write_str as json_str};
use torchspec_pyval::pyjson::text::{Entries, Val};
use torchspec_pyval::pyjson::{PyInt, PyJson};
use torchspec_pyval::{float_repr, str_repr};
use torchspec_pyval::{Error, Raise};

/// How much of the document's problems to report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Accept and refuse exactly what PyTorch's loader does.
    #[default]
    Default,
    /// Also report, as diagnostics, what PyTorch silently reads past:
    /// unknown fields, a newer minor schema version, unknown enum values.
    Strict,
}

/// A non-fatal finding of strict mode, with its JSON path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where in the document the finding is, as a JSON path.
    pub path: String,
    /// What was found.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.path, self.message)
    }
}

/// The state of one load: the mode and the diagnostics found so far.
#[derive(Debug, Default)]
pub struct LoadCx {
    /// The mode the document is read in.
    pub mode: Mode,
    /// The strict-mode findings, in document order.
    pub diagnostics: Vec<Diagnostic>,
    /// Default mode: why each loose field was kept raw (`at PATH: expected
    /// ..., found ...`), in document order.
    pub loose: Vec<String>,
    /// The symbolic expressions read so far, one `Arc` per distinct value.
    exprs: HashMap<String, Vec<(HintKey, Arc<super::SymExpr>)>>,
    /// The shared texts read so far (`load_shared_str`).
    texts: std::collections::HashSet<Arc<str>>,
}

/// A [`super::SymExprHint`] that can be compared and hashed exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HintKey {
    None,
    Int(i64),
    Bool(bool),
}

impl LoadCx {
    /// A fresh load in `mode`, with no diagnostics yet.
    pub fn new(mode: Mode) -> LoadCx {
        LoadCx {
            mode,
            ..LoadCx::default()
        }
    }

    /// `s` as an `Arc<str>`, the one already made for an equal text of
    /// this load when there is one.
    pub fn share_str(&mut self, s: &str) -> Arc<str> {
        if let Some(same) = self.texts.get(s) {
            return same.clone();
        }
        let shared: Arc<str> = Arc::from(s);
        self.texts.insert(shared.clone());
        shared
    }

    /// `e` behind an `Arc`, the one already made for an equal expression
    /// of this load when there is one (a typed text with no hint or an int
    /// or bool hint): the same size is written in every tensor that has it.
    pub fn share_expr(&mut self, e: super::SymExpr) -> Arc<super::SymExpr> {
        use super::SymExprHint as H;
        let hint = match &e.hint {
            None => HintKey::None,
            Some(H::AsInt(PyInt::Small(i))) => HintKey::Int(*i),
            Some(H::AsBool(b)) => HintKey::Bool(*b),
            Some(_) => return Arc::new(e),
        };
        let Loose::Typed(text) = &e.expr_str else {
            return Arc::new(e);
        };
        if let Some(same) = self.exprs.get(text.as_str()).and_then(|known| {
            known
                .iter()
                .find(|(h, _)| *h == hint)
                .map(|(_, a)| a.clone())
        }) {
            return same;
        }
        let text = text.clone();
        let shared = Arc::new(e);
        self.exprs
            .entry(text)
            .or_default()
            .push((hint, shared.clone()));
        shared
    }

    /// Whether the load is in strict mode.
    pub fn strict(&self) -> bool {
        self.mode == Mode::Strict
    }

    /// Records a strict-mode finding at `path`.
    pub fn report(&mut self, path: &JsonPath<'_>, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

/// A refusal: the crate error, boxed so `Result<T, LoadError>` stays small.
#[derive(Debug)]
pub struct LoadError(pub Box<Error>);

impl LoadError {
    /// The crate error inside.
    pub fn into_error(self) -> Error {
        *self.0
    }

    /// A refusal of ours, not an exception Python raises.
    pub fn is_ours(&self) -> bool {
        self.0.exception.is_none()
    }

    /// Python raising `exception(message)` at `path`.
    pub fn python(path: &JsonPath<'_>, exception: &str, message: impl Into<String>) -> LoadError {
        LoadError(Box::new(
            Error::python(exception, message).with_path(path.to_string()),
        ))
    }

    /// A refusal of our own (where Python would read on with a wrong type).
    pub fn ours(path: &JsonPath<'_>, message: impl Into<String>) -> LoadError {
        LoadError(Box::new(Error::at(&path.to_string(), message)))
    }
}

#[derive(Clone, Debug)]
enum Seg<'a> {
    Field(Cow<'a, str>),
    Index(usize),
    Key(Cow<'a, str>),
}

/// The JSON path of the value being read (`$.graph_module.graph.nodes[3]`),
/// kept as segments borrowed from the document and spelled only on error.
#[derive(Debug, Default)]
pub struct JsonPath<'a> {
    segs: Vec<Seg<'a>>,
}

impl<'a> JsonPath<'a> {
    /// The path of the document's root, `$`.
    pub fn new() -> JsonPath<'a> {
        JsonPath {
            segs: Vec::with_capacity(32),
        }
    }

    /// Enters the dataclass field `name`: `.name`.
    pub fn push_field(&mut self, name: &'a str) {
        self.segs.push(Seg::Field(Cow::Borrowed(name)));
    }

    /// Enters list item `i`: `[i]`.
    pub fn push_index(&mut self, i: usize) {
        self.segs.push(Seg::Index(i));
    }

    /// Enters the dict key `k`: `["k"]`.
    pub fn push_key(&mut self, k: impl Into<Cow<'a, str>>) {
        self.segs.push(Seg::Key(k.into()));
    }

    /// A field name read from the document: `.name` when it is an
    /// identifier, else `["..."]`.
    pub fn push_name(&mut self, k: impl Into<Cow<'a, str>>) {
        let k = k.into();
        let ident = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        self.segs
            .push(if ident { Seg::Field(k) } else { Seg::Key(k) });
    }

    /// Leaves the innermost segment.
    pub fn pop(&mut self) {
        self.segs.pop();
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether the path is the root, `$`.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Cuts the path back to its first `len` segments.
    pub fn truncate(&mut self, len: usize) {
        self.segs.truncate(len);
    }
}

impl fmt::Display for JsonPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for seg in &self.segs {
            match seg {
                Seg::Field(name) => write!(f, ".{name}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
                Seg::Key(k) => {
                    let mut s = String::new();
                    json_str(&mut s, k);
                    write!(f, "[{s}]")?
                }
            }
        }
        Ok(())
    }
}

type R<T> = Result<T, LoadError>;

/// A field `_dict_to_dataclass` passes through unchecked: the typed value
/// when the JSON has the schema's type, else the raw JSON Python keeps.
#[derive(Clone, Debug, PartialEq)]
pub enum Loose<T> {
    /// The value read as the schema's type.
    Typed(T),
    /// The JSON as it came, of another type.
    Raw(PyJson),
}

impl<T> Loose<T> {
    /// `TABLE[value]` for one of serialize.py's tables keyed by an
    /// `IntEnum` (`_SERIALIZE_TO_TORCH_DTYPE[tensor_meta.dtype]`): the int a
    /// raw value hashes and compares equal to (`6.0` and `True` find their
    /// int), else the `KeyError` of the raw key or the `TypeError` of an
    /// unhashable one.
    pub fn enum_key(&self, value: impl Fn(&T) -> i64) -> Result<i64, Raise> {
        match self {
            Loose::Typed(t) => Ok(value(t)),
            Loose::Raw(raw) => raw_enum_key(raw),
        }
    }

    /// The typed value, if the JSON had the schema's type.
    pub fn typed(&self) -> Option<&T> {
        match self {
            Loose::Typed(t) => Some(t),
            Loose::Raw(_) => None,
        }
    }
}

impl<T> Loose<Vec<T>> {
    /// The items of a list field as a loaded program has them: the loader
    /// refuses every raw value but `""`, which Python iterates as empty.
    pub fn items(&self) -> &[T] {
        match self {
            Loose::Typed(t) => t,
            Loose::Raw(_) => &[],
        }
    }
}

/// The fields of one dataclass `_dict_to_dataclass` passed through as
/// they came: the field's name and JSON. Almost always none, so it is one
/// pointer wide until a field is kept.
// A boxed `Vec` on purpose: one word in every struct that may keep a
// field (a `TensorArgument` is one per node argument), the extra
// allocation only when one is kept.
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawFields(Option<Box<Vec<(&'static str, PyJson)>>>);

impl RawFields {
    /// Keeps `field`'s JSON as it came.
    pub fn push(&mut self, (field, value): (&'static str, PyJson)) {
        self.0.get_or_insert_with(Box::default).push((field, value));
    }

    /// The JSON `field` was kept as.
    pub fn get(&self, field: &str) -> Option<&PyJson> {
        let fields = self.0.as_deref()?;
        fields.iter().find(|(f, _)| *f == field).map(|(_, v)| v)
    }

    /// Whether no field was kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// A union payload `_dict_to_dataclass` passed through unchecked
/// (`Argument.create(as_int=0.0)`): the tag and the raw JSON Python keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct RawPayload {
    /// The union member the JSON names.
    pub tag: &'static str,
    /// The member's value, as `json.loads` made it.
    pub value: PyJson,
}

impl RawPayload {
    /// `{"tag": value}` without the closing brace, as the union writes it.
    pub fn write_json(&self, out: &mut String) {
        out.push_str("{\"");
        out.push_str(self.tag);
        out.push_str("\": ");
        if torchspec_pyval::pyjson::dump::dumps_into(out, &self.value).is_err() {
            out.push_str("NaN");
        }
    }

    /// `_Union.__repr__` without the closing parenthesis:
    /// `f"{type(self).__name__}({self.type}={getattr(self, self.type)})"`,
    /// the value by `str()`.
    pub fn py_repr(&self, union: &str, out: &mut String) {
        out.push_str(union);
        out.push('(');
        out.push_str(self.tag);
        out.push('=');
        match &self.value {
            PyJson::Str(s) => out.push_str(s),
            v => repr_raw(v, out),
        }
    }
}

/// The declared type's shape, as far as `_dict_to_dataclass` still looks at
/// a raw value: `typing.get_args(cls)[0]` for a non-empty list,
/// `typing.get_args(cls)[1]` for a dict.
#[derive(Clone, Copy, Debug)]
pub enum RawTy {
    /// A `str`, `int`, `float`, `bool` or `IntEnum`.
    Scalar,
    /// A dataclass or union, which `_dict_to_dataclass` builds from a
    /// dict: what it raises inside one is not modelled here.
    Opaque,
    /// `T | None`.
    Opt(&'static RawTy),
    /// `list[T]`.
    List(&'static RawTy),
    /// `dict[str, T]`.
    Dict(&'static RawTy),
}

/// `_dict_to_dataclass(cls, data)` on a raw value: only the `IndexError`s of
/// `typing.get_args` can still be raised.
fn walk_raw(v: &PyJson, ty: RawTy, path: &JsonPath<'_>) -> R<()> {
    let index_error = || LoadError::python(path, "IndexError", "tuple index out of range");
    let ty = match ty {
        RawTy::Opt(_) if matches!(v, PyJson::Null) => return Ok(()),
        RawTy::Opaque => return Ok(()),
        RawTy::Opt(t) => *t,
        t => t,
    };
    match v {
        PyJson::List(items) if !items.is_empty() => {
            let elem = match ty {
                RawTy::Scalar => return Err(index_error()),
                RawTy::Opaque => return Ok(()),
                RawTy::List(t) => *t,
                // `get_args(dict[str, V])[0]` is `str`.
                RawTy::Dict(_) | RawTy::Opt(_) => RawTy::Scalar,
            };
            items.iter().try_for_each(|i| walk_raw(i, elem, path))
        }
        PyJson::Object(entries) => match ty {
            RawTy::Dict(t) => entries.iter().try_for_each(|(_, i)| walk_raw(i, *t, path)),
            _ => Err(index_error()),
        },
        _ => Ok(()),
    }
}

/// A loose field: read as `f` reads it; a value of another JSON type is
/// kept raw (default mode) or refused (strict mode, rule `loose-field`).
pub fn load_loose<'a, T>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    ty: &RawTy,
    f: impl Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> R<T>,
) -> R<Loose<T>> {
    let depth = path.len();
    match f(v, path, cx) {
        Ok(t) => Ok(Loose::Typed(t)),
        Err(e) if e.is_ours() => {
            path.truncate(depth);
            let raw = v.to_pyjson();
            walk_raw(&raw, *ty, path)?;
            if cx.strict() {
                let mut e = e;
                e.0.message
                    .push_str(" (strict rule `loose-field`: PyTorch keeps the raw value)");
                return Err(e);
            }
            cx.loose.push(e.0.to_string());
            Ok(Loose::Raw(raw))
        }
        Err(e) => Err(e),
    }
}

/// Writes a loose field: the typed value by `f`, the raw one as `json.dumps` does.
pub fn write_loose<T>(x: &Loose<T>, out: &mut String, f: impl Fn(&T, &mut String)) {
    match x {
        Loose::Typed(t) => f(t, out),
        Loose::Raw(v) => {
            if torchspec_pyval::pyjson::dump::dumps_into(out, v).is_err() {
                out.push_str("NaN");
            }
        }
    }
}

/// `json.dumps` of a value kept as it came.
pub fn write_raw(v: &PyJson, out: &mut String) {
    if torchspec_pyval::pyjson::dump::dumps_into(out, v).is_err() {
        out.push_str("NaN");
    }
}

/// `_dataclass_to_dict` of a loose field: the typed value by `f`, the raw one as it came.
pub fn loose_py<T>(x: &Loose<T>, f: impl Fn(&T) -> PyJson) -> PyJson {
    match x {
        Loose::Typed(t) => f(t),
        Loose::Raw(v) => v.clone(),
    }
}

/// Python's `repr` of a loose field: the typed value by `f`, the raw one by `repr_raw`.
pub fn repr_loose<T>(x: &Loose<T>, out: &mut String, f: impl Fn(&T, &mut String)) {
    match x {
        Loose::Typed(t) => f(t, out),
        Loose::Raw(v) => repr_raw(v, out),
    }
}

/// Python's truth value of a value `json.loads` made.
pub fn truthy(v: &PyJson) -> bool {
    match v {
        PyJson::Null => false,
        PyJson::Bool(b) => *b,
        PyJson::Int(i) => i.to_i64() != Some(0),
        PyJson::Float(f) => *f != 0.0,
        PyJson::Str(s) => !s.is_empty(),
        PyJson::List(l) => !l.is_empty(),
        PyJson::Object(o) => !o.is_empty(),
    }
}

/// The truth value of a loose field: `truth` of the typed value, else
/// Python's truth of the raw one.
pub fn loose_truth<T>(x: &Loose<T>, truth: impl Fn(&T) -> bool) -> bool {
    match x {
        Loose::Typed(t) => truth(t),
        Loose::Raw(v) => truthy(v),
    }
}

/// Python's `repr` of the value `json.loads` made.
pub fn repr_raw(v: &PyJson, out: &mut String) {
    match v {
        PyJson::Null => out.push_str("None"),
        PyJson::Bool(b) => repr_bool(b, out),
        PyJson::Int(i) => repr_int(i, out),
        PyJson::Float(f) => repr_float(f, out),
        PyJson::Str(s) => out.push_str(&str_repr(s)),
        PyJson::List(items) => repr_list(items, out, repr_raw),
        PyJson::Object(entries) => repr_dict(entries, out, repr_raw),
    }
}

/// A value of the wrong type. For a scalar field, `_dict_to_dataclass`'s
/// list and dict branches run first and index `typing.get_args(cls)`, which
/// is empty: a non-empty list or any dict is Python's `IndexError`.
/// Everything else Python would carry on with; we refuse it.
fn wrong_type(v: Val<'_>, path: &JsonPath<'_>, expected: &str) -> LoadError {
    if v.is_object() || (v.is_list() && !v.is_empty()) {
        return LoadError::python(path, "IndexError", "tuple index out of range");
    }
    LoadError::ours(
        path,
        format!("expected {expected}, found `{}`", v.type_name()),
    )
}

/// A `str` field.
pub fn load_str<'a>(v: Val<'a>, path: &mut JsonPath<'a>, _: &mut LoadCx) -> R<String> {
    match v.str() {
        Some(s) => Ok(s.into_owned()),
        None => Err(wrong_type(v, path, "`str`")),
    }
}

/// A `str` field whose text is kept once per load (`LoadCx::share_str`).
pub fn load_shared_str<'a>(v: Val<'a>, path: &mut JsonPath<'a>, cx: &mut LoadCx) -> R<Arc<str>> {
    match v.str() {
        Some(s) => Ok(cx.share_str(&s)),
        None => Err(wrong_type(v, path, "`str`")),
    }
}

/// An `int` field.
pub fn load_int<'a>(v: Val<'a>, path: &mut JsonPath<'a>, _: &mut LoadCx) -> R<PyInt> {
    match v.scalar() {
        Some(PyJson::Int(i)) => Ok(i),
        _ => Err(wrong_type(v, path, "`int`")),
    }
}

/// A `bool` field.
pub fn load_bool<'a>(v: Val<'a>, path: &mut JsonPath<'a>, _: &mut LoadCx) -> R<bool> {
    match v.bool() {
        Some(b) => Ok(b),
        None => Err(wrong_type(v, path, "`bool`")),
    }
}

/// `_dict_to_dataclass(float, data)`: its list and dict branches come
/// before `float(data)`, so a non-empty list or any dict is an `IndexError`
/// (`typing.get_args(float)` is empty); otherwise Python's `float(data)`.
pub fn load_float<'a>(v: Val<'a>, path: &mut JsonPath<'a>, _: &mut LoadCx) -> R<f64> {
    let Some(scalar) = v.scalar() else {
        return Err(wrong_type(v, path, "`float`"));
    };
    match &scalar {
        PyJson::Float(f) => Ok(*f),
        PyJson::Int(i) => i.to_f64().ok_or_else(|| {
            LoadError::python(path, "OverflowError", "int too large to convert to float")
        }),
        PyJson::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        PyJson::Str(s) => py_float(s).ok_or_else(|| {
            LoadError::python(
                path,
                "ValueError",
                format!("could not convert string to float: {}", str_repr(s)),
            )
        }),
        PyJson::Null => Err(LoadError::python(
            path,
            "TypeError",
            "float() argument must be a string or a real number, not 'NoneType'",
        )),
        PyJson::List(_) | PyJson::Object(_) => Err(wrong_type(v, path, "`float`")),
    }
}

/// CPython's `float(str)`: surrounding whitespace, `_` between digits,
/// `inf`/`infinity`/`nan` in any case with a sign. Not modelled: non-ASCII
/// decimal digits (`float("١")`), which Python accepts and we refuse with
/// Python's `ValueError` text; whitespace is Rust's `char::is_whitespace`.
pub fn py_float(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let special = if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        Some(f64::INFINITY)
    } else if body.eq_ignore_ascii_case("nan") {
        Some(f64::NAN)
    } else {
        None
    };
    if let Some(f) = special {
        return Some(if neg { -f } else { f });
    }
    let b = t.as_bytes();
    let mut clean = String::with_capacity(t.len());
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'_' => {
                let digit_before = i > 0 && b[i - 1].is_ascii_digit();
                let digit_after = b.get(i + 1).is_some_and(|d| d.is_ascii_digit());
                if !(digit_before && digit_after) {
                    return None;
                }
            }
            b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' => clean.push(c as char),
            _ => return None,
        }
    }
    clean.parse().ok()
}

/// `X | None`: `null` is `None`, anything else is read as `X`.
pub fn load_opt<'a, T>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    f: impl Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> R<T>,
) -> R<Option<T>> {
    if v.is_null() {
        return Ok(None);
    }
    f(v, path, cx).map(Some)
}

/// A `list[T]` field: each item read by `f` under `[i]`.
pub fn load_list<'a, T>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    f: impl Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> R<T>,
) -> R<Vec<T>> {
    if !v.is_list() {
        // `typing.get_args(list[T])[1]` for a dict.
        if v.is_object() {
            return Err(LoadError::python(
                path,
                "IndexError",
                "tuple index out of range",
            ));
        }
        return Err(LoadError::ours(
            path,
            format!("expected a list, found `{}`", v.type_name()),
        ));
    }
    // Counted first, so the list is allocated once at its size.
    let mut out = Vec::with_capacity(v.items().count());
    for (i, item) in v.items().enumerate() {
        path.push_index(i);
        out.push(f(item, path, cx)?);
        path.pop();
    }
    Ok(out)
}

/// A `dict[str, T]` field: each value read by `f` under `["key"]`, in document order.
pub fn load_dict<'a, T>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    f: impl Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> R<T>,
) -> R<Vec<(String, T)>> {
    if !v.is_object() {
        // A list meets `_dict_to_dataclass`'s list branch: each item is
        // read as `typing.get_args(dict[str, T])[0]`, `str`.
        if v.is_list() {
            walk_raw(&v.to_pyjson(), RawTy::List(&RawTy::Scalar), path)?;
        }
        return Err(LoadError::ours(
            path,
            format!("expected a dict, found `{}`", v.type_name()),
        ));
    }
    let entries = v.entries();
    let mut out = Vec::with_capacity(entries.len());
    for (k, item) in entries {
        let k = k.as_str();
        path.push_key(k.clone());
        out.push((k.into_owned(), f(item, path, cx)?));
        path.pop();
    }
    Ok(out)
}

/// A dataclass's data: a JSON object. In strict mode its keys that are not
/// fields are reported (Python ignores them for forward compatibility).
///
/// Other data meets `_dict_to_dataclass`'s `name not in data` and
/// `data[name]` as Python runs them: a scalar is not iterable; a list or a
/// string answers `in` (membership, substring) and then refuses to be
/// indexed by a name, or else every required field is missing.
pub fn load_object<'a>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    class: &str,
    fields: &[&str],
    required: &[&str],
) -> R<Entries<'a>> {
    let indexed_by_name = if v.is_object() {
        let entries = v.entries();
        if cx.strict() {
            for (k, _) in &entries {
                if !fields.iter().any(|f| k.eq_str(f)) {
                    let k = k.as_str();
                    path.push_name(k.clone());
                    cx.report(path, format!("unknown field `{k}` of `{class}`"));
                    path.pop();
                }
            }
        }
        return Ok(entries);
    } else if v.is_list() {
        let strs: Vec<_> = v.items().filter_map(|i| i.str()).collect();
        fields
            .iter()
            .any(|f| strs.iter().any(|s| s == f))
            .then_some("list indices must be integers or slices, not str")
    } else if let Some(s) = v.str() {
        fields
            .iter()
            .any(|f| s.contains(f))
            .then_some("string indices must be integers, not 'str'")
    } else {
        return Err(LoadError::python(
            path,
            "TypeError",
            format!("argument of type '{}' is not iterable", v.type_name()),
        ));
    };
    if let Some(message) = indexed_by_name {
        return Err(LoadError::python(path, "TypeError", message));
    }
    let missing: Vec<(bool, &str)> = required.iter().map(|r| (true, *r)).collect();
    Err(missing_fields(class, &missing, path))
}

/// `data[name]` if `name in data`, read under `.name`.
pub fn load_field<'a, T>(
    entries: &Entries<'a>,
    name: &'static str,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    f: impl Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> R<T>,
) -> R<Option<T>> {
    let Some((_, v)) = entries.iter().find(|(k, _)| k.eq_str(name)) else {
        return Ok(None);
    };
    path.push_field(name);
    let r = f(*v, path, cx)?;
    path.pop();
    Ok(Some(r))
}

/// `cls(**fields)` without some required fields: CPython's `TypeError`.
pub fn missing_fields(class: &str, missing: &[(bool, &str)], path: &JsonPath<'_>) -> LoadError {
    let names: Vec<String> = missing
        .iter()
        .filter(|(m, _)| *m)
        .map(|(_, n)| format!("'{n}'"))
        .collect();
    let list = match names.len() {
        1 => names[0].clone(),
        2 => format!("{} and {}", names[0], names[1]),
        n => format!("{}, and {}", names[..n - 1].join(", "), names[n - 1]),
    };
    let plural = if names.len() == 1 { "" } else { "s" };
    LoadError::python(
        path,
        "TypeError",
        format!(
            "{class}.__init__() missing {} required positional argument{plural}: {list}",
            names.len()
        ),
    )
}

/// A `_Union`'s data: a dict with exactly one key, its tag.
pub fn load_union<'a>(v: Val<'a>, path: &mut JsonPath<'a>) -> R<(Cow<'a, str>, Val<'a>)> {
    if !v.is_object() {
        return Err(LoadError::python(
            path,
            "AssertionError",
            format!("expected dict, got {}", v.type_name()),
        ));
    }
    let entries = v.entries();
    if entries.len() != 1 {
        return Err(LoadError::python(
            path,
            "AssertionError",
            format!("expected dict with 1 key, got {}", entries.len()),
        ));
    }
    let (tag, value) = entries[0];
    let tag = tag.as_str();
    path.push_name(tag.clone());
    Ok((tag, value))
}

/// `type_hints[_type]` for a tag the union does not have.
pub fn unknown_tag(tag: &str, path: &JsonPath<'_>) -> LoadError {
    LoadError::python(path, "KeyError", str_repr(tag))
}

/// An `IntEnum` field: Python keeps the raw int, known or not.
pub fn load_enum_value<'a>(
    v: Val<'a>,
    path: &mut JsonPath<'a>,
    cx: &mut LoadCx,
    class: &str,
    known: impl Fn(i64) -> bool,
) -> R<i64> {
    match v.scalar() {
        Some(PyJson::Int(PyInt::Small(i))) => {
            if cx.strict() && !known(i) {
                cx.report(path, format!("unknown `{class}` value {i}"));
            }
            Ok(i)
        }
        Some(PyJson::Int(PyInt::Big(b))) => Err(LoadError::ours(
            path,
            format!("`{class}` value {b} is out of the 64-bit range"),
        )),
        _ => Err(wrong_type(v, path, &format!("an int for `{class}`"))),
    }
}

// The write side: `_dataclass_to_dict` then `json.dumps(cls=EnumEncoder,
// allow_nan=False)`, written straight into one string.

/// A `str` as `json.dumps` writes it.
pub fn write_str<S: AsRef<str> + ?Sized>(x: &S, out: &mut String) {
    json_str(out, x.as_ref());
}

/// An int as `int.__repr__`; ints past CPython's 4300-digit limit (which
/// `loads` never produces) are written whole where Python would refuse.
pub fn write_int(x: &PyInt, out: &mut String) {
    if json_int(out, x).is_err() {
        let _ = write!(out, "{x}");
    }
}

/// A `bool` as `json.dumps` writes it: `true` / `false`.
pub fn write_bool(x: &bool, out: &mut String) {
    out.push_str(if *x { "true" } else { "false" });
}

/// `_dataclass_to_dict` turns non-finite floats into the strings
/// `"Infinity"`, `"-Infinity"`, `"NaN"` before `json.dumps`.
pub fn write_float(x: &f64, out: &mut String) {
    match float_special(*x) {
        Some(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        None => out.push_str(&float_repr(*x)),
    }
}

fn float_special(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("NaN")
    } else if x == f64::INFINITY {
        Some("Infinity")
    } else if x == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

/// A `T | None`: `f` for a value, `null` for `None`.
pub fn write_opt<T>(x: &Option<T>, out: &mut String, f: impl Fn(&T, &mut String)) {
    match x {
        Some(x) => f(x, out),
        None => out.push_str("null"),
    }
}

/// A `list[T]` as `json.dumps` writes it, each item by `f`.
pub fn write_list<T>(x: &[T], out: &mut String, f: impl Fn(&T, &mut String)) {
    out.push('[');
    for (i, item) in x.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f(item, out);
    }
    out.push(']');
}

/// A `dict[str, T]` as `json.dumps` writes it, each value by `f`.
pub fn write_dict<T>(x: &[(String, T)], out: &mut String, f: impl Fn(&T, &mut String)) {
    out.push('{');
    for (i, (k, item)) in x.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        json_str(out, k);
        out.push_str(": ");
        f(item, out);
    }
    out.push('}');
}

/// `_dataclass_to_dict` of a `str`.
pub fn str_py<S: AsRef<str> + ?Sized>(x: &S) -> PyJson {
    PyJson::Str(x.as_ref().to_owned())
}

/// `_dataclass_to_dict` of an `int`.
pub fn int_py(x: &PyInt) -> PyJson {
    PyJson::Int(x.clone())
}

/// `_dataclass_to_dict` of a `bool`.
pub fn bool_py(x: &bool) -> PyJson {
    PyJson::Bool(*x)
}

/// `_dataclass_to_dict` of a `float`: non-finite floats become the strings
/// `"Infinity"`, `"-Infinity"`, `"NaN"`.
pub fn float_py(x: &f64) -> PyJson {
    match float_special(*x) {
        Some(s) => PyJson::Str(s.to_owned()),
        None => PyJson::Float(*x),
    }
}

/// `_dataclass_to_dict` of a `T | None`: `f` for a value, `null` for `None`.
pub fn opt_py<T>(x: &Option<T>, f: impl Fn(&T) -> PyJson) -> PyJson {
    x.as_ref().map_or(PyJson::Null, f)
}

/// `_dataclass_to_dict` of a `list[T]`, each item by `f`.
pub fn list_py<T>(x: &[T], f: impl Fn(&T) -> PyJson) -> PyJson {
    PyJson::List(x.iter().map(f).collect())
}

/// `_dataclass_to_dict` of a `dict[str, T]`, each value by `f`.
pub fn dict_py<T>(x: &[(String, T)], f: impl Fn(&T) -> PyJson) -> PyJson {
    PyJson::Object(x.iter().map(|(k, v)| (k.clone(), f(v))).collect())
}

// Python's `repr` of the dataclass values `_dict_to_dataclass` builds (the
// text a `SerializeError` shows for a node it cannot deserialize).

/// `repr` of a `str`.
pub fn repr_str<S: AsRef<str> + ?Sized>(x: &S, out: &mut String) {
    out.push_str(&str_repr(x.as_ref()));
}

/// `repr` of an `int`.
pub fn repr_int(x: &PyInt, out: &mut String) {
    let _ = write!(out, "{x}");
}

/// `repr` of a `bool`: `True` / `False`.
pub fn repr_bool(x: &bool, out: &mut String) {
    out.push_str(if *x { "True" } else { "False" });
}

/// `repr` of a `float`.
pub fn repr_float(x: &f64, out: &mut String) {
    out.push_str(&float_repr(*x));
}

/// `repr` of a `T | None`: `f` for a value, `None` for `None`.
pub fn repr_opt<T>(x: &Option<T>, out: &mut String, f: impl Fn(&T, &mut String)) {
    match x {
        Some(x) => f(x, out),
        None => out.push_str("None"),
    }
}

/// `repr` of a `list[T]`, each item by `f`.
pub fn repr_list<T>(x: &[T], out: &mut String, f: impl Fn(&T, &mut String)) {
    out.push('[');
    for (i, item) in x.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f(item, out);
    }
    out.push(']');
}

/// `repr` of a `dict[str, T]`, each value by `f`.
pub fn repr_dict<T>(x: &[(String, T)], out: &mut String, f: impl Fn(&T, &mut String)) {
    out.push('{');
    for (i, (k, item)) in x.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&str_repr(k));
        out.push_str(": ");
        f(item, out);
    }
    out.push('}');
}

/// [`Loose::enum_key`] of a raw value.
pub fn raw_enum_key(raw: &PyJson) -> Result<i64, Raise> {
    match raw {
        PyJson::Bool(b) => return Ok(i64::from(*b)),
        PyJson::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => return Ok(*f as i64),
        PyJson::List(_) => {
            return Err(Raise::new("TypeError", "unhashable type: 'list'"));
        }
        PyJson::Object(_) => {
            return Err(Raise::new("TypeError", "unhashable type: 'dict'"));
        }
        _ => {}
    }
    let mut key = String::new();
    repr_raw(raw, &mut key);
    Err(Raise::new("KeyError", key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict_of_str(text: &str) -> Result<Vec<(String, String)>, LoadError> {
        let doc = torchspec_pyval::pyjson::text::Doc::new(text).expect("json");
        let mut path = JsonPath::new();
        load_dict(
            doc.root(),
            &mut path,
            &mut LoadCx::new(Mode::Default),
            load_str,
        )
    }

    #[test]
    fn a_list_for_a_dict_reads_its_items_as_str() {
        // `_dict_to_dataclass(str, {})`: `typing.get_args(str)[1]`.
        let e = dict_of_str("[{}]").unwrap_err().into_error();
        assert_eq!(e.exception.as_deref(), Some("IndexError"));
        assert_eq!(e.message, "tuple index out of range");
        assert!(dict_of_str("[[1]]").unwrap_err().0.exception.is_some());
        // Scalars pass through `_dict_to_dataclass`: a refusal of ours.
        assert!(dict_of_str("[1, \"a\"]").unwrap_err().is_ours());
        assert_eq!(dict_of_str("{\"k\": \"v\"}").unwrap().len(), 1);
    }
}
