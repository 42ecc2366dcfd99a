//! Mirrors CPython 3.11 `json.dumps(v, allow_nan=False)` with the default
//! separators (`", "`, `": "`) and `ensure_ascii=True`
//! (`json/encoder.py`: `py_encode_basestring_ascii`, `floatstr`).

use super::{PyInt, PyJson};
use crate::float_repr;
use crate::repr::INT_MAX_STR_DIGITS;
use crate::Error;

/// `json.dumps(v, allow_nan=False)`.
///
/// ```
/// use torchspec_pyval::pyjson::{dumps, loads, PyJson};
/// let v = loads(r#"{"a": [1, 2.0, null, true, "\u00e9\n"], "c": 1000000000000000000000000000000, "d": 1e16}"#)?;
/// assert_eq!(
///     dumps(&v)?,
///     r#"{"a": [1, 2.0, null, true, "\u00e9\n"], "c": 1000000000000000000000000000000, "d": 1e+16}"#
/// );
/// assert_eq!(dumps(&PyJson::Str("é😀\\".into()))?, r#""\u00e9\ud83d\ude00\\""#);
/// assert_eq!(dumps(&PyJson::Float(-0.0))?, "-0.0");
/// // allow_nan=False
/// assert_eq!(
///     dumps(&PyJson::Float(f64::NAN)).unwrap_err().to_string(),
///     "ValueError: Out of range float values are not JSON compliant"
/// );
/// # Ok::<(), torchspec_pyval::Error>(())
/// ```
pub fn dumps(v: &PyJson) -> Result<String, Error> {
    let mut out = String::with_capacity(256);
    dumps_into(&mut out, v)?;
    Ok(out)
}

enum Open<'a> {
    List(std::slice::Iter<'a, PyJson>),
    Object(std::slice::Iter<'a, (String, PyJson)>),
}

/// [`dumps`] appending to `out` (on error `out` holds a prefix). Iterative,
/// so any depth `loads` accepts (or a caller builds) is written.
pub fn dumps_into(out: &mut String, v: &PyJson) -> Result<(), Error> {
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            match v {
                PyJson::Null => out.push_str("null"),
                PyJson::Bool(true) => out.push_str("true"),
                PyJson::Bool(false) => out.push_str("false"),
                PyJson::Int(i) => write_int(out, i)?,
                PyJson::Float(f) => write_float(out, *f)?,
                PyJson::Str(s) => write_str(out, s),
                PyJson::List(items) => {
                    out.push('[');
                    stack.push(Open::List(items.iter()));
                }
                PyJson::Object(entries) => {
                    out.push('{');
                    stack.push(Open::Object(entries.iter()));
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        // The separator goes before every item but the first: the opening
        // bracket is then the last character written.
        let first = out.ends_with('[') || out.ends_with('{');
        match top {
            Open::List(items) => match items.next() {
                Some(item) => {
                    if !first {
                        out.push_str(", ");
                    }
                    next = Some(item);
                }
                None => {
                    out.push(']');
                    stack.pop();
                }
            },
            Open::Object(entries) => match entries.next() {
                Some((k, item)) => {
                    if !first {
                        out.push_str(", ");
                    }
                    write_str(out, k);
                    out.push_str(": ");
                    next = Some(item);
                }
                None => {
                    out.push('}');
                    stack.pop();
                }
            },
        }
    }
}

/// `int.__repr__`, with CPython's limit on decimal digits.
pub fn write_int(out: &mut String, i: &PyInt) -> Result<(), Error> {
    match i {
        PyInt::Small(i) => out.push_str(itoa::Buffer::new().format(*i)),
        PyInt::Big(b) => {
            let s = b.to_string();
            if s.trim_start_matches('-').len() > INT_MAX_STR_DIGITS {
                return Err(Error::python(
                    "ValueError",
                    format!("Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"),
                ));
            }
            out.push_str(&s);
        }
    }
    Ok(())
}

/// `floatstr` with `allow_nan=False`.
pub fn write_float(out: &mut String, f: f64) -> Result<(), Error> {
    if !f.is_finite() {
        return Err(Error::python(
            "ValueError",
            "Out of range float values are not JSON compliant",
        ));
    }
    out.push_str(&float_repr(f));
    Ok(())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_u16_escape(out: &mut String, u: u32) {
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((u >> shift) & 0xf) as usize] as char);
    }
}

/// `py_encode_basestring_ascii`: `"`, `\`, the control characters and every
/// non-ASCII character (as `\uXXXX`, a surrogate pair above the BMP) escaped.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&s[start..i]);
        if b < 0x80 {
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                0x08 => out.push_str("\\b"),
                0x0c => out.push_str("\\f"),
                _ => push_u16_escape(out, b as u32),
            }
            i += 1;
        } else {
            let c = s[i..].chars().next().expect("a char at a char boundary");
            let u = c as u32;
            if u >= 0x10000 {
                let v = u - 0x10000;
                push_u16_escape(out, 0xd800 | (v >> 10));
                push_u16_escape(out, 0xdc00 | (v & 0x3ff));
            } else {
                push_u16_escape(out, u);
            }
            i += c.len_utf8();
        }
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}
