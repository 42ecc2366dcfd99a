//! `torch.compile(module, dynamic_shapes=spec)`: dynamo wraps each input
//! as the fixed body reads it (the module's parameters and buffers first),
//! finds its spec with `lookup_spec_from_dynamo_source` (no binding), and
//! wires it (`builder.py`'s `wrap_tensor` / `wrap_literal`); the first
//! graph's placeholders and asserts, then, for later calls, whether the
//! cached graph's guards pass or the frame recompiles.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use torchspec_pyval::{PyException, PyResult, Raise, Value};
use torchspec_spec::source::lookup::lookup_spec_from_dynamo_source;
use torchspec_spec::sym::expr::{Ex, Func, Node, Rel};
use torchspec_spec::sym::print::sstr;
use torchspec_spec::sym::ranges::Ext;
use torchspec_spec::ShapesSpec;

use crate::graph::{self, Input};
use crate::keys;
use crate::leaves::{body_leaves, Leaf};
use crate::strides::{self, StrideCheck};
use crate::wiring::{fakify_tensor_spec, Fake, IntSymbols, Size, Wirer};
use crate::{Body, Call, LaterCall, LaterOutcome, Traced};

/// An error raised inside dynamo's tracing: `_compile` re-raises the
/// types it lists as they are (`AssertionError`, `IndexError`, `UserError`,
/// ...) and wraps any other in `InternalTorchDynamoError` (`TYPE: message`).
fn internal(r: Raise) -> Raise {
    match r {
        Raise::Exception(e)
            if matches!(
                e.type_name.as_str(),
                "AssertionError" | "IndexError" | "UserError"
            ) =>
        {
            Raise::Exception(e)
        }
        Raise::Exception(e) => Raise::new(
            "InternalTorchDynamoError",
            format!("{}: {}", e.type_name, e.message),
        ),
        other => other,
    }
}

/// One graph input of a compiled entry, with what its guards check.
struct GraphInput {
    leaf: Leaf,
    fake: Fake,
    /// The symbol placeholders dynamo added right before it.
    new_symbols: Vec<Lifted>,
}

/// A placeholder `_lift_basic_symbols` put before its tensor: named after
/// the one unbound symbol of a size (made unique), its example value the
/// size itself (`u1` for a size `3*u1 - 1`, printing that expression).
struct Lifted {
    name: String,
    size: usize,
}

/// The root tracer's `bound_symbols` and `_used_names` for lifted sizes.
#[derive(Default)]
struct Lifting {
    bound: Vec<usize>,
    names: Vec<String>,
}

/// The constants the body read, by source name.
type Statics = Vec<(String, Value)>;

/// One compiled entry: its trace, its graph inputs, and the constants the
/// body read (each guarded to stay equal).
struct Entry {
    wirer_env: crate::shape_env::ShapeEnv,
    /// The ShapeEnv after the graph's runtime-assert pass, which may
    /// replace more symbols (`_maybe_guard_rel` of a recomputed assert):
    /// what `produce_guards` and the placeholders' values see.
    guard_env: crate::shape_env::ShapeEnv,
    inputs: Vec<GraphInput>,
    statics: Vec<(String, Value)>,
}

/// Trace one frame: wrap every leaf, wire, finalize.
fn trace(
    spec: Option<&ShapesSpec>,
    leaves: Vec<Leaf>,
    w: &mut Wirer,
) -> PyResult<(Vec<GraphInput>, Statics)> {
    let mut inputs = Vec::new();
    let mut statics = Vec::new();
    let mut lifting = Lifting::default();
    let ints = IntSymbols {
        nonneg: true,
        check_static: true,
    };
    // Tensors are wrapped as the body's `tree_leaves` meets them; ints
    // only where the body first uses them, after every tensor.
    let (tensors, rest): (Vec<Leaf>, Vec<Leaf>) = leaves
        .into_iter()
        .partition(|l| keys::tensor(&l.value).is_some());
    for leaf in tensors.into_iter().chain(rest) {
        let found = lookup_spec_from_dynamo_source(&leaf.source, spec)?;
        let leaf_spec = if matches!(found, Value::None) {
            None
        } else {
            Some(found)
        };
        let fake = if keys::tensor(&leaf.value).is_some() {
            if let Some(s) = &leaf_spec {
                if s.downcast::<torchspec_spec::TensorSpec>().is_none() {
                    return no_len(s);
                }
            }
            fakify_tensor_spec(w, &leaf.value, leaf_spec.as_ref(), &leaf.name)?
        } else if matches!(leaf.value, Value::Int(_)) {
            wrap_literal(w, &leaf, leaf_spec.as_ref(), ints)?
        } else {
            statics.push((leaf.name.clone(), leaf.value.clone()));
            continue;
        };
        let mut new_symbols = Vec::new();
        if let Fake::Tensor(sizes, _) = &fake {
            lift_tensor_sizes(sizes, &w.env, &mut lifting, &mut new_symbols)?;
        }
        if let Fake::Const(v) = fake {
            statics.push((leaf.name.clone(), v));
            continue;
        }
        inputs.push(GraphInput {
            leaf,
            fake,
            new_symbols,
        });
    }
    w.finalize()?;
    Ok((inputs, statics))
}

/// `_lift_basic_symbols` of a tensor (root tracer): each size in dim
/// order, then its strides, which must find their symbols bound.
fn lift_tensor_sizes(
    sizes: &[Size],
    env: &crate::shape_env::ShapeEnv,
    lifting: &mut Lifting,
    new: &mut Vec<Lifted>,
) -> PyResult<()> {
    let mut later = Vec::new();
    for (dim, s) in sizes.iter().enumerate() {
        if let Size::Sym(k) = s {
            let e = env.printed(*k)?;
            lift_basic_symbols(&e, *k, lifting, new)?;
            if dim > 0 {
                later.extend(free_syms(&e));
            }
        }
    }
    // A contiguous stride is a product of the later sizes: a symbol that
    // only a compound size holds is still unbound there, and what dynamo
    // lifts for it is not modelled.
    if later.iter().any(|n| !lifting.bound.contains(n)) {
        return Err(Raise::unsupported(
            "a stride whose symbol no size placeholder bound",
        ));
    }
    Ok(())
}

/// `_lift_basic_symbols` of one size `e` (symbol `size`): its unbound free
/// symbols (`lookup_unbound_symbols`, by name); one becomes a placeholder
/// named after it (`get_unique_name_wrt`), bound only when the size is that
/// bare symbol (`create_graph_input`); more than one (a replaced size
/// `u1*u2` whose factors are not bound yet) fails dynamo's assertion.
fn lift_basic_symbols(
    e: &Ex,
    size: usize,
    lifting: &mut Lifting,
    new: &mut Vec<Lifted>,
) -> PyResult<()> {
    let mut unbound: Vec<usize> = free_syms(e)
        .into_iter()
        .filter(|n| !lifting.bound.contains(n))
        .collect();
    unbound.sort_by_key(|n| format!("u{n}"));
    if unbound.len() > 1 {
        let names: Vec<String> = unbound.iter().map(|n| format!("u{n}")).collect();
        return Err(Raise::new(
            "AssertionError",
            format!(
                "For root tracer, we only expect to bind basic symbols (compound symbols should be cached before) but got unbound symbols [{}] in {}",
                names.join(", "),
                sstr(e)
            ),
        ));
    }
    let Some(&n) = unbound.first() else {
        return Ok(());
    };
    let prefix = format!("u{n}");
    let mut name = prefix.clone();
    let mut i = 0usize;
    while lifting.names.contains(&name) {
        name = format!("{prefix}_{i}");
        i += 1;
    }
    lifting.names.push(name.clone());
    if matches!(&**e, Node::Sym(_)) {
        lifting.bound.push(n);
    }
    new.push(Lifted { name, size });
    Ok(())
}

fn no_len<T>(spec: &Value) -> PyResult<T> {
    let t = match torchspec_spec::sym::expr_of(spec)? {
        Some((_, torchspec_spec::sym::PyType::Int))
            if spec.downcast::<torchspec_spec::IntVar>().is_none() =>
        {
            "SymInt".to_string()
        }
        _ => keys::type_name(spec),
    };
    if spec.downcast::<torchspec_spec::IntVar>().is_some()
        || matches!(spec, Value::Int(_) | Value::Bool(_))
        || t == "SymInt"
    {
        let shown = match spec.downcast::<torchspec_spec::IntVar>() {
            Some(v) if v.kind == torchspec_spec::VarKind::ShapeVar => "ShapeVar".to_string(),
            Some(_) => "IntVar".to_string(),
            None => t,
        };
        return Err(Raise::type_error(format!(
            "object of type '{shown}' has no len()"
        )));
    }
    Err(Raise::unsupported(
        "a container spec found for a tensor input",
    ))
}

/// `wrap_literal` of an int under a spec.
fn wrap_literal(
    w: &mut Wirer,
    leaf: &Leaf,
    spec: Option<&Value>,
    ints: IntSymbols,
) -> PyResult<Fake> {
    match spec {
        None => Ok(Fake::Const(leaf.value.clone())),
        Some(s @ (Value::Int(_) | Value::Bool(_))) => {
            let want = keys::int_of(s);
            if want != keys::int_of(&leaf.value) {
                return Err(Raise::value_error(format!(
                    "shapes_spec declared {} as static with value {}, but got {} at trace time",
                    leaf.name,
                    s.py_str()?,
                    keys::int_of(&leaf.value)
                )));
            }
            Ok(Fake::Const(leaf.value.clone()))
        }
        Some(s) if is_symint(s)? => {
            let (k, u) = w.int_symbol(ints);
            w.slot(s, k, &u)?;
            Ok(Fake::Sym(k))
        }
        Some(s) => Err(Raise::value_error(format!(
            "shapes_spec for {}: unexpected value {} (expected int, IntVar, or None)",
            leaf.name,
            s.repr()?
        ))),
    }
}

fn is_symint(v: &Value) -> PyResult<bool> {
    Ok(v.downcast::<torchspec_spec::IntVar>().is_some()
        || matches!(
            torchspec_spec::sym::expr_of(v)?,
            Some((_, torchspec_spec::sym::PyType::Int))
        ))
}

fn free_syms(e: &Ex) -> Vec<usize> {
    let mut names = Vec::new();
    torchspec_spec::sym::expr::facts::free_symbols(e, &mut names);
    let mut out: Vec<usize> = names
        .iter()
        .filter_map(|n| crate::shape_env::sym_index(n))
        .collect();
    out.sort();
    out
}

/// `re.sub(r"[^a-zA-Z0-9]+", "_", source.name).lower()`: a dynamo graph
/// input's name.
fn graph_name(source_name: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in source_name.chars() {
        if c.is_ascii_alphanumeric() {
            if gap {
                out.push('_');
                gap = false;
            }
            out.push(c.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    if gap {
        out.push('_');
    }
    out
}

/// The dynamo graph's inputs in order: each tensor (in the order it was
/// wrapped) after the size symbols it brought in, then the ints, which
/// become graph inputs where the body first uses them.
fn graph_inputs(entry: &Entry) -> Vec<Input> {
    let mut out = Vec::new();
    for gi in entry
        .inputs
        .iter()
        .filter(|gi| matches!(gi.fake, Fake::Tensor(..)))
    {
        for l in &gi.new_symbols {
            out.push(Input {
                name: l.name.clone(),
                fake: Fake::Sym(l.size),
            });
        }
        out.push(Input {
            name: graph_name(&gi.leaf.name),
            fake: gi.fake.clone(),
        });
    }
    for gi in entry
        .inputs
        .iter()
        .filter(|gi| !matches!(gi.fake, Fake::Tensor(..)))
    {
        out.push(Input {
            name: graph_name(&gi.leaf.name),
            fake: gi.fake.clone(),
        });
    }
    out
}

/// The graph inputs that bind symbols in the runtime-assert pass: a
/// size symbol's own placeholder carries no `unbacked_bindings`, so each
/// symbol is defined at its tensor, in dim order (a replaced size between
/// two placeholders' symbols comes before the later one).
fn binding_inputs(entry: &Entry) -> Vec<Input> {
    graph_inputs(entry)
        .into_iter()
        .filter(|i| {
            !entry
                .inputs
                .iter()
                .any(|gi| gi.new_symbols.iter().any(|l| i.name == l.name))
        })
        .collect()
}

fn first_graph(entry: &Entry) -> PyResult<Traced> {
    Ok(Traced {
        placeholders: graph::placeholders(&graph_inputs(entry), &entry.guard_env)?,
        range_constraints: None,
        asserts: graph::compile_asserts(&binding_inputs(entry), &entry.wirer_env)?,
        calls: None,
    })
}

/// Compile a frame for these inputs; errors as dynamo raises them.
fn compile_entry(
    call: &Call,
    spec: Option<&ShapesSpec>,
    args: &[Value],
    kwargs: &[(Value, Value)],
    w: &mut Wirer,
) -> PyResult<Entry> {
    let leaves = body_leaves(call, args, kwargs)?;
    let shapes_assumptions = spec.map(|s| !s.assumptions.is_empty()).unwrap_or(false);
    w.reset_env();
    if shapes_assumptions {
        if let Some(s) = spec {
            w.wire_assumptions(s)?;
        }
    }
    let (inputs, statics) = trace(spec, leaves, w).map_err(internal)?;
    w.env.settle_replacements()?;
    let wirer_env = w.take_env();
    let mut entry = Entry {
        guard_env: wirer_env.clone(),
        wirer_env,
        inputs,
        statics,
    };
    entry.guard_env = graph::compile_env(&binding_inputs(&entry), &entry.wirer_env)?;
    Ok(entry)
}

/// What a cached entry's guards say of new inputs.
enum GuardCheck {
    Pass,
    /// A guard on the inputs' structure, a static size or a static int.
    Static,
    /// A guard on a symbol (its range or an equality), with its text.
    Symbolic(Option<String>),
}

fn short_source(name: &str) -> String {
    // `L['x'][0]` is printed `x[0]` in a guard.
    if let Some(rest) = name.strip_prefix("L['") {
        if let Some(end) = rest.find("']") {
            return format!("{}{}", &rest[..end], &rest[end + 2..]);
        }
    }
    name.to_string()
}

/// The value of each symbol for these inputs, or `Static` when a static
/// guard fails first.
fn check(
    entry: &Entry,
    call: &Call,
    args: &[Value],
    kwargs: &[(Value, Value)],
) -> PyResult<GuardCheck> {
    let leaves = body_leaves(call, args, kwargs)?;
    let mut vals: Vec<Option<BigInt>> = vec![None; entry.wirer_env.ranges().len()];
    for (name, v) in &entry.statics {
        match leaves.iter().find(|l| l.name == *name) {
            Some(l)
                if torchspec_export::pytree::value_eq(&l.value, v)
                    && l.value.type_name() == v.type_name() => {}
            _ => return Ok(GuardCheck::Static),
        }
    }
    if leaves.len() != entry.inputs.len() + entry.statics.len() {
        return Ok(GuardCheck::Static);
    }
    for gi in &entry.inputs {
        let Some(now) = leaves.iter().find(|l| l.name == gi.leaf.name) else {
            return Ok(GuardCheck::Static);
        };
        match &gi.fake {
            Fake::Tensor(sizes, dtype) => {
                let Some(t) = keys::tensor(&now.value) else {
                    return Ok(GuardCheck::Static);
                };
                if t.shape.len() != sizes.len() || &t.dtype != dtype {
                    return Ok(GuardCheck::Static);
                }
                for (s, actual) in sizes.iter().zip(&t.shape) {
                    match s {
                        Size::Static(v) if v != actual => return Ok(GuardCheck::Static),
                        Size::Static(_) => {}
                        Size::Sym(k) => {
                            vals[*k] = Some(BigInt::from(*actual));
                        }
                    }
                }
            }
            Fake::Sym(k) => {
                if !matches!(now.value, Value::Int(_)) {
                    return Ok(GuardCheck::Static);
                }
                vals[*k] = Some(keys::int_of(&now.value));
            }
            Fake::Const(_) => {}
        }
    }
    let env = &entry.guard_env;
    // TENSOR_MATCH first: a size replaced by a number is a static size.
    for gi in &entry.inputs {
        if let Fake::Tensor(sizes, _) = &gi.fake {
            for (d, s) in sizes.iter().enumerate() {
                let Size::Sym(k) = s else { continue };
                if let Node::Int(n) = &*env.printed(*k)? {
                    let actual = vals[*k].clone().unwrap_or_default();
                    if &actual != n {
                        return Ok(GuardCheck::Symbolic(Some(format!(
                            "tensor '{}' size mismatch at index {d}. expected {n}, actual {actual}",
                            short_source(&gi.leaf.name)
                        ))));
                    }
                }
            }
            if let Some(failed) = stride_guard(gi, &leaves, &vals)? {
                return Ok(failed);
            }
        }
    }
    let sources = symbol_sources(&entry.inputs);
    let first = first_sources(&sources, env)?;
    if let Some(failed) = input_guard_failure(&sources, &first, env, &vals)? {
        return Ok(failed);
    }
    Ok(range_guard_failure(&first, env, &vals).unwrap_or(GuardCheck::Pass))
}

/// The tensor's stride guards (`TENSOR_MATCH`'s static strides, then the
/// shape guards on symbolic ones) for the value it has now; nothing to
/// check when its shape is the example's.
fn stride_guard(
    gi: &GraphInput,
    leaves: &[Leaf],
    vals: &[Option<BigInt>],
) -> PyResult<Option<GuardCheck>> {
    let Fake::Tensor(sizes, _) = &gi.fake else {
        return Ok(None);
    };
    let (Some(example), Some(now)) = (
        keys::tensor(&gi.leaf.value),
        leaves
            .iter()
            .find(|l| l.name == gi.leaf.name)
            .and_then(|l| keys::tensor(&l.value)),
    ) else {
        return Ok(None);
    };
    if example.shape == now.shape {
        return Ok(None);
    }
    let strides = strides::symbolic(sizes, &example.shape)?;
    Ok(match strides::check(&strides, &now.shape, vals) {
        StrideCheck::Pass => None,
        StrideCheck::Static {
            index,
            expected,
            actual,
        } => Some(GuardCheck::Symbolic(Some(format!(
            "tensor '{}' stride mismatch at index {index}. expected {expected}, actual {actual}",
            short_source(&gi.leaf.name)
        )))),
        StrideCheck::Symbolic => Some(GuardCheck::Symbolic(None)),
    })
}

/// Each symbolic size or int of the graph inputs, in the order
/// `produce_guards` tracks them (`track_symint`), with its source text.
fn symbol_sources(inputs: &[GraphInput]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for gi in inputs {
        let name = short_source(&gi.leaf.name);
        match &gi.fake {
            Fake::Tensor(sizes, _) => {
                for (d, s) in sizes.iter().enumerate() {
                    if let Size::Sym(k) = s {
                        out.push((*k, format!("{name}.size()[{d}]")));
                    }
                }
            }
            Fake::Sym(k) => out.push((*k, name.clone())),
            Fake::Const(_) => {}
        }
    }
    out
}

/// `symbol_to_source`: each symbol a source's replaced expression is,
/// with the first such source and the symbol that source allocated, in
/// tracking order.
fn first_sources(
    sources: &[(usize, String)],
    env: &crate::shape_env::ShapeEnv,
) -> PyResult<Vec<FirstSource>> {
    let mut first: Vec<FirstSource> = Vec::new();
    for (k, src) in sources {
        if let Node::Sym(s) = &*env.printed(*k)? {
            let j = crate::shape_env::sym_index(&s.name)
                .ok_or_else(|| Raise::unsupported("a guard on a spec symbol"))?;
            if !first.iter().any(|f| f.sym == j) {
                first.push(FirstSource {
                    sym: j,
                    source: src.clone(),
                    at: *k,
                });
            }
        }
    }
    Ok(first)
}

/// A symbol of `symbol_to_source` and its first source.
struct FirstSource {
    sym: usize,
    source: String,
    /// The symbol allocated at that source (its value is the symbol's).
    at: usize,
}

/// `produce_guards`' input guards, in tracking order: every source equals
/// its replaced expression, printed over each symbol's first source (a
/// symbol's first source itself is skipped). The first one that fails.
fn input_guard_failure(
    sources: &[(usize, String)],
    first: &[FirstSource],
    env: &crate::shape_env::ShapeEnv,
    vals: &[Option<BigInt>],
) -> PyResult<Option<GuardCheck>> {
    let mut at: Vec<Option<String>> = vec![None; vals.len()];
    let mut sym_vals: Vec<Option<BigInt>> = vec![None; vals.len()];
    for f in first {
        at[f.sym] = Some(f.source.clone());
        sym_vals[f.sym] = vals[f.at].clone();
    }
    for (k, src) in sources {
        let Some(v) = &vals[*k] else { continue };
        let printed = env.printed(*k)?;
        if let Node::Sym(s) = &*printed {
            let j = crate::shape_env::sym_index(&s.name);
            if first.iter().any(|f| Some(f.sym) == j && f.source == *src) {
                continue;
            }
        }
        let holds = match eval_int(&printed, &sym_vals) {
            Some(e) => &e == v,
            None => return Err(Raise::unsupported("a guard on a replaced symbol")),
        };
        if !holds {
            let text = guard_expr(&printed, &at).map(|b| format!("{src} == {b}"));
            return Ok(Some(GuardCheck::Symbolic(text)));
        }
    }
    Ok(None)
}

/// `produce_guards`' range guards, one per symbol in `symbol_to_source`
/// order, named by its first source: the first one that fails.
fn range_guard_failure(
    first: &[FirstSource],
    env: &crate::shape_env::ShapeEnv,
    vals: &[Option<BigInt>],
) -> Option<GuardCheck> {
    first.iter().find_map(|f| {
        let v = vals[f.at].as_ref()?;
        let r = env.range(f.sym);
        let lo_ok = !matches!(&r.lo, Ext::Fin(lo) if v < lo);
        let hi_ok = !matches!(&r.hi, Ext::Fin(hi) if v > hi);
        (!(lo_ok && hi_ok)).then(|| GuardCheck::Symbolic(range_guard(&f.source, r)))
    })
}

/// A replacement target as dynamo's guard printer writes it, for the
/// forms a spec makes: a number (a range pinned to one value: `x == 5`), a symbol, `k*s`, `s*t`, `s**2` (`s*s`, also in a
/// product: `4*s*s`), and
/// `c + k*s` (the constant first, parenthesized when negative).
fn guard_expr(e: &Ex, at: &[Option<String>]) -> Option<String> {
    let sym = |e: &Ex| match &**e {
        Node::Sym(s) => at.get(crate::shape_env::sym_index(&s.name)?)?.clone(),
        _ => None,
    };
    // `s**2` is printed `s*s`, alone or in a product (`4*x*x`).
    let factor = |e: &Ex| -> Option<String> {
        match &**e {
            Node::Pow(b, x) if x.is_int_value(2) => {
                let s = sym(b)?;
                Some(format!("{s}*{s}"))
            }
            _ => sym(e),
        }
    };
    let term = |e: &Ex| -> Option<String> {
        match &**e {
            Node::Mul(f) => {
                let parts = f
                    .iter()
                    .map(|x| match &**x {
                        Node::Int(i) => Some(i.to_string()),
                        _ => factor(x),
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(parts.join("*"))
            }
            _ => factor(e),
        }
    };
    match &**e {
        Node::Int(i) => Some(i.to_string()),
        Node::Add(terms) => {
            let mut out = Vec::new();
            for t in terms {
                out.push(match &**t {
                    Node::Int(i) if i.is_negative() => format!("({i})"),
                    Node::Int(i) => i.to_string(),
                    _ => term(t)?,
                });
            }
            Some(out.join(" + "))
        }
        _ => term(e),
    }
}

fn range_guard(x: &str, r: &crate::shape_env::Range) -> Option<String> {
    Some(match (&r.lo, &r.hi) {
        (Ext::Fin(lo), Ext::Fin(hi)) => format!("{lo} <= {x} <= {hi}"),
        (Ext::Fin(lo), _) => format!("{lo} <= {x}"),
        (_, Ext::Fin(hi)) => format!("{x} <= {hi}"),
        _ => return None,
    })
}

/// An integer expression at the symbols' values.
fn eval_int(e: &Ex, vals: &[Option<BigInt>]) -> Option<BigInt> {
    Some(match &**e {
        Node::Int(i) => i.clone(),
        Node::Sym(s) => vals.get(crate::shape_env::sym_index(&s.name)?)?.clone()?,
        Node::Add(a) => a
            .iter()
            .map(|x| eval_int(x, vals))
            .sum::<Option<BigInt>>()?,
        Node::Mul(a) => a
            .iter()
            .map(|x| eval_int(x, vals))
            .product::<Option<BigInt>>()?,
        Node::Pow(b, x) => {
            let b = eval_int(b, vals)?;
            let x = u32::try_from(eval_int(x, vals)?).ok()?;
            num_traits::pow(b, x as usize)
        }
        Node::Fn(Func::FloorDiv, a) => {
            let (p, q) = (eval_int(&a[0], vals)?, eval_int(&a[1], vals)?);
            if q.is_zero() {
                return None;
            }
            num_integer::Integer::div_floor(&p, &q)
        }
        Node::Fn(Func::Mod | Func::PythonMod, a) => {
            let (p, q) = (eval_int(&a[0], vals)?, eval_int(&a[1], vals)?);
            if q.is_zero() {
                return None;
            }
            num_integer::Integer::mod_floor(&p, &q)
        }
        _ => return None,
    })
}

fn eval_bool(e: &Ex, vals: &[Option<BigInt>]) -> Option<bool> {
    let Node::Rel(op, l, r) = &**e else {
        return None;
    };
    let (l, r) = (eval_int(l, vals)?, eval_int(r, vals)?);
    Some(match op {
        Rel::Eq => l == r,
        Rel::Ne => l != r,
        Rel::Lt => l < r,
        Rel::Le => l <= r,
        Rel::Gt => l > r,
        Rel::Ge => l >= r,
    })
}

const GUARD_FAILED: &str = "Guard failed on the same frame it was created. This is a bug - please create an issue.Guard fail reason: ";

/// The first call's graph, then each later call's outcome.
pub(crate) fn run(call: &Call, spec: Option<Value>, w: &mut Wirer) -> PyResult<Traced> {
    if call.body == Body::TouchTensors {
        return Err(Raise::unsupported(
            "compile of a body that never reads its ints",
        ));
    }
    let shapes = spec.as_ref().and_then(|s| s.downcast::<ShapesSpec>());
    if spec.is_some() && shapes.is_none() && !call.calls.is_empty() {
        return Err(Raise::unsupported(
            "automatic dynamic shapes over later calls",
        ));
    }
    let mut compiles = 0usize;
    let first = compile_entry(call, shapes, &call.args, &call.kwargs, w)?;
    compiles += 1;
    let mut traced = first_graph(&first)?;
    match check(&first, call, &call.args, &call.kwargs)? {
        GuardCheck::Pass => {}
        GuardCheck::Symbolic(Some(text)) => {
            return Err(Raise::new(
                "AssertionError",
                format!("{GUARD_FAILED}0/0: {text}\n"),
            ))
        }
        _ => return Err(Raise::unsupported("a first call that fails its own guards")),
    }
    runtime_asserts(&first, call, &call.args, &call.kwargs, &traced)?;
    if call.calls.is_empty() {
        return Ok(traced);
    }
    if spec.is_none() {
        traced.calls = Some(crate::auto_dynamic::later_calls(call)?);
        return Ok(traced);
    }
    let mut entries = vec![(first, traced.asserts.clone())];
    let mut outcomes = Vec::new();
    for later in &call.calls {
        outcomes.push(later_call(
            call,
            shapes,
            later,
            &mut entries,
            &mut compiles,
            w,
        )?);
    }
    traced.calls = Some(outcomes);
    Ok(traced)
}

fn later_call(
    call: &Call,
    spec: Option<&ShapesSpec>,
    later: &LaterCall,
    entries: &mut Vec<(Entry, Vec<String>)>,
    compiles: &mut usize,
    w: &mut Wirer,
) -> PyResult<LaterOutcome> {
    for (e, _) in entries.iter().rev() {
        match check(e, call, &later.args, &later.kwargs)? {
            GuardCheck::Pass => {
                let t = Traced {
                    placeholders: vec![],
                    range_constraints: None,
                    asserts: graph_asserts(e)?,
                    calls: None,
                };
                return Ok(
                    match runtime_asserts(e, call, &later.args, &later.kwargs, &t) {
                        Ok(()) => LaterOutcome::Recompiled(false),
                        Err(Raise::Exception(x)) => LaterOutcome::Error(x),
                        Err(u) => return Err(u),
                    },
                );
            }
            GuardCheck::Static | GuardCheck::Symbolic(_) => {}
        }
    }
    let id = *compiles;
    *compiles += 1;
    let entry = match compile_entry(call, spec, &later.args, &later.kwargs, w) {
        Ok(e) => e,
        Err(Raise::Exception(x)) => return Ok(LaterOutcome::Error(x)),
        Err(u) => return Err(u),
    };
    match check(&entry, call, &later.args, &later.kwargs)? {
        GuardCheck::Pass => {}
        GuardCheck::Symbolic(Some(text)) => {
            return Ok(LaterOutcome::Error(PyException {
                type_name: "AssertionError".into(),
                message: format!("{GUARD_FAILED}0/{id}: {text}\n"),
            }))
        }
        _ => return Err(Raise::unsupported("a recompile that fails its own guards")),
    }
    let asserts = match graph_asserts(&entry) {
        Ok(a) => a,
        Err(Raise::Exception(x)) => return Ok(LaterOutcome::Error(x)),
        Err(u) => return Err(u),
    };
    // The new graph runs on this call's inputs: its runtime asserts too.
    let t = Traced {
        placeholders: vec![],
        range_constraints: None,
        asserts: asserts.clone(),
        calls: None,
    };
    let ran = runtime_asserts(&entry, call, &later.args, &later.kwargs, &t);
    entries.push((entry, asserts));
    match ran {
        Ok(()) => Ok(LaterOutcome::Recompiled(true)),
        Err(Raise::Exception(x)) => Ok(LaterOutcome::Error(x)),
        Err(u) => Err(u),
    }
}

fn graph_asserts(e: &Entry) -> PyResult<Vec<String>> {
    graph::compile_asserts(&binding_inputs(e), &e.wirer_env)
}

/// Running the compiled graph: its `_assert_scalar` nodes on the values.
fn runtime_asserts(
    e: &Entry,
    call: &Call,
    args: &[Value],
    kwargs: &[(Value, Value)],
    t: &Traced,
) -> PyResult<()> {
    let leaves = body_leaves(call, args, kwargs)?;
    let mut vals: Vec<Option<BigInt>> = vec![None; e.wirer_env.ranges().len()];
    for gi in &e.inputs {
        let Some(now) = leaves.iter().find(|l| l.name == gi.leaf.name) else {
            continue;
        };
        match (&gi.fake, keys::tensor(&now.value)) {
            (Fake::Tensor(sizes, _), Some(tn)) => {
                for (s, a) in sizes.iter().zip(&tn.shape) {
                    if let Size::Sym(k) = s {
                        vals[*k] = Some(BigInt::from(*a));
                    }
                }
            }
            (Fake::Sym(k), _) => vals[*k] = Some(keys::int_of(&now.value)),
            _ => {}
        }
    }
    let inputs = binding_inputs(e);
    for (msg, expr) in t
        .asserts
        .iter()
        .zip(graph::assert_exprs(&inputs, &e.wirer_env)?)
    {
        match eval_bool(&expr, &vals) {
            Some(true) => {}
            Some(false) => return Err(Raise::new("RuntimeError", msg.clone())),
            None => {
                return Err(Raise::unsupported(
                    "a runtime assert the model cannot evaluate",
                ))
            }
        }
    }
    Ok(())
}
