//! Probe files v1 (`shared/probe-format.md`), as `oracle/capture.py`'s
//! `read_probes` and `decode_probe_value` read them: one `{"id", "args",
//! "kwargs"}` per line (`kind` an optional label, other keys ignored),
//! case-format VALUEs plus tensors. A line that cannot be read is a
//! [`BadProbe`] naming its line and JSON path; the other lines are still
//! read, so every readable probe gets an answer.

use std::any::Any;
use std::path::Path;
use std::rc::Rc;

use crate::pytree::{Container, NodeKind, Registry};
use crate::registrations::Registrations;
use torchspec_pyval::error::{Error, Result};
use torchspec_pyval::pyjson::{PyInt, PyJson};
use torchspec_pyval::{Dict, PyObject, PyResult, Raise, Value};

/// A tensor input: only its metadata matters before a kernel runs.
#[derive(Debug)]
pub struct Tensor {
    /// `tensor.shape`.
    pub shape: Vec<i64>,
    /// The dtype name, as `getattr(torch, name)` takes it (`float32`).
    pub dtype: String,
}

impl PyObject for Tensor {
    fn type_name(&self) -> &'static str {
        "Tensor"
    }
    fn write_repr(&self, _out: &mut String) -> PyResult<()> {
        Err(Raise::Unsupported("the repr of a tensor".into()))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One probe line, decoded.
#[derive(Debug)]
pub struct Probe {
    /// 1-based line number in the probe file.
    pub line: usize,
    /// The line's `id`.
    pub id: String,
    /// The free label of the line (`ok`, `dim-above-max`, ...), if any.
    pub kind: Option<String>,
    /// The positional arguments, decoded.
    pub args: Vec<Value>,
    /// The keyword arguments, decoded, in line order.
    pub kwargs: Rc<Dict>,
    /// A VALUE the reference cannot build (a namedtuple or dataclass whose
    /// class lives in the capturing process).
    pub unsupported: Option<String>,
}

impl Probe {
    /// The probe as a probe-file v1 line (`{"id", "kind", "args",
    /// "kwargs"}`, tensors without `data`), or why one of its values has no
    /// VALUE form (an object other than a tensor).
    pub fn to_line(&self) -> std::result::Result<PyJson, String> {
        let args = self
            .args
            .iter()
            .map(value_json)
            .collect::<std::result::Result<_, _>>()?;
        let mut line = vec![("id", PyJson::from(&self.id))];
        if let Some(kind) = &self.kind {
            line.push(("kind", kind.into()));
        }
        line.push(("args", PyJson::object([("tuple", PyJson::List(args))])));
        line.push(("kwargs", dict_json(&self.kwargs)?));
        Ok(PyJson::object(line))
    }
}

/// A case-format VALUE (`shared/case-format.md`) of a probe input.
fn value_json(v: &Value) -> std::result::Result<PyJson, String> {
    use PyJson as J;
    Ok(match v {
        Value::None => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => match i.to_i64() {
            Some(i) => J::from(i),
            None => J::Int(PyInt::from_big(i.to_big())),
        },
        Value::Float(f) if f.is_nan() => J::object([("$float", "nan".into())]),
        Value::Float(f) if f.is_infinite() => {
            J::object([("$float", if *f > 0.0 { "inf" } else { "-inf" }.into())])
        }
        Value::Float(f) => J::Float(*f),
        Value::Str(s) => J::Str(s.to_string()),
        Value::List(items) => J::List(
            items
                .iter()
                .map(value_json)
                .collect::<std::result::Result<_, _>>()?,
        ),
        Value::Tuple(items) => {
            let items = items
                .iter()
                .map(value_json)
                .collect::<std::result::Result<_, _>>()?;
            J::object([("tuple", J::List(items))])
        }
        Value::Dict(d) => dict_json(d)?,
        Value::Object(o) => {
            if let Some(t) = o.as_any().downcast_ref::<Tensor>() {
                return Ok(J::object([(
                    "tensor",
                    J::object([
                        ("shape", t.shape.clone().into()),
                        ("dtype", t.dtype.as_str().into()),
                    ]),
                )]));
            }
            match o.as_any().downcast_ref::<Container>() {
                Some(c) => container_json(c)?,
                None => return Err(format!("a `{}` value", o.type_name())),
            }
        }
        Value::Slice(_) => return Err("a slice".into()),
    })
}

/// A registered namedtuple or dataclass: `{"namedtuple" | "dataclass":
/// {"type", "fields"}}` under its serialized type name.
fn container_json(c: &Container) -> std::result::Result<PyJson, String> {
    let (key, fields): (&str, Vec<(String, Value)>) = match &c.ty.kind {
        NodeKind::NamedTuple { fields } => (
            "namedtuple",
            fields
                .iter()
                .cloned()
                .zip(c.children.iter().cloned())
                .collect(),
        ),
        NodeKind::Dataclass { .. } => (
            "dataclass",
            c.dataclass_fields()
                .map_err(|_| "a dataclass value".to_string())?,
        ),
        _ => return Err(format!("a `{}` value", c.ty.qualname)),
    };
    let Some(name) = &c.ty.serialized_type_name else {
        return Err(format!("an unregistered `{}` value", c.ty.qualname));
    };
    let fields = fields
        .iter()
        .map(|(f, v)| Ok(PyJson::List(vec![f.into(), value_json(v)?])))
        .collect::<std::result::Result<Vec<_>, String>>()?;
    Ok(PyJson::object([(
        key,
        PyJson::object([("type", name.into()), ("fields", PyJson::List(fields))]),
    )]))
}

fn dict_json(d: &Dict) -> std::result::Result<PyJson, String> {
    let items = d
        .iter()
        .map(|(k, v)| Ok(PyJson::List(vec![value_json(k)?, value_json(v)?])))
        .collect::<std::result::Result<Vec<_>, String>>()?;
    Ok(PyJson::object([("dict", PyJson::List(items))]))
}

/// A line that could not be read: its result is `{"id", "bad_probe":
/// {"line", "message"}}` and the command exits non-zero at the end.
#[derive(Debug)]
pub struct BadProbe {
    /// 1-based line number in the probe file.
    pub line: usize,
    /// The line's `id` when the line is a JSON object with a string `id`.
    pub id: Option<String>,
    /// What is wrong, with its JSON path (no file or line).
    pub error: Error,
}

impl BadProbe {
    /// The result line of probe-format v1.
    pub fn to_json(&self) -> PyJson {
        PyJson::object([
            ("id", self.id.as_deref().into()),
            (
                "bad_probe",
                PyJson::object([
                    ("line", self.line.into()),
                    ("message", self.error.to_string().into()),
                ]),
            ),
        ])
    }
}

/// One line of a probe file: a probe, or why it could not be read.
pub type ProbeLine = std::result::Result<Probe, BadProbe>;

/// Every dtype name `getattr(torch, name)` resolves to a `torch.dtype` in
/// torch 2.15.0 (aliases included), as the oracle's `decode_probe_value`
/// accepts them.
const DTYPES: &[&str] = &[
    "bcomplex32",
    "bfloat16",
    "bit",
    "bits16",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "bool",
    "cdouble",
    "cfloat",
    "chalf",
    "complex128",
    "complex32",
    "complex64",
    "double",
    "float",
    "float16",
    "float32",
    "float4_e2m1fn_x2",
    "float64",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "half",
    "int",
    "int1",
    "int16",
    "int2",
    "int3",
    "int32",
    "int4",
    "int5",
    "int6",
    "int64",
    "int7",
    "int8",
    "long",
    "qint32",
    "qint8",
    "quint2x4",
    "quint4x2",
    "quint8",
    "short",
    "uint1",
    "uint16",
    "uint2",
    "uint3",
    "uint32",
    "uint4",
    "uint5",
    "uint6",
    "uint64",
    "uint7",
    "uint8",
];

/// Reads a probe file: one [`ProbeLine`] per non-blank line. Only an I/O
/// or UTF-8 error of the whole file is an `Err`.
pub fn read_probes(path: impl AsRef<Path>) -> Result<Vec<ProbeLine>> {
    let path = path.as_ref();
    read_probes_in(path, &Registrations::default())
}

/// [`read_probes`] in a process with `registrations`: a `namedtuple` or
/// `dataclass` VALUE builds the pytree type registered under its name.
pub fn read_probes_in(
    path: impl AsRef<Path>,
    registrations: &Registrations,
) -> Result<Vec<ProbeLine>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(parse_probes_in(&text, registrations))
}

/// Parses probe lines; blank lines are skipped (they still count for line
/// numbers), as the oracle does.
pub fn parse_probes(text: &str) -> Vec<ProbeLine> {
    parse_probes_in(text, &Registrations::default())
}

/// [`parse_probes`] with `registrations`. A repeated `id` is a bad line
/// (ids are unique in a file); the first line with it stays a probe.
pub fn parse_probes_in(text: &str, registrations: &Registrations) -> Vec<ProbeLine> {
    let registry = registrations.pytree_registry();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = i + 1;
        let probe = parse_line(raw, line, &registry).and_then(|p| {
            if seen.insert(p.id.clone()) {
                Ok(p)
            } else {
                let error = Error::at("$.id", format!("duplicate id {:?}", p.id));
                Err(Box::new((Some(p.id), error)))
            }
        });
        out.push(probe.map_err(|b| {
            let (id, error) = *b;
            BadProbe { line, id, error }
        }));
    }
    out
}

/// The probes of a file that must be well formed (the zoo's): the first
/// bad line is an error naming its line.
pub fn all_readable(lines: Vec<ProbeLine>) -> Result<Vec<Probe>> {
    lines
        .into_iter()
        .map(|l| l.map_err(|b| b.error.on_line(b.line)))
        .collect()
}

/// A bad line's id (when readable) and error, boxed: errors are large.
type LineError = Box<(Option<String>, Error)>;

fn parse_line(
    raw: &str,
    line: usize,
    registry: &Registry,
) -> std::result::Result<Probe, LineError> {
    let json = torchspec_pyval::pyjson::loads(raw)
        .map_err(|e| Box::new((None, Error::new(format!("invalid JSON: {}", e.message)))))?;
    let PyJson::Object(_) = &json else {
        return Err(Box::new((
            None,
            Error::at("$", "a probe must be a JSON object"),
        )));
    };
    let id = match json.get("id") {
        Some(PyJson::Str(s)) => s.clone(),
        Some(_) => return Err(Box::new((None, Error::at("$.id", "must be a string")))),
        None => return Err(Box::new((None, Error::at("$", "missing key `id`")))),
    };
    decode_probe(&json, id.clone(), line, registry).map_err(|e| Box::new((Some(id), e)))
}

fn decode_probe(json: &PyJson, id: String, line: usize, registry: &Registry) -> Result<Probe> {
    let kind = match json.get("kind") {
        None => None,
        Some(PyJson::Str(s)) => Some(s.clone()),
        Some(_) => return Err(Error::at("$.kind", "must be a string")),
    };
    let mut unsupported = None;
    let mut cx = Decode {
        unsupported: &mut unsupported,
        registry,
    };
    let mut field = |k: &str| match json.get(k) {
        Some(v) => cx.value(v, &format!("$.{k}")),
        None => Err(Error::at("$", format!("missing key `{k}`"))),
    };
    let args = field("args")?;
    let kwargs = field("kwargs")?;
    let Value::Tuple(args) = args else {
        return Err(Error::at("$.args", "must be a {\"tuple\": [...]}"));
    };
    let Value::Dict(kwargs) = kwargs else {
        return Err(Error::at("$.kwargs", "must be a {\"dict\": [...]}"));
    };
    Ok(Probe {
        line,
        id,
        kind,
        args: args.to_vec(),
        kwargs,
        unsupported,
    })
}

struct Decode<'a> {
    unsupported: &'a mut Option<String>,
    registry: &'a Registry,
}

fn raise_at(at: &str, r: Raise) -> Error {
    match r {
        Raise::Exception(e) => Error::at(at, format!("{}: {}", e.type_name, e.message)),
        Raise::Unsupported(w) => Error::at(at, w),
    }
}

impl Decode<'_> {
    fn value(&mut self, node: &PyJson, at: &str) -> Result<Value> {
        Ok(match node {
            PyJson::Null => Value::None,
            PyJson::Bool(b) => Value::Bool(*b),
            PyJson::Int(PyInt::Small(i)) => Value::int(*i),
            PyJson::Int(PyInt::Big(b)) => Value::big((**b).clone()),
            PyJson::Float(f) => Value::Float(*f),
            PyJson::Str(s) => Value::Str(s.as_str().into()),
            PyJson::List(items) => Value::List(Rc::new(self.items(items, at)?)),
            PyJson::Object(obj) => {
                let [(key, arg)] = obj.as_slice() else {
                    return Err(Error::at(at, "a VALUE object must have exactly one key"));
                };
                let sub = format!("{at}.{key}");
                match key.as_str() {
                    "tuple" => Value::Tuple(Rc::new(self.list(arg, &sub, "a tuple")?)),
                    "dict" => self.dict(arg, &sub)?,
                    "$float" => special_float(arg, &sub)?,
                    "tensor" => tensor(arg, &sub)?,
                    "namedtuple" | "dataclass" => self.pytree_object(key, arg, &sub)?,
                    _ => return Err(Error::at(at, format!("unknown object `{key}`"))),
                }
            }
        })
    }

    fn items(&mut self, items: &[PyJson], at: &str) -> Result<Vec<Value>> {
        items
            .iter()
            .enumerate()
            .map(|(i, x)| self.value(x, &format!("{at}[{i}]")))
            .collect()
    }

    fn list(&mut self, arg: &PyJson, at: &str, what: &str) -> Result<Vec<Value>> {
        let PyJson::List(items) = arg else {
            return Err(Error::at(at, format!("{what} must be a list")));
        };
        self.items(items, at)
    }

    /// Pairs inserted one at a time, in order (`[[1, a], [true, b]]` is `{1: b}`).
    fn dict(&mut self, arg: &PyJson, at: &str) -> Result<Value> {
        let PyJson::List(pairs) = arg else {
            return Err(Error::at(at, "a dict must be a list"));
        };
        let mut d = Dict::new();
        for (i, pair) in pairs.iter().enumerate() {
            let p = format!("{at}[{i}]");
            let PyJson::List(kv) = pair else {
                return Err(Error::at(&p, "a dict entry must be a [key, value] pair"));
            };
            let [k, v] = kv.as_slice() else {
                return Err(Error::at(&p, "a dict entry must be a [key, value] pair"));
            };
            let k = self.value(k, &format!("{p}[0]"))?;
            let v = self.value(v, &format!("{p}[1]"))?;
            d.insert(k, v).map_err(|e| raise_at(&p, e))?;
        }
        Ok(Value::Dict(Rc::new(d)))
    }

    /// `cls(**fields)` of the pytree type registered as `type`.
    fn pytree_object(&mut self, key: &str, arg: &PyJson, at: &str) -> Result<Value> {
        let shape_error = || Error::at(at, format!("a {key} has exactly the keys type and fields"));
        let PyJson::Object(o) = arg else {
            return Err(shape_error());
        };
        if o.len() != 2 || arg.get("type").is_none() || arg.get("fields").is_none() {
            return Err(shape_error());
        }
        let Some(PyJson::Str(name)) = arg.get("type") else {
            return Err(Error::at(&format!("{at}.type"), "must be a string"));
        };
        let Some(cls) = self.registry.lookup(name).cloned() else {
            // Not registered here: the class lives in the capturing process.
            self.unsupported.get_or_insert_with(|| {
                format!(
                    "a {key} input of type `{name}`: the class is registered in the capturing \
                     process (give it in a registrations file)"
                )
            });
            return Ok(Value::None);
        };
        let fields = self.fields(arg.get("fields"), at)?;
        let built = match &cls.kind {
            NodeKind::NamedTuple { fields: names } => {
                if let Some((extra, _)) = fields.iter().find(|(f, _)| !names.contains(f)) {
                    return Err(Error::at(
                        at,
                        format!(
                            "TypeError: {}.__new__() got an unexpected keyword argument '{extra}'",
                            cls.name()
                        ),
                    ));
                }
                let values = names
                    .iter()
                    .map_while(|n| fields.iter().find(|(f, _)| f == n).map(|(_, v)| v.clone()))
                    .collect();
                Container::namedtuple(cls.clone(), values)
            }
            NodeKind::Dataclass { .. } => Container::dataclass(cls.clone(), &fields),
            _ => {
                return Err(Error::at(
                    &format!("{at}.type"),
                    format!("`{name}` is not a registered namedtuple or dataclass"),
                ))
            }
        };
        built.map_err(|e| raise_at(at, e))
    }

    /// `fields[name] = value` per pair: a repeated name keeps its last value.
    fn fields(&mut self, arg: Option<&PyJson>, at: &str) -> Result<Vec<(String, Value)>> {
        let Some(PyJson::List(pairs)) = arg else {
            return Err(Error::at(&format!("{at}.fields"), "fields must be a list"));
        };
        let mut fields: Vec<(String, Value)> = Vec::new();
        for (i, pair) in pairs.iter().enumerate() {
            let p = format!("{at}.fields[{i}]");
            let Some([PyJson::Str(k), v]) = (match pair {
                PyJson::List(kv) => {
                    Some(kv.as_slice()).and_then(|s| <&[PyJson; 2]>::try_from(s).ok())
                }
                _ => None,
            }) else {
                return Err(Error::at(&p, "a field is a [name, value] pair"));
            };
            let v = self.value(v, &format!("{p}[1]"))?;
            match fields.iter_mut().find(|(n, _)| n == k) {
                Some(slot) => slot.1 = v,
                None => fields.push((k.clone(), v)),
            }
        }
        Ok(fields)
    }
}

/// `{"$float": "nan" | "inf" | "-inf"}`, the case format's non-finite floats.
fn special_float(arg: &PyJson, at: &str) -> Result<Value> {
    match arg {
        PyJson::Str(s) if s == "nan" => Ok(Value::Float(f64::NAN)),
        PyJson::Str(s) if s == "inf" => Ok(Value::Float(f64::INFINITY)),
        PyJson::Str(s) if s == "-inf" => Ok(Value::Float(f64::NEG_INFINITY)),
        _ => Err(Error::at(at, "must be \"nan\", \"inf\" or \"-inf\"")),
    }
}

fn tensor(arg: &PyJson, at: &str) -> Result<Value> {
    let keys_error = || Error::at(at, "a tensor has keys shape, dtype and optional data");
    let PyJson::Object(t) = arg else {
        return Err(keys_error());
    };
    let (Some(shape), Some(dtype)) = (arg.get("shape"), arg.get("dtype")) else {
        return Err(keys_error());
    };
    if t.iter()
        .any(|(k, _)| !["shape", "dtype", "data"].contains(&k.as_str()))
    {
        return Err(keys_error());
    }
    let shape_at = format!("{at}.shape");
    let PyJson::List(dims) = shape else {
        return Err(Error::at(&shape_at, "a shape must be a list"));
    };
    let shape = dims
        .iter()
        .map(|d| match d {
            PyJson::Int(PyInt::Small(d)) if *d >= 0 => Some(*d),
            _ => None,
        })
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| Error::at(&shape_at, "must be non-negative integers"))?;
    let dtype = match dtype {
        PyJson::Str(s) if DTYPES.contains(&s.as_str()) => s.clone(),
        PyJson::Str(s) => {
            let msg = format!("unknown dtype {}", torchspec_pyval::repr::str_repr(s));
            return Err(Error::at(&format!("{at}.dtype"), msg));
        }
        other => {
            let msg = format!("unknown dtype of type {}", other.type_name());
            return Err(Error::at(&format!("{at}.dtype"), msg));
        }
    };
    if let Some(data) = arg.get("data") {
        check_data(data, &shape).map_err(|m| Error::at(&format!("{at}.data"), m))?;
    }
    Ok(Value::Object(Rc::new(Tensor { shape, dtype })))
}

/// `data` is what `tensor.tolist()` gives for `shape` (nested lists of
/// numbers or booleans), or `[]` for any shape with a zero-size dim. The
/// walk is iterative: its stack is bounded by the line's own size.
fn check_data(data: &PyJson, shape: &[i64]) -> std::result::Result<(), String> {
    if matches!(data, PyJson::List(l) if l.is_empty()) && shape.contains(&0) {
        return Ok(());
    }
    let mut stack: Vec<(&PyJson, usize)> = vec![(data, 0)];
    while let Some((node, depth)) = stack.pop() {
        let fits = match (node, shape.get(depth)) {
            (PyJson::List(items), Some(&n)) if items.len() as u64 == n as u64 => {
                stack.extend(items.iter().map(|x| (x, depth + 1)));
                true
            }
            (PyJson::Bool(_) | PyJson::Int(_) | PyJson::Float(_), None) => true,
            _ => false,
        };
        if !fits {
            let got = spine(data);
            if got.iter().map(|&n| n as i64).eq(shape.iter().copied()) {
                return Err(format!(
                    "is not the nested lists of numbers of shape {shape:?}"
                ));
            }
            return Err(format!("has shape {got:?}, not {shape:?}"));
        }
    }
    Ok(())
}

/// The shape `torch.tensor(data)` would infer from the first elements.
fn spine(data: &PyJson) -> Vec<usize> {
    let mut got = Vec::new();
    let mut node = data;
    while let PyJson::List(a) = node {
        got.push(a.len());
        match a.first() {
            Some(x) => node = x,
            None => break,
        }
    }
    got
}
