//! Reads one case line (case format v1) straight into the wire types with
//! serde, no `serde_json::Value` in between. Every problem is reported with
//! its JSON path (a path is a chain of stack frames, rendered only for an
//! error), and lines nested deeper than `oracle/capture.py` can read get
//! its error, `invalid JSON: nested too deeply`.

use std::cell::{Cell, RefCell};
use std::fmt;

use num_bigint::BigInt;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::deep::SHALLOW;
use super::wire::{Case, CaseBody, CaseKind, Expr, SourceExpr, SourceField, SpecCtor, VarDecl};
use crate::error::{Error, Result};
use crate::pyval::ops::Op;
use crate::source::{FieldKind, SourceClass};
use crate::spec::VarKind;

mod export_spec;

/// Python's `json` reads nesting up to this depth inside `capture.py` (the
/// case object itself is depth 1): its C scanner counts each open array or
/// object against the recursion limit of 1000, on top of the 6 Python frames
/// below `json.loads`.
pub const MAX_DEPTH: usize = 993;

/// Python's `json.loads` refuses ints longer than this
/// (`sys.int_info.default_max_str_digits`).
const MAX_INT_DIGITS: usize = 4300;

/// How `serde_json` (with `arbitrary_precision`) hands over a number that
/// does not fit an `i64`/`u64`: a one-entry map with this key.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

impl Case {
    /// Parse one case line (without its trailing newline). Reading is this
    /// module's, so the wire types know nothing of it.
    pub fn parse(line: &str) -> Result<Case> {
        parse_line(line)
    }
}

/// Parse one case line (without its trailing newline).
pub fn parse_line(line: &str) -> Result<Case> {
    // A line with few `[`/`{` bytes cannot nest deep: no scan, no stack.
    if openers(line) <= SHALLOW {
        return parse_shallow(line);
    }
    match depth(line.as_bytes()) {
        Ok(depth) if depth <= SHALLOW => parse_shallow(line),
        // Reading recurses once per level (a few hundred bytes of stack
        // each): a deep line gets a stack of its own.
        Ok(depth) => crate::case::deep::with_stack_for(depth, || parse_shallow(line)),
        // Python scans left to right: a syntax error before the point where
        // the nesting gets too deep is reported instead. `IgnoredAny` walks
        // without recursion, so the prefix is safe to check at any depth.
        Err(at) => Err(match serde_json::from_str::<IgnoredAny>(&line[..at]) {
            Err(e) if !e.is_eof() => Error::new(format!("invalid JSON: {e}")),
            _ => Error::new("invalid JSON: nested too deeply"),
        }),
    }
}

/// How many `[` and `{` bytes `text` has (in strings too): a bound on its
/// nesting depth, counted without branches.
pub(crate) fn openers(text: &str) -> usize {
    // `[` is 0x5B and `{` 0x7B: the only bytes that are `{` with bit 5 set.
    text.bytes().filter(|b| b | 0x20 == b'{').count()
}

/// How deep `line` nests, or where Python's `json` (as `capture.py` calls
/// it) gives up on it: entering an array or object past `MAX_DEPTH`, or
/// closing an object at `MAX_DEPTH` (its `object_pairs_hook` call needs one
/// more frame).
fn depth(line: &[u8]) -> Result<usize, usize> {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, &b) in line.iter().enumerate() {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(i);
                }
                max = max.max(depth);
            }
            b'}' if depth == MAX_DEPTH => return Err(i),
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(max)
}

fn parse_shallow(line: &str) -> Result<Case> {
    let ctx = Ctx::default();
    let mut de = serde_json::Deserializer::from_str(line);
    de.disable_recursion_limit();
    let root = Path::ROOT;
    let read = S(CaseForm {
        ctx: &ctx,
        path: &root,
    })
    .deserialize(&mut de)
    .and_then(|case| de.end().map(|()| case));
    match read {
        Ok(Ok(case)) => Ok(case),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(ctx
            .error
            .take()
            .unwrap_or_else(|| Error::new(format!("invalid JSON: {e}")))),
    }
}

// ---------------------------------------------------------------------------
// Paths and the error slot.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Seg<'p> {
    Root,
    Key(&'p str),
    Index(usize),
}

/// A JSON path as a chain of frames: `$.value.dict[0][1]`.
#[derive(Clone, Copy)]
struct Path<'p> {
    seg: Seg<'p>,
    parent: Option<&'p Path<'p>>,
}

impl<'p> Path<'p> {
    const ROOT: Path<'static> = Path {
        seg: Seg::Root,
        parent: None,
    };

    fn key(&'p self, key: &'p str) -> Path<'p> {
        Path {
            seg: Seg::Key(key),
            parent: Some(self),
        }
    }

    fn index(&'p self, i: usize) -> Path<'p> {
        Path {
            seg: Seg::Index(i),
            parent: Some(self),
        }
    }

    fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut p = Some(self);
        while let Some(q) = p {
            segs.push(q.seg);
            p = q.parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            use std::fmt::Write;
            let _ = match seg {
                Seg::Root => write!(out, "$"),
                Seg::Key(k) => write!(out, ".{k}"),
                Seg::Index(i) => write!(out, "[{i}]"),
            };
        }
        out
    }
}

/// What the reading of one line shares: the first error (serde's own error
/// type cannot carry a path without `serde_json` appending a position to
/// it), and what is known of `vars` for checking `{"var": i}`.
#[derive(Default)]
struct Ctx {
    error: RefCell<Option<Error>>,
    /// `vars`'s length, once read.
    nvars: Cell<Option<usize>>,
    /// The largest var index seen before `vars` was read, and where.
    max_var: RefCell<Option<(usize, String)>>,
    /// Whether the VALUE being read is an `export_spec` input, where
    /// tensors, registered pytree types and `$float` are VALUEs too.
    inputs: Cell<bool>,
}

impl Ctx {
    /// Record an error at `path` (the first one wins) and unwind.
    fn fail<E: de::Error>(&self, path: &Path, message: impl Into<String>) -> E {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(Error::at(&path.render(), message));
        }
        E::custom("case file error")
    }
}

// ---------------------------------------------------------------------------
// The forms: what is expected at a point of the line.
// ---------------------------------------------------------------------------

/// A JSON scalar as the deserializer hands it over.
enum Scalar<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    /// A number past `i64`/`u64` or with a fraction or exponent: its text.
    Number(&'a str),
    Str(&'a str),
}

impl Scalar<'_> {
    fn into_expr(self) -> Result<Expr, String> {
        Ok(match self {
            Scalar::Null => Expr::None,
            Scalar::Bool(b) => Expr::Bool(b),
            Scalar::U64(u) => Expr::Int(BigInt::from(u)),
            Scalar::I64(i) => Expr::Int(BigInt::from(i)),
            Scalar::Number(text) => return number(text),
            Scalar::Str(s) => Expr::Str(s.to_string()),
        })
    }

    fn is_int(&self) -> bool {
        match self {
            Scalar::U64(_) | Scalar::I64(_) => true,
            Scalar::Number(text) => !is_float_text(text),
            _ => false,
        }
    }
}

fn is_float_text(text: &str) -> bool {
    text.contains(['.', 'e', 'E'])
}

/// A JSON number as Python's `json` module reads it: digits alone are an
/// int (of any size), anything with `.`, `e` or `E` is a float.
fn number(text: &str) -> Result<Expr, String> {
    if is_float_text(text) {
        // `1e400` reads as `inf`, as in Python.
        let f: f64 = text.parse().map_err(|_| format!("bad float `{text}`"))?;
        Ok(Expr::Float(f))
    } else {
        if text.trim_start_matches('-').len() > MAX_INT_DIGITS {
            return Err(format!(
                "integer literal has more than {MAX_INT_DIGITS} digits, which Python's `json` refuses"
            ));
        }
        let i: BigInt = text.parse().map_err(|_| format!("bad integer `{text}`"))?;
        Ok(Expr::Int(i))
    }
}

/// What one place of a case line accepts. `V` turns the deserializer's
/// calls into these three; anything a form does not take is its own error.
trait Form<'de>: Sized {
    type Out;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<Self::Out, E>;
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Out, A::Error>;
    /// An object; `first` is its first key, already read (`None`: `{}`).
    fn map<A: MapAccess<'de>>(self, first: Option<&str>, map: A) -> Result<Self::Out, A::Error>;
}

/// A form as a serde seed.
struct S<F>(F);

impl<'de, F: Form<'de>> DeserializeSeed<'de> for S<F> {
    type Value = F::Out;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<F::Out, D::Error> {
        d.deserialize_any(V(self.0))
    }
}

struct V<F>(F);

impl<'de, F: Form<'de>> Visitor<'de> for V<F> {
    type Value = F::Out;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a case-format value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<F::Out, E> {
        self.0.scalar(Scalar::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<F::Out, E> {
        self.0.scalar(Scalar::Bool(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<F::Out, E> {
        self.0.scalar(Scalar::U64(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<F::Out, E> {
        self.0.scalar(Scalar::I64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<F::Out, E> {
        // Not reached with `arbitrary_precision`; kept exact if it were.
        self.0.scalar(Scalar::Number(&crate::pyval::float_repr(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<F::Out, E> {
        self.0.scalar(Scalar::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<F::Out, A::Error> {
        self.0.seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F::Out, A::Error> {
        let first = map.next_key_seed(KeySeed)?;
        match first {
            Some(k) if k.as_str() == NUMBER_TOKEN => {
                let text = map.next_value_seed(KeySeed)?;
                self.0.scalar(Scalar::Number(text.as_str()))
            }
            k => self.0.map(k.as_ref().map(Key::as_str), map),
        }
    }
}

/// An object key or a number's text: borrowed from the line when it has no
/// escapes (no allocation), owned otherwise.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }
}

/// The rest of an object's keys, values skipped: how many there are.
fn count_rest<'de, A: MapAccess<'de>>(map: &mut A) -> Result<usize, A::Error> {
    let mut n = 0;
    while map.next_key::<IgnoredAny>()?.is_some() {
        map.next_value::<IgnoredAny>()?;
        n += 1;
    }
    Ok(n)
}

/// Where a form that takes nothing of this shape says so.
macro_rules! reject {
    (scalar, $msg:expr) => {
        fn scalar<E: de::Error>(self, _: Scalar<'_>) -> Result<Self::Out, E> {
            Err(self.ctx.fail(self.path, $msg))
        }
    };
    (seq, $msg:expr) => {
        fn seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Out, A::Error> {
            Err(self.ctx.fail(self.path, $msg))
        }
    };
    (map, $msg:expr) => {
        fn map<A: MapAccess<'de>>(self, _: Option<&str>, _: A) -> Result<Self::Out, A::Error> {
            Err(self.ctx.fail(self.path, $msg))
        }
    };
}

// --- the case object --------------------------------------------------------

struct CaseForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

/// The case kinds as the error for an unknown one lists them, in order:
/// each in backticks, the last after `or`.
fn kinds_expected() -> String {
    let names: Vec<String> = CaseKind::ALL
        .iter()
        .map(|k| format!("`{}`", k.name()))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl<'de> Form<'de> for CaseForm<'_> {
    /// A case, or an error found only once the whole object is read.
    type Out = Result<Case>;
    reject!(scalar, "a case must be a JSON object");
    reject!(seq, "a case must be a JSON object");

    fn map<A: MapAccess<'de>>(
        self,
        first: Option<&str>,
        mut map: A,
    ) -> Result<Result<Case>, A::Error> {
        let mut f = CaseFields::default();
        let mut key = first.map(str::to_string);
        while let Some(k) = key.take() {
            self.admit(&mut f, &k)?;
            if self.field(&mut f, &k, &mut map)? {
                // Python's `json` as the oracle calls it refuses these too.
                return Err(self.ctx.fail(self.path, format!("duplicate key `{k}`")));
            }
            key = map.next_key_seed(KeySeed)?.map(|k| k.as_str().to_string());
        }
        Ok(f.finish(self.ctx))
    }
}

/// The fields of a case object as read so far, checked once all are in.
#[derive(Default)]
struct CaseFields {
    id: Option<String>,
    kind: Option<CaseKind>,
    vars: Option<Vec<VarDecl>>,
    value: Option<Expr>,
    spec: Option<Expr>,
    source: Option<SourceExpr>,
    es_fields: Vec<(&'static str, serde_json::Value)>,
    /// Keys read before `kind`, which it might not take.
    pending: Vec<String>,
}

impl CaseForm<'_> {
    /// Refuses a key the kind read so far does not take; keeps one read
    /// before `kind` for the check `kind` makes.
    fn admit<E: de::Error>(&self, f: &mut CaseFields, k: &str) -> Result<(), E> {
        match f.kind {
            Some(kind) if !kind.takes(k) => {
                return Err(self.ctx.fail(
                    self.path,
                    format!("unknown field `{k}` for kind `{}`", kind.name()),
                ));
            }
            None if !CaseKind::COMMON_KEYS.contains(&k) => f.pending.push(k.to_string()),
            _ => {}
        }
        Ok(())
    }

    /// Reads the value of key `k` into `f`; whether the key was seen before.
    fn field<'de, A: MapAccess<'de>>(
        &self,
        f: &mut CaseFields,
        k: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        Ok(match k {
            "id" => {
                let p = path.key("id");
                let s = map.next_value_seed(S(StrForm {
                    ctx,
                    path: &p,
                    what: "`id` must be a string",
                }))?;
                f.id.replace(s).is_some()
            }
            "kind" => {
                let p = path.key("kind");
                let s = map.next_value_seed(S(StrForm {
                    ctx,
                    path: &p,
                    what: "`kind` must be a string",
                }))?;
                let Some(known) = CaseKind::from_name(&s) else {
                    return Err(ctx.fail(
                        &p,
                        format!("unknown kind `{s}` (expected {})", kinds_expected()),
                    ));
                };
                if let Some(u) = f.pending.iter().find(|u| !known.takes(u)) {
                    return Err(ctx.fail(
                        path,
                        format!("unknown field `{u}` for kind `{}`", known.name()),
                    ));
                }
                f.kind.replace(known).is_some()
            }
            "vars" => {
                let p = path.key("vars");
                let v = map.next_value_seed(S(VarsForm { ctx, path: &p }))?;
                ctx.nvars.set(Some(v.len()));
                f.vars.replace(v).is_some()
            }
            "value" => {
                let p = path.key("value");
                let e = map.next_value_seed(S(ExprForm { ctx, path: &p }))?;
                f.value.replace(e).is_some()
            }
            "spec" if f.kind == Some(CaseKind::Lookup) => {
                let p = path.key("spec");
                let e = map.next_value_seed(S(SpecForm { ctx, path: &p }))?;
                f.spec.replace(e).is_some()
            }
            "spec" => {
                let p = path.key("spec");
                let e = map.next_value_seed(S(ExprForm { ctx, path: &p }))?;
                f.spec.replace(e).is_some()
            }
            k if CaseKind::ExportSpec.keys().contains(&k) => {
                let name = CaseKind::ExportSpec
                    .keys()
                    .iter()
                    .find(|n| **n == k)
                    .copied()
                    .unwrap_or("");
                let v: serde_json::Value = map.next_value()?;
                let seen = f.es_fields.iter().any(|(n, _)| *n == name);
                f.es_fields.push((name, v));
                seen
            }
            "source" => {
                let p = path.key("source");
                let s = map.next_value_seed(S(SourceForm { ctx, path: &p }))?;
                f.source.replace(s).is_some()
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
                false
            }
        })
    }
}

impl CaseFields {
    /// The case the fields make, or the error only the whole object shows.
    fn finish(self, ctx: &Ctx) -> Result<Case> {
        let id = self.id.ok_or_else(|| Error::at("$", "missing `id`"))?;
        let kind = self.kind.ok_or_else(|| Error::at("$", "missing `kind`"))?;
        if let Some(u) = self.pending.iter().find(|u| !kind.takes(u)) {
            return Err(Error::at(
                "$",
                format!("unknown field `{u}` for kind `{}`", kind.name()),
            ));
        }
        let vars = self.vars.unwrap_or_default();
        if let Some((i, at)) = ctx.max_var.take().filter(|(i, _)| *i >= vars.len()) {
            return Err(Error::at(
                &at,
                format!("var index {i} out of range ({} vars)", vars.len()),
            ));
        }
        let missing = |k: &str| Error::at("$", format!("missing `{k}`"));
        let body = match kind {
            CaseKind::Build => CaseBody::Build {
                value: self.value.ok_or_else(|| missing("value"))?,
            },
            CaseKind::Lookup => CaseBody::Lookup {
                spec: match self.spec {
                    Some(s @ (Expr::None | Expr::ShapesSpec { .. })) => s,
                    Some(_) => return Err(Error::at("$.spec", SPEC)),
                    None => return Err(missing("spec")),
                },
                source: self.source.ok_or_else(|| missing("source"))?,
            },
            CaseKind::ExportSpec => CaseBody::ExportSpec(Box::new(export_spec::read(
                ctx,
                vars.len(),
                self.es_fields,
                self.spec,
            )?)),
            CaseKind::SourceName => CaseBody::SourceName {
                source: self.source.ok_or_else(|| missing("source"))?,
            },
        };
        Ok(Case { id, vars, body })
    }
}

/// A string field with the message for anything else.
struct StrForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
    what: &'static str,
}

impl<'de> Form<'de> for StrForm<'_> {
    type Out = String;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<String, E> {
        match s {
            Scalar::Str(s) => Ok(s.to_string()),
            _ => Err(self.ctx.fail(self.path, self.what)),
        }
    }
    fn seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(self.ctx.fail(self.path, self.what))
    }
    fn map<A: MapAccess<'de>>(self, _: Option<&str>, _: A) -> Result<String, A::Error> {
        Err(self.ctx.fail(self.path, self.what))
    }
}

// --- vars --------------------------------------------------------------------

struct VarsForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for VarsForm<'_> {
    type Out = Vec<VarDecl>;
    reject!(scalar, "`vars` must be an array");
    reject!(map, "`vars` must be an array");

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<VarDecl>, A::Error> {
        let mut out = Vec::new();
        loop {
            let p = self.path.index(out.len());
            match seq.next_element_seed(S(VarForm {
                ctx: self.ctx,
                path: &p,
            }))? {
                Some(v) => out.push(v),
                None => return Ok(out),
            }
        }
    }
}

struct VarForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for VarForm<'_> {
    type Out = VarDecl;
    reject!(scalar, "a var must be a JSON object");
    reject!(seq, "a var must be a JSON object");

    fn map<A: MapAccess<'de>>(self, first: Option<&str>, mut map: A) -> Result<VarDecl, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        let mut kind = None;
        let mut decl = VarDecl {
            kind: VarKind::IntVar,
            name: None,
            min: None,
            max: None,
            optimization_hint: None,
        };
        let mut key = first.map(str::to_string);
        while let Some(k) = key.take() {
            let (name, slot) = match k.as_str() {
                "kind" => {
                    let p = path.key("kind");
                    let expected = "expected `IntVar` or `ShapeVar`";
                    let s = map.next_value_seed(S(StrForm {
                        ctx,
                        path: &p,
                        what: expected,
                    }))?;
                    kind = Some(match s.as_str() {
                        "IntVar" => VarKind::IntVar,
                        "ShapeVar" => VarKind::ShapeVar,
                        _ => return Err(ctx.fail(&p, expected)),
                    });
                    key = map.next_key_seed(KeySeed)?.map(|k| k.as_str().to_string());
                    continue;
                }
                "name" => ("name", &mut decl.name),
                "min" => ("min", &mut decl.min),
                "max" => ("max", &mut decl.max),
                "optimization_hint" => ("optimization_hint", &mut decl.optimization_hint),
                other => return Err(ctx.fail(path, format!("unknown var field `{other}`"))),
            };
            let p = path.key(name);
            let v = map.next_value_seed(S(VarFieldForm { ctx, path: &p }))?;
            if slot.replace(v).is_some() {
                return Err(ctx.fail(path, format!("duplicate key `{name}`")));
            }
            key = map.next_key_seed(KeySeed)?.map(|k| k.as_str().to_string());
        }
        decl.kind = match kind {
            Some(k) => k,
            None => return Err(ctx.fail(&path.key("kind"), "expected `IntVar` or `ShapeVar`")),
        };
        Ok(decl)
    }
}

/// A var field: the contract allows integers, strings and null, nothing else.
struct VarFieldForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const VAR_FIELD: &str = "a var field must be an integer, a string or null";

impl<'de> Form<'de> for VarFieldForm<'_> {
    type Out = Expr;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<Expr, E> {
        if !(s.is_int() || matches!(s, Scalar::Null | Scalar::Str(_))) {
            return Err(self.ctx.fail(self.path, VAR_FIELD));
        }
        s.into_expr().map_err(|m| self.ctx.fail(self.path, m))
    }
    reject!(seq, VAR_FIELD);
    reject!(map, VAR_FIELD);
}

// --- VALUE ---------------------------------------------------------------------

struct ExprForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for ExprForm<'_> {
    type Out = Expr;

    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<Expr, E> {
        s.into_expr().map_err(|m| self.ctx.fail(self.path, m))
    }

    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Expr, A::Error> {
        exprs(self.ctx, self.path, seq).map(Expr::List)
    }

    fn map<A: MapAccess<'de>>(self, first: Option<&str>, map: A) -> Result<Expr, A::Error> {
        value_object(self.ctx, self.path, first, map)
    }
}

/// The elements of an array, each a VALUE.
fn exprs<'de, A: SeqAccess<'de>>(
    ctx: &Ctx,
    path: &Path,
    mut seq: A,
) -> Result<Vec<Expr>, A::Error> {
    let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
    loop {
        let p = path.index(out.len());
        match seq.next_element_seed(S(ExprForm { ctx, path: &p }))? {
            Some(e) => out.push(e),
            None => return Ok(out),
        }
    }
}

/// An array of VALUEs where only an array will do (`tuple`, `args`).
struct ExprsForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for ExprsForm<'_> {
    type Out = Vec<Expr>;
    reject!(scalar, "expected an array");
    reject!(map, "expected an array");
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<Expr>, A::Error> {
        exprs(self.ctx, self.path, seq)
    }
}

/// A VALUE object (`{"tuple": ...}`, `{"op": ..., "args": ...}`, ...), its
/// first key read.
fn value_object<'de, A: MapAccess<'de>>(
    ctx: &Ctx,
    path: &Path,
    first: Option<&str>,
    mut map: A,
) -> Result<Expr, A::Error> {
    let Some(key) = first else {
        return Err(ctx.fail(path, "a VALUE object must have exactly one key, found 0"));
    };
    if key == "op" || key == "args" {
        return op_object(ctx, path, key, map);
    }
    let sub = |k: &'static str| path.key(k);
    let expr = match key {
        "tensor" | "namedtuple" | "dataclass" | "$float" if ctx.inputs.get() => {
            let form = export_spec::INPUT_FORMS
                .into_iter()
                .find(|f| *f == key)
                .unwrap_or("tensor");
            let p = sub(form);
            let v: serde_json::Value = map.next_value()?;
            Some(export_spec::input_form(ctx, &p, form, &v)?)
        }
        "tuple" => {
            let p = sub("tuple");
            Some(Expr::Tuple(
                map.next_value_seed(S(ExprsForm { ctx, path: &p }))?,
            ))
        }
        "dict" => {
            let p = sub("dict");
            Some(Expr::Dict(
                map.next_value_seed(S(PairsForm { ctx, path: &p }))?,
            ))
        }
        "slice" => {
            let p = sub("slice");
            Some(map.next_value_seed(S(SliceForm { ctx, path: &p }))?)
        }
        "var" => {
            let p = sub("var");
            Some(Expr::Var(
                map.next_value_seed(S(VarIndexForm { ctx, path: &p }))?,
            ))
        }
        "ShapesSpec" => {
            let p = sub("ShapesSpec");
            Some(map.next_value_seed(S(ShapesArgsForm { ctx, path: &p }))?)
        }
        name => match SpecCtor::ALL.iter().find(|c| c.name() == name) {
            Some(&ctor) => {
                let p = sub(ctor.name());
                let arg = map.next_value_seed(S(ExprForm { ctx, path: &p }))?;
                Some(Expr::Spec(ctor, Box::new(arg)))
            }
            None => {
                map.next_value::<IgnoredAny>()?;
                None
            }
        },
    };
    // Exactly one key: the form is told by it. A second `op` makes it an
    // op object with a stray field.
    match map.next_key_seed(KeySeed)? {
        None => {}
        Some(k) if k.as_str() == "op" => {
            return Err(ctx.fail(path, format!("unknown field `{key}` beside `op`")))
        }
        Some(_) => {
            map.next_value::<IgnoredAny>()?;
            let n = 2 + count_rest(&mut map)?;
            return Err(ctx.fail(
                path,
                format!("a VALUE object must have exactly one key, found {n}"),
            ));
        }
    }
    match expr {
        Some(e) => Ok(e),
        None if SourceClass::from_name(key).is_some() => Err(ctx.fail(
            path,
            format!("a SOURCE (`{key}`) cannot stand where a VALUE is expected"),
        )),
        None => Err(ctx.fail(path, format!("unknown VALUE form `{key}`"))),
    }
}

/// `{"op": OP, "args": [...]}`, in either key order.
fn op_object<'de, A: MapAccess<'de>>(
    ctx: &Ctx,
    path: &Path,
    first: &str,
    mut map: A,
) -> Result<Expr, A::Error> {
    let (mut op, mut args): (Option<Op>, Option<Vec<Expr>>) = (None, None);
    let mut key = Some(Key::Owned(first.to_string()));
    while let Some(k) = key.take() {
        match k.as_str() {
            "op" if op.is_none() => {
                let p = path.key("op");
                let name = map.next_value_seed(S(StrForm {
                    ctx,
                    path: &p,
                    what: "`op` must be a string",
                }))?;
                op = Some(
                    Op::from_name(&name)
                        .ok_or_else(|| ctx.fail(&p, format!("unknown op `{name}`")))?,
                );
            }
            "args" if args.is_none() => {
                let p = path.key("args");
                args = Some(map.next_value_seed(S(ExprsForm { ctx, path: &p }))?);
            }
            "op" | "args" => return Err(ctx.fail(path, format!("duplicate key `{}`", k.as_str()))),
            other => return Err(ctx.fail(path, format!("unknown field `{other}` beside `op`"))),
        }
        key = map.next_key_seed(KeySeed)?;
    }
    let Some(op) = op else {
        // Only `args`: not an op object, and no VALUE form of that name.
        return Err(ctx.fail(path, "unknown VALUE form `args`"));
    };
    let Some(args) = args else {
        return Err(ctx.fail(path, "missing `args`"));
    };
    if args.len() != op.arity() {
        return Err(ctx.fail(
            &path.key("args"),
            format!(
                "`{}` takes {} argument(s), found {}",
                op.name(),
                op.arity(),
                args.len()
            ),
        ));
    }
    Ok(Expr::Op(op, args))
}

/// `dict`'s `[[key, value], ...]`.
struct PairsForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for PairsForm<'_> {
    type Out = Vec<(Expr, Expr)>;
    reject!(scalar, "expected an array");
    reject!(map, "expected an array");

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
        loop {
            let p = self.path.index(out.len());
            match seq.next_element_seed(S(PairForm {
                ctx: self.ctx,
                path: &p,
            }))? {
                Some(pair) => out.push(pair),
                None => return Ok(out),
            }
        }
    }
}

struct PairForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const PAIR: &str = "a dict entry must be a `[key, value]` pair";

impl<'de> Form<'de> for PairForm<'_> {
    type Out = (Expr, Expr);
    reject!(scalar, PAIR);
    reject!(map, PAIR);

    fn seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Out, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        let (p0, p1) = (path.index(0), path.index(1));
        let k = seq.next_element_seed(S(ExprForm { ctx, path: &p0 }))?;
        let v = match k {
            Some(_) => seq.next_element_seed(S(ExprForm { ctx, path: &p1 }))?,
            None => None,
        };
        match (k, v) {
            (Some(k), Some(v)) if seq.next_element::<IgnoredAny>()?.is_none() => Ok((k, v)),
            _ => Err(ctx.fail(path, PAIR)),
        }
    }
}

/// `slice`'s `[start, stop, step]`.
struct SliceForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const SLICE: &str = "`slice` takes `[start, stop, step]`";

impl<'de> Form<'de> for SliceForm<'_> {
    type Out = Expr;
    reject!(scalar, "expected an array");
    reject!(map, "expected an array");

    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Expr, A::Error> {
        let parts = exprs(self.ctx, self.path, seq)?;
        match <[Expr; 3]>::try_from(parts) {
            Ok(parts) => Ok(Expr::Slice(Box::new(parts))),
            Err(_) => Err(self.ctx.fail(self.path, SLICE)),
        }
    }
}

/// `{"var": i}`'s index, checked against `vars` now or, when `vars` comes
/// later in the line, once the line is read.
struct VarIndexForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const VAR_INDEX: &str = "`var` takes a var index";

impl<'de> Form<'de> for VarIndexForm<'_> {
    type Out = usize;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<usize, E> {
        let (ctx, path) = (self.ctx, self.path);
        let Scalar::U64(i) = s else {
            return Err(ctx.fail(path, VAR_INDEX));
        };
        match ctx.nvars.get() {
            Some(n) if i >= n as u64 => {
                Err(ctx.fail(path, format!("var index {i} out of range ({n} vars)")))
            }
            Some(_) => Ok(i as usize),
            None => {
                let i = usize::try_from(i).map_err(|_| ctx.fail(path, VAR_INDEX))?;
                let mut max = ctx.max_var.borrow_mut();
                if max.as_ref().is_none_or(|(m, _)| i > *m) {
                    *max = Some((i, path.render()));
                }
                Ok(i)
            }
        }
    }
    reject!(seq, VAR_INDEX);
    reject!(map, VAR_INDEX);
}

/// `ShapesSpec`'s keyword arguments.
struct ShapesArgsForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for ShapesArgsForm<'_> {
    type Out = Expr;
    reject!(scalar, "`ShapesSpec` takes an object");
    reject!(seq, "`ShapesSpec` takes an object");

    fn map<A: MapAccess<'de>>(self, first: Option<&str>, mut map: A) -> Result<Expr, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        let (mut params, mut assumptions, mut globals) = (None, None, None);
        let mut key = first.map(|k| Key::Owned(k.to_string()));
        while let Some(k) = key.take() {
            let (name, slot) = match k.as_str() {
                "params" => ("params", &mut params),
                "assumptions" => ("assumptions", &mut assumptions),
                "globals" => ("globals", &mut globals),
                other => {
                    return Err(ctx.fail(path, format!("unknown `ShapesSpec` argument `{other}`")))
                }
            };
            let p = path.key(name);
            let v = map.next_value_seed(S(ExprForm { ctx, path: &p }))?;
            if slot.replace(Box::new(v)).is_some() {
                return Err(ctx.fail(path, format!("duplicate key `{name}`")));
            }
            key = map.next_key_seed(KeySeed)?;
        }
        Ok(Expr::ShapesSpec {
            params,
            assumptions,
            globals,
        })
    }
}

/// A lookup's `spec`: `lookup_spec_from_dynamo_source` takes a ShapesSpec or None.
struct SpecForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const SPEC: &str = "must be null or a `{\"ShapesSpec\": {...}}` object";

impl<'de> Form<'de> for SpecForm<'_> {
    type Out = Expr;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<Expr, E> {
        match s {
            Scalar::Null => Ok(Expr::None),
            _ => Err(self.ctx.fail(self.path, SPEC)),
        }
    }
    reject!(seq, SPEC);

    fn map<A: MapAccess<'de>>(self, first: Option<&str>, mut map: A) -> Result<Expr, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        if first != Some("ShapesSpec") {
            return Err(ctx.fail(path, SPEC));
        }
        let p = path.key("ShapesSpec");
        let spec = map.next_value_seed(S(ShapesArgsForm { ctx, path: &p }))?;
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(ctx.fail(path, SPEC));
        }
        Ok(spec)
    }
}

// --- SOURCE --------------------------------------------------------------------

struct SourceForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

const SOURCE: &str = "a SOURCE must be an object with one key, its class name";

impl<'de> Form<'de> for SourceForm<'_> {
    type Out = SourceExpr;
    reject!(scalar, SOURCE);
    reject!(seq, SOURCE);

    fn map<A: MapAccess<'de>>(
        self,
        first: Option<&str>,
        mut map: A,
    ) -> Result<SourceExpr, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        let Some(name) = first else {
            return Err(ctx.fail(path, SOURCE));
        };
        let Some(class) = SourceClass::from_name(name) else {
            map.next_value::<IgnoredAny>()?;
            if map.next_key::<IgnoredAny>()?.is_some() {
                return Err(ctx.fail(path, SOURCE));
            }
            return Err(ctx.fail(path, format!("unknown source class `{name}`")));
        };
        let p = path.key(class.name());
        let source = map.next_value_seed(S(SourceFieldsForm {
            ctx,
            path: &p,
            class,
        }))?;
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(ctx.fail(path, SOURCE));
        }
        Ok(source)
    }
}

/// A source class's fields object.
struct SourceFieldsForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
    class: SourceClass,
}

impl<'de> Form<'de> for SourceFieldsForm<'_> {
    type Out = SourceExpr;
    reject!(scalar, "source fields must be an object");
    reject!(seq, "source fields must be an object");

    fn map<A: MapAccess<'de>>(
        self,
        first: Option<&str>,
        mut map: A,
    ) -> Result<SourceExpr, A::Error> {
        let (ctx, path, class) = (self.ctx, self.path, self.class);
        let table = class.fields();
        // At most 5 fields per class; slots in dataclass order.
        let mut slots: [Option<SourceField>; 5] = Default::default();
        let mut key = first.map(|k| Key::Owned(k.to_string()));
        while let Some(k) = key.take() {
            let Some(at) = table.iter().position(|(f, _, _)| *f == k.as_str()) else {
                return Err(ctx.fail(
                    path,
                    format!("unknown field `{}` for `{}`", k.as_str(), class.name()),
                ));
            };
            let (field, kind, _) = table[at];
            let p = path.key(field);
            let value = match kind {
                FieldKind::Source => {
                    SourceField::Source(map.next_value_seed(S(SourceForm { ctx, path: &p }))?)
                }
                FieldKind::SourceOrValue => {
                    map.next_value_seed(S(SourceOrValueForm { ctx, path: &p }))?
                }
                FieldKind::Value => {
                    SourceField::Value(map.next_value_seed(S(ExprForm { ctx, path: &p }))?)
                }
                FieldKind::Str => SourceField::Str(map.next_value_seed(S(StrForm {
                    ctx,
                    path: &p,
                    what: "must be a string",
                }))?),
                FieldKind::Bool => {
                    SourceField::Bool(map.next_value_seed(S(BoolForm { ctx, path: &p }))?)
                }
                FieldKind::Int => {
                    SourceField::Int(map.next_value_seed(S(IntForm { ctx, path: &p }))?)
                }
            };
            if slots[at].replace(value).is_some() {
                return Err(ctx.fail(path, format!("duplicate key `{field}`")));
            }
            key = map.next_key_seed(KeySeed)?;
        }
        let mut fields = Vec::with_capacity(table.len());
        for (slot, &(field, _, required)) in slots.iter_mut().zip(table) {
            match slot.take() {
                Some(v) => fields.push((field, v)),
                None if required => return Err(ctx.fail(path, format!("missing field `{field}`"))),
                None => {}
            }
        }
        Ok(SourceExpr { class, fields })
    }
}

/// `DictGetItemSource.index`: a one-key object naming a source class is a
/// SOURCE, anything else a VALUE.
struct SourceOrValueForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for SourceOrValueForm<'_> {
    type Out = SourceField;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<SourceField, E> {
        ExprForm {
            ctx: self.ctx,
            path: self.path,
        }
        .scalar(s)
        .map(SourceField::Value)
    }
    fn seq<A: SeqAccess<'de>>(self, seq: A) -> Result<SourceField, A::Error> {
        exprs(self.ctx, self.path, seq).map(|v| SourceField::Value(Expr::List(v)))
    }
    fn map<A: MapAccess<'de>>(
        self,
        first: Option<&str>,
        mut map: A,
    ) -> Result<SourceField, A::Error> {
        let (ctx, path) = (self.ctx, self.path);
        let class = first.and_then(SourceClass::from_name);
        let Some(class) = class else {
            return value_object(ctx, path, first, map).map(SourceField::Value);
        };
        let p = path.key(class.name());
        let source = map.next_value_seed(S(SourceFieldsForm {
            ctx,
            path: &p,
            class,
        }))?;
        if map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value::<IgnoredAny>()?;
            let n = 2 + count_rest(&mut map)?;
            return Err(ctx.fail(
                path,
                format!("a VALUE object must have exactly one key, found {n}"),
            ));
        }
        Ok(SourceField::Source(source))
    }
}

struct BoolForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for BoolForm<'_> {
    type Out = bool;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<bool, E> {
        match s {
            Scalar::Bool(b) => Ok(b),
            _ => Err(self.ctx.fail(self.path, "must be a boolean")),
        }
    }
    reject!(seq, "must be a boolean");
    reject!(map, "must be a boolean");
}

struct IntForm<'a> {
    ctx: &'a Ctx,
    path: &'a Path<'a>,
}

impl<'de> Form<'de> for IntForm<'_> {
    type Out = BigInt;
    fn scalar<E: de::Error>(self, s: Scalar<'_>) -> Result<BigInt, E> {
        if !s.is_int() {
            return Err(self.ctx.fail(self.path, "must be an integer"));
        }
        match s.into_expr() {
            Ok(Expr::Int(i)) => Ok(i),
            Ok(_) => Err(self.ctx.fail(self.path, "must be an integer")),
            Err(m) => Err(self.ctx.fail(self.path, m)),
        }
    }
    reject!(seq, "must be an integer");
    reject!(map, "must be an integer");
}
