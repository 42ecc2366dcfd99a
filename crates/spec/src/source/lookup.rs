//! Mirrors torch/_dynamo/variables/builder.py (PyTorch 2.15.0):
//! `_source_to_access_path`, `_format_access_path`, `_walk_spec` and
//! `lookup_spec_from_dynamo_source`.

use std::fmt::Write;

use smallvec::SmallVec;

use super::{DictIndex, Source, SourceClass, SourceKind};
use crate::{DictSpec, ObjectSpec, SeqSpec, ShapesSpec, TensorSpec};
use torchspec_pyval::{str_repr, PyResult, Raise, Value};

/// One step of an access path, borrowed from the source chain.
#[derive(Clone, Copy, Debug)]
pub enum AccessToken<'a> {
    /// `_LocalToken`: the root, a function argument.
    Local {
        /// The argument's name.
        name: &'a str,
        /// Whether the argument is the `*args` parameter.
        is_varargs: bool,
        /// Whether the argument is the `**kwargs` parameter.
        is_varkw: bool,
    },
    /// `_AttrToken`: `obj.name`.
    Attr(&'a str),
    /// `_SubscriptToken`: `obj[key]`, key an int (or bool) or str.
    Subscript(&'a Value),
}

/// `_AccessPath`; chains are short, so it usually lives on the stack.
pub type AccessPath<'a> = SmallVec<[AccessToken<'a>; 16]>;

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

impl AccessToken<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            AccessToken::Local { .. } => "_LocalToken",
            AccessToken::Attr(_) => "_AttrToken",
            AccessToken::Subscript(_) => "_SubscriptToken",
        }
    }

    /// The dataclass repr, as `{path!r}` prints it.
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        match self {
            AccessToken::Local {
                name,
                is_varargs,
                is_varkw,
            } => {
                let _ = write!(
                    out,
                    "_LocalToken(name={}, is_varargs={}, is_varkw={})",
                    str_repr(name),
                    py_bool(*is_varargs),
                    py_bool(*is_varkw)
                );
            }
            AccessToken::Attr(name) => {
                let _ = write!(out, "_AttrToken(name={})", str_repr(name));
            }
            AccessToken::Subscript(key) => {
                out.push_str("_SubscriptToken(key=");
                key.write_repr(out)?;
                out.push(')');
            }
        }
        Ok(())
    }
}

fn path_repr(path: &[AccessToken]) -> PyResult<String> {
    let mut out = String::from("[");
    for (i, t) in path.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        t.write_repr(&mut out)?;
    }
    out.push(']');
    Ok(out)
}

/// `_format_access_path`: `m.weight`, `cfg['x']`, `[0]`, or `<empty path>`.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::Value;
/// use torchspec_spec::source::lookup::{format_access_path, source_to_access_path};
/// use torchspec_spec::source::{DictIndex, Source, SourceClass};
/// let m = Rc::new(Source::local("m".into(), true, false, false, false));
/// let w = Source::attr(SourceClass::AttrSource, m, "weight".into(), None)?;
/// assert_eq!(format_access_path(&source_to_access_path(&w).unwrap())?, "m.weight");
/// let cfg = Rc::new(Source::local("cfg".into(), true, false, false, false));
/// let k = Source::dict_getitem(SourceClass::DictGetItemSource, cfg, DictIndex::Literal(Value::str("k")))?;
/// assert_eq!(format_access_path(&source_to_access_path(&k).unwrap())?, "cfg['k']");
/// assert_eq!(format_access_path(&[])?, "<empty path>");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
pub fn format_access_path(path: &[AccessToken]) -> PyResult<String> {
    if path.is_empty() {
        return Ok("<empty path>".into());
    }
    let mut out = String::new();
    for t in path {
        match t {
            AccessToken::Local { name, .. } => out.push_str(name),
            AccessToken::Attr(name) => {
                out.push('.');
                out.push_str(name);
            }
            AccessToken::Subscript(key) => {
                out.push('[');
                key.write_repr(&mut out)?;
                out.push(']');
            }
        }
    }
    Ok(out)
}

/// `_source_to_access_path`: `None` for a chain the spec cannot address.
///
/// ```
/// use torchspec_spec::source::lookup::{source_to_access_path, AccessToken};
/// use torchspec_spec::source::Source;
/// // A local that is not an input of the frame has no access path.
/// assert!(source_to_access_path(&Source::local("x".into(), false, false, false, false)).is_none());
/// let x = Source::local("x".into(), true, false, false, false);
/// let path = source_to_access_path(&x).unwrap();
/// assert!(matches!(path[..], [AccessToken::Local { name: "x", is_varargs: false, is_varkw: false }]));
/// ```
pub fn source_to_access_path(source: &Source) -> Option<AccessPath<'_>> {
    let mut path = AccessPath::new();
    access_path_into(source, &mut path).then_some(path)
}

/// `_source_to_access_path` into a caller's buffer (no move of the path);
/// false where the Python returns `None`.
fn access_path_into<'a>(source: &'a Source, path: &mut AccessPath<'a>) -> bool {
    let mut cur = source;
    loop {
        if let SourceKind::Local {
            local_name,
            is_input,
            is_varargs,
            is_varkw,
            ..
        } = &cur.kind
        {
            if !is_input {
                return false;
            }
            path.push(AccessToken::Local {
                name: local_name,
                is_varargs: *is_varargs,
                is_varkw: *is_varkw,
            });
            path.reverse();
            return true;
        }
        // NNModuleSource is a guard marker, not an access step.
        if cur.class.is_nn_module() {
            let Some(b) = cur.base() else { return false };
            cur = b;
            continue;
        }
        if let SourceKind::DictGetItem {
            base,
            index: DictIndex::Literal(index),
        } = &cur.kind
        {
            if cur.class == SourceClass::DictGetItemSource {
                // `self._parameters['w']` (any member of an
                // UnspecializedParamBufferSource, in fact) collapses to `.w`.
                if let (SourceClass::UnspecializedParamBufferSource, Value::Str(s)) =
                    (base.class, index)
                {
                    path.push(AccessToken::Attr(s));
                    let Some(b) = base.base() else { return false };
                    cur = b;
                    continue;
                }
                // `isinstance(index, (int, str))`: a bool is an int here.
                if matches!(index, Value::Int(_) | Value::Bool(_) | Value::Str(_)) {
                    path.push(AccessToken::Subscript(index));
                    cur = base;
                    continue;
                }
            }
        }
        if let SourceKind::GetItem {
            base,
            index: index @ Value::Int(_),
            ..
        } = &cur.kind
        {
            // `type(index) is int`: a bool is not.
            path.push(AccessToken::Subscript(index));
            cur = base;
            continue;
        }
        if let (true, SourceKind::Attr { base, member, .. }) = (cur.class.is_attr(), &cur.kind) {
            path.push(AccessToken::Attr(member));
            cur = base;
            continue;
        }
        return false;
    }
}

/// `lookup_spec_from_dynamo_source(source, shapes_spec)`: the leaf spec
/// the source's access path reaches, `None` where the spec says nothing.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::{Dict, Raise, Value};
/// use torchspec_spec::source::{lookup::lookup_spec_from_dynamo_source, DictIndex, Source, SourceClass};
/// use torchspec_spec::*;
/// let mut uids = UidCounter::default();
/// let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs {
///     name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default()
/// }, &mut uids)?);
/// let tensor = |dims: Vec<Value>| -> Result<Value, Raise> {
///     Ok(Value::object(TensorSpec::construct(&Value::List(Rc::new(dims)))?))
/// };
/// // ShapesSpec({'x': TensorSpec([a, None]), 'cfg': DictSpec({'k': TensorSpec([None, a])})})
/// let mut entries = Dict::new();
/// entries.insert(Value::str("k"), tensor(vec![Value::None, a.clone()])?)?;
/// let mut params = Dict::new();
/// params.insert(Value::str("x"), tensor(vec![a, Value::None])?)?;
/// params.insert(Value::str("cfg"), Value::object(DictSpec::construct(&Value::Dict(Rc::new(entries)))?))?;
/// let spec = ShapesSpec::construct(ShapesSpecArgs {
///     params: Some(Value::Dict(Rc::new(params))),
///     ..ShapesSpecArgs::default()
/// })?;
///
/// let local = |name: &str| Rc::new(Source::local(name.into(), true, false, false, false));
/// let x = local("x");
/// let found = lookup_spec_from_dynamo_source(&x, Some(&spec))?;
/// assert_eq!(found.repr()?, "Tensor:\n  0: ShapeVar(a#0, min=2)\n  1: None");
///
/// // L['cfg']['k']
/// let k = Source::dict_getitem(SourceClass::DictGetItemSource, local("cfg"), DictIndex::Literal(Value::str("k")))?;
/// assert_eq!(lookup_spec_from_dynamo_source(&k, Some(&spec))?.repr()?, "Tensor:\n  0: None\n  1: ShapeVar(a#0, min=2)");
///
/// // Not in the spec, or no spec: None.
/// assert!(matches!(lookup_spec_from_dynamo_source(&local("y"), Some(&spec))?, Value::None));
/// assert!(matches!(lookup_spec_from_dynamo_source(&x, None)?, Value::None));
///
/// // L['x'].foo: the spec has a tensor where the source reads further.
/// let foo = Source::attr(SourceClass::AttrSource, x, "foo".into(), None)?;
/// assert_eq!(
///     lookup_spec_from_dynamo_source(&foo, Some(&spec)).unwrap_err(),
///     Raise::new("RuntimeError", "shapes_spec walk: while processing source 'x.foo', at 'x' \
///         the spec is TensorSpec, but the source has further access past it")
/// );
/// # Ok::<(), Raise>(())
/// ```
pub fn lookup_spec_from_dynamo_source(
    source: &Source,
    shapes_spec: Option<&ShapesSpec>,
) -> PyResult<Value> {
    let Some(params) = shapes_spec.and_then(ShapesSpec::params_spec) else {
        return Ok(Value::None);
    };
    if let Some(leaf) = fast_walk(source, params, FAST_CHAIN) {
        if is_leaf_spec(leaf) {
            return Ok(leaf.clone());
        }
    }
    lookup_faithful(source, params)
}

/// `lookup_spec_from_dynamo_source` step by step, with its access path:
/// apart, so the walk that succeeds does not set up this one's frame.
#[inline(never)]
fn lookup_faithful(source: &Source, params: &crate::ParamsSpec) -> PyResult<Value> {
    let mut path = AccessPath::new();
    if !access_path_into(source, &mut path) {
        return Ok(Value::None);
    }
    let AccessToken::Local {
        name,
        is_varargs,
        is_varkw,
    } = &path[0]
    else {
        return Ok(Value::None);
    };
    if *is_varargs || *is_varkw {
        let what = if *is_varargs { "*args" } else { "**kwargs" };
        // The code indexes `path[1]` unguarded.
        let Some(next) = path.get(1) else {
            return Err(Raise::new("IndexError", "list index out of range"));
        };
        let AccessToken::Subscript(key) = next else {
            return Err(Raise::new(
                "RuntimeError",
                format!(
                    "Expected _SubscriptToken after {what} local at path {}, got {}",
                    path_repr(&path)?,
                    next.type_name()
                ),
            ));
        };
        let key_desc =
            || -> PyResult<String> { Ok(format!("{}({})", key.type_name(), key.repr()?)) };
        if *is_varargs {
            let Value::Int(i) = key else {
                return Err(Raise::new(
                    "RuntimeError",
                    format!(
                        "Unexpected non-int subscript for *args access at path {}: {}",
                        path_repr(&path)?,
                        key_desc()?
                    ),
                ));
            };
            let Some(varargs) = &params.varargs else {
                return Ok(Value::None);
            };
            let idx = i.to_usize().filter(|&i| i < varargs.len());
            return match idx {
                Some(i) => walk_spec(&varargs[i], &path, 2),
                None => Ok(Value::None),
            };
        }
        if !matches!(key, Value::Str(_)) {
            return Err(Raise::new(
                "RuntimeError",
                format!(
                    "Unexpected non-str subscript for **kwargs access at path {}: {}",
                    path_repr(&path)?,
                    key_desc()?
                ),
            ));
        }
        let Some(varkw) = &params.varkw else {
            return Ok(Value::None);
        };
        return match varkw.get(key) {
            Some(spec) => walk_spec(spec, &path, 2),
            None => Ok(Value::None),
        };
    }
    match params.named_args.get_str(name) {
        Some(root) => walk_spec(root, &path, 1),
        // `_named_args.get(name)` is None, and the walk returns None.
        None => Ok(Value::None),
    }
}

/// How long a source chain [`fast_walk`] follows (it recurses once a step).
const FAST_CHAIN: usize = 64;

/// `_source_to_access_path` and `_walk_spec` in one recursion down the
/// source chain, for the walk that succeeds: the spec node the access path
/// reaches, or `None` for anything else (a chain the spec cannot address, a
/// variadic root, a missing key, a mismatch, `None` on the way, a chain
/// longer than `budget`), which the faithful path then decides. Each step
/// takes exactly the conditions of `access_path_into` and `walk_spec`.
#[inline]
fn fast_walk<'s>(
    source: &Source,
    params: &'s crate::ParamsSpec,
    budget: usize,
) -> Option<&'s Value> {
    match fast_root(source) {
        Some(name) => params.named_args.get_str(name),
        None => fast_step(source, params, budget.checked_sub(1)?),
    }
}

/// The name of an input `LocalSource` that is neither `*args` nor `**kwargs`.
#[inline]
fn fast_root(source: &Source) -> Option<&str> {
    match &source.kind {
        SourceKind::Local {
            local_name,
            is_input: true,
            is_varargs: false,
            is_varkw: false,
            ..
        } => Some(local_name),
        _ => None,
    }
}

/// One access step of [`fast_walk`] below the root (apart, so that the root
/// case inlines into the caller and the recursion stays here).
#[inline(never)]
fn fast_step<'s>(
    source: &Source,
    params: &'s crate::ParamsSpec,
    mut budget: usize,
) -> Option<&'s Value> {
    // NNModuleSource is a guard marker, not an access step: skipped in a
    // loop (half the nodes of a module attribute chain), not a frame each.
    let mut source = source;
    while source.class.is_nn_module() {
        budget = budget.checked_sub(1)?;
        source = source.base()?.as_ref();
    }
    if let Some(name) = fast_root(source) {
        return params.named_args.get_str(name);
    }
    match &source.kind {
        SourceKind::DictGetItem {
            base,
            index: DictIndex::Literal(index),
        } if source.class == SourceClass::DictGetItemSource => {
            if let (SourceClass::UnspecializedParamBufferSource, Value::Str(s)) =
                (base.class, index)
            {
                let node = fast_walk(base.base()?, params, budget)?;
                return fast_attr(node, s);
            }
            if matches!(index, Value::Int(_) | Value::Bool(_) | Value::Str(_)) {
                return fast_subscript(fast_walk(base, params, budget)?, index);
            }
            None
        }
        SourceKind::GetItem {
            base,
            index: index @ Value::Int(_),
            ..
        } => fast_subscript(fast_walk(base, params, budget)?, index),
        SourceKind::Attr { base, member, .. } if source.class.is_attr() => {
            fast_attr(fast_walk(base, params, budget)?, member)
        }
        _ => None,
    }
}

/// `_walk_spec`'s `_AttrToken` step on an `ObjectSpec`.
fn fast_attr<'s>(node: &'s Value, name: &str) -> Option<&'s Value> {
    node.downcast::<ObjectSpec>()?.fields.get_str(name)
}

/// `_walk_spec`'s `_SubscriptToken` step on a `DictSpec` or `SeqSpec` (a
/// negative index raises: left to the faithful path).
fn fast_subscript<'s>(node: &'s Value, key: &Value) -> Option<&'s Value> {
    if let Some(d) = node.downcast::<DictSpec>() {
        return d.entries.get(key);
    }
    let s = node.downcast::<SeqSpec>()?;
    let i = match key {
        Value::Int(i) => i.to_usize()?,
        Value::Bool(b) => usize::from(*b),
        _ => return None,
    };
    s.entries.get(i)
}

fn mismatch(path: &[AccessToken], at: usize, spec: &Value, suffix: &str) -> PyResult<Raise> {
    Ok(Raise::new(
        "RuntimeError",
        format!(
            "shapes_spec walk: while processing source {}, at {} the spec is {}{suffix}",
            str_repr(&format_access_path(path)?),
            str_repr(&format_access_path(&path[..at])?),
            spec.type_name()
        ),
    ))
}

/// `isinstance(x, LeafSpec)`: `IntVar | SymInt | int | None | TensorSpec`.
fn is_leaf_spec(v: &Value) -> bool {
    match v {
        Value::None | Value::Int(_) | Value::Bool(_) => true,
        Value::Object(o) => v.downcast::<TensorSpec>().is_some() || o.is_symint(),
        _ => false,
    }
}

/// `_walk_spec(current_spec, full_path, start_index)`. A key or field the
/// spec leaves out makes the rest of the walk `None`, and `None` is a leaf,
/// so the walk can stop there.
pub fn walk_spec(start: &Value, path: &[AccessToken], start_index: usize) -> PyResult<Value> {
    let mut current = start;
    for (idx, token) in path.iter().enumerate().skip(start_index) {
        if let Value::None = current {
            return Ok(Value::None);
        }
        let next = if let Some(o) = current.downcast::<ObjectSpec>() {
            let AccessToken::Attr(name) = token else {
                return Err(mismatch(path, idx, current, "")?);
            };
            o.fields.get_str(name)
        } else if let Some(d) = current.downcast::<DictSpec>() {
            let AccessToken::Subscript(key) = token else {
                return Err(mismatch(path, idx, current, "")?);
            };
            d.entries.get(key)
        } else if let Some(s) = current.downcast::<SeqSpec>() {
            let negative = match token {
                AccessToken::Subscript(Value::Int(i)) => i.is_negative(),
                AccessToken::Subscript(Value::Bool(_)) => false,
                _ => return Err(mismatch(path, idx, current, "")?),
            };
            if negative {
                return Err(Raise::new(
                    "RuntimeError",
                    "dynamo should have normalized the index to be non-negative",
                ));
            }
            let i = match token {
                AccessToken::Subscript(Value::Int(i)) => i.to_usize(),
                AccessToken::Subscript(Value::Bool(b)) => Some(usize::from(*b)),
                _ => None,
            };
            // Past the end: unspecified, so static.
            i.and_then(|i| s.entries.get(i))
        } else {
            return Err(mismatch(
                path,
                idx,
                current,
                ", but the source has further access past it",
            )?);
        };
        match next {
            Some(v) => current = v,
            None => return Ok(Value::None),
        }
    }
    if !is_leaf_spec(current) {
        return Err(mismatch(
            path,
            path.len(),
            current,
            ", but the source has no further access past it",
        )?);
    }
    Ok(current.clone())
}
