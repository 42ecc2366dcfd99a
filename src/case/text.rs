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

use std::any::{Any, TypeId};

use super::result::{Outcome, ResultLine};
use crate::pyval::{float_repr, PyResult, Value};
use crate::spec::{
    jsonable_or_self, DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec, TensorSpec,
};

/// serde_json's escapes: `"`, `\`, the short forms of `\b \t \n \f \r`,
/// and `\u00XX` (lowercase hex) for the other control characters; every
/// other character as itself.
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Most strings (names, reprs) need no escape: one scan, one copy.
    match bytes.iter().position(|&b| NEEDS_ESCAPE[usize::from(b)]) {
        None => out.extend_from_slice(bytes),
        Some(first) => escape_from(out, bytes, first),
    }
    out.push(b'"');
}

/// The bytes serde_json escapes: control characters, `"` and `\`.
static NEEDS_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = true;
        b += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

#[cold]
fn escape_from(out: &mut Vec<u8>, bytes: &[u8], first: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&bytes[..first]);
    let mut start = first;
    for (i, &b) in bytes.iter().enumerate().skip(first) {
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
        Value::Int(crate::pyval::Int::Small(i)) => {
            out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes())
        }
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

/// `{"type": "NAME", "FIELD": ` — the opening every `to_jsonable` shares
/// (names and fields are plain ASCII: no escapes).
fn typed_open(out: &mut Vec<u8>, type_name: &str, field: &str) {
    debug_assert!(!(type_name.bytes().chain(field.bytes())).any(|b| NEEDS_ESCAPE[usize::from(b)]));
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(type_name.as_bytes());
    out.extend_from_slice(b"\",\"");
    out.extend_from_slice(field.as_bytes());
    out.extend_from_slice(b"\":");
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

/// `DictSpec.to_jsonable` (`{str(k): v.to_jsonable() ...}`) when the keys'
/// `str` forms all differ, which is checked first; false (nothing
/// written) when they do not.
fn write_dictspec(
    out: &mut Vec<u8>,
    entries: &crate::pyval::Dict,
    scratch: &mut String,
) -> PyResult<bool> {
    /// Keys compared pairwise: past this many, the faithful path.
    const MAX_KEYS: usize = 32;
    if entries.len() > MAX_KEYS {
        return Ok(false);
    }
    // `str(k)` of a `str`, `int` or `bool` key (the only kinds allowed).
    let mut ints = String::new();
    let mut spans: smallvec::SmallVec<[(bool, usize, usize); 8]> = smallvec::SmallVec::new();
    for k in entries.keys() {
        match k {
            Value::Str(_) => spans.push((true, 0, 0)),
            _ => {
                let start = ints.len();
                k.write_str(&mut ints)?;
                spans.push((false, start, ints.len()));
            }
        }
    }
    fn text<'a>(spans: &[(bool, usize, usize)], ints: &'a str, i: usize, k: &'a Value) -> &'a str {
        match (spans[i], k) {
            ((true, _, _), Value::Str(s)) => s,
            ((_, a, b), _) => &ints[a..b],
        }
    }
    let keys: smallvec::SmallVec<[&Value; 8]> = entries.keys().collect();
    for i in 0..keys.len() {
        for j in 0..i {
            if text(&spans, &ints, i, keys[i]) == text(&spans, &ints, j, keys[j]) {
                return Ok(false);
            }
        }
    }
    typed_open(out, "DictSpec", "entries");
    out.push(b'{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        key(out, text(&spans, &ints, i, k));
        write_jsonable(out, v, scratch)?;
    }
    out.extend_from_slice(b"}}");
    Ok(true)
}

/// `any` as a `T`, its type id already known: no virtual call unless it is one.
fn cast<T: 'static>(any: &dyn Any, tid: TypeId) -> Option<&T> {
    if tid == TypeId::of::<T>() {
        any.downcast_ref::<T>()
    } else {
        None
    }
}

/// `enc(jsonable_or_self(v))` as JSON text.
pub fn write_jsonable(out: &mut Vec<u8>, v: &Value, scratch: &mut String) -> PyResult<()> {
    let Value::Object(o) = v else {
        return write_enc(out, v, scratch);
    };
    // One virtual call for the type, then plain comparisons.
    let any: &dyn Any = &**o;
    let tid = Any::type_id(any);
    let is = |t: TypeId| tid == t;
    if !(is(TypeId::of::<TensorSpec>())
        || is(TypeId::of::<ObjectSpec>())
        || is(TypeId::of::<DictSpec>())
        || is(TypeId::of::<SeqSpec>())
        || is(TypeId::of::<ParamsSpec>())
        || is(TypeId::of::<ShapesSpec>())
        || is(TypeId::of::<IntVar>()))
    {
        return write_enc(out, &jsonable_or_self(v)?, scratch);
    }
    if let Some(t) = cast::<TensorSpec>(any, tid) {
        typed_open(out, "TensorSpec", "dims");
        write_list(out, &t.dims, scratch, write_jsonable)?;
        out.push(b'}');
        return Ok(());
    }
    if let Some(s) = cast::<ObjectSpec>(any, tid) {
        if all_str_keys(&s.fields) {
            typed_open(out, "ObjectSpec", "fields");
            out.push(b'{');
            write_str_keyed(out, &s.fields, true, scratch)?;
            out.extend_from_slice(b"}}");
            return Ok(());
        }
    } else if let Some(d) = cast::<DictSpec>(any, tid) {
        // `str(key)` keys: `1` and `"1"` would collide (later value, first
        // place), so only keys whose `str` all differ go straight.
        if write_dictspec(out, &d.entries, scratch)? {
            return Ok(());
        }
    } else if let Some(s) = cast::<SeqSpec>(any, tid) {
        typed_open(out, "SeqSpec", "entries");
        write_list(out, &s.entries, scratch, write_jsonable)?;
        out.push(b'}');
        return Ok(());
    } else if let Some(p) = cast::<ParamsSpec>(any, tid) {
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
                out.extend_from_slice(b"\"*args\":");
                write_list(out, varargs, scratch, write_jsonable)?;
                first = false;
            }
            if let Some(varkw) = &p.varkw {
                if !first {
                    out.push(b',');
                }
                out.extend_from_slice(b"\"**kwargs\":");
                out.push(b'{');
                write_str_keyed(out, varkw, true, scratch)?;
                out.push(b'}');
            }
            out.extend_from_slice(b"}}");
            return Ok(());
        }
    } else if let Some(s) = cast::<ShapesSpec>(any, tid) {
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
    } else if let Some(var) = cast::<IntVar>(any, tid) {
        // A var is a leaf met many times in a tree: its text is made once.
        out.extend_from_slice(var.cached_text(|| {
            let mut text = Vec::new();
            write_intvar(&mut text, var, scratch)?;
            Ok(text)
        })?);
        return Ok(());
    }
    write_enc(out, &jsonable_or_self(v)?, scratch)
}

/// `IntVar.to_jsonable()`: `{"type", "name", "min", "max",
/// "optimization_hint"}`.
fn write_intvar(out: &mut Vec<u8>, var: &IntVar, scratch: &mut String) -> PyResult<()> {
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
    Ok(())
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
