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
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_probes(&text).map_err(|e| e.in_file(path))
}

/// Parses probe lines (trailing blank lines ignored, as the oracle does).
pub fn parse_probes(text: &str) -> Result<Vec<Probe>> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let mut out: Vec<Probe> = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let probe = parse_line(raw, i + 1).map_err(|e| e.on_line(i + 1))?;
        if out.iter().any(|p| p.id == probe.id) {
            return Err(Error::at("$.id", format!("duplicate id {:?}", probe.id)).on_line(i + 1));
        }
        out.push(probe);
    }
    Ok(out)
}

fn parse_line(raw: &str, line: usize) -> Result<Probe> {
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
}

impl Decode<'_> {
    fn value(&mut self, node: &Json, at: &str) -> Result<Value> {
        Ok(match node {
            Json::Null => Value::None,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(BigInt::from(i))
                } else if let Some(u) = n.as_u64() {
                    Value::Int(BigInt::from(u))
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
                    "namedtuple" | "dataclass" => {
                        let ty = arg.get("type").and_then(Json::as_str).unwrap_or("?");
                        self.unsupported.get_or_insert_with(|| {
                            format!(
                                "a {key} input of type `{ty}`: the class lives in the capturing process"
                            )
                        });
                        Value::None
                    }
                    _ => return Err(Error::at(at, format!("unknown object `{key}`"))),
                }
            }
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
