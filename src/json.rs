//! The reader crate's JSON values ([`PyJson`]: reports, probe lines,
//! sample inputs) as the harness's `serde_json` values, and the
//! registrations file read as the harness has always read it.
//!
//! `torchspec-export` builds its JSON as [`PyJson`] so that it forces no
//! feature on a user's serde_json; the harness compares and prints with
//! serde_json (`preserve_order`, `arbitrary_precision`), so the text it
//! prints is what it printed when the reader built serde_json values:
//! a float is `serde_json::Number::from_f64`'s text, except in a report's
//! `schema_version`, whose values `json.loads` read and whose text is
//! Python's (`1e+16`).

use std::path::Path;
use std::str::FromStr;

use serde_json::{Map, Number, Value as Json};

use crate::error::{Error, Result};
use crate::export::registrations::Registrations;
use crate::export::ExportedProgram;
use crate::pyjson::{dumps, PyInt, PyJson};

/// `v` as a serde_json value: keys in order, ints of any size, a float as
/// `Number::from_f64` writes it (a non-finite one, which the reader never
/// puts in its JSON, as `null`).
///
/// ```
/// use torchspec::json::to_serde;
/// use torchspec::pyjson::loads;
///
/// let v = loads(r#"{"b": 1, "a": [2.5, 123456789012345678901234567890]}"#)?;
/// assert_eq!(
///     to_serde(&v).to_string(),
///     r#"{"b":1,"a":[2.5,123456789012345678901234567890]}"#
/// );
/// # Ok::<(), torchspec::Error>(())
/// ```
pub fn to_serde(v: &PyJson) -> Json {
    match v {
        PyJson::Null => Json::Null,
        PyJson::Bool(b) => Json::Bool(*b),
        PyJson::Int(PyInt::Small(i)) => Json::Number((*i).into()),
        PyJson::Int(PyInt::Big(b)) => {
            Number::from_str(&b.to_string()).map_or(Json::Null, Json::Number)
        }
        PyJson::Float(f) => Number::from_f64(*f).map_or(Json::Null, Json::Number),
        PyJson::Str(s) => Json::String(s.clone()),
        PyJson::List(items) => Json::Array(items.iter().map(to_serde).collect()),
        PyJson::Object(members) => Json::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_serde(v)))
                .collect::<Map<_, _>>(),
        ),
    }
}

/// `v` as `json.dumps` writes it, read back by serde_json (`null` where
/// serde_json refuses the text: `NaN`, or nesting past its limit).
fn python_text(v: &PyJson) -> Json {
    let text = dumps(v).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Json::Null)
}

/// A report of [`ExportedProgram::report`] or
/// [`transform_report`](crate::export::passes::transform_report) as a
/// serde_json value: [`to_serde`], but `schema_version`'s values keep the
/// text `json.dumps` gives them, as the oracle prints them.
pub fn report_to_serde(report: &PyJson) -> Json {
    let PyJson::Object(members) = report else {
        return to_serde(report);
    };
    let mut out = Map::new();
    for (key, value) in members {
        let value = match (key.as_str(), value) {
            ("schema_version", PyJson::List(items)) => {
                Json::Array(items.iter().map(python_text).collect())
            }
            _ => to_serde(value),
        };
        out.insert(key.clone(), value);
    }
    Json::Object(out)
}

/// The program report (`shared/program-report.md`) as a serde_json value.
pub fn report(ep: &ExportedProgram) -> Json {
    report_to_serde(&ep.report())
}

/// `v` as the reader's [`PyJson`] (a number with a fraction or exponent is
/// a float, any other an int).
pub fn from_serde(v: &Json) -> PyJson {
    match v {
        Json::Null => PyJson::Null,
        Json::Bool(b) => PyJson::Bool(*b),
        Json::Number(n) => {
            let text = n.to_string();
            match text.parse::<num_bigint::BigInt>() {
                Ok(i) => PyJson::Int(PyInt::from_big(i)),
                Err(_) => PyJson::Float(text.parse().unwrap_or(f64::NAN)),
            }
        }
        Json::String(s) => PyJson::Str(s.clone()),
        Json::Array(items) => PyJson::List(items.iter().map(from_serde).collect()),
        Json::Object(m) => {
            PyJson::Object(m.iter().map(|(k, v)| (k.clone(), from_serde(v))).collect())
        }
    }
}

/// A registrations file (`--registrations FILE`) parsed by serde_json, so
/// that a file it refuses gets its message (`invalid JSON: EOF while
/// parsing ...`), then read by [`Registrations::from_pyjson`].
pub fn read_registrations(path: &Path) -> Result<Registrations> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let doc: Json = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("invalid JSON: {e}")).in_file(path))?;
    Registrations::from_pyjson(&from_serde(&doc)).map_err(|e| e.in_file(path))
}
