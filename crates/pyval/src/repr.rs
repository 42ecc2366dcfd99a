//! Mirrors CPython 3.11's `repr()` of the builtin types (Objects/unicodeobject.c
//! `unicode_repr`, Python/pystrtod.c `format_float_short` with mode `'r'`,
//! list/tuple/dict/slice reprs) and `str.splitlines`.

use std::fmt::Write;

use super::printable_table::NON_PRINTABLE;
use super::{PyResult, Value};

impl Value {
    /// `repr(x)`, appended to `out`.
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// let mut out = String::from("x = ");
    /// Value::str("\0\\").write_repr(&mut out)?;
    /// assert_eq!(out, r"x = '\x00\\'");
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match self {
            Value::None => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(i) => write_int(out, i)?,
            Value::Float(f) => out.push_str(&float_repr(*f)),
            Value::Str(s) => str_repr_into(out, s),
            Value::List(items) => {
                out.push('[');
                write_seq(out, items)?;
                out.push(']');
            }
            Value::Tuple(items) => {
                out.push('(');
                write_seq(out, items)?;
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            Value::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write_repr(out)?;
                    out.push_str(": ");
                    v.write_repr(out)?;
                }
                out.push('}');
            }
            Value::Slice(parts) => {
                out.push_str("slice(");
                write_seq(out, parts.as_ref())?;
                out.push(')');
            }
            Value::Object(o) => o.write_repr(out)?,
        }
        Ok(())
    }
}

fn write_seq(out: &mut String, items: &[Value]) -> PyResult<()> {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item.write_repr(out)?;
    }
    Ok(())
}

/// CPython 3.11 refuses to print an int of more than 4300 decimal digits
/// (`sys.int_info.default_max_str_digits`).
pub const INT_MAX_STR_DIGITS: usize = 4300;

fn write_int(out: &mut String, i: &super::Int) -> PyResult<()> {
    let i = match i {
        super::Int::Small(small) => {
            out.push_str(itoa::Buffer::new().format(*small));
            return Ok(());
        }
        super::Int::Big(i) => i,
    };
    // bits * log10(2) bounds the digit count; only near the limit is it exact.
    if i.bits() > 14_000 {
        let s = i.to_string();
        let digits = s.trim_start_matches('-').len();
        if digits > INT_MAX_STR_DIGITS {
            return Err(super::Raise::value_error(format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"
            )));
        }
        out.push_str(&s);
        return Ok(());
    }
    let _ = write!(out, "{i}");
    Ok(())
}

/// The shortest round-tripping digits of a finite `f` as CPython's dtoa
/// mode 0 picks them, in `{:e}` layout. Rust's `{:e}` finds the same
/// length, but of two candidates equally near the exact value it takes the
/// upper one, where dtoa takes the even one (`2229339798237625.25` is
/// `...625.2`): the correctly rounded digits of that length (`{:.Ne}`
/// rounds half to even) are dtoa's answer when they round-trip. Only an odd
/// last digit can be the upper of such a tie.
fn shortest_digits(f: f64) -> String {
    let e = format!("{f:e}");
    let mantissa = e.split_once('e').map_or(e.as_str(), |(m, _)| m);
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
    let odd_last = mantissa
        .bytes()
        .last()
        .is_some_and(|b| b.is_ascii_digit() && (b - b'0') % 2 == 1);
    if digits < 2 || !odd_last {
        return e;
    }
    let rounded = format!("{:.*e}", digits - 1, f);
    if rounded != e && rounded.parse::<f64>() == Ok(f) {
        rounded
    } else {
        e
    }
}

/// `repr(float)`: the shortest string that round-trips, in fixed notation
/// when the decimal point falls within 16 digits, else `1e-05` style.
///
/// ```
/// use torchspec_pyval::float_repr;
/// assert_eq!(float_repr(1e-5), "1e-05");
/// assert_eq!(float_repr(0.0001), "0.0001");
/// assert_eq!(float_repr(100.0), "100.0");
/// assert_eq!(float_repr(123456789012345678.0), "1.2345678901234568e+17");
/// assert_eq!(float_repr(1e22), "1e+22");
/// ```
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let e = shortest_digits(f);
    let (mantissa, exp) = e.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let decpt = exp + 1;
    let mut out = String::with_capacity(digits.len() + 8);
    if neg {
        out.push('-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if decpt as usize >= digits.len() {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', decpt as usize - digits.len()));
        out.push_str(".0");
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

/// `repr(str)`.
///
/// ```
/// use torchspec_pyval::str_repr;
/// assert_eq!(str_repr("say \"hi\""), r#"'say "hi"'"#);
/// assert_eq!(str_repr("é😀"), "'é😀'");
/// ```
pub fn str_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    str_repr_into(&mut out, s);
    out
}

fn str_repr_into(out: &mut String, s: &str) {
    // Single quotes unless the text has a ' and no ".
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_ascii() || is_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
}

/// `str.isprintable()` for one character, per CPython 3.11's Unicode 14 tables.
///
/// ```
/// use torchspec_pyval::repr::is_printable;
/// assert!(is_printable('é'));
/// assert!(!is_printable('\u{a0}'));
/// assert!(!is_printable('\u{378}'));
/// ```
pub fn is_printable(c: char) -> bool {
    !in_ranges(&NON_PRINTABLE, c)
}

/// Whether `c` falls in one of the sorted, inclusive code point ranges
/// (the generated tables of CPython's character properties).
pub fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// `for line in text.splitlines(): out += "\n" + prefix + line`, the
/// indentation step of every nested repr. Text whose only line boundary is
/// `\n` (the usual case) takes a fast path; its result is the same.
///
/// ```
/// use torchspec_pyval::write_indented_lines;
/// let mut out = String::new();
/// write_indented_lines(&mut out, "x\ny", "  ");
/// assert_eq!(out, "\n  x\n  y");
/// ```
pub fn write_indented_lines(out: &mut String, text: &str, prefix: &str) {
    // Branch-free so that it vectorizes: any control byte but `\n`, or any
    // non-ASCII byte, may be a boundary `splitlines` knows.
    let exotic = text.bytes().fold(false, |acc, b| {
        acc | ((b < 0x20) & (b != b'\n')) | (b >= 0x80)
    });
    if exotic {
        for line in splitlines(text) {
            out.push('\n');
            out.push_str(prefix);
            out.push_str(line);
        }
        return;
    }
    if text.is_empty() {
        return;
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        out.push('\n');
        out.push_str(prefix);
        out.push_str(line);
    }
}

/// `str.splitlines()`: splits on every line boundary Python knows (`\n`,
/// `\r`, `\r\n`, `\x0b`, `\x0c`, `\x1c`-`\x1e`, `\x85`, `\u2028`, `\u2029`)
/// and drops a final empty piece.
///
/// ```
/// use torchspec_pyval::splitlines;
/// let lines: Vec<&str> = splitlines("a\r\nb\x0bc\u{2028}d\n").collect();
/// assert_eq!(lines, ["a", "b", "c", "d"]);
/// ```
pub fn splitlines(s: &str) -> impl Iterator<Item = &str> {
    SplitLines { rest: s }
}

struct SplitLines<'a> {
    rest: &'a str,
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let bytes = self.rest.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let (brk, width) = match bytes[i] {
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => (true, 2),
                b'\n' | b'\r' | 0x0b | 0x0c | 0x1c | 0x1d | 0x1e => (true, 1),
                0xc2 if bytes.get(i + 1) == Some(&0x85) => (true, 2),
                0xe2 if bytes.get(i + 1) == Some(&0x80)
                    && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
                {
                    (true, 3)
                }
                _ => (false, 1),
            };
            if brk {
                let line = &self.rest[..i];
                self.rest = &self.rest[i + width..];
                return Some(line);
            }
            i += 1;
        }
        let line = self.rest;
        self.rest = "";
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        for (f, s) in [
            (1e-5, "1e-05"),
            (1.0, "1.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1.5e300, "1.5e+300"),
            (123456789.123, "123456789.123"),
            (f64::INFINITY, "inf"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(float_repr(f), s, "{f}");
        }
    }

    #[test]
    fn strs() {
        assert_eq!(str_repr("a'b"), "\"a'b\"");
        assert_eq!(str_repr("a'b\""), "'a\\'b\"'");
        assert_eq!(str_repr("é\u{200b}\u{85}\n"), "'é\\u200b\\x85\\n'");
    }

    #[test]
    fn indented_lines_match_splitlines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\n\nb",
            "a\n\n",
            "x\ry\n",
            "é\nü",
            "a\u{2028}b\n",
            "\x0bq",
        ] {
            let mut fast = String::new();
            write_indented_lines(&mut fast, text, "  ");
            let slow: String = splitlines(text).map(|l| format!("\n  {l}")).collect();
            assert_eq!(fast, slow, "{text:?}");
        }
    }

    #[test]
    fn lines() {
        let v: Vec<_> = splitlines("a\r\nb\rc\u{2028}d\n").collect();
        assert_eq!(v, ["a", "b", "c", "d"]);
        assert_eq!(splitlines("").count(), 0);
        assert_eq!(splitlines("\n").collect::<Vec<_>>(), [""]);
    }
}
