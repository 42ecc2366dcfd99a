//! Mirrors `oracle/capture.py`'s probe file (`read_probes`,
//! `decode_probe_value`): one `{"id", "kind", "args", "kwargs"}` per line,
//! case-format VALUEs plus tensors, each problem reported with its line
//! and JSON path.

use std::any::Any;
use std::path::Path;
use std::rc::Rc;

use num_bigint::BigInt;
use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::export::registrations::Registrations;
use crate::pytree::{Container, NodeKind, Registry};
use crate::pyval::{Dict, PyObject, PyResult, Raise, Value};

/// A tensor input: only its metadata matters before a kernel runs.
#[derive(Debug)]
pub struct Tensor {
    pub shape: Vec<i64>,
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
    pub line: usize,
    pub id: String,
    pub kind: String,
    pub args: Vec<Value>,
    pub kwargs: Rc<Dict>,
    /// A VALUE the reference cannot build (a namedtuple or dataclass whose
    /// class lives in the capturing process).
    pub unsupported: Option<String>,
}

const DTYPES: &[&str] = &[
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
    "float",
    "double",
    "half",
    "int",
    "long",
    "short",
];

/// Reads a probe file; the first malformed line is an error naming it.
pub fn read_probes(path: &Path) -> Result<Vec<Probe>> {
    read_probes_in(path, &Registrations::default())
}

/// [`read_probes`] in a process with `registrations`: a `namedtuple` or
/// `dataclass` VALUE builds the pytree type registered under its name.
pub fn read_probes_in(path: &Path, registrations: &Registrations) -> Result<Vec<Probe>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_probes_in(&text, registrations).map_err(|e| e.in_file(path))
}

/// Parses probe lines (trailing blank lines ignored, as the oracle does).
pub fn parse_probes(text: &str) -> Result<Vec<Probe>> {
    parse_probes_in(text, &Registrations::default())
}

/// [`parse_probes`] with `registrations`.
pub fn parse_probes_in(text: &str, registrations: &Registrations) -> Result<Vec<Probe>> {
    let registry = registrations.pytree_registry();
    let mut lines: Vec<&str> = text.split('\n').collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let mut out: Vec<Probe> = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let probe = parse_line(raw, i + 1, &registry).map_err(|e| e.on_line(i + 1))?;
        if out.iter().any(|p| p.id == probe.id) {
            return Err(Error::at("$.id", format!("duplicate id {:?}", probe.id)).on_line(i + 1));
        }
        out.push(probe);
    }
    Ok(out)
}

fn parse_line(raw: &str, line: usize, registry: &Registry) -> Result<Probe> {
    let json: Json =
        serde_json::from_str(raw).map_err(|e| Error::new(format!("invalid JSON: {e}")))?;
    let Json::Object(obj) = &json else {
        return Err(Error::at("$", "a probe must be a JSON object"));
    };
    for key in obj.keys() {
        if !["id", "kind", "args", "kwargs"].contains(&key.as_str()) {
            return Err(Error::at("$", format!("unknown key `{key}`")));
        }
    }
    let string = |k: &str| -> Result<String> {
        match obj.get(k) {
            Some(Json::String(s)) => Ok(s.clone()),
            Some(_) => Err(Error::at(&format!("$.{k}"), "must be a string")),
            None => Err(Error::at("$", format!("missing key `{k}`"))),
        }
    };
    let id = string("id")?;
    let kind = string("kind")?;
    let mut unsupported = None;
    let mut cx = Decode {
        unsupported: &mut unsupported,
        registry,
    };
    let args = match obj.get("args") {
        Some(v) => cx.value(v, "$.args")?,
        None => return Err(Error::at("$", "missing key `args`")),
    };
    let kwargs = match obj.get("kwargs") {
        Some(v) => cx.value(v, "$.kwargs")?,
        None => return Err(Error::at("$", "missing key `kwargs`")),
    };
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

impl Decode<'_> {
    fn value(&mut self, node: &Json, at: &str) -> Result<Value> {
        Ok(match node {
            Json::Null => Value::None,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::int(i)
                } else if let Some(u) = n.as_u64() {
                    Value::big(BigInt::from(u))
                } else {
                    Value::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Json::String(s) => Value::Str(s.as_str().into()),
            Json::Array(items) => Value::List(Rc::new(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.value(x, &format!("{at}[{i}]")))
                    .collect::<Result<_>>()?,
            )),
            Json::Object(obj) => {
                let mut it = obj.iter();
                let (Some((key, arg)), None) = (it.next(), it.next()) else {
                    return Err(Error::at(at, "a VALUE object must have exactly one key"));
                };
                let sub = format!("{at}.{key}");
                match key.as_str() {
                    "tuple" => Value::Tuple(Rc::new(self.list(arg, &sub, "a tuple")?)),
                    "dict" => {
                        let Json::Array(pairs) = arg else {
                            return Err(Error::at(&sub, "a dict must be a list"));
                        };
                        let mut d = Dict::new();
                        for (i, pair) in pairs.iter().enumerate() {
                            let p = format!("{sub}[{i}]");
                            let Some([k, v]) = pair
                                .as_array()
                                .map(Vec::as_slice)
                                .and_then(|s| <&[Json; 2]>::try_from(s).ok())
                            else {
                                return Err(Error::at(
                                    &p,
                                    "a dict entry must be a [key, value] pair",
                                ));
                            };
                            let k = self.value(k, &format!("{p}[0]"))?;
                            let v = self.value(v, &format!("{p}[1]"))?;
                            d.insert(k, v).map_err(|e| match e {
                                Raise::Exception(e) => {
                                    Error::at(&p, format!("{}: {}", e.type_name, e.message))
                                }
                                Raise::Unsupported(w) => Error::at(&p, w),
                            })?;
                        }
                        Value::Dict(Rc::new(d))
                    }
                    "tensor" => self.tensor(arg, &sub)?,
                    "namedtuple" | "dataclass" => self.pytree_object(key, arg, &sub)?,
                    _ => return Err(Error::at(at, format!("unknown object `{key}`"))),
                }
            }
        })
    }

    /// `cls(**fields)` of the pytree type registered as `type`.
    fn pytree_object(&mut self, key: &str, arg: &Json, at: &str) -> Result<Value> {
        let Json::Object(o) = arg else {
            return Err(Error::at(
                at,
                format!("a {key} has exactly the keys type and fields"),
            ));
        };
        if o.len() != 2 || !o.contains_key("type") || !o.contains_key("fields") {
            return Err(Error::at(
                at,
                format!("a {key} has exactly the keys type and fields"),
            ));
        }
        let Some(name) = o.get("type").and_then(Json::as_str) else {
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
        let Some(Json::Array(pairs)) = o.get("fields") else {
            return Err(Error::at(&format!("{at}.fields"), "fields must be a list"));
        };
        let mut fields: Vec<(String, Value)> = Vec::new();
        for (i, pair) in pairs.iter().enumerate() {
            let p = format!("{at}.fields[{i}]");
            let (Json::Array(kv), true) = (pair, pair.as_array().is_some_and(|a| a.len() == 2))
            else {
                return Err(Error::at(&p, "a field is a [name, value] pair"));
            };
            let Json::String(k) = &kv[0] else {
                return Err(Error::at(&p, "a field is a [name, value] pair"));
            };
            let v = self.value(&kv[1], &format!("{p}[1]"))?;
            // `fields[name] = value`: a repeated name keeps its last value.
            match fields.iter_mut().find(|(n, _)| n == k) {
                Some(slot) => slot.1 = v,
                None => fields.push((k.clone(), v)),
            }
        }
        let built = match &cls.kind {
            NodeKind::NamedTuple { fields: names } => {
                let mut values = Vec::new();
                for n in names {
                    match fields.iter().find(|(f, _)| f == n) {
                        Some((_, v)) => values.push(v.clone()),
                        None => break,
                    }
                }
                if let Some((extra, _)) = fields.iter().find(|(f, _)| !names.contains(f)) {
                    return Err(Error::at(
                        at,
                        format!(
                            "TypeError: {}.__new__() got an unexpected keyword argument '{extra}'",
                            cls.name()
                        ),
                    ));
                }
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
        built.map_err(|e| match e {
            Raise::Exception(e) => Error::at(at, format!("{}: {}", e.type_name, e.message)),
            Raise::Unsupported(w) => Error::at(at, w),
        })
    }

    fn list(&mut self, arg: &Json, at: &str, what: &str) -> Result<Vec<Value>> {
        let Json::Array(items) = arg else {
            return Err(Error::at(at, format!("{what} must be a list")));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| self.value(x, &format!("{at}[{i}]")))
            .collect()
    }

    fn tensor(&mut self, arg: &Json, at: &str) -> Result<Value> {
        let Json::Object(t) = arg else {
            return Err(Error::at(
                at,
                "a tensor has keys shape, dtype and optional data",
            ));
        };
        if !t.contains_key("shape")
            || !t.contains_key("dtype")
            || t.keys()
                .any(|k| !["shape", "dtype", "data"].contains(&k.as_str()))
        {
            return Err(Error::at(
                at,
                "a tensor has keys shape, dtype and optional data",
            ));
        }
        let shape_at = format!("{at}.shape");
        let Json::Array(dims) = &t["shape"] else {
            return Err(Error::at(&shape_at, "a shape must be a list"));
        };
        let shape = dims
            .iter()
            .map(|d| d.as_i64().filter(|d| *d >= 0))
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| Error::at(&shape_at, "must be non-negative integers"))?;
        let dtype = match &t["dtype"] {
            Json::String(s) if DTYPES.contains(&s.as_str()) => s.clone(),
            other => {
                return Err(Error::at(
                    &format!("{at}.dtype"),
                    format!("unknown dtype {other}"),
                ))
            }
        };
        if let Some(data) = t.get("data") {
            let mut got = Vec::new();
            let mut node = data;
            while let Json::Array(a) = node {
                got.push(a.len() as i64);
                match a.first() {
                    Some(x) => node = x,
                    None => break,
                }
            }
            if got != shape {
                return Err(Error::at(
                    &format!("{at}.data"),
                    format!("has shape {got:?}, not {shape:?}"),
                ));
            }
        }
        Ok(Value::Object(Rc::new(Tensor { shape, dtype })))
    }
}
