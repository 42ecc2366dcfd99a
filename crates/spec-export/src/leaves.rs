//! The leaves dynamo reads from one call of the body: the module's
//! parameters and buffers (`self._modules[...]._parameters[...]`, as
//! `UnspecializedParamBufferSource`), then each bound parameter's pytree
//! leaves under its `LocalSource` (`builder.py`'s `VariableBuilder` walks
//! them in this order). Shared by the first compile (`compile.rs`) and the
//! later calls' automatic dynamic shapes (`auto_dynamic.rs`).

use std::rc::Rc;

use torchspec_pyval::{PyResult, Raise, Value};
use torchspec_spec::source::{DictIndex, Source, SourceClass};

use crate::keys::{self, Key};
use crate::{Call, ParamKind};

/// One input leaf as dynamo wraps it: its source and value.
pub(crate) struct Leaf {
    pub(crate) source: Rc<Source>,
    pub(crate) name: String,
    pub(crate) value: Value,
}

fn local(name: &str) -> Rc<Source> {
    local_kind(name, ParamKind::PositionalOrKeyword)
}

/// `LocalSource(name, is_input=True)`, flagged for `*args` / `**kwargs`.
fn local_kind(name: &str, kind: ParamKind) -> Rc<Source> {
    Rc::new(Source::local(
        name.to_string(),
        true,
        kind == ParamKind::VarPositional,
        kind == ParamKind::VarKeyword,
        false,
    ))
}

fn child(base: &Rc<Source>, k: &Key) -> PyResult<Rc<Source>> {
    Ok(Rc::new(match k {
        Key::Seq(i) => Source::getitem(
            SourceClass::GetItemSource,
            base.clone(),
            Value::int(*i as i64),
            false,
        ),
        Key::Map(key) => Source::dict_getitem(
            SourceClass::DictGetItemSource,
            base.clone(),
            DictIndex::Literal(key.clone()),
        )?,
        Key::Attr(a) => Source::attr(SourceClass::AttrSource, base.clone(), a.clone(), None)?,
    }))
}

fn leaves_of(base: Rc<Source>, v: &Value, out: &mut Vec<Leaf>) -> PyResult<()> {
    for (path, value) in keys::leaves_with_path(v)? {
        let mut s = base.clone();
        for k in &path {
            s = child(&s, k)?;
        }
        out.push(Leaf {
            name: s.name()?,
            source: s,
            value,
        });
    }
    Ok(())
}

/// The module's tensors, as `self.<dotted>` reads them.
fn module_leaves(call: &Call, out: &mut Vec<Leaf>) -> PyResult<()> {
    for (store, list) in [
        ("_parameters", &call.parameters),
        ("_buffers", &call.buffers),
    ] {
        for (dotted, t) in list.iter() {
            let mut s = local("self");
            let parts: Vec<&str> = dotted.split('.').collect();
            for m in &parts[..parts.len() - 1] {
                let mods = Rc::new(Source::attr(
                    SourceClass::AttrSource,
                    s,
                    "_modules".into(),
                    None,
                )?);
                s = child(&mods, &Key::Map(Value::str(m)))?;
            }
            let st = Rc::new(Source::attr(
                SourceClass::UnspecializedParamBufferSource,
                s,
                store.into(),
                None,
            )?);
            let leaf = child(&st, &Key::Map(Value::str(parts[parts.len() - 1])))?;
            out.push(Leaf {
                name: leaf.name()?,
                source: leaf,
                value: t.clone(),
            });
        }
    }
    Ok(())
}

/// Every leaf the body reads, in the order it reads them.
pub(crate) fn body_leaves(
    call: &Call,
    args: &[Value],
    kwargs: &[(Value, Value)],
) -> PyResult<Vec<Leaf>> {
    let mut out = Vec::new();
    module_leaves(call, &mut out)?;
    let mut pos = args.iter();
    for p in &call.signature {
        let kw = kwargs
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if **s == *p.name));
        let v = match p.kind {
            ParamKind::VarPositional => Value::Tuple(Rc::new(pos.by_ref().cloned().collect())),
            ParamKind::VarKeyword => {
                let mut d = torchspec_pyval::Dict::new();
                for (k, v) in kwargs {
                    let named = call.signature.iter().any(|q| {
                        q.kind != ParamKind::VarKeyword
                            && matches!(k, Value::Str(s) if **s == *q.name)
                    });
                    if !named {
                        d.insert(k.clone(), v.clone())?;
                    }
                }
                Value::Dict(Rc::new(d))
            }
            ParamKind::KeywordOnly => match (kw, &p.default) {
                (Some((_, v)), _) => v.clone(),
                (None, Some(d)) => d.clone(),
                _ => return Err(Raise::unsupported("a call missing a keyword-only input")),
            },
            _ => match (pos.next(), kw, &p.default) {
                (Some(v), None, _) => v.clone(),
                (None, Some((_, v)), _) => v.clone(),
                (None, None, Some(d)) => d.clone(),
                _ => {
                    return Err(Raise::unsupported(
                        "a call that does not bind to the signature",
                    ))
                }
            },
        };
        leaves_of(local_kind(&p.name, p.kind), &v, &mut out)?;
    }
    if pos.next().is_some() {
        return Err(Raise::unsupported("more positional inputs than parameters"));
    }
    Ok(out)
}
