//! Case format v1 (`shared/case-format.md`): the wire form of one case line,
//! parsed by hand from `serde_json::Value` so that every problem is reported
//! with its JSON path. Also writes cases back (for `torchspec gen`).

use num_bigint::BigInt;
use serde_json::{Map, Number, Value as Json};

use crate::error::{Error, Result};
use crate::pyval::ops::Op;
use crate::source::{FieldKind, SourceClass};
use crate::spec::VarKind;

/// One case line.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub id: String,
    pub vars: Vec<VarDecl>,
    pub body: CaseBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CaseBody {
    Build { value: Expr },
    Lookup { spec: Expr, source: SourceExpr },
    SourceName { source: SourceExpr },
}

impl CaseBody {
    /// The case-format `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            CaseBody::Build { .. } => "build",
            CaseBody::Lookup { .. } => "lookup",
            CaseBody::SourceName { .. } => "source_name",
        }
    }
}

/// One entry of `vars`: each field `None` when its key is absent.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub kind: VarKind,
    pub name: Option<Expr>,
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub optimization_hint: Option<Expr>,
}

/// The spec constructors that take one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecCtor {
    TensorSpec,
    ObjectSpec,
    DictSpec,
    SeqSpec,
    ParamsSpec,
}

impl SpecCtor {
    pub const ALL: [SpecCtor; 5] = [
        SpecCtor::TensorSpec,
        SpecCtor::ObjectSpec,
        SpecCtor::DictSpec,
        SpecCtor::SeqSpec,
        SpecCtor::ParamsSpec,
    ];
    pub fn name(self) -> &'static str {
        match self {
            SpecCtor::TensorSpec => "TensorSpec",
            SpecCtor::ObjectSpec => "ObjectSpec",
            SpecCtor::DictSpec => "DictSpec",
            SpecCtor::SeqSpec => "SeqSpec",
            SpecCtor::ParamsSpec => "ParamsSpec",
        }
    }
}

/// A VALUE: what a case builds.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    None,
    Bool(bool),
    Int(BigInt),
    Float(f64),
    Str(String),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    Slice(Box<[Expr; 3]>),
    Var(usize),
    Op(Op, Vec<Expr>),
    Spec(SpecCtor, Box<Expr>),
    ShapesSpec {
        params: Option<Box<Expr>>,
        assumptions: Option<Box<Expr>>,
        globals: Option<Box<Expr>>,
    },
}

/// A SOURCE: a dynamo `Source` constructor call, its fields in dataclass
/// order (the order they are evaluated in).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceExpr {
    pub class: SourceClass,
    pub fields: Vec<(&'static str, SourceField)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SourceField {
    Source(SourceExpr),
    Value(Expr),
    Str(String),
    Bool(bool),
    Int(BigInt),
}

impl SourceExpr {
    pub fn get(&self, name: &str) -> Option<&SourceField> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// Python's `json.loads` refuses ints longer than this
/// (`sys.int_info.default_max_str_digits`).
const MAX_INT_DIGITS: usize = 4300;

impl Case {
    /// Whether any operator in the case has a var among its operands: the
    /// case builds a derived SymInt/SymBool.
    pub fn uses_derived(&self) -> bool {
        fn has_var(e: &Expr) -> bool {
            match e {
                Expr::Var(_) => true,
                _ => children(e).iter().any(|c| has_var(c)),
            }
        }
        fn derived(e: &Expr) -> bool {
            match e {
                Expr::Op(_, args) if args.iter().any(has_var) => true,
                _ => children(e).iter().any(|c| derived(c)),
            }
        }
        fn source_exprs(s: &SourceExpr) -> Vec<&Expr> {
            s.fields
                .iter()
                .flat_map(|(_, f)| match f {
                    SourceField::Source(s) => source_exprs(s),
                    SourceField::Value(e) => vec![e],
                    _ => vec![],
                })
                .collect()
        }
        let roots: Vec<&Expr> = match &self.body {
            CaseBody::Build { value } => vec![value],
            CaseBody::Lookup { spec, source } => {
                let mut v = vec![spec];
                v.extend(source_exprs(source));
                v
            }
            CaseBody::SourceName { source } => source_exprs(source),
        };
        roots.into_iter().any(derived)
    }

    /// Parse one case line (without its trailing newline).
    pub fn parse(line: &str) -> Result<Case> {
        let json: Json =
            serde_json::from_str(line).map_err(|e| Error::new(format!("invalid JSON: {e}")))?;
        Case::from_json(&json)
    }

    pub fn from_json(json: &Json) -> Result<Case> {
        let obj = json
            .as_object()
            .ok_or_else(|| Error::at("$", "a case must be a JSON object"))?;
        let id = match obj.get("id") {
            Some(Json::String(s)) => s.clone(),
            Some(_) => return Err(Error::at("$.id", "`id` must be a string")),
            None => return Err(Error::at("$", "missing `id`")),
        };
        let kind = match obj.get("kind") {
            Some(Json::String(s)) => s.as_str(),
            Some(_) => return Err(Error::at("$.kind", "`kind` must be a string")),
            None => return Err(Error::at("$", "missing `kind`")),
        };
        let vars = match obj.get("vars") {
            None => Vec::new(),
            Some(Json::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, v)| parse_var(v, &format!("$.vars[{i}]")))
                .collect::<Result<_>>()?,
            Some(_) => return Err(Error::at("$.vars", "`vars` must be an array")),
        };
        let p = Parser { nvars: vars.len() };
        let (allowed, body): (&[&str], CaseBody) = match kind {
            "build" => (
                &["value"],
                CaseBody::Build {
                    value: p.expr(field(obj, "value", "$")?, "$.value")?,
                },
            ),
            "lookup" => (
                &["spec", "source"],
                CaseBody::Lookup {
                    spec: {
                        let spec = field(obj, "spec", "$")?;
                        // `lookup_spec_from_dynamo_source` takes a ShapesSpec or None.
                        let ok = spec.is_null()
                            || spec
                                .as_object()
                                .is_some_and(|o| o.len() == 1 && o.contains_key("ShapesSpec"));
                        if !ok {
                            return Err(Error::at(
                                "$.spec",
                                "must be null or a `{\"ShapesSpec\": {...}}` object",
                            ));
                        }
                        p.expr(spec, "$.spec")?
                    },
                    source: p.source_root(field(obj, "source", "$")?, "$.source")?,
                },
            ),
            "source_name" => (
                &["source"],
                CaseBody::SourceName {
                    source: p.source_root(field(obj, "source", "$")?, "$.source")?,
                },
            ),
            other => {
                return Err(Error::at(
                    "$.kind",
                    format!("unknown kind `{other}` (expected `build`, `lookup` or `source_name`)"),
                ))
            }
        };
        for key in obj.keys() {
            if !["id", "kind", "vars"].contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
                return Err(Error::at(
                    "$",
                    format!("unknown field `{key}` for kind `{kind}`"),
                ));
            }
        }
        Ok(Case { id, vars, body })
    }

    /// The case line, as `torchspec gen` writes it.
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("id".into(), Json::String(self.id.clone()));
        m.insert("kind".into(), Json::String(self.body.kind().into()));
        if !self.vars.is_empty() {
            m.insert(
                "vars".into(),
                Json::Array(self.vars.iter().map(VarDecl::to_json).collect()),
            );
        }
        match &self.body {
            CaseBody::Build { value } => {
                m.insert("value".into(), value.to_json());
            }
            CaseBody::Lookup { spec, source } => {
                m.insert("spec".into(), spec.to_json());
                m.insert("source".into(), source.to_json());
            }
            CaseBody::SourceName { source } => {
                m.insert("source".into(), source.to_json());
            }
        }
        Json::Object(m)
    }
}

/// The direct sub-expressions of `e`.
fn children(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::List(items) | Expr::Tuple(items) | Expr::Op(_, items) => items.iter().collect(),
        Expr::Dict(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
        Expr::Slice(parts) => parts.iter().collect(),
        Expr::Spec(_, arg) => vec![arg],
        Expr::ShapesSpec {
            params,
            assumptions,
            globals,
        } => [params, assumptions, globals]
            .into_iter()
            .flatten()
            .map(|b| b.as_ref())
            .collect(),
        _ => vec![],
    }
}

fn field<'a>(obj: &'a Map<String, Json>, key: &str, path: &str) -> Result<&'a Json> {
    obj.get(key)
        .ok_or_else(|| Error::at(path, format!("missing `{key}`")))
}

fn parse_var(json: &Json, path: &str) -> Result<VarDecl> {
    let obj = json
        .as_object()
        .ok_or_else(|| Error::at(path, "a var must be a JSON object"))?;
    let kind = match obj.get("kind").and_then(Json::as_str) {
        Some("IntVar") => VarKind::IntVar,
        Some("ShapeVar") => VarKind::ShapeVar,
        _ => {
            return Err(Error::at(
                &format!("{path}.kind"),
                "expected `IntVar` or `ShapeVar`",
            ))
        }
    };
    let mut decl = VarDecl {
        kind,
        name: None,
        min: None,
        max: None,
        optimization_hint: None,
    };
    for (key, v) in obj {
        let p = format!("{path}.{key}");
        let slot = match key.as_str() {
            "kind" => continue,
            "name" => &mut decl.name,
            "min" => &mut decl.min,
            "max" => &mut decl.max,
            "optimization_hint" => &mut decl.optimization_hint,
            other => return Err(Error::at(path, format!("unknown var field `{other}`"))),
        };
        // The contract allows integers, strings and null here, nothing else.
        *slot = Some(match v {
            Json::Null | Json::String(_) => scalar(v, &p)?,
            Json::Number(n) if !is_float_text(&n.to_string()) => scalar(v, &p)?,
            _ => {
                return Err(Error::at(
                    &p,
                    "a var field must be an integer, a string or null",
                ))
            }
        });
    }
    Ok(decl)
}

/// A JSON scalar as a Python value.
fn scalar(json: &Json, path: &str) -> Result<Expr> {
    Ok(match json {
        Json::Null => Expr::None,
        Json::Bool(b) => Expr::Bool(*b),
        Json::Number(n) => number(n, path)?,
        Json::String(s) => Expr::Str(s.clone()),
        _ => {
            return Err(Error::at(
                path,
                "expected an integer, float, string, boolean or null",
            ))
        }
    })
}

fn is_float_text(text: &str) -> bool {
    text.contains(['.', 'e', 'E'])
}

/// A JSON number as Python's `json` module reads it: digits alone are an
/// int (of any size), anything with `.`, `e` or `E` is a float.
fn number(n: &Number, path: &str) -> Result<Expr> {
    let text = n.to_string();
    if is_float_text(&text) {
        // `1e400` reads as `inf`, as in Python.
        let f: f64 = text
            .parse()
            .map_err(|_| Error::at(path, format!("bad float `{text}`")))?;
        Ok(Expr::Float(f))
    } else {
        if text.trim_start_matches('-').len() > MAX_INT_DIGITS {
            return Err(Error::at(
                path,
                format!("integer literal has more than {MAX_INT_DIGITS} digits, which Python's `json` refuses"),
            ));
        }
        let i: BigInt = text
            .parse()
            .map_err(|_| Error::at(path, format!("bad integer `{text}`")))?;
        Ok(Expr::Int(i))
    }
}

struct Parser {
    nvars: usize,
}

fn array<'a>(json: &'a Json, path: &str) -> Result<&'a Vec<Json>> {
    json.as_array()
        .ok_or_else(|| Error::at(path, "expected an array"))
}

impl Parser {
    fn exprs(&self, items: &[Json], path: &str) -> Result<Vec<Expr>> {
        items
            .iter()
            .enumerate()
            .map(|(i, v)| self.expr(v, &format!("{path}[{i}]")))
            .collect()
    }

    fn expr(&self, json: &Json, path: &str) -> Result<Expr> {
        let obj = match json {
            Json::Array(items) => return Ok(Expr::List(self.exprs(items, path)?)),
            Json::Object(obj) => obj,
            other => return scalar(other, path),
        };
        if obj.contains_key("op") {
            return self.op(obj, path);
        }
        let mut it = obj.iter();
        let (key, arg) = match (it.next(), it.next()) {
            (Some(kv), None) => kv,
            _ => {
                return Err(Error::at(
                    path,
                    format!(
                        "a VALUE object must have exactly one key, found {}",
                        obj.len()
                    ),
                ))
            }
        };
        let sub = format!("{path}.{key}");
        Ok(match key.as_str() {
            "tuple" => Expr::Tuple(self.exprs(array(arg, &sub)?, &sub)?),
            "dict" => {
                let pairs = array(arg, &sub)?;
                let mut out = Vec::with_capacity(pairs.len());
                for (i, pair) in pairs.iter().enumerate() {
                    let p = format!("{sub}[{i}]");
                    match pair.as_array().map(Vec::as_slice) {
                        Some([k, v]) => out.push((
                            self.expr(k, &format!("{p}[0]"))?,
                            self.expr(v, &format!("{p}[1]"))?,
                        )),
                        _ => {
                            return Err(Error::at(&p, "a dict entry must be a `[key, value]` pair"))
                        }
                    }
                }
                Expr::Dict(out)
            }
            "slice" => match array(arg, &sub)?.as_slice() {
                [a, b, c] => Expr::Slice(Box::new([
                    self.expr(a, &format!("{sub}[0]"))?,
                    self.expr(b, &format!("{sub}[1]"))?,
                    self.expr(c, &format!("{sub}[2]"))?,
                ])),
                _ => return Err(Error::at(&sub, "`slice` takes `[start, stop, step]`")),
            },
            "var" => {
                let i = arg
                    .as_u64()
                    .ok_or_else(|| Error::at(&sub, "`var` takes a var index"))?;
                if i >= self.nvars as u64 {
                    return Err(Error::at(
                        &sub,
                        format!("var index {i} out of range ({} vars)", self.nvars),
                    ));
                }
                Expr::Var(i as usize)
            }
            "ShapesSpec" => {
                let o = arg
                    .as_object()
                    .ok_or_else(|| Error::at(&sub, "`ShapesSpec` takes an object"))?;
                if let Some(k) = o
                    .keys()
                    .find(|k| !["params", "assumptions", "globals"].contains(&k.as_str()))
                {
                    return Err(Error::at(
                        &sub,
                        format!("unknown `ShapesSpec` argument `{k}`"),
                    ));
                }
                let get = |k: &str| -> Result<Option<Box<Expr>>> {
                    o.get(k)
                        .map(|v| self.expr(v, &format!("{sub}.{k}")).map(Box::new))
                        .transpose()
                };
                Expr::ShapesSpec {
                    params: get("params")?,
                    assumptions: get("assumptions")?,
                    globals: get("globals")?,
                }
            }
            name => {
                if let Some(ctor) = SpecCtor::ALL.iter().find(|c| c.name() == name) {
                    Expr::Spec(*ctor, Box::new(self.expr(arg, &sub)?))
                } else if SourceClass::from_name(name).is_some() {
                    return Err(Error::at(
                        path,
                        format!("a SOURCE (`{name}`) cannot stand where a VALUE is expected"),
                    ));
                } else {
                    return Err(Error::at(path, format!("unknown VALUE form `{name}`")));
                }
            }
        })
    }

    fn op(&self, obj: &Map<String, Json>, path: &str) -> Result<Expr> {
        if let Some(k) = obj.keys().find(|k| !["op", "args"].contains(&k.as_str())) {
            return Err(Error::at(path, format!("unknown field `{k}` beside `op`")));
        }
        let name = obj["op"]
            .as_str()
            .ok_or_else(|| Error::at(&format!("{path}.op"), "`op` must be a string"))?;
        let op = Op::from_name(name)
            .ok_or_else(|| Error::at(&format!("{path}.op"), format!("unknown op `{name}`")))?;
        let sub = format!("{path}.args");
        let args = array(field(obj, "args", path)?, &sub)?;
        if args.len() != op.arity() {
            return Err(Error::at(
                &sub,
                format!(
                    "`{name}` takes {} argument(s), found {}",
                    op.arity(),
                    args.len()
                ),
            ));
        }
        Ok(Expr::Op(op, self.exprs(args, &sub)?))
    }

    fn source_root(&self, json: &Json, path: &str) -> Result<SourceExpr> {
        let obj = json.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
            Error::at(
                path,
                "a SOURCE must be an object with one key, its class name",
            )
        })?;
        let (name, arg) = obj.iter().next().expect("one key");
        let class = SourceClass::from_name(name)
            .ok_or_else(|| Error::at(path, format!("unknown source class `{name}`")))?;
        let path = format!("{path}.{name}");
        let given = arg
            .as_object()
            .ok_or_else(|| Error::at(&path, "source fields must be an object"))?;
        let table = class.fields();
        if let Some(k) = given.keys().find(|k| !table.iter().any(|(f, _, _)| f == k)) {
            return Err(Error::at(
                &path,
                format!("unknown field `{k}` for `{name}`"),
            ));
        }
        let mut fields = Vec::with_capacity(given.len());
        for &(field, kind, required) in table {
            let Some(v) = given.get(field) else {
                if required {
                    return Err(Error::at(&path, format!("missing field `{field}`")));
                }
                continue;
            };
            let p = format!("{path}.{field}");
            let value = match kind {
                FieldKind::Source => SourceField::Source(self.source_root(v, &p)?),
                FieldKind::SourceOrValue if is_source_object(v) => {
                    SourceField::Source(self.source_root(v, &p)?)
                }
                FieldKind::SourceOrValue | FieldKind::Value => {
                    SourceField::Value(self.expr(v, &p)?)
                }
                FieldKind::Str => SourceField::Str(
                    v.as_str()
                        .ok_or_else(|| Error::at(&p, "must be a string"))?
                        .into(),
                ),
                FieldKind::Bool => SourceField::Bool(
                    v.as_bool()
                        .ok_or_else(|| Error::at(&p, "must be a boolean"))?,
                ),
                FieldKind::Int => match v {
                    Json::Number(n) => match number(n, &p)? {
                        Expr::Int(i) => SourceField::Int(i),
                        _ => return Err(Error::at(&p, "must be an integer")),
                    },
                    _ => return Err(Error::at(&p, "must be an integer")),
                },
            };
            fields.push((field, value));
        }
        Ok(SourceExpr { class, fields })
    }
}

/// A one-key object naming a source class.
fn is_source_object(json: &Json) -> bool {
    json.as_object()
        .is_some_and(|o| o.len() == 1 && o.keys().all(|k| SourceClass::from_name(k).is_some()))
}

impl VarDecl {
    fn to_json(&self) -> Json {
        let mut m = Map::new();
        m.insert("kind".into(), Json::String(self.kind.name().into()));
        for (k, v) in [
            ("name", &self.name),
            ("min", &self.min),
            ("max", &self.max),
            ("optimization_hint", &self.optimization_hint),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), v.to_json());
            }
        }
        Json::Object(m)
    }
}

fn one(key: &str, v: Json) -> Json {
    let mut m = Map::new();
    m.insert(key.into(), v);
    Json::Object(m)
}

/// A JSON number from its text (the crate keeps numbers as text).
pub(crate) fn json_number(text: &str) -> Json {
    Json::Number(serde_json::from_str(text).expect("a valid JSON number"))
}

impl Expr {
    pub fn to_json(&self) -> Json {
        match self {
            Expr::None => Json::Null,
            Expr::Bool(b) => Json::Bool(*b),
            Expr::Int(i) => json_number(&i.to_string()),
            Expr::Float(f) if f.is_finite() => json_number(&crate::pyval::float_repr(*f)),
            // Out of range, as Python's `json` reads it back as inf.
            Expr::Float(f) => json_number(if *f > 0.0 { "1e400" } else { "-1e400" }),
            Expr::Str(s) => Json::String(s.clone()),
            Expr::List(items) => Json::Array(items.iter().map(Expr::to_json).collect()),
            Expr::Tuple(items) => one(
                "tuple",
                Json::Array(items.iter().map(Expr::to_json).collect()),
            ),
            Expr::Dict(pairs) => one(
                "dict",
                Json::Array(
                    pairs
                        .iter()
                        .map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()]))
                        .collect(),
                ),
            ),
            Expr::Slice(parts) => one(
                "slice",
                Json::Array(parts.iter().map(Expr::to_json).collect()),
            ),
            Expr::Var(i) => one("var", Json::from(*i)),
            Expr::Op(op, args) => {
                let mut m = Map::new();
                m.insert("op".into(), Json::String(op.name().into()));
                m.insert(
                    "args".into(),
                    Json::Array(args.iter().map(Expr::to_json).collect()),
                );
                Json::Object(m)
            }
            Expr::Spec(ctor, arg) => one(ctor.name(), arg.to_json()),
            Expr::ShapesSpec {
                params,
                assumptions,
                globals,
            } => {
                let mut m = Map::new();
                for (k, v) in [
                    ("params", params),
                    ("assumptions", assumptions),
                    ("globals", globals),
                ] {
                    if let Some(v) = v {
                        m.insert(k.into(), v.to_json());
                    }
                }
                one("ShapesSpec", Json::Object(m))
            }
        }
    }
}

impl SourceExpr {
    pub fn to_json(&self) -> Json {
        let mut m = Map::new();
        for (k, f) in &self.fields {
            let v = match f {
                SourceField::Source(s) => s.to_json(),
                SourceField::Value(e) => e.to_json(),
                SourceField::Str(s) => Json::String(s.clone()),
                SourceField::Bool(b) => Json::Bool(*b),
                SourceField::Int(i) => json_number(&i.to_string()),
            };
            m.insert((*k).to_string(), v);
        }
        one(self.class.name(), Json::Object(m))
    }
}
