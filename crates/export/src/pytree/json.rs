//! `json.loads` / `json.dumps` as `torch.utils._pytree` calls them, over
//! `pyval::Value`: an adapter over `torchspec_pyval::pyjson`. pytree dumps with the
//! default `allow_nan=True`, so non-finite floats are written `NaN`,
//! `Infinity`, `-Infinity` (json/encoder.py `floatstr`); everything else is
//! `pyjson`'s encoder.

use std::rc::Rc;

use num_bigint::BigInt;
use torchspec_pyval::pyjson::dump::{write_float, write_int, write_str};
use torchspec_pyval::pyjson::{PyInt, PyJson};
use torchspec_pyval::{Dict, Int, PyResult, Raise, Value};

fn raise(e: torchspec_pyval::Error) -> Raise {
    match e.exception {
        Some(t) => Raise::new(&t, e.message),
        // Refusals without a Python counterpart (nesting beyond pyjson's
        // bound, lone surrogates) are limits of the model.
        None => Raise::unsupported(e.message),
    }
}

/// `json.loads(s)`.
pub(super) fn loads(s: &str) -> PyResult<Value> {
    Ok(to_value(torchspec_pyval::pyjson::loads(s).map_err(raise)?))
}

fn to_value(j: PyJson) -> Value {
    match j {
        PyJson::Null => Value::None,
        PyJson::Bool(b) => Value::Bool(b),
        PyJson::Int(PyInt::Small(i)) => Value::int(i),
        PyJson::Int(PyInt::Big(i)) => Value::big(*i),
        PyJson::Float(f) => Value::Float(f),
        PyJson::Str(s) => Value::str(&s),
        PyJson::List(items) => Value::List(Rc::new(items.into_iter().map(to_value).collect())),
        PyJson::Object(entries) => {
            let mut d = Dict::with_capacity(entries.len());
            for (k, v) in entries {
                // str keys are hashable; `loads` leaves no duplicates.
                let _ = d.insert(Value::str(&k), to_value(v));
            }
            Value::Dict(Rc::new(d))
        }
    }
}

/// `json.dumps(v)` (default separators, `ensure_ascii=True`, `allow_nan=True`).
pub(super) fn dumps(v: &Value) -> PyResult<String> {
    let mut out = String::with_capacity(128);
    write(&mut out, v)?;
    Ok(out)
}

/// `floatstr` with `allow_nan=True`.
fn write_any_float(out: &mut String, f: f64) -> PyResult<()> {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        write_float(out, f).map_err(raise)?;
    }
    Ok(())
}

fn write(out: &mut String, v: &Value) -> PyResult<()> {
    match v {
        Value::None => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(Int::Small(i)) => write_int(out, &PyInt::Small(*i)).map_err(raise)?,
        Value::Int(Int::Big(i)) => {
            write_int(out, &PyInt::from_big(BigInt::clone(i))).map_err(raise)?
        }
        Value::Float(f) => write_any_float(out, *f)?,
        Value::Str(s) => write_str(out, s),
        Value::List(items) | Value::Tuple(items) => {
            out.push('[');
            for (n, x) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write(out, x)?;
            }
            out.push(']');
        }
        Value::Dict(d) => {
            out.push('{');
            for (n, (k, x)) in d.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                // JSON object keys: str as is; float, int, bool, None as text.
                let key = match k {
                    Value::Str(s) => s.to_string(),
                    Value::Float(f) => {
                        let mut t = String::new();
                        write_any_float(&mut t, *f)?;
                        t
                    }
                    Value::Bool(_) | Value::None | Value::Int(_) => dumps(k)?,
                    _ => {
                        return Err(Raise::type_error(format!(
                            "keys must be str, int, float, bool or None, not {}",
                            k.type_name()
                        )))
                    }
                };
                write_str(out, &key);
                out.push_str(": ");
                write(out, x)?;
            }
            out.push('}');
        }
        _ => {
            return Err(Raise::type_error(format!(
                "Object of type {} is not JSON serializable",
                v.type_name()
            )))
        }
    }
    Ok(())
}
