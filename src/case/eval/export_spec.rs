//! The `export_spec` case kind's evaluation (`shared/export-spec-format.md`):
//! the case language up to the API call, then `torchspec_spec_export`, and
//! its result line. Its wire form is `wire/export_spec.rs`.

use serde_json::{Map, Value as Json};

use super::Env;
use crate::case::result::{enc, Outcome};
use crate::case::wire::export_spec::{ExportSpecCase, DTYPES};
use crate::case::wire::{PytreeExpr, TensorExpr, VarDecl};
use crate::export::inputs::probe::Tensor;
use crate::export::pytree::{Container, Registry};
use crate::pyval::{PyResult, Raise, Value};
use torchspec_spec_export::{
    evaluate, Body, Call, Dim, LaterCall, LaterOutcome, Param, Placeholder, Traced, Wiring,
};

/// The zoo's registered pytree input types (`oracle/zoo_types.py`).
fn registry() -> Registry {
    let mut r = Registry::torch();
    r.register_namedtuple("torchspec.zoo.Point", "zoo_types", "Point", &["x", "y"]);
    r.register_dataclass(
        "torchspec.zoo.Pair",
        "zoo_types",
        "Pair",
        &["first", "scale"],
    );
    r
}

/// An input tensor's value.
pub fn tensor_value(t: &TensorExpr) -> PyResult<Value> {
    let dtype = DTYPES
        .iter()
        .find(|(n, _)| *n == t.dtype)
        .map(|(_, shown)| *shown)
        .ok_or_else(|| Raise::unsupported(format!("the dtype `{}`", t.dtype)))?;
    Ok(Value::object(Tensor {
        shape: t.shape.clone(),
        dtype: dtype.to_string(),
    }))
}

/// A registered pytree instance built from its fields (`cls(**fields)`).
pub fn pytree_value(env: &Env, p: &PytreeExpr) -> PyResult<Value> {
    let reg = registry();
    let cls = reg
        .lookup(&p.type_name)
        .cloned()
        .ok_or_else(|| Raise::unsupported(format!("the pytree type `{}`", p.type_name)))?;
    let mut values = Vec::with_capacity(p.fields.len());
    for (f, v) in &p.fields {
        values.push((f.clone(), env.eval(v)?));
    }
    if p.dataclass {
        if values.len() != cls.fields().map_or(0, <[String]>::len) {
            return Err(Raise::unsupported("a dataclass with fields missing"));
        }
        return Container::dataclass(cls, &values);
    }
    let fields = cls.fields().unwrap_or(&[]).to_vec();
    let ordered = fields
        .iter()
        .map(|f| values.iter().find(|(n, _)| n == f).map(|(_, v)| v.clone()))
        .collect::<Option<Vec<_>>>();
    match ordered {
        Some(vs) if vs.len() == values.len() => Container::namedtuple(cls, vs),
        _ => Err(Raise::unsupported(
            "namedtuple fields that do not match its class",
        )),
    }
}

fn pairs(v: &Value) -> PyResult<Vec<(Value, Value)>> {
    match v {
        Value::Dict(d) => Ok(d.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        _ => Err(Raise::unsupported("kwargs that are not a dict")),
    }
}

fn items(v: &Value) -> PyResult<Vec<Value>> {
    match v {
        Value::Tuple(t) => Ok(t.to_vec()),
        _ => Err(Raise::unsupported("args that are not a tuple")),
    }
}

fn module_tensors(list: &Option<Vec<(String, TensorExpr)>>) -> PyResult<Vec<(String, Value)>> {
    list.iter()
        .flatten()
        .map(|(n, t)| Ok((n.clone(), tensor_value(t)?)))
        .collect()
}

/// Everything the case evaluates before the API call, in the contract's
/// order: spec, decorator, args, kwargs, options, defaults, module tensors.
fn build(env: &Env, es: &ExportSpecCase) -> PyResult<Call> {
    let spec = es.spec.as_ref().map(|e| env.eval(e)).transpose()?;
    let decorator = es.decorator.as_ref().map(|e| env.eval(e)).transpose()?;
    let args = items(&env.eval(&es.args)?)?;
    let kwargs = match &es.kwargs {
        Some(k) => pairs(&env.eval(k)?)?,
        None => Vec::new(),
    };
    let mut options = Vec::new();
    for (k, v) in es.options.iter().flatten() {
        options.push((k.clone(), env.eval(v)?));
    }
    let mut signature = Vec::with_capacity(es.signature.len());
    for p in &es.signature {
        let default = p.default.as_ref().map(|d| env.eval(d)).transpose()?;
        signature.push(Param {
            name: p.name.clone(),
            kind: p.kind,
            default,
        });
    }
    let md = es.module.clone().unwrap_or_default();
    let mut calls = Vec::new();
    for c in es.calls.iter().flatten() {
        calls.push(LaterCall {
            args: items(&env.eval(&c.args)?)?,
            kwargs: match &c.kwargs {
                Some(k) => pairs(&env.eval(k)?)?,
                None => Vec::new(),
            },
        });
    }
    Ok(Call {
        api: es.api,
        signature,
        args,
        kwargs,
        spec,
        decorator,
        parameters: module_tensors(&md.parameters)?,
        buffers: module_tensors(&md.buffers)?,
        body: es.body.unwrap_or(Body::TouchAll),
        options,
        calls,
    })
}

/// Evaluate an `export_spec` case: its outcome and its `wiring`.
pub fn eval_export_spec(vars: &[VarDecl], es: &ExportSpecCase) -> (PyResult<Json>, Json) {
    let (result, wiring) = match Env::new(vars).and_then(|env| build(&env, es)) {
        Err(e) => (Err(e), Vec::new()),
        Ok(call) => {
            let out = evaluate(&call);
            (out.result, out.wiring)
        }
    };
    (result.and_then(|t| traced_json(&t)), wiring_json(&wiring))
}

fn wiring_json(w: &[Wiring]) -> Json {
    let s = |x: &str| Json::String(x.to_string());
    Json::Array(
        w.iter()
            .map(|e| match e {
                Wiring::Slot(size, spec) => Json::Array(vec![s("slot"), s(size), s(spec)]),
                Wiring::Emit(b) => Json::Array(vec![s("emit"), s(b)]),
            })
            .collect(),
    )
}

fn num(i: &num_bigint::BigInt) -> Json {
    crate::case::wire::json_number(&i.to_string())
}

fn placeholder_json(p: &Placeholder) -> PyResult<Json> {
    let one = |k: &str, v: Json| {
        let mut m = Map::new();
        m.insert(k.into(), v);
        Json::Object(m)
    };
    Ok(match p {
        Placeholder::Tensor(dims, dtype) => {
            let shape = dims
                .iter()
                .map(|d| match d {
                    Dim::Int(i) => num(i),
                    Dim::Expr(s) => Json::String(s.clone()),
                })
                .collect();
            let mut t = Map::new();
            t.insert("shape".into(), Json::Array(shape));
            t.insert("dtype".into(), Json::String(dtype.clone()));
            one("tensor", Json::Object(t))
        }
        Placeholder::SymInt(s) => one("sym_int", Json::String(s.clone())),
        Placeholder::Const(v) => one("const", enc(v)?),
    })
}

/// The `ok` object of a traced graph.
fn traced_json(t: &Traced) -> PyResult<Json> {
    let mut ok = Map::new();
    let phs = t
        .placeholders
        .iter()
        .map(|(n, p)| {
            Ok(Json::Array(vec![
                Json::String(n.clone()),
                placeholder_json(p)?,
            ]))
        })
        .collect::<PyResult<Vec<_>>>()?;
    ok.insert("placeholders".into(), Json::Array(phs));
    if let Some(rc) = &t.range_constraints {
        let bound = |b: &Option<num_bigint::BigInt>| b.as_ref().map_or(Json::Null, num);
        let m = rc
            .iter()
            .map(|(s, lo, hi)| (s.clone(), Json::Array(vec![bound(lo), bound(hi)])))
            .collect();
        ok.insert("range_constraints".into(), Json::Object(m));
    }
    ok.insert(
        "asserts".into(),
        Json::Array(t.asserts.iter().map(|a| Json::String(a.clone())).collect()),
    );
    if let Some(calls) = &t.calls {
        let c = calls
            .iter()
            .map(|c| match c {
                LaterOutcome::Recompiled(b) => {
                    let mut m = Map::new();
                    m.insert("recompiled".into(), Json::Bool(*b));
                    Json::Object(m)
                }
                LaterOutcome::Error(e) => {
                    let mut err = Map::new();
                    err.insert("type".into(), Json::String(e.type_name.clone()));
                    err.insert("message".into(), Json::String(e.message.clone()));
                    let mut m = Map::new();
                    m.insert("error".into(), Json::Object(err));
                    Json::Object(m)
                }
            })
            .collect();
        ok.insert("calls".into(), Json::Array(c));
    }
    Ok(Json::Object(ok))
}

/// A Python outcome as a result outcome.
pub fn outcome_of(r: PyResult<Json>) -> Outcome {
    match r {
        Ok(j) => Outcome::Ok(j),
        Err(Raise::Exception(e)) => Outcome::Error(e),
        Err(Raise::Unsupported(why)) => Outcome::Unsupported(why),
    }
}
