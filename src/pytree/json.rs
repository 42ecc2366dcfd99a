//! THROWAWAY SHIM until `crate::pyjson` lands from branch `schema`:
//! `json.loads` / `json.dumps` over `pyval::Value`, only as far as the
//! tests need. Replaced by an adapter over `pyjson` after the merge.

use std::rc::Rc;

use num_bigint::BigInt;

use crate::pyval::{float_repr, Dict, PyResult, Raise, Value};

/// `json.loads(s)`.
pub(super) fn loads(s: &str) -> PyResult<Value> {
    let v: serde_json::Value = serde_json::from_str(s)
        .map_err(|e| Raise::new("JSONDecodeError", format!("shim: {e}")))?;
    Ok(from_serde(&v))
}

fn from_serde(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::None,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            let t = n.to_string();
            match t.parse::<BigInt>() {
                Ok(i) => Value::Int(i),
                Err(_) => Value::Float(t.parse().unwrap_or(f64::NAN)),
            }
        }
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(a) => Value::List(Rc::new(a.iter().map(from_serde).collect())),
        serde_json::Value::Object(o) => {
            let mut d = Dict::new();
            for (k, v) in o {
                let _ = d.insert(Value::str(k), from_serde(v));
            }
            Value::Dict(Rc::new(d))
        }
    }
}

/// `json.dumps(v)`.
pub(super) fn dumps(v: &Value) -> PyResult<String> {
    let mut out = String::new();
    enc(v, &mut out)?;
    Ok(out)
}

fn enc(v: &Value, out: &mut String) -> PyResult<()> {
    match v {
        Value::None => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) if f.is_nan() => out.push_str("NaN"),
        Value::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        }
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => enc_str(s, out),
        Value::List(items) | Value::Tuple(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                enc(x, out)?;
            }
            out.push(']');
        }
        Value::Dict(d) => {
            out.push('{');
            for (i, (k, x)) in d.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let key = match k {
                    Value::Str(s) => s.to_string(),
                    Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
                        let mut t = String::new();
                        enc(k, &mut t)?;
                        t
                    }
                    _ => {
                        return Err(Raise::type_error(format!(
                            "keys must be str, int, float, bool or None, not {}",
                            k.type_name()
                        )))
                    }
                };
                enc_str(&key, out);
                out.push_str(": ");
                enc(x, out)?;
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

fn enc_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
        }
    }
    out.push('"');
}
