//! Evaluates one case of case format v1 against the reference, as
//! `oracle/capture.py` does against PyTorch: fresh uid counter and spec
//! env per case, vars in order, then the case body.

use std::cell::Cell;
use std::rc::Rc;

use serde_json::{Map, Value as Json};

mod export_spec;

use super::deep::{with_stack_for, SHALLOW};
use super::read::MAX_DEPTH;
use super::result::{enc, Outcome, ResultLine};
use super::text;
use super::wire::{Case, CaseBody, Expr, SourceExpr, SourceField, SpecCtor, VarDecl};
use crate::pyval::{Dict, Int, PyResult, Raise, Value};
use crate::source::lookup::lookup_spec_from_dynamo_source;
use crate::source::{DictIndex, Source, SourceClass};
use crate::spec::{
    apply_op, jsonable_or_self, DictSpec, IntVar, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec,
    ShapesSpecArgs, TensorSpec, UidCounter, VarArgs,
};

/// Evaluate a case; never panics, whatever the case holds.
///
/// The first case of `corpus/cases/build-vars.jsonl` against the result
/// torch 2.15.0 gave for it (its golden line):
///
/// ```
/// use torchspec::case::{eval::eval_case, file::parse_cases, file::parse_results};
/// use torchspec::conformance::{verdict, Verdict};
///
/// let root = env!("CARGO_MANIFEST_DIR");
/// let cases = std::fs::read_to_string(format!("{root}/corpus/cases/build-vars.jsonl"))?;
/// let goldens =
///     std::fs::read_to_string(format!("{root}/corpus/goldens/torch-2.15.0/build-vars.jsonl"))?;
/// let (_, case) = &parse_cases(&cases)?[0];
/// let golden = &parse_results(&goldens)?[0];
/// let ours = eval_case(case);
/// assert_eq!(ours.id, golden.id);
/// assert!(matches!(verdict(golden, &ours), Verdict::Agree));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn eval_case(case: &Case) -> ResultLine {
    if let CaseBody::ExportSpec(es) = &case.body {
        let (result, wiring) = export_spec::eval_export_spec(&case.vars, es);
        let outcome = export_spec::outcome_of(result);
        let wiring = (!matches!(outcome, Outcome::Unsupported(_))).then_some(wiring);
        return ResultLine {
            id: case.id.clone(),
            outcome,
            wiring,
        };
    }
    let outcome = outcome(eval_body(&case.vars, &case.body));
    ResultLine {
        id: case.id.clone(),
        outcome,
        wiring: None,
    }
}

/// The outcomes of several lookups into one spec, as separate `lookup`
/// cases would give them. The spec is built once: its evaluation does not
/// depend on the source (which PyTorch evaluates first, so a source that
/// raises wins over a spec that raises).
pub fn eval_lookups(vars: &[VarDecl], spec: &Expr, sources: &[&SourceExpr]) -> Vec<Outcome> {
    eval_lookups_and_build(vars, spec, sources, None).0
}

/// [`eval_lookups`], and the outcome of a `build` case of `value` over the
/// same vars, evaluated in the same environment (a value that only refers
/// to the vars builds the same there as in a fresh one).
pub fn eval_lookups_and_build(
    vars: &[VarDecl],
    spec: &Expr,
    sources: &[&SourceExpr],
    value: Option<&Expr>,
) -> (Vec<Outcome>, Option<Outcome>) {
    let env = match Env::new(vars) {
        Ok(env) => env,
        Err(e) => {
            let all = sources.iter().map(|_| outcome(Err(e.clone()))).collect();
            return (all, value.map(|_| outcome(Err(e))));
        }
    };
    let spec = env.eval(spec);
    let found = sources
        .iter()
        .map(|source| {
            outcome((|| {
                let source = env.source(source)?;
                let spec = spec.clone()?;
                let leaf = lookup_spec_from_dynamo_source(&source, spec.downcast::<ShapesSpec>())?;
                repr_and_jsonable(&leaf)
            })())
        })
        .collect();
    // The leaf alone is another case: a fresh ShapeEnv and symop cache.
    crate::spec::sym::reset_symop_cache();
    let built = value.map(|v| outcome(env.eval(v).and_then(|v| repr_and_jsonable(&v))));
    (found, built)
}

/// A Python exception is a result like any other; so is "not modelled yet".
fn outcome(r: PyResult<Json>) -> Outcome {
    match r {
        Ok(ok) => Outcome::Ok(ok),
        Err(Raise::Exception(e)) => Outcome::Error(e),
        Err(Raise::Unsupported(why)) => Outcome::Unsupported(why),
    }
}

/// The state a case evaluates in (PyTorch's globals, reset per case).
pub struct Env {
    pub vars: Vec<Value>,
    /// How deep `eval`/`source` are nested now, and the deepest so far.
    depth: Cell<usize>,
    max_depth: Cell<usize>,
    /// The same for `eval` alone (VALUEs in VALUEs).
    value_depth: Cell<usize>,
    max_value_depth: Cell<usize>,
}

/// Past this many nested VALUEs, CPython's recursion limit (1000 frames) may
/// stop `capture.py` with a `RecursionError`, where exactly depending on the
/// form: measured, nested lists fail from 498 levels, tuples from 496,
/// `neg`/`add` chains from 475, `SeqSpec`s from 249 (498 VALUE levels).
/// Where that happens is not modelled: deeper cases are `unsupported`,
/// never a guess. (SOURCE chains do not count: PyTorch evaluates, names and
/// looks up every chain the reader takes, 494 steps and more.)
pub const RECURSION_DEPTH: usize = 240;

impl Env {
    /// Construct `vars` in order with a fresh uid counter.
    pub fn new(decls: &[VarDecl]) -> PyResult<Env> {
        crate::spec::sym::reset_symop_cache();
        let mut uids = UidCounter::default();
        let mut env = Env {
            vars: Vec::with_capacity(decls.len()),
            depth: Cell::new(0),
            max_depth: Cell::new(0),
            value_depth: Cell::new(0),
            max_value_depth: Cell::new(0),
        };
        for d in decls {
            let field = |f: &Option<Expr>| f.as_ref().map(|e| env.eval(e)).transpose();
            let args = VarArgs {
                name: field(&d.name)?,
                min: field(&d.min)?,
                max: field(&d.max)?,
                optimization_hint: field(&d.optimization_hint)?,
            };
            let var = IntVar::construct(d.kind, args, &mut uids)?;
            env.vars.push(Value::object(var));
        }
        Ok(env)
    }

    /// Run one level of nested evaluation: past `SHALLOW` levels, the
    /// rest goes on a stack of its own.
    fn nested<T>(&self, f: impl FnOnce() -> T) -> T {
        let d = self.depth.get() + 1;
        self.depth.set(d);
        self.max_depth.set(self.max_depth.get().max(d));
        let out = if d == SHALLOW {
            with_stack_for(MAX_DEPTH, f)
        } else {
            f()
        };
        self.depth.set(d - 1);
        out
    }

    /// Whether evaluation went deeper than any thread's stack holds: the
    /// `repr`, `to_jsonable` and lookups of what it built need a stack of
    /// their own too.
    pub fn went_deep(&self) -> bool {
        self.max_depth.get() >= SHALLOW
    }

    /// `eval(VALUE)`.
    pub fn eval(&self, e: &Expr) -> PyResult<Value> {
        let d = self.value_depth.get() + 1;
        self.value_depth.set(d);
        self.max_value_depth.set(self.max_value_depth.get().max(d));
        let out = self.nested(|| self.eval_here(e));
        self.value_depth.set(d - 1);
        out
    }

    fn eval_here(&self, e: &Expr) -> PyResult<Value> {
        Ok(match e {
            Expr::None => Value::None,
            Expr::Bool(b) => Value::Bool(*b),
            Expr::Int(i) => Value::Int(Int::from(i)),
            Expr::Float(f) => Value::Float(*f),
            Expr::Str(s) => Value::str(s),
            Expr::List(items) => Value::List(Rc::new(self.eval_all(items)?)),
            Expr::Tuple(items) => Value::Tuple(Rc::new(self.eval_all(items)?)),
            Expr::Dict(pairs) => {
                let mut d = Dict::new();
                for (k, v) in pairs {
                    let k = self.eval(k)?;
                    let v = self.eval(v)?;
                    d.insert(k, v)?;
                }
                Value::Dict(Rc::new(d))
            }
            Expr::Slice(parts) => {
                let [a, b, c] = parts.as_ref();
                Value::Slice(Rc::new([self.eval(a)?, self.eval(b)?, self.eval(c)?]))
            }
            Expr::Var(i) => self.vars[*i].clone(),
            Expr::Op(op, args) => apply_op(*op, &self.eval_all(args)?)?,
            Expr::Spec(ctor, arg) => {
                let arg = self.eval(arg)?;
                match ctor {
                    SpecCtor::TensorSpec => Value::object(TensorSpec::construct(&arg)?),
                    SpecCtor::ObjectSpec => Value::object(ObjectSpec::construct(&arg)?),
                    SpecCtor::DictSpec => Value::object(DictSpec::construct(&arg)?),
                    SpecCtor::SeqSpec => Value::object(SeqSpec::construct(&arg)?),
                    SpecCtor::ParamsSpec => Value::object(ParamsSpec::construct(&arg)?),
                }
            }
            Expr::ShapesSpec {
                params,
                assumptions,
                globals,
            } => {
                let opt = |e: &Option<Box<Expr>>| e.as_ref().map(|e| self.eval(e)).transpose();
                let args = ShapesSpecArgs {
                    params: opt(params)?,
                    assumptions: opt(assumptions)?,
                    globals: opt(globals)?,
                };
                Value::object(ShapesSpec::construct(args)?)
            }
            Expr::Tensor(t) => export_spec::tensor_value(t)?,
            Expr::Pytree(p) => export_spec::pytree_value(self, p)?,
        })
    }

    fn eval_all(&self, items: &[Expr]) -> PyResult<Vec<Value>> {
        items.iter().map(|e| self.eval(e)).collect()
    }

    /// Construct a SOURCE: fields in dataclass order (base first), then the
    /// class's `__post_init__`.
    pub fn source(&self, e: &SourceExpr) -> PyResult<Rc<Source>> {
        self.nested(|| self.source_here(e))
    }

    fn source_here(&self, e: &SourceExpr) -> PyResult<Rc<Source>> {
        let mut base = None;
        let mut index = None;
        let (mut strs, mut bools) = (Vec::new(), Vec::new());
        for (name, field) in &e.fields {
            match field {
                SourceField::Source(s) if *name == "base" => base = Some(self.source(s)?),
                SourceField::Source(s) => index = Some(Index::Source(self.source(s)?)),
                SourceField::Value(v) => index = Some(Index::Value(self.eval(v)?)),
                SourceField::Int(i) => index = Some(Index::Value(Value::Int(Int::from(i)))),
                SourceField::Str(s) => strs.push((*name, s.clone())),
                SourceField::Bool(b) => bools.push((*name, *b)),
            }
        }
        let string = |n: &str| strs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
        let flag = |n: &str| bools.iter().find(|(k, _)| *k == n).is_some_and(|(_, v)| *v);
        let base = || base.clone().expect("the parser requires `base`");
        let class = e.class;
        let source = match class {
            SourceClass::LocalSource => Source::local(
                string("local_name").unwrap_or_default(),
                flag("is_input"),
                flag("is_varargs"),
                flag("is_varkw"),
                flag("is_derefed_cell_contents"),
            ),
            SourceClass::GlobalSource => Source::global(string("global_name").unwrap_or_default()),
            SourceClass::GradSource => Source::attr(
                class,
                base(),
                string("member").unwrap_or_else(|| "grad".into()),
                None,
            )?,
            c if c.is_attr() => Source::attr(
                c,
                base(),
                string("member").unwrap_or_default(),
                string("freevar_name"),
            )?,
            SourceClass::DictGetItemSource | SourceClass::DictSubclassGetItemSource => {
                let index = match index.expect("the parser requires `index`") {
                    Index::Source(s) if s.class == SourceClass::ConstDictKeySource => {
                        DictIndex::ConstDictKey(s)
                    }
                    Index::Source(s) => DictIndex::OtherSource(s),
                    Index::Value(v) => DictIndex::Literal(v),
                };
                Source::dict_getitem(class, base(), index)?
            }
            c if c.is_getitem() => match index.expect("the parser requires `index`") {
                Index::Value(v) => Source::getitem(c, base(), v, flag("index_is_slice")),
                Index::Source(_) => {
                    unreachable!("the parser keeps sources out of GetItemSource.index")
                }
            },
            SourceClass::ConstDictKeySource => match index.expect("the parser requires `index`") {
                Index::Value(v) => Source::const_dict_key(base(), v),
                Index::Source(_) => unreachable!("ConstDictKeySource.index is an int"),
            },
            _ => Source::wrapper(class, base()),
        };
        Ok(Rc::new(source))
    }
}

fn eval_body(vars: &[VarDecl], body: &CaseBody) -> PyResult<Json> {
    eval_body_with(vars, body, |done| match done {
        Finished::Value(v) => repr_and_jsonable(v),
        Finished::Name(name) => {
            let mut m = Map::new();
            m.insert("name".into(), Json::String(name));
            Ok(Json::Object(m))
        }
    })
}

/// What a case body evaluated to, before it is printed.
pub enum Finished<'a> {
    /// The built value or the leaf a lookup found: `repr` and jsonable.
    Value(&'a Value),
    /// A source's `.name`.
    Name(String),
}

/// Evaluate a case body and hand what it gives to `finish` (the printing:
/// `repr_and_jsonable`, or the text writer of `text.rs`), which runs on
/// a stack of its own after a deep evaluation.
fn eval_body_with<T>(
    vars: &[VarDecl],
    body: &CaseBody,
    finish: impl FnOnce(Finished<'_>) -> PyResult<T>,
) -> PyResult<T> {
    let env = Env::new(vars)?;
    match body {
        CaseBody::Build { value } => {
            let v = env.eval(value);
            then(&env, move || finish(Finished::Value(&v?)))
        }
        CaseBody::Lookup { spec, source } => {
            // `lookup_spec_from_dynamo_source(eval(source), eval(spec))`:
            // arguments evaluate left to right.
            let source = env.source(source)?;
            let spec = env.eval(spec);
            then(&env, move || {
                let leaf = lookup_spec_from_dynamo_source(&source, spec?.downcast::<ShapesSpec>())?;
                finish(Finished::Value(&leaf))
            })
        }
        CaseBody::SourceName { source } => {
            let source = env.source(source);
            then(&env, move || finish(Finished::Name(source?.name()?)))
        }
        CaseBody::ExportSpec(_) => Err(Raise::unsupported(
            "an export_spec case has no value to print",
        )),
    }
}

/// [`eval_case`], its result line (and a newline) written to `out` as
/// JSON text directly, byte for byte what `eval_case(case).write_json`
/// writes. `scratch` is a buffer for the reprs on the way.
pub fn eval_case_into(case: &Case, out: &mut Vec<u8>, scratch: &mut String) {
    if let CaseBody::ExportSpec(_) = &case.body {
        let r = eval_case(case);
        let _ = r.write_json(out);
        out.push(b'\n');
        return;
    }
    out.extend_from_slice(b"{\"id\":");
    text::write_json_str(out, &case.id);
    let body = out.len();
    let r = eval_body_with(&case.vars, &case.body, |done| match done {
        Finished::Value(v) => text::write_ok_value(out, v, scratch),
        Finished::Name(name) => {
            text::write_ok_name(out, &name);
            Ok(())
        }
    });
    if let Err(raise) = r {
        out.truncate(body);
        text::write_outcome(out, &outcome(Err(raise)));
    }
    out.extend_from_slice(b"}\n");
}

/// What follows evaluation (`repr`, `to_jsonable`, `.name`, the lookup, and
/// dropping what was built) recurses as deep as evaluation went: after a
/// deep evaluation it runs on a stack of its own.
fn then<T>(env: &Env, rest: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let depth = env.max_value_depth.get();
    if depth > RECURSION_DEPTH {
        with_stack_for(MAX_DEPTH, move || drop(rest));
        return Err(Raise::Unsupported(format!(
            "nested {depth} levels deep: where CPython's recursion limit stops PyTorch at this depth is not modelled"
        )));
    }
    if env.went_deep() {
        with_stack_for(MAX_DEPTH, rest)
    } else {
        rest()
    }
}

enum Index {
    Source(Rc<Source>),
    Value(Value),
}

/// `{"repr": repr(v), "jsonable": enc(v.to_jsonable() if hasattr(...) else v)}`.
pub fn repr_and_jsonable(v: &Value) -> PyResult<Json> {
    let repr = v.repr()?;
    let jsonable = enc(&jsonable_or_self(v)?)?;
    let mut m = Map::new();
    m.insert("repr".into(), Json::String(repr));
    m.insert("jsonable".into(), jsonable);
    Ok(Json::Object(m))
}
