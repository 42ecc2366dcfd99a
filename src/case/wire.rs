//! Case format v1 (`shared/case-format.md`): the wire form of one case line
//! (read by `read.rs`), and the case written back (for `torchspec gen`).

use num_bigint::BigInt;
use serde_json::{Map, Value as Json};

use crate::pyval::ops::Op;
use crate::source::SourceClass;
use crate::spec::VarKind;

pub mod export_spec;

/// One case line.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub id: String,
    pub vars: Vec<VarDecl>,
    pub body: CaseBody,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CaseBody {
    Build {
        value: Expr,
    },
    Lookup {
        spec: Expr,
        source: SourceExpr,
    },
    SourceName {
        source: SourceExpr,
    },
    /// What a spec does to export, make_fx and compile
    /// (`shared/export-spec-format.md`).
    ExportSpec(Box<export_spec::ExportSpecCase>),
}

impl CaseBody {
    /// The case-format `kind`.
    pub fn kind(&self) -> &'static str {
        self.case_kind().name()
    }

    /// The kind of case this is.
    pub fn case_kind(&self) -> CaseKind {
        match self {
            CaseBody::Build { .. } => CaseKind::Build,
            CaseBody::Lookup { .. } => CaseKind::Lookup,
            CaseBody::SourceName { .. } => CaseKind::SourceName,
            CaseBody::ExportSpec(_) => CaseKind::ExportSpec,
        }
    }
}

/// The case kinds (`shared/case-format.md`), in the order the format lists
/// them, with the top-level keys each takes. This is the one declaration of
/// them: the oracle reads them from `oracle/names.json`, written from it
/// (`torchspec::names`, kept in step by `tests/it/names.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaseKind {
    Build,
    Lookup,
    SourceName,
    ExportSpec,
}

impl CaseKind {
    /// Every kind, in the order the format lists them.
    pub const ALL: [CaseKind; 4] = [
        CaseKind::Build,
        CaseKind::Lookup,
        CaseKind::SourceName,
        CaseKind::ExportSpec,
    ];

    /// The keys every kind takes (`vars` is optional).
    pub const COMMON_KEYS: [&'static str; 3] = ["id", "kind", "vars"];

    /// The keys every kind requires.
    pub const COMMON_REQUIRED: [&'static str; 2] = ["id", "kind"];

    /// The case-format `kind`.
    pub const fn name(self) -> &'static str {
        match self {
            CaseKind::Build => "build",
            CaseKind::Lookup => "lookup",
            CaseKind::SourceName => "source_name",
            CaseKind::ExportSpec => "export_spec",
        }
    }

    /// The kind named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<CaseKind> {
        CaseKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The top-level keys it takes beyond [`CaseKind::COMMON_KEYS`]
    /// (`shared/case-format.md`, `shared/export-spec-format.md`).
    pub const fn keys(self) -> &'static [&'static str] {
        match self {
            CaseKind::Build => &["value"],
            CaseKind::Lookup => &["spec", "source"],
            CaseKind::SourceName => &["source"],
            CaseKind::ExportSpec => &[
                "api",
                "signature",
                "args",
                "kwargs",
                "spec",
                "decorator",
                "module",
                "body",
                "options",
                "calls",
            ],
        }
    }

    /// The keys it requires beyond [`CaseKind::COMMON_REQUIRED`], in the
    /// order the oracle checks them (its first missing one is the error).
    pub const fn required(self) -> &'static [&'static str] {
        match self {
            CaseKind::Build => &["value"],
            CaseKind::Lookup => &["spec", "source"],
            CaseKind::SourceName => &["source"],
            CaseKind::ExportSpec => &["api", "signature", "args"],
        }
    }

    /// Whether a case of this kind takes the top-level key `key`.
    pub fn takes(self, key: &str) -> bool {
        CaseKind::COMMON_KEYS.contains(&key) || self.keys().contains(&key)
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
    /// An input tensor (`export_spec` inputs only): `{"tensor": {"shape",
    /// "dtype", "data"?}}`, zeros when `data` is absent.
    Tensor(Box<TensorExpr>),
    /// A registered pytree type (`export_spec` inputs only):
    /// `{"namedtuple" | "dataclass": {"type": NAME, "fields": [[f, VALUE], ...]}}`.
    Pytree(Box<PytreeExpr>),
}

/// `{"tensor": {...}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorExpr {
    pub shape: Vec<i64>,
    pub dtype: String,
    /// `data` as written (only its presence matters before a kernel).
    pub data: Option<Json>,
}

/// `{"namedtuple" | "dataclass": {"type", "fields"}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct PytreeExpr {
    /// Whether it is a dataclass (else a namedtuple).
    pub dataclass: bool,
    /// The serialized type name (`torchspec.zoo.Point`).
    pub type_name: String,
    pub fields: Vec<(String, Expr)>,
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
            CaseBody::ExportSpec(_) => vec![],
        };
        roots.into_iter().any(derived)
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
            CaseBody::ExportSpec(es) => es.write_fields(&mut m),
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
        Expr::Pytree(p) => p.fields.iter().map(|(_, v)| v).collect(),
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
            Expr::Tensor(t) => {
                let mut m = Map::new();
                m.insert(
                    "shape".into(),
                    Json::Array(t.shape.iter().map(|d| Json::from(*d)).collect()),
                );
                m.insert("dtype".into(), Json::String(t.dtype.clone()));
                if let Some(d) = &t.data {
                    m.insert("data".into(), d.clone());
                }
                one("tensor", Json::Object(m))
            }
            Expr::Pytree(p) => {
                let mut m = Map::new();
                m.insert("type".into(), Json::String(p.type_name.clone()));
                let fields = p
                    .fields
                    .iter()
                    .map(|(f, v)| Json::Array(vec![Json::String(f.clone()), v.to_json()]))
                    .collect();
                m.insert("fields".into(), Json::Array(fields));
                one(
                    if p.dataclass {
                        "dataclass"
                    } else {
                        "namedtuple"
                    },
                    Json::Object(m),
                )
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
