//! Mirrors CPython 3.11 `json.loads` (`json/decoder.py` driving the C
//! scanner `Modules/_json.c`): the grammar, `NaN`/`Infinity`, int vs float,
//! duplicate keys (last value, first position) and each `JSONDecodeError`
//! message with its `line L column C (char N)` in code points.

use std::collections::HashMap;

use num_bigint::BigInt;

use super::{PyInt, PyJson};
use crate::repr::INT_MAX_STR_DIGITS;
use crate::Error;

/// The deepest nesting `loads` accepts. CPython's C scanner raises
/// `RecursionError` a few levels below 1000 (the default recursion limit),
/// so every document Python reads is read here.
pub const MAX_DEPTH: usize = 1000;

/// Objects this large find duplicate keys through a hash map instead of a scan.
const INDEX_AT: usize = 24;

/// `json.loads(text)`.
///
/// ```
/// use torchspec_pyval::pyjson::{dumps, loads};
/// // A repeated key keeps its first position and its last value.
/// let v = loads(r#"{"a": [1, 2.0, "\u00e9"], "b": null, "a": 3}"#)?;
/// assert_eq!(dumps(&v)?, r#"{"a": 3, "b": null}"#);
/// // JSONDecodeError, with CPython's message and position.
/// let err = |text| loads(text).unwrap_err().to_string();
/// assert_eq!(err("[1, 2"), "JSONDecodeError: Expecting ',' delimiter: line 1 column 6 (char 5)");
/// assert_eq!(err(r#"{"a" 1}"#), "JSONDecodeError: Expecting ':' delimiter: line 1 column 6 (char 5)");
/// assert_eq!(err("[1] x"), "JSONDecodeError: Extra data: line 1 column 5 (char 4)");
/// assert_eq!(err(""), "JSONDecodeError: Expecting value: line 1 column 1 (char 0)");
/// # Ok::<(), torchspec_pyval::Error>(())
/// ```
pub fn loads(text: &str) -> Result<PyJson, Error> {
    loads_with_depth(text).map(|(v, _)| v)
}

/// [`loads`], also telling the deepest nesting of lists and objects (`[]`
/// is 1), so a recursive walk of the result can size its stack.
pub fn loads_with_depth(text: &str) -> Result<(PyJson, usize), Error> {
    if text.starts_with('\u{feff}') {
        return Err(decode_error(
            text,
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            0,
        ));
    }
    let mut p = Parser {
        text,
        s: text.as_bytes(),
        pos: 0,
        max_depth: 0,
    };
    p.skip_ws();
    let v = p.value()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.error("Extra data", p.pos));
    }
    Ok((v, p.max_depth))
}

/// Checks `text` as [`loads_with_depth`] reads it, refusing what it refuses
/// with the same error, without building the value: each container's
/// [`Span`] in the order its bracket opens, and the deepest nesting.
pub(super) fn skim(text: &str) -> Result<(Vec<Span>, usize), Error> {
    if text.starts_with('\u{feff}') {
        return Err(decode_error(
            text,
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            0,
        ));
    }
    if u32::try_from(text.len()).is_err() {
        return Err(Error::new(format!(
            "a JSON text of {} bytes is over the 4 GiB this reader reads in place",
            text.len()
        )));
    }
    let mut p = Parser {
        text,
        s: text.as_bytes(),
        pos: 0,
        max_depth: 0,
    };
    let mut spans = Vec::new();
    p.skip_ws();
    p.skim_value(&mut spans)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.error("Extra data", p.pos));
    }
    Ok((spans, p.max_depth))
}

/// Where a container of a checked text ends (the byte offset of its
/// closing bracket), and the ordinal of the first container after it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Span {
    pub(super) end: u32,
    pub(super) next: u32,
}

/// The scalar (not a container) at `pos` of a text [`skim`] accepted.
pub(super) fn scalar_at(text: &str, pos: usize) -> Result<PyJson, Error> {
    parser_at(text, pos).scalar()
}

/// The string at `pos` (its opening quote) of a text [`skim`] accepted.
pub(super) fn string_at(text: &str, pos: usize) -> Result<String, Error> {
    parser_at(text, pos).string()
}

fn parser_at(text: &str, pos: usize) -> Parser<'_> {
    Parser {
        text,
        s: text.as_bytes(),
        pos,
        max_depth: 0,
    }
}

/// A skimmed container still open: its ordinal, and whether it is an object.
#[derive(Clone, Copy)]
struct Open {
    ordinal: usize,
    object: bool,
}

/// `JSONDecodeError(msg, doc, pos)` with `pos` a byte offset into `text`.
fn decode_error(text: &str, msg: &str, pos: usize) -> Error {
    let before = &text[..pos];
    let char_pos = before.chars().count();
    let lineno = before.bytes().filter(|b| *b == b'\n').count() + 1;
    let colno = match before.rfind('\n') {
        Some(nl) => before[nl + 1..].chars().count() + 1,
        None => char_pos + 1,
    };
    Error::python(
        "JSONDecodeError",
        format!("{msg}: line {lineno} column {colno} (char {char_pos})"),
    )
}

/// An open container. Its items so far sit at `start..` of the parser's
/// shared scratch stacks, moved into one exactly sized `Vec` when it closes.
enum Frame {
    List {
        start: usize,
    },
    Object {
        start: usize,
        key: String,
        index: Option<HashMap<String, usize>>,
    },
}

struct Parser<'a> {
    text: &'a str,
    s: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, msg: &str, pos: usize) -> Error {
        decode_error(self.text, msg, pos)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn too_deep(&mut self, depth: usize) -> Option<Error> {
        self.max_depth = self.max_depth.max(depth + 1);
        (depth >= MAX_DEPTH).then(|| {
            Error::new(format!(
                "json nested deeper than {MAX_DEPTH} levels at char {}",
                self.text[..self.pos].chars().count()
            ))
        })
    }

    /// `scan_once` at `self.pos`, iteratively: containers become frames.
    fn value(&mut self) -> Result<PyJson, Error> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut items: Vec<PyJson> = Vec::new();
        let mut entries: Vec<(String, PyJson)> = Vec::new();
        'value: loop {
            let mut v = match self.peek() {
                Some(b'[') => {
                    if let Some(e) = self.too_deep(stack.len()) {
                        return Err(e);
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        PyJson::List(Vec::new())
                    } else {
                        stack.push(Frame::List { start: items.len() });
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    if let Some(e) = self.too_deep(stack.len()) {
                        return Err(e);
                    }
                    self.pos += 1;
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            PyJson::Object(Vec::new())
                        }
                        Some(b'"') => {
                            let key = self.key()?;
                            stack.push(Frame::Object {
                                start: entries.len(),
                                key,
                                index: None,
                            });
                            continue 'value;
                        }
                        _ => {
                            return Err(self.error(
                                "Expecting property name enclosed in double quotes",
                                self.pos,
                            ))
                        }
                    }
                }
                _ => self.scalar()?,
            };
            // Complete `v` into its parents until one wants another value.
            loop {
                match stack.last_mut() {
                    None => return Ok(v),
                    Some(&mut Frame::List { start }) => {
                        items.push(v);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                stack.pop();
                                v = PyJson::List(items.drain(start..).collect());
                            }
                            _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
                        }
                    }
                    Some(Frame::Object { start, key, index }) => {
                        let start = *start;
                        insert(&mut entries, start, index, std::mem::take(key), v);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                if self.peek() != Some(b'"') {
                                    return Err(self.error(
                                        "Expecting property name enclosed in double quotes",
                                        self.pos,
                                    ));
                                }
                                *key = self.key()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                stack.pop();
                                v = PyJson::Object(entries.drain(start..).collect());
                            }
                            _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
                        }
                    }
                }
            }
        }
    }

    /// [`Parser::value`] without the value: the grammar, its errors and
    /// the depth bound checked, each container's span recorded.
    fn skim_value(&mut self, spans: &mut Vec<Span>) -> Result<(), Error> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if let Some(e) = self.too_deep(stack.len()) {
                        return Err(e);
                    }
                    let ordinal = spans.len();
                    spans.push(Span { end: 0, next: 0 });
                    self.pos += 1;
                    self.skip_ws();
                    let object = open == b'{';
                    match (self.peek(), object) {
                        (Some(b']'), false) | (Some(b'}'), true) => {
                            self.close(spans, ordinal);
                        }
                        (_, false) => {
                            stack.push(Open { ordinal, object });
                            continue 'value;
                        }
                        (Some(b'"'), true) => {
                            self.skim_key()?;
                            stack.push(Open { ordinal, object });
                            continue 'value;
                        }
                        (_, true) => {
                            return Err(self.error(
                                "Expecting property name enclosed in double quotes",
                                self.pos,
                            ))
                        }
                    }
                }
                Some(b'"') => self.string_to(&mut Discard)?,
                Some(b'0'..=b'9') => {
                    self.number_literal()?;
                }
                Some(b'-') if self.s.get(self.pos + 1) != Some(&b'I') => {
                    self.number_literal()?;
                }
                _ => {
                    self.scalar()?;
                }
            }
            // Close the containers this value completes, until one wants another value.
            while let Some(&Open { ordinal, object }) = stack.last() {
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if object {
                            if self.peek() != Some(b'"') {
                                return Err(self.error(
                                    "Expecting property name enclosed in double quotes",
                                    self.pos,
                                ));
                            }
                            self.skim_key()?;
                        }
                        continue 'value;
                    }
                    Some(b']') if !object => self.close(spans, ordinal),
                    Some(b'}') if object => self.close(spans, ordinal),
                    _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
                }
                stack.pop();
            }
            return Ok(());
        }
    }

    /// Past the closing bracket at `self.pos` of container `ordinal`.
    fn close(&mut self, spans: &mut [Span], ordinal: usize) {
        // `skim` refused a text whose offsets do not fit `u32`.
        let end = self.pos as u32;
        let next = spans.len() as u32;
        spans[ordinal] = Span { end, next };
        self.pos += 1;
    }

    /// [`Parser::key`] without keeping the key.
    fn skim_key(&mut self) -> Result<(), Error> {
        self.string_to(&mut Discard)?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("Expecting ':' delimiter", self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(())
    }

    /// A key at `"`, then the `:` and the whitespace before the value.
    fn key(&mut self) -> Result<String, Error> {
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("Expecting ':' delimiter", self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(key)
    }

    fn literal(&mut self, word: &[u8], v: PyJson) -> Result<PyJson, Error> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.error("Expecting value", self.pos))
        }
    }

    fn scalar(&mut self) -> Result<PyJson, Error> {
        match self.peek() {
            Some(b'"') => Ok(PyJson::Str(self.string()?)),
            Some(b'n') => self.literal(b"null", PyJson::Null),
            Some(b't') => self.literal(b"true", PyJson::Bool(true)),
            Some(b'f') => self.literal(b"false", PyJson::Bool(false)),
            Some(b'N') => self.literal(b"NaN", PyJson::Float(f64::NAN)),
            Some(b'I') => self.literal(b"Infinity", PyJson::Float(f64::INFINITY)),
            Some(b'-') if self.s[self.pos..].starts_with(b"-Infinity") => {
                self.pos += 9;
                Ok(PyJson::Float(f64::NEG_INFINITY))
            }
            _ => self.number(),
        }
    }

    /// `-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`; a fraction or exponent
    /// without digits is not consumed (so `1.` is `1` then extra data).
    fn number(&mut self) -> Result<PyJson, Error> {
        let (lit, is_float) = self.number_literal()?;
        if is_float {
            // Correctly rounded, overflow to ±inf: CPython's `float(str)`.
            return Ok(PyJson::Float(lit.parse().expect("a JSON float literal")));
        }
        if lit.len() <= 18 {
            return Ok(PyJson::Int(PyInt::Small(
                lit.parse().expect("a short JSON int literal"),
            )));
        }
        let big: BigInt = lit.parse().expect("a JSON int literal");
        Ok(PyJson::Int(PyInt::from_big(big)))
    }

    /// The literal of [`Parser::number`] and whether it is a float, past
    /// it; an int over CPython's digit limit is its `ValueError`.
    fn number_literal(&mut self) -> Result<(&'a str, bool), Error> {
        let s = self.s;
        let start = self.pos;
        let mut i = start;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = s.get(i) {
                    i += 1;
                }
            }
            _ => return Err(self.error("Expecting value", start)),
        }
        let mut is_float = false;
        if s.get(i) == Some(&b'.') && matches!(s.get(i + 1), Some(b'0'..=b'9')) {
            is_float = true;
            i += 2;
            while let Some(b'0'..=b'9') = s.get(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            let mut j = i + 1;
            if let Some(b'+' | b'-') = s.get(j) {
                j += 1;
            }
            if let Some(b'0'..=b'9') = s.get(j) {
                while let Some(b'0'..=b'9') = s.get(j) {
                    j += 1;
                }
                is_float = true;
                i = j;
            }
        }
        self.pos = i;
        let lit = &self.text[start..i];
        let digits = lit.trim_start_matches('-').len();
        if !is_float && digits > INT_MAX_STR_DIGITS {
            return Err(Error::python(
                "ValueError",
                format!(
                    "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
                ),
            ));
        }
        Ok((lit, is_float))
    }

    /// `scanstring` with `strict=True`, at the opening quote.
    fn string(&mut self) -> Result<String, Error> {
        let mut out = String::new();
        self.string_to(&mut out)?;
        // An escape reserved room ahead; what is kept is exactly sized.
        out.shrink_to_fit();
        Ok(out)
    }

    /// [`Parser::string`], the text going to `out` (nowhere, to only check it).
    pub(super) fn string_to(&mut self, out: &mut impl Sink) -> Result<(), Error> {
        let begin = self.pos;
        let s = self.s;
        let mut i = begin + 1;
        // Fast path: no escape.
        loop {
            i = skip_plain(s, i);
            match s.get(i) {
                None => return Err(self.error("Unterminated string starting at", begin)),
                Some(b'"') => {
                    self.pos = i + 1;
                    out.push_str(&self.text[begin + 1..i]);
                    return Ok(());
                }
                Some(b'\\') => break,
                Some(&b) if b < 0x20 => return Err(self.error("Invalid control character at", i)),
                Some(_) => i += 1,
            }
        }
        out.reserve(i - begin + 16);
        out.push_str(&self.text[begin + 1..i]);
        loop {
            let chunk = i;
            loop {
                i = skip_plain(s, i);
                match s.get(i) {
                    None => return Err(self.error("Unterminated string starting at", begin)),
                    Some(b'"' | b'\\') => break,
                    Some(&b) if b < 0x20 => {
                        return Err(self.error("Invalid control character at", i))
                    }
                    Some(_) => i += 1,
                }
            }
            out.push_str(&self.text[chunk..i]);
            if s[i] == b'"' {
                self.pos = i + 1;
                return Ok(());
            }
            // A backslash at `i`.
            let Some(&esc) = s.get(i + 1) else {
                return Err(self.error("Unterminated string starting at", begin));
            };
            let simple = match esc {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let c = self.hex4(i + 2)?;
                    i += 6;
                    let c = if (0xd800..0xdc00).contains(&c)
                        && s.get(i) == Some(&b'\\')
                        && s.get(i + 1) == Some(&b'u')
                        && i + 6 < s.len()
                    {
                        let c2 = self.hex4(i + 2)?;
                        if (0xdc00..0xe000).contains(&c2) {
                            i += 6;
                            0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00)
                        } else {
                            c
                        }
                    } else {
                        c
                    };
                    match char::from_u32(c) {
                        Some(ch) => out.push(ch),
                        None => {
                            return Err(Error::new(format!(
                                "lone surrogate `\\u{c:04x}` in a string, which a Rust string cannot hold, at char {}",
                                self.text[..i - 6].chars().count()
                            )))
                        }
                    }
                    continue;
                }
                _ => return Err(self.error("Invalid \\escape", i)),
            };
            out.push(simple);
            i += 2;
        }
    }

    /// Four hex digits at `at` (just after `\u`); CPython also wants one more
    /// character after them before the end of the document.
    fn hex4(&self, at: usize) -> Result<u32, Error> {
        let bad = || self.error("Invalid \\uXXXX escape", at - 1);
        if at + 4 >= self.s.len() {
            return Err(bad());
        }
        let mut c = 0u32;
        for &b in &self.s[at..at + 4] {
            let d = (b as char).to_digit(16).ok_or_else(bad)?;
            c = c * 16 + d;
        }
        Ok(c)
    }
}

/// Where [`Parser::string_to`] puts a string's text.
pub(super) trait Sink {
    fn push_str(&mut self, s: &str);
    fn push(&mut self, c: char);
    fn reserve(&mut self, n: usize);
}

impl Sink for String {
    fn push_str(&mut self, s: &str) {
        if self.capacity() == 0 {
            self.reserve_exact(s.len());
        }
        String::push_str(self, s);
    }
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
    fn reserve(&mut self, n: usize) {
        String::reserve(self, n);
    }
}

/// A sink that keeps nothing: the string is only checked.
pub(super) struct Discard;

impl Sink for Discard {
    fn push_str(&mut self, _: &str) {}
    fn push(&mut self, _: char) {}
    fn reserve(&mut self, _: usize) {}
}

/// The first index at or after `i` holding `"`, `\\` or a control
/// character (or near the end), eight bytes at a time.
#[inline]
pub(super) fn skip_plain(s: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = s.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let quote = x ^ (ONES * b'"' as u64);
        let backslash = x ^ (ONES * b'\\' as u64);
        // A byte is zero in `quote`/`backslash`, or below 0x20 in `x`: the
        // classic "has a zero byte" / "has a byte less than n" tests. A set
        // high bit in `x` (non-ASCII) never counts as below 0x20.
        let special = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (x.wrapping_sub(ONES * 0x20) & !x);
        if special & HIGH != 0 {
            return i;
        }
        i += 8;
    }
    i
}

/// Adds an entry to the object whose entries are `all[start..]`. A Python
/// dict: a repeated key keeps its first position, takes the last value.
fn insert(
    all: &mut Vec<(String, PyJson)>,
    start: usize,
    index: &mut Option<HashMap<String, usize>>,
    key: String,
    v: PyJson,
) {
    match index {
        Some(ix) => match ix.get(&key) {
            Some(&at) => all[at].1 = v,
            None => {
                ix.insert(key.clone(), all.len());
                all.push((key, v));
            }
        },
        None => {
            if let Some(e) = all[start..].iter_mut().find(|(k, _)| *k == key) {
                e.1 = v;
                return;
            }
            all.push((key, v));
            if all.len() - start >= INDEX_AT {
                *index = Some(
                    all[start..]
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), start + i))
                        .collect(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// `skip_plain` never skips a special byte (it may stop early).
        #[test]
        fn skip_plain_stops_at_or_before_the_first_special(
            s in prop::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff], 0..40),
            from in 0usize..40,
        ) {
            let from = from.min(s.len());
            let stop = super::skip_plain(&s, from);
            let first = (from..s.len())
                .find(|&i| s[i] == b'"' || s[i] == b'\\' || s[i] < 0x20)
                .unwrap_or(s.len());
            prop_assert!(from <= stop && stop <= first, "{from} {stop} {first}");
            prop_assert!(stop + 8 > first || stop == first, "stops within a chunk of it");
        }
    }
}
