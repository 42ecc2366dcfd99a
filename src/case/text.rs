//! Result lines written straight to JSON text: `enc(v.to_jsonable() if
//! hasattr(v, "to_jsonable") else v)` (capture.py's `enc` after each spec
//! class's `to_jsonable` in torch/fx/experimental/dynamic_spec.py) and the
//! line around it, byte for byte what [`ResultLine::write_json`] writes for
//! [`eval_case`](super::eval_case)'s outcome, without building the
//! jsonable `Value` or a `serde_json::Value` in between.
//!
//! The spec classes whose `to_jsonable` is written here directly are those
//! of `spec/` (`TensorSpec`, `ObjectSpec`, `DictSpec`, `SeqSpec`,
//! `ParamsSpec`, `ShapesSpec`, `IntVar`); a form whose JSON would depend on
//! dict-key collisions or non-`str` keys (`DictSpec` keys that print alike,
//! a `**kwargs` dict with non-`str` keys) takes the faithful path:
//! `to_jsonable` builds the value and [`write_enc`] writes it.

use super::result::{Outcome, ResultLine};
use crate::pyval::{float_repr, PyResult, Value};
use crate::spec::{
    jsonable_or_self, DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec, TensorSpec,
};

/// serde_json's escapes: `"`, `\`, the short forms of `\b \t \n \f \r`,
/// and `\u00XX` (lowercase hex) for the other control characters; every
/// other character as itself.
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x00..=0x1f => b'u',
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.push(b'\\');
        out.push(short);
        if short == b'u' {
            out.extend_from_slice(b"00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// `"key":`, for the constant keys of the result shapes.
fn key(out: &mut Vec<u8>, k: &str) {
    write_json_str(out, k);
    out.push(b':');
}

/// `{"$object": {"type": type(x).__name__, "repr": repr(x)}}`.
fn write_object(out: &mut Vec<u8>, v: &Value, repr: &mut String) -> PyResult<()> {
    repr.clear();
    v.write_repr(repr)?;
    out.extend_from_slice(b"{\"$object\":{\"type\":");
    write_json_str(out, v.type_name());
    out.extend_from_slice(b",\"repr\":");
    write_json_str(out, repr);
    out.extend_from_slice(b"}}");
    Ok(())
}

/// `enc(v)` as JSON text (`result::enc`, then compact serialization).
pub fn write_enc(out: &mut Vec<u8>, v: &Value, scratch: &mut String) -> PyResult<()> {
    match v {
        Value::None => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(_) => {
            // `repr` raises past the digit limit, as `json.dumps` does.
            scratch.clear();
            v.write_repr(scratch)?;
            out.extend_from_slice(scratch.as_bytes());
        }
        Value::Float(f) if f.is_finite() => out.extend_from_slice(float_repr(*f).as_bytes()),
        Value::Float(f) => {
            out.extend_from_slice(b"{\"$float\":");
            write_json_str(out, &float_repr(*f));
            out.push(b'}');
        }
        Value::Str(s) => write_json_str(out, s),
        Value::List(items) => write_list(out, items, scratch, write_enc)?,
        Value::Tuple(items) => {
            out.extend_from_slice(b"{\"tuple\":");
            write_list(out, items, scratch, write_enc)?;
            out.push(b'}');
        }
        Value::Dict(d) if d.keys().all(|k| matches!(k, Value::Str(_))) => {
            out.push(b'{');
            for (i, (k, v)) in d.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                if let Value::Str(k) = k {
                    key(out, k);
                }
                write_enc(out, v, scratch)?;
            }
            out.push(b'}');
        }
        other => write_object(out, other, scratch)?,
    }
    Ok(())
}

type Writer = fn(&mut Vec<u8>, &Value, &mut String) -> PyResult<()>;

fn write_list(out: &mut Vec<u8>, items: &[Value], scratch: &mut String, w: Writer) -> PyResult<()> {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        w(out, item, scratch)?;
    }
    out.push(b']');
    Ok(())
}

/// `{"type": "NAME", "FIELD": ` — the opening every `to_jsonable` shares.
fn typed_open(out: &mut Vec<u8>, type_name: &str, field: &str) {
    out.extend_from_slice(b"{\"type\":");
    write_json_str(out, type_name);
    out.push(b',');
    key(out, field);
}

/// The entries of a dict whose keys are all `str`, values jsonable'd.
fn write_str_keyed(
    out: &mut Vec<u8>,
    d: &crate::pyval::Dict,
    first: bool,
    scratch: &mut String,
) -> PyResult<()> {
    for (i, (k, v)) in d.iter().enumerate() {
        if i > 0 || !first {
            out.push(b',');
        }
        if let Value::Str(k) = k {
            key(out, k);
        }
        write_jsonable(out, v, scratch)?;
    }
    Ok(())
}

fn all_str_keys(d: &crate::pyval::Dict) -> bool {
    d.keys().all(|k| matches!(k, Value::Str(_)))
}

/// `enc(jsonable_or_self(v))` as JSON text.
pub fn write_jsonable(out: &mut Vec<u8>, v: &Value, scratch: &mut String) -> PyResult<()> {
    let Value::Object(o) = v else {
        return write_enc(out, v, scratch);
    };
    let any = o.as_any();
    if let Some(t) = any.downcast_ref::<TensorSpec>() {
        typed_open(out, "TensorSpec", "dims");
        write_list(out, &t.dims, scratch, write_jsonable)?;
        out.push(b'}');
        return Ok(());
    }
    if let Some(s) = any.downcast_ref::<ObjectSpec>() {
        if all_str_keys(&s.fields) {
            typed_open(out, "ObjectSpec", "fields");
            out.push(b'{');
            write_str_keyed(out, &s.fields, true, scratch)?;
            out.extend_from_slice(b"}}");
            return Ok(());
        }
    } else if let Some(d) = any.downcast_ref::<DictSpec>() {
        // `str(key)` keys: `1` and `"1"` would collide (later value, first
        // place), so only keys that are all `str` already go straight.
        if all_str_keys(&d.entries) {
            typed_open(out, "DictSpec", "entries");
            out.push(b'{');
            write_str_keyed(out, &d.entries, true, scratch)?;
            out.extend_from_slice(b"}}");
            return Ok(());
        }
    } else if let Some(s) = any.downcast_ref::<SeqSpec>() {
        typed_open(out, "SeqSpec", "entries");
        write_list(out, &s.entries, scratch, write_jsonable)?;
        out.push(b'}');
        return Ok(());
    } else if let Some(p) = any.downcast_ref::<ParamsSpec>() {
        // Named args are `str` keys never starting with `*`: no collision
        // with the `*args` / `**kwargs` entries.
        if all_str_keys(&p.named_args) && p.varkw.as_ref().is_none_or(all_str_keys) {
            typed_open(out, "ParamsSpec", "params");
            out.push(b'{');
            write_str_keyed(out, &p.named_args, true, scratch)?;
            let mut first = p.named_args.is_empty();
            if let Some(varargs) = &p.varargs {
                if !first {
                    out.push(b',');
                }
                key(out, "*args");
                write_list(out, varargs, scratch, write_jsonable)?;
                first = false;
            }
            if let Some(varkw) = &p.varkw {
                if !first {
                    out.push(b',');
                }
                key(out, "**kwargs");
                out.push(b'{');
                write_str_keyed(out, varkw, true, scratch)?;
                out.push(b'}');
            }
            out.extend_from_slice(b"}}");
            return Ok(());
        }
    } else if let Some(s) = any.downcast_ref::<ShapesSpec>() {
        typed_open(out, "ShapesSpec", "params");
        match &s.params {
            None => out.extend_from_slice(b"null"),
            Some(p) => write_jsonable(out, p, scratch)?,
        }
        out.extend_from_slice(b",\"assumptions\":[");
        for (i, a) in s.assumptions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            scratch.clear();
            a.write_repr(scratch)?;
            write_json_str(out, scratch);
        }
        out.extend_from_slice(b"]}");
        return Ok(());
    } else if let Some(var) = any.downcast_ref::<IntVar>() {
        typed_open(out, var.kind.name(), "name");
        write_enc(out, &var.name, scratch)?;
        for (k, v) in [
            (",\"min\":", &var.min),
            (",\"max\":", &var.max),
            (",\"optimization_hint\":", &var.optimization_hint),
        ] {
            out.extend_from_slice(k.as_bytes());
            write_enc(out, v, scratch)?;
        }
        out.push(b'}');
        return Ok(());
    }
    write_enc(out, &jsonable_or_self(v)?, scratch)
}

/// `,"ok":{"repr": repr(v), "jsonable": ...}` as JSON text.
pub fn write_ok_value(out: &mut Vec<u8>, v: &Value, scratch: &mut String) -> PyResult<()> {
    scratch.clear();
    v.write_repr(scratch)?;
    out.extend_from_slice(b",\"ok\":{\"repr\":");
    write_json_str(out, scratch);
    out.extend_from_slice(b",\"jsonable\":");
    write_jsonable(out, v, scratch)?;
    out.push(b'}');
    Ok(())
}

/// `,"ok":{"name": name}`.
pub fn write_ok_name(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"ok\":{\"name\":");
    write_json_str(out, name);
    out.push(b'}');
}

/// `,"error":{...}` or `,"unsupported":{...}` (or an `ok` as JSON).
pub fn write_outcome(out: &mut Vec<u8>, outcome: &Outcome) {
    match outcome {
        Outcome::Ok(json) => {
            out.extend_from_slice(b",\"ok\":");
            serde_json::to_writer(&mut *out, json).expect("writing to a Vec does not fail");
        }
        Outcome::Error(e) => {
            out.extend_from_slice(b",\"error\":{\"type\":");
            write_json_str(out, &e.type_name);
            out.extend_from_slice(b",\"message\":");
            write_json_str(out, &e.message);
            out.push(b'}');
        }
        Outcome::Unsupported(why) => {
            out.extend_from_slice(b",\"unsupported\":{\"reason\":");
            write_json_str(out, why);
            out.push(b'}');
        }
    }
}

/// The line `ResultLine::write_json` writes, for comparison in tests.
pub fn line_of(result: &ResultLine) -> Vec<u8> {
    let mut out = Vec::new();
    result.write_json(&mut out).expect("writing to a Vec");
    out.push(b'\n');
    out
}
