//! Reads an `export_spec` case's own keys (`shared/export-spec-format.md`):
//! each is taken whole as JSON while the line is read, then checked and
//! turned into wire types once `vars` is known. VALUEs go through the same
//! forms as every other VALUE, with the input forms (`tensor`,
//! `namedtuple`, `dataclass`, `$float`) allowed.

use serde::de::{self, DeserializeSeed};
use serde_json::Value as Json;

use super::{Ctx, ExprForm, Path, S};
use crate::case::wire::export_spec::{ExportSpecCase, LaterCallExpr, ModuleDecl, SigParam, DTYPES};
use crate::case::wire::{Expr, PytreeExpr, TensorExpr};
use crate::error::{Error, Result};
use torchspec_spec_export::{Api, Body, ParamKind};

/// The VALUE forms only an `export_spec` input may take.
pub(super) const INPUT_FORMS: [&str; 4] = ["tensor", "namedtuple", "dataclass", "$float"];

fn fail<T>(path: &Path, message: impl Into<String>) -> Result<T> {
    Err(Error::at(&path.render(), message))
}

/// A VALUE read from `json` at `path`; `inputs` allows the input forms.
fn value(ctx: &Ctx, json: &Json, path: &Path, inputs: bool) -> Result<Expr> {
    let before = ctx.inputs.replace(inputs);
    let read = S(ExprForm { ctx, path }).deserialize(json);
    ctx.inputs.set(before);
    read.map_err(|e| {
        ctx.error
            .take()
            .unwrap_or_else(|| Error::at(&path.render(), format!("invalid VALUE: {e}")))
    })
}

/// An input form's VALUE, read inside a VALUE (errors recorded in `ctx`).
pub(super) fn input_form<E: de::Error>(
    ctx: &Ctx,
    path: &Path,
    form: &str,
    v: &Json,
) -> Result<Expr, E> {
    let read = match form {
        "$float" => match v.as_str() {
            Some("nan") => Ok(Expr::Float(f64::NAN)),
            Some("inf") => Ok(Expr::Float(f64::INFINITY)),
            Some("-inf") => Ok(Expr::Float(f64::NEG_INFINITY)),
            _ => fail(path, "`$float` takes \"nan\", \"inf\" or \"-inf\""),
        },
        "tensor" => tensor(v, path).map(|t| Expr::Tensor(Box::new(t))),
        _ => pytree(ctx, v, path, form == "dataclass"),
    };
    read.map_err(|e| {
        let mut slot = ctx.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
        E::custom("case file error")
    })
}

fn tensor(v: &Json, path: &Path) -> Result<TensorExpr> {
    let Some(obj) = v.as_object() else {
        return fail(
            path,
            "a tensor is an object with `shape`, `dtype` and optional `data`",
        );
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "shape" | "dtype" | "data"))
    {
        return fail(path, format!("unknown tensor field `{k}`"));
    }
    let shape = match obj.get("shape").and_then(Json::as_array) {
        Some(dims) => dims
            .iter()
            .map(|d| d.as_i64().filter(|d| *d >= 0))
            .collect::<Option<Vec<i64>>>(),
        None => None,
    };
    let Some(shape) = shape else {
        return fail(
            &path.key("shape"),
            "must be an array of non-negative integers",
        );
    };
    let dtype = match obj.get("dtype").and_then(Json::as_str) {
        Some(d) if DTYPES.iter().any(|(n, _)| *n == d) => d.to_string(),
        _ => {
            let names: Vec<&str> = DTYPES.iter().map(|(n, _)| *n).collect();
            return fail(&path.key("dtype"), format!("must be one of {names:?}"));
        }
    };
    Ok(TensorExpr {
        shape,
        dtype,
        data: obj.get("data").cloned(),
    })
}

fn pytree(ctx: &Ctx, v: &Json, path: &Path, dataclass: bool) -> Result<Expr> {
    let obj = v.as_object().filter(|o| o.len() == 2);
    let (Some(Json::String(ty)), Some(Json::Array(fields))) = (
        obj.and_then(|o| o.get("type")),
        obj.and_then(|o| o.get("fields")),
    ) else {
        return fail(
            path,
            "takes exactly `type` (a string) and `fields` (an array)",
        );
    };
    let fp = path.key("fields");
    let mut out = Vec::with_capacity(fields.len().min(64));
    for (i, f) in fields.iter().enumerate() {
        let ip = fp.index(i);
        let Some([Json::String(name), val]) = f.as_array().map(Vec::as_slice) else {
            return fail(&ip, "a field is a `[name, VALUE]` pair");
        };
        out.push((name.clone(), value(ctx, val, &ip.index(1), true)?));
    }
    Ok(Expr::Pytree(Box::new(PytreeExpr {
        dataclass,
        type_name: ty.clone(),
        fields: out,
    })))
}

fn signature(ctx: &Ctx, v: &Json, path: &Path) -> Result<Vec<SigParam>> {
    let Some(params) = v.as_array() else {
        return fail(path, "must be an array of parameters");
    };
    let mut out = Vec::with_capacity(params.len().min(64));
    for (i, p) in params.iter().enumerate() {
        let ip = path.index(i);
        let parts = p.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let (name, kind, default) = match parts {
            [Json::String(n), Json::String(k)] => (n, k, None),
            [Json::String(n), Json::String(k), Json::Object(d)]
                if d.len() == 1 && d.contains_key("default") =>
            {
                (n, k, d.get("default"))
            }
            _ => {
                return fail(
                    &ip,
                    "a parameter is [name, KIND] or [name, KIND, {\"default\": VALUE}]",
                )
            }
        };
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !ident || name == "self" || name.starts_with("__") {
            return fail(
                &ip.index(0),
                "a parameter name must be an identifier, not self, not starting with __",
            );
        }
        let Some(kind) = ParamKind::from_name(kind) else {
            return fail(&ip.index(1), "an inspect.Parameter kind name");
        };
        let default = match default {
            Some(d) => Some(value(ctx, d, &ip.index(2).key("default"), true)?),
            None => None,
        };
        out.push(SigParam {
            name: name.clone(),
            kind,
            default,
        });
    }
    Ok(out)
}

fn wrapped(ctx: &Ctx, v: &Json, path: &Path, key: &str) -> Result<Expr> {
    if !v
        .as_object()
        .is_some_and(|o| o.len() == 1 && o.contains_key(key))
    {
        return fail(path, format!("must be a {{\"{key}\": [...]}}"));
    }
    value(ctx, v, path, true)
}

fn module(v: &Json, path: &Path) -> Result<ModuleDecl> {
    let Some(obj) = v.as_object() else {
        return fail(path, "an object with `parameters` and `buffers`");
    };
    let mut decl = ModuleDecl::default();
    for (k, list) in obj {
        let kp = path.key(k);
        let slot = match k.as_str() {
            "parameters" => &mut decl.parameters,
            "buffers" => &mut decl.buffers,
            _ => return fail(&kp, "unknown module field"),
        };
        let Some(items) = list.as_array() else {
            return fail(&kp, "must be an array");
        };
        let mut out = Vec::with_capacity(items.len().min(64));
        for (i, item) in items.iter().enumerate() {
            let ip = kp.index(i);
            let Some([Json::String(name), Json::Object(t)]) = item.as_array().map(Vec::as_slice)
            else {
                return fail(&ip, "an entry is [dotted.name, {\"tensor\": ...}]");
            };
            let ok_name = !name.is_empty()
                && name.split('.').all(|p| {
                    p.chars()
                        .next()
                        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
                        && p.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                });
            match (ok_name, t.get("tensor")) {
                (true, Some(tv)) if t.len() == 1 => {
                    out.push((name.clone(), tensor(tv, &ip.index(1).key("tensor"))?))
                }
                _ => return fail(&ip, "an entry is [dotted.name, {\"tensor\": ...}]"),
            }
        }
        *slot = Some(out);
    }
    Ok(decl)
}

fn options(ctx: &Ctx, v: &Json, path: &Path) -> Result<Vec<(String, Expr)>> {
    let Some(obj) = v.as_object() else {
        return fail(path, "must be an object of keyword arguments");
    };
    obj.iter()
        .map(|(k, x)| Ok((k.clone(), value(ctx, x, &path.key(k), true)?)))
        .collect()
}

fn calls(ctx: &Ctx, v: &Json, path: &Path) -> Result<Vec<LaterCallExpr>> {
    let Some(items) = v.as_array() else {
        return fail(path, "must be an array of calls");
    };
    let mut out = Vec::with_capacity(items.len().min(64));
    for (i, c) in items.iter().enumerate() {
        let ip = path.index(i);
        let obj = match c.as_object() {
            Some(o) if o.contains_key("args") && o.keys().all(|k| k == "args" || k == "kwargs") => {
                o
            }
            _ => return fail(&ip, "a call is {\"args\": ..., \"kwargs\"?: ...}"),
        };
        let args = wrapped(ctx, &obj["args"], &ip.key("args"), "tuple")?;
        let kwargs = match obj.get("kwargs") {
            Some(k) => Some(wrapped(ctx, k, &ip.key("kwargs"), "dict")?),
            None => None,
        };
        out.push(LaterCallExpr { args, kwargs });
    }
    Ok(out)
}

/// The case's own keys, checked; `spec` was read as a VALUE with the rest.
pub(super) fn read(
    ctx: &Ctx,
    nvars: usize,
    fields: Vec<(&'static str, Json)>,
    spec: Option<Expr>,
) -> Result<ExportSpecCase> {
    ctx.nvars.set(Some(nvars));
    let root = Path::ROOT;
    let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v);
    let need = |k: &'static str| get(k).ok_or_else(|| Error::at("$", format!("missing `{k}`")));
    let api = match need("api")?.as_str().and_then(Api::from_name) {
        Some(a) => a,
        None => {
            return fail(
                &root.key("api"),
                "one of `export`, `export_strict`, `make_fx`, `compile`",
            )
        }
    };
    let signature = signature(ctx, need("signature")?, &root.key("signature"))?;
    let args = wrapped(ctx, need("args")?, &root.key("args"), "tuple")?;
    let kwargs = match get("kwargs") {
        Some(k) if api == Api::MakeFx => {
            let _ = k;
            return fail(
                &root.key("kwargs"),
                "make_fx passes inputs positionally; a make_fx case has no kwargs",
            );
        }
        Some(k) => Some(wrapped(ctx, k, &root.key("kwargs"), "dict")?),
        None => None,
    };
    let decorator = match get("decorator") {
        Some(d) => Some(value(ctx, d, &root.key("decorator"), false)?),
        None => None,
    };
    let module = get("module")
        .map(|m| module(m, &root.key("module")))
        .transpose()?;
    let body = match get("body") {
        None => None,
        Some(Json::String(b)) if b == "touch_all" => Some(Body::TouchAll),
        Some(Json::String(b)) if b == "touch_tensors" => Some(Body::TouchTensors),
        Some(_) => return fail(&root.key("body"), "`touch_all` or `touch_tensors`"),
    };
    let options = get("options")
        .map(|o| options(ctx, o, &root.key("options")))
        .transpose()?;
    let calls = match get("calls") {
        Some(_) if api != Api::Compile => {
            return fail(&root.key("calls"), "only for api `compile`")
        }
        Some(c) => Some(calls(ctx, c, &root.key("calls"))?),
        None => None,
    };
    Ok(ExportSpecCase {
        api,
        signature,
        args,
        kwargs,
        spec,
        decorator,
        module,
        body,
        options,
        calls,
    })
}
