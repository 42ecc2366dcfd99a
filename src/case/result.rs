//! Result lines of case format v1, and `enc`: how a Python value becomes
//! JSON in a result (`$object`, `$float`, `tuple`).

use serde_json::{Map, Value as Json};

use super::wire::json_number;
use crate::error::{Error, Result};
use crate::pyval::{float_repr, PyException, PyResult, Value};

/// What one case produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The `ok` object: `{"repr", "jsonable"}` or `{"name"}`.
    Ok(Json),
    /// PyTorch raised (or would raise) this exception.
    Error(PyException),
    /// The reference does not model this yet; never produced by the oracle.
    Unsupported(String),
}

/// One line of a result file.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultLine {
    pub id: String,
    pub outcome: Outcome,
    /// `export_spec` only: the spec-wiring calls (`shared/export-spec-format.md`).
    pub wiring: Option<Json>,
}

impl ResultLine {
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("id".into(), Json::String(self.id.clone()));
        match &self.outcome {
            Outcome::Ok(v) => {
                m.insert("ok".into(), v.clone());
            }
            Outcome::Error(e) => {
                let mut err = Map::new();
                err.insert("type".into(), Json::String(e.type_name.clone()));
                err.insert("message".into(), Json::String(e.message.clone()));
                m.insert("error".into(), Json::Object(err));
            }
            Outcome::Unsupported(reason) => {
                let mut u = Map::new();
                u.insert("reason".into(), Json::String(reason.clone()));
                m.insert("unsupported".into(), Json::Object(u));
            }
        }
        if let Some(w) = &self.wiring {
            m.insert("wiring".into(), w.clone());
        }
        Json::Object(m)
    }

    /// Write the result line as compact JSON, without building it as a
    /// `serde_json::Value` first.
    pub fn write_json(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer(&mut *out, self).map_err(std::io::Error::from)
    }

    /// Read a result line (a golden or a reference output).
    pub fn from_json(json: &Json) -> Result<ResultLine> {
        let obj = json
            .as_object()
            .ok_or_else(|| Error::at("$", "a result must be a JSON object"))?;
        let id = obj
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| Error::at("$.id", "missing string `id`"))?;
        let outcome = if let Some(ok) = obj.get("ok") {
            Outcome::Ok(ok.clone())
        } else if let Some(err) = obj.get("error") {
            let get = |k: &str| {
                err.get(k)
                    .and_then(Json::as_str)
                    .map(str::to_string)
                    .ok_or_else(|| Error::at(&format!("$.error.{k}"), "missing string"))
            };
            Outcome::Error(PyException {
                type_name: get("type")?,
                message: get("message")?,
            })
        } else if let Some(u) = obj.get("unsupported") {
            Outcome::Unsupported(
                u.get("reason")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_string(),
            )
        } else {
            return Err(Error::at(
                "$",
                "a result needs `ok`, `error` or `unsupported`",
            ));
        };
        Ok(ResultLine {
            id: id.to_string(),
            outcome,
            wiring: obj.get("wiring").cloned(),
        })
    }
}

fn float_json(f: f64) -> Json {
    if f.is_finite() {
        json_number(&float_repr(f))
    } else {
        let mut m = Map::new();
        m.insert("$float".into(), Json::String(float_repr(f)));
        Json::Object(m)
    }
}

/// `enc`: a Python value as result JSON.
pub fn enc(v: &Value) -> PyResult<Json> {
    Ok(match v {
        Value::None => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => {
            v.repr()?; // the digit limit applies to `json.dumps` too
            json_number(&i.to_string())
        }
        Value::Float(f) => float_json(*f),
        Value::Str(s) => Json::String(s.to_string()),
        Value::List(items) => Json::Array(items.iter().map(enc).collect::<PyResult<_>>()?),
        Value::Tuple(items) => {
            let mut m = Map::new();
            m.insert(
                "tuple".into(),
                Json::Array(items.iter().map(enc).collect::<PyResult<_>>()?),
            );
            Json::Object(m)
        }
        Value::Dict(d) if d.keys().all(|k| matches!(k, Value::Str(_))) => {
            let mut m = Map::new();
            for (k, v) in d.iter() {
                if let Value::Str(k) = k {
                    m.insert(k.to_string(), enc(v)?);
                }
            }
            Json::Object(m)
        }
        other => object(other)?,
    })
}

fn object(v: &Value) -> PyResult<Json> {
    let mut inner = Map::new();
    inner.insert("type".into(), Json::String(v.type_name().into()));
    inner.insert("repr".into(), Json::String(v.repr()?));
    let mut m = Map::new();
    m.insert("$object".into(), Json::Object(inner));
    Ok(Json::Object(m))
}

impl serde::Serialize for ResultLine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// `{"type": ..., "message": ...}` or `{"reason": ...}`.
        struct Obj<'a>(&'a [(&'static str, &'a str)]);
        impl serde::Serialize for Obj<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(2 + usize::from(self.wiring.is_some())))?;
        m.serialize_entry("id", &self.id)?;
        match &self.outcome {
            Outcome::Ok(v) => m.serialize_entry("ok", v)?,
            Outcome::Error(e) => m.serialize_entry(
                "error",
                &Obj(&[("type", &e.type_name), ("message", &e.message)]),
            )?,
            Outcome::Unsupported(why) => {
                m.serialize_entry("unsupported", &Obj(&[("reason", why)]))?
            }
        }
        if let Some(w) = &self.wiring {
            m.serialize_entry("wiring", w)?;
        }
        m.end()
    }
}
