//! The `export_spec` case kind's wire form (`shared/export-spec-format.md`):
//! its own keys, as `read/export_spec.rs` reads them and `torchspec gen`
//! writes them; `eval/export_spec.rs` evaluates it.

use serde_json::{Map, Value as Json};

use super::{Expr, TensorExpr};
use torchspec_spec_export::{Api, Body, ParamKind};

/// The dtype names a case may give a tensor, and what `str(dtype)` shows
/// for each (`float` is `torch.float32`).
pub const DTYPES: [(&str, &str); 24] = [
    ("bool", "bool"),
    ("uint8", "uint8"),
    ("int8", "int8"),
    ("int16", "int16"),
    ("short", "int16"),
    ("int32", "int32"),
    ("int", "int32"),
    ("int64", "int64"),
    ("long", "int64"),
    ("uint16", "uint16"),
    ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("float16", "float16"),
    ("half", "float16"),
    ("bfloat16", "bfloat16"),
    ("float32", "float32"),
    ("float", "float32"),
    ("float64", "float64"),
    ("double", "float64"),
    ("complex64", "complex64"),
    ("cfloat", "complex64"),
    ("complex128", "complex128"),
    ("cdouble", "complex128"),
    ("float8_e4m3fn", "float8_e4m3fn"),
];

/// One parameter of `signature`.
#[derive(Clone, Debug, PartialEq)]
pub struct SigParam {
    pub name: String,
    pub kind: ParamKind,
    pub default: Option<Expr>,
}

/// `module`: parameters and buffers by dotted name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ModuleDecl {
    pub parameters: Option<Vec<(String, TensorExpr)>>,
    pub buffers: Option<Vec<(String, TensorExpr)>>,
}

/// One entry of `calls`.
#[derive(Clone, Debug, PartialEq)]
pub struct LaterCallExpr {
    pub args: Expr,
    pub kwargs: Option<Expr>,
}

/// An `export_spec` case's own keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSpecCase {
    pub api: Api,
    pub signature: Vec<SigParam>,
    /// `args`: a `{"tuple": [...]}`.
    pub args: Expr,
    /// `kwargs`: a `{"dict": [...]}`, if given.
    pub kwargs: Option<Expr>,
    pub spec: Option<Expr>,
    pub decorator: Option<Expr>,
    pub module: Option<ModuleDecl>,
    pub body: Option<Body>,
    pub options: Option<Vec<(String, Expr)>>,
    pub calls: Option<Vec<LaterCallExpr>>,
}

fn kind_name(k: ParamKind) -> &'static str {
    match k {
        ParamKind::PositionalOnly => "POSITIONAL_ONLY",
        ParamKind::PositionalOrKeyword => "POSITIONAL_OR_KEYWORD",
        ParamKind::VarPositional => "VAR_POSITIONAL",
        ParamKind::KeywordOnly => "KEYWORD_ONLY",
        ParamKind::VarKeyword => "VAR_KEYWORD",
    }
}

fn tensors_json(list: &[(String, TensorExpr)]) -> Json {
    Json::Array(
        list.iter()
            .map(|(n, t)| {
                Json::Array(vec![
                    Json::String(n.clone()),
                    Expr::Tensor(Box::new(t.clone())).to_json(),
                ])
            })
            .collect(),
    )
}

impl ExportSpecCase {
    /// The case's own keys, as `torchspec gen` writes them.
    pub fn write_fields(&self, m: &mut Map<String, Json>) {
        m.insert("api".into(), Json::String(self.api.name().into()));
        let sig = self
            .signature
            .iter()
            .map(|p| {
                let mut v = vec![
                    Json::String(p.name.clone()),
                    Json::String(kind_name(p.kind).into()),
                ];
                if let Some(d) = &p.default {
                    let mut o = Map::new();
                    o.insert("default".into(), d.to_json());
                    v.push(Json::Object(o));
                }
                Json::Array(v)
            })
            .collect();
        m.insert("signature".into(), Json::Array(sig));
        m.insert("args".into(), self.args.to_json());
        let opt = |m: &mut Map<String, Json>, k: &str, e: &Option<Expr>| {
            if let Some(e) = e {
                m.insert(k.into(), e.to_json());
            }
        };
        opt(m, "kwargs", &self.kwargs);
        opt(m, "spec", &self.spec);
        opt(m, "decorator", &self.decorator);
        if let Some(md) = &self.module {
            let mut o = Map::new();
            if let Some(p) = &md.parameters {
                o.insert("parameters".into(), tensors_json(p));
            }
            if let Some(b) = &md.buffers {
                o.insert("buffers".into(), tensors_json(b));
            }
            m.insert("module".into(), Json::Object(o));
        }
        if let Some(b) = self.body {
            let name = if b == Body::TouchAll {
                "touch_all"
            } else {
                "touch_tensors"
            };
            m.insert("body".into(), Json::String(name.into()));
        }
        if let Some(opts) = &self.options {
            let o = opts.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
            m.insert("options".into(), Json::Object(o));
        }
        if let Some(calls) = &self.calls {
            let c = calls
                .iter()
                .map(|c| {
                    let mut o = Map::new();
                    o.insert("args".into(), c.args.to_json());
                    if let Some(k) = &c.kwargs {
                        o.insert("kwargs".into(), k.to_json());
                    }
                    Json::Object(o)
                })
                .collect();
            m.insert("calls".into(), Json::Array(c));
        }
    }
}
