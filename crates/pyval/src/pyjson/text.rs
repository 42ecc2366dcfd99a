//! `json.loads` read in place: a [`Doc`] checks a text as [`loads`] does
//! (the same grammar, the same `JSONDecodeError` and its position, the same
//! depth bound) but keeps only where each container ends, 8 bytes a
//! container. Its [`Val`]s are positions in the text: a reader walks them
//! and takes what it keeps straight from the text, so the document is never
//! a tree of values (a [`PyJson`] is about 4x its text).
//!
//! An object reads as the `dict` `json.loads` makes: [`Val::entries`] keeps
//! each key once, at its first position, with its last value.
//!
//! [`loads`]: super::loads

use std::borrow::Cow;
use std::collections::HashMap;

use smallvec::SmallVec;

use super::parse::{self, skip_plain, Span};
use super::PyJson;
use crate::Error;

/// Objects this large find duplicate keys through a hash map instead of a scan.
const INDEX_AT: usize = 24;

/// A JSON text [`loads`](super::loads) accepts, read in place.
///
/// ```
/// use torchspec_pyval::pyjson::text::Doc;
/// let doc = Doc::new(r#"{"a": [1, "x"], "b": null, "a": {"c": 2.5}}"#)?;
/// let root = doc.root();
/// let keys: Vec<_> = root.entries().iter().map(|(k, _)| k.as_str().into_owned()).collect();
/// assert_eq!(keys, ["a", "b"]);
/// assert_eq!(root.get("a").map(|v| v.type_name()), Some("dict"));
/// // The same refusals as `json.loads`, at the same position.
/// let err = Doc::new("[1, 2").err().map(|e| e.to_string());
/// assert_eq!(err.as_deref(), Some("JSONDecodeError: Expecting ',' delimiter: line 1 column 6 (char 5)"));
/// # Ok::<(), torchspec_pyval::Error>(())
/// ```
#[derive(Debug)]
pub struct Doc<'t> {
    text: &'t str,
    spans: Vec<Span>,
    depth: usize,
}

impl<'t> Doc<'t> {
    /// Checks `text` as `json.loads(text)` reads it; refuses what it refuses
    /// with the same error (and a text over 4 GiB).
    pub fn new(text: &'t str) -> Result<Doc<'t>, Error> {
        let (spans, depth) = parse::skim(text)?;
        Ok(Doc { text, spans, depth })
    }

    /// The deepest nesting of lists and objects (`[]` is 1), as
    /// [`loads_with_depth`](super::loads_with_depth) tells it.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The document's value.
    pub fn root(&self) -> Val<'_> {
        Val {
            doc: self,
            pos: skip_ws(self.text.as_bytes(), 0) as u32,
            ord: 0,
        }
    }
}

/// A value of a [`Doc`]: where it starts in the text, and the ordinal of
/// the first container at or after that.
#[derive(Clone, Copy)]
pub struct Val<'a> {
    doc: &'a Doc<'a>,
    pos: u32,
    ord: u32,
}

impl std::fmt::Debug for Val<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Val({})", &self.doc.text[self.pos as usize..self.end()])
    }
}

impl<'a> Val<'a> {
    fn byte(&self) -> u8 {
        self.doc.text.as_bytes()[self.pos as usize]
    }

    fn span(&self) -> Span {
        self.doc.spans[self.ord as usize]
    }

    /// Whether it is `null`.
    pub fn is_null(&self) -> bool {
        self.byte() == b'n'
    }

    /// The value of `true` or `false`; `None` for another value.
    pub fn bool(&self) -> Option<bool> {
        match self.byte() {
            b't' => Some(true),
            b'f' => Some(false),
            _ => None,
        }
    }

    /// Whether it is a list.
    pub fn is_list(&self) -> bool {
        self.byte() == b'['
    }

    /// Whether it is an object.
    pub fn is_object(&self) -> bool {
        self.byte() == b'{'
    }

    /// Python's `type(v).__name__` of what `json.loads` makes of it.
    pub fn type_name(&self) -> &'static str {
        let s = self.doc.text.as_bytes();
        let at = self.pos as usize;
        match s[at] {
            b'[' => "list",
            b'{' => "dict",
            b'"' => "str",
            b'n' => "NoneType",
            b't' | b'f' => "bool",
            b'N' | b'I' => "float",
            b'-' if s.get(at + 1) == Some(&b'I') => "float",
            _ if s[at..self.end()]
                .iter()
                .any(|b| matches!(b, b'.' | b'e' | b'E')) =>
            {
                "float"
            }
            _ => "int",
        }
    }

    /// The byte offset just past the value.
    fn end(&self) -> usize {
        match self.byte() {
            b'[' | b'{' => self.span().end as usize + 1,
            _ => scalar_end(self.doc.text.as_bytes(), self.pos as usize),
        }
    }

    /// Where the value after this one starts its search: past it, and the
    /// ordinal of the first container after it.
    fn after(&self) -> (usize, u32) {
        match self.byte() {
            b'[' | b'{' => {
                let span = self.span();
                (span.end as usize + 1, span.next)
            }
            _ => (
                scalar_end(self.doc.text.as_bytes(), self.pos as usize),
                self.ord,
            ),
        }
    }

    /// The value `json.loads` makes of a scalar; `None` for a list or an object.
    pub fn scalar(&self) -> Option<PyJson> {
        match self.byte() {
            b'[' | b'{' => None,
            // `Doc::new` checked the text.
            _ => parse::scalar_at(self.doc.text, self.pos as usize).ok(),
        }
    }

    /// The string, borrowed from the text when it has no escape.
    pub fn str(&self) -> Option<Cow<'a, str>> {
        if self.byte() != b'"' {
            return None;
        }
        let text: &'a str = self.doc.text;
        let at = self.pos as usize;
        let inner = &text[at + 1..self.end() - 1];
        if !inner.contains('\\') {
            return Some(Cow::Borrowed(inner));
        }
        parse::string_at(text, at).ok().map(Cow::Owned)
    }

    /// The value as `json.loads` makes it (for the rare value kept whole).
    pub fn to_pyjson(&self) -> PyJson {
        match self.byte() {
            b'[' | b'{' => {
                let text = &self.doc.text[self.pos as usize..self.end()];
                // A container of a checked text is a checked text.
                super::loads(text).unwrap_or(PyJson::Null)
            }
            _ => self.scalar().unwrap_or(PyJson::Null),
        }
    }

    /// A list's items in order (none for another value).
    pub fn items(&self) -> Items<'a> {
        Items(self.open(b'['))
    }

    /// An object's members in document order, a repeated key each time (none
    /// for another value). [`Val::entries`] is the `dict` `json.loads` makes.
    pub fn members(&self) -> Members<'a> {
        Members(self.open(b'{'))
    }

    fn open(&self, bracket: u8) -> Cursor<'a> {
        Cursor {
            doc: self.doc,
            pos: self.pos as usize + 1,
            ord: self.ord + 1,
            done: self.byte() != bracket,
        }
    }

    /// An object's `dict`: each key once, at its first position, with its
    /// last value (empty for another value).
    pub fn entries(&self) -> Entries<'a> {
        let mut out = Entries::new();
        let mut index: Option<HashMap<Cow<'a, str>, usize>> = None;
        for (k, v) in self.members() {
            if let Some(ix) = &mut index {
                let name = k.as_str();
                match ix.get(&name) {
                    Some(&i) => out[i].1 = v,
                    None => {
                        ix.insert(name, out.len());
                        out.push((k, v));
                    }
                }
                continue;
            }
            if let Some(e) = out.iter_mut().find(|(k2, _)| *k2 == k) {
                e.1 = v;
                continue;
            }
            out.push((k, v));
            if out.len() >= INDEX_AT {
                index = Some(
                    out.iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.as_str(), i))
                        .collect(),
                );
            }
        }
        out
    }

    /// `d.get(key)` on an object: the last value of `key`.
    pub fn get(&self, key: &str) -> Option<Val<'a>> {
        self.members()
            .filter(|(k, _)| k.eq_str(key))
            .last()
            .map(|(_, v)| v)
    }

    /// Python's `len()` of a list or an object (0 for another value).
    pub fn len(&self) -> usize {
        match self.byte() {
            b'[' => self.items().count(),
            b'{' => self.entries().len(),
            _ => 0,
        }
    }

    /// Whether [`Val::len`] is 0.
    pub fn is_empty(&self) -> bool {
        self.items().next().is_none() && self.members().next().is_none()
    }
}

/// An object's entries, as [`Val::entries`] gives them.
pub type Entries<'a> = SmallVec<[(Key<'a>, Val<'a>); 8]>;

/// An object key, as written (quotes included).
#[derive(Clone, Copy, Debug)]
pub struct Key<'a> {
    quoted: &'a str,
}

impl<'a> Key<'a> {
    fn inner(&self) -> &'a str {
        &self.quoted[1..self.quoted.len() - 1]
    }

    /// The key's text, borrowed when it has no escape.
    pub fn as_str(&self) -> Cow<'a, str> {
        let inner = self.inner();
        if !inner.contains('\\') {
            return Cow::Borrowed(inner);
        }
        Cow::Owned(parse::string_at(self.quoted, 0).unwrap_or_default())
    }

    /// Whether the key's text is `s`.
    pub fn eq_str(&self, s: &str) -> bool {
        let inner = self.inner();
        if !inner.contains('\\') {
            return inner == s;
        }
        self.as_str() == s
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.inner(), other.inner());
        if !a.contains('\\') && !b.contains('\\') {
            return a == b;
        }
        self.as_str() == other.as_str()
    }
}

/// A walk over a container's values, from past its bracket or a comma.
struct Cursor<'a> {
    doc: &'a Doc<'a>,
    pos: usize,
    ord: u32,
    done: bool,
}

impl<'a> Cursor<'a> {
    /// The value at the cursor, then past it and its comma; `None` at the
    /// closing bracket.
    fn value(&mut self) -> Option<Val<'a>> {
        let s = self.doc.text.as_bytes();
        let v = Val {
            doc: self.doc,
            pos: self.pos as u32,
            ord: self.ord,
        };
        let (end, ord) = v.after();
        self.pos = skip_ws(s, end);
        if s.get(self.pos) == Some(&b',') {
            self.pos += 1;
        }
        self.ord = ord;
        Some(v)
    }

    /// Past whitespace; whether the container goes on.
    fn more(&mut self) -> bool {
        if self.done {
            return false;
        }
        let s = self.doc.text.as_bytes();
        self.pos = skip_ws(s, self.pos);
        if matches!(s.get(self.pos), Some(b']' | b'}') | None) {
            self.done = true;
        }
        !self.done
    }
}

/// A list's items, from [`Val::items`].
pub struct Items<'a>(Cursor<'a>);

impl<'a> Iterator for Items<'a> {
    type Item = Val<'a>;

    fn next(&mut self) -> Option<Val<'a>> {
        if !self.0.more() {
            return None;
        }
        self.0.value()
    }
}

/// An object's members in document order, from [`Val::members`].
pub struct Members<'a>(Cursor<'a>);

impl<'a> Iterator for Members<'a> {
    type Item = (Key<'a>, Val<'a>);

    fn next(&mut self) -> Option<(Key<'a>, Val<'a>)> {
        if !self.0.more() {
            return None;
        }
        let c = &mut self.0;
        let s = c.doc.text.as_bytes();
        let key_end = scalar_end(s, c.pos);
        let key = Key {
            quoted: &c.doc.text[c.pos..key_end],
        };
        // Past the whitespace, the colon and the whitespace.
        c.pos = skip_ws(s, skip_ws(s, key_end) + 1);
        c.value().map(|v| (key, v))
    }
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(i) {
        i += 1;
    }
    i
}

/// Past the scalar at `i` of a checked text.
fn scalar_end(s: &[u8], i: usize) -> usize {
    match s.get(i) {
        Some(b'"') => {
            let mut j = i + 1;
            loop {
                j = skip_plain(s, j);
                match s.get(j) {
                    None => return j,
                    Some(b'"') => return j + 1,
                    Some(b'\\') => j += 2,
                    Some(_) => j += 1,
                }
            }
        }
        Some(b'n' | b't') => i + 4,
        Some(b'f') => i + 5,
        Some(b'N') => i + 3,
        Some(b'I') => i + 8,
        Some(b'-') if s.get(i + 1) == Some(&b'I') => i + 9,
        _ => {
            let mut j = i;
            while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = s.get(j) {
                j += 1;
            }
            j
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyjson::{dumps, loads, same};
    use proptest::prelude::*;

    /// The document a `Doc` reads, rebuilt from its values.
    fn rebuild(v: Val<'_>) -> PyJson {
        match v.byte() {
            b'[' => PyJson::List(v.items().map(rebuild).collect()),
            b'{' => PyJson::Object(
                v.entries()
                    .iter()
                    .map(|(k, v)| (k.as_str().into_owned(), rebuild(*v)))
                    .collect(),
            ),
            _ => v.scalar().expect("a scalar"),
        }
    }

    fn check(text: &str) {
        let doc = Doc::new(text);
        match loads(text) {
            Ok(v) => {
                let doc = doc.expect("Doc reads what loads reads");
                let again = rebuild(doc.root());
                assert!(same(&v, &again), "{text}: {v:?} vs {again:?}");
                assert!(same(&doc.root().to_pyjson(), &v), "{text}");
            }
            Err(e) => assert_eq!(
                doc.err().map(|d| d.to_string()),
                Some(e.to_string()),
                "{text}"
            ),
        }
    }

    #[test]
    fn reads_what_loads_reads() {
        for text in [
            r#"{"a": [1, 2.0, "\u00e9", -Infinity, NaN], "b": null, "a": {"x": [[]], "\u0078": {}}}"#,
            r#"  [ 1 , "a\"b" , {"k" : true} , false , 1e400 , -0 , 123456789012345678901234567890 ]  "#,
            "[1, 2",
            "[1] x",
            "",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "[1,]",
            "\u{feff}[]",
            "[\"\\ud800\"]",
            "[-]",
            "[1.]",
            "{,}",
            "[\"a\\qb\"]",
            "[\"\\u12\"]",
            "{\"a\":1 \"b\":2}",
        ] {
            check(text);
        }
        check(&"[".repeat(1001));
        check(&format!("{}{}", "[".repeat(999), "]".repeat(999)));
    }

    #[test]
    fn duplicate_keys_keep_the_first_position_and_the_last_value() {
        let members: String = (0..40).map(|i| format!("\"k{}\": {i}, ", i % 30)).collect();
        let text = format!("{{{members}\"k0\": \"last\"}}");
        let doc = Doc::new(&text).unwrap();
        assert_eq!(
            dumps(&rebuild(doc.root())).unwrap(),
            dumps(&loads(&text).unwrap()).unwrap()
        );
        assert_eq!(doc.root().len(), 30);
    }

    proptest! {
        /// On text made of JSON's pieces, `Doc` accepts and refuses as `loads`.
        #[test]
        fn agrees_with_loads(pieces in prop::collection::vec(prop_oneof![
            Just("["), Just("]"), Just("{"), Just("}"), Just(","), Just(":"), Just(" "),
            Just("\"a\""), Just("\"\\u0061\""), Just("\"b\\n\""), Just("1"), Just("-2.5e3"),
            Just("null"), Just("true"), Just("NaN"), Just("-Infinity"), Just("\""),
        ], 0..24)) {
            check(&pieces.concat());
        }
    }
}
