//! The spec wiring of `symbolic_shapes.py`: `_symbolic_context_from_shapes_spec`
//! (the per-tensor checks), `_wire_spec_slot`, `_emit_pending_spec_assumption`,
//! `_drain_shape_spec_pending_assumptions`, `_wire_spec_assumptions` and
//! `_finalize_spec_wiring`, with the fakification of each flat input leaf
//! as the export tracers, `make_fx` and dynamo do it.

use num_bigint::BigInt;
use torchspec_pyval::{PyResult, Raise, Value};
use torchspec_spec::sym::expr::facts;
use torchspec_spec::sym::expr::{self, Ex, Node, Rel, Symbol};
use torchspec_spec::sym::print::sstr;
use torchspec_spec::sym::ranges::Ext;
use torchspec_spec::sym::subst::xreplace;
use torchspec_spec::sym::{expr_of, PyType};
use torchspec_spec::{IntVar, ShapesSpec, TensorSpec};

use crate::shape_env::{range_of, Range, ShapeEnv};
use crate::Wiring;

/// How an int input's fresh symbol starts out.
#[derive(Clone, Copy)]
pub(crate) struct IntSymbols {
    /// `[0, int_oo]` and size-like (strict export, compile), or
    /// `[-int_oo, int_oo]` (non-strict export, make_fx).
    pub nonneg: bool,
    /// Whether a static-int spec is checked against the value.
    pub check_static: bool,
}

/// A flat input leaf after fakification.
#[derive(Clone, Debug)]
pub(crate) enum Fake {
    /// A tensor: per dim its static size or its unbacked symbol.
    Tensor(Vec<Size>, String),
    /// An int made an unbacked `SymInt`.
    Sym(usize),
    /// Any other value, kept as it is.
    Const(Value),
}

/// A tensor size: static, or an unbacked symbol's index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Size {
    Static(i64),
    Sym(usize),
}

/// The wiring state of one trace: the ShapeEnv, the spec symbols bound so
/// far (`_spec_symbol_to_compile_symbol`), the pending checks and the
/// trace of wiring calls.
pub(crate) struct Wirer {
    pub env: ShapeEnv,
    pub trace: Vec<Wiring>,
    bound: Vec<(String, Ex)>,
    pending: Vec<(Vec<String>, Ex)>,
}

const CHECK_FAILED: &str = "Expected cond to be True, but got False. (Could this error message be improved? If so, please report an enhancement request to PyTorch.)";

fn free(e: &Ex) -> Vec<String> {
    let mut out = Vec::new();
    facts::free_symbols(e, &mut out);
    out
}

impl Wirer {
    pub fn new() -> Wirer {
        Wirer {
            env: ShapeEnv::new(),
            trace: Vec::new(),
            bound: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|(n, _)| n == name)
    }

    /// `_wire_spec_assumptions`: every assumption pending, before any input.
    pub fn wire_assumptions(&mut self, spec: &ShapesSpec) -> PyResult<()> {
        for a in &spec.assumptions {
            let Some((e, _)) = expr_of(a)? else {
                return Err(Raise::unsupported("an assumption that is not a SymBool"));
            };
            self.pending.push((free(&e), e));
        }
        Ok(())
    }

    /// `_emit_pending_spec_assumption(env, b)`.
    fn emit(&mut self, b: &Ex) -> PyResult<()> {
        let bound = self.bound.clone();
        let substituted = xreplace(b, &|s: &Symbol| {
            bound
                .iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, u)| u.clone())
        })?;
        self.trace.push(Wiring::Emit(sstr(&substituted)));
        self.env.guard_or_defer(&substituted)?;
        Ok(())
    }

    /// `_drain_shape_spec_pending_assumptions`.
    fn drain(&mut self) -> PyResult<()> {
        let pending = std::mem::take(&mut self.pending);
        let mut keep = Vec::new();
        for (names, b) in pending {
            if names.iter().all(|n| self.is_bound(n)) {
                self.emit(&b)?;
            } else {
                keep.push((names, b));
            }
        }
        self.pending = keep;
        Ok(())
    }

    /// `_wire_spec_slot(spec, size_sym)` for the fresh symbol `uK`.
    pub fn slot(&mut self, spec: &Value, k: usize, u: &Ex) -> PyResult<()> {
        if let Some(var) = spec.downcast::<IntVar>() {
            return self.slot_var(spec, var, k, u);
        }
        match expr_of(spec)? {
            Some((e, PyType::Int)) => {
                self.trace
                    .push(Wiring::Slot(format!("u{k}"), format!("expr {}", sstr(&e))));
                let names = free(&e);
                let check = expr::relational(Rel::Eq, u, &e)?;
                if names.iter().all(|n| self.is_bound(n)) {
                    self.emit(&check)
                } else {
                    self.pending.push((names, check));
                    Ok(())
                }
            }
            _ => Err(Raise::type_error(format!(
                "_wire_spec_slot: expected IntVar or SymInt, got {}",
                crate::keys::type_name(spec)
            ))),
        }
    }

    fn slot_var(&mut self, spec: &Value, var: &IntVar, k: usize, u: &Ex) -> PyResult<()> {
        let Some((sym, _)) = expr_of(spec)? else {
            return Err(Raise::unsupported("a var without a symbol"));
        };
        let Node::Sym(s) = &*sym else {
            return Err(Raise::unsupported("a var whose symbol is not a Symbol"));
        };
        self.trace
            .push(Wiring::Slot(format!("u{k}"), format!("IntVar {}", s.name)));
        if let Some((_, first)) = self.bound.iter().find(|(n, _)| *n == s.name).cloned() {
            let eq = expr::relational(Rel::Eq, u, &first)?;
            self.env.guard_or_defer(&eq)?;
            return Ok(());
        }
        self.bound.push((s.name.clone(), u.clone()));
        for (bound, op) in [(&var.min, Rel::Ge), (&var.max, Rel::Le)] {
            match bound {
                Value::None => {}
                Value::Int(i) => self.check(&expr::relational(op, u, &expr::int(i.to_big()))?)?,
                _ => return Err(Raise::unsupported("a var bound that is not an int")),
            }
        }
        self.drain()
    }

    /// `torch._check(cond)`: a statically false condition raises.
    fn check(&mut self, cond: &Ex) -> PyResult<()> {
        let ok = match &**cond {
            Node::True => true,
            Node::False => false,
            _ => self.env.guard_or_defer(cond)?,
        };
        if ok {
            Ok(())
        } else {
            Err(Raise::new("RuntimeError", CHECK_FAILED))
        }
    }

    /// `_finalize_spec_wiring`.
    pub fn finalize(&self) -> PyResult<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pretty = |s: &str| strip_uids(s);
        let mut lines = Vec::new();
        let mut all: Vec<String> = Vec::new();
        for (names, b) in &self.pending {
            let mut missing: Vec<String> = names
                .iter()
                .filter(|n| !self.is_bound(n))
                .cloned()
                .collect();
            for m in &missing {
                if !all.contains(m) {
                    all.push(m.clone());
                }
            }
            missing = missing.iter().map(|m| pretty(m)).collect();
            missing.sort();
            lines.push(format!(
                "  - {}  (unbound: {})",
                pretty(&sstr(b)),
                str_list(&missing)?
            ));
        }
        let mut all: Vec<String> = all.iter().map(|m| pretty(m)).collect();
        all.sort();
        Err(Raise::value_error(format!(
            "shapes_spec: {} pending check(s) reference unbound IntVar(s) {}. Every IntVar used in a derived expression or assumption must also appear as a bare-IntVar slot somewhere in the spec. Offending checks:\n{}",
            lines.len(),
            str_list(&all)?,
            lines.join("\n")
        )))
    }

    /// A fresh ShapeEnv for the next compiled frame (the trace goes on).
    pub fn reset_env(&mut self) {
        self.env = ShapeEnv::new();
        self.bound.clear();
        self.pending.clear();
    }

    /// The ShapeEnv of the frame just traced.
    pub fn take_env(&mut self) -> ShapeEnv {
        std::mem::replace(&mut self.env, ShapeEnv::new())
    }

    /// A fresh unbacked symbol for a tensor dim: `[0, int_oo]`, size-like.
    pub fn dim_symbol(&mut self) -> (usize, Ex) {
        self.env.new_symbol(
            Range::new(Ext::Fin(BigInt::from(0)), Ext::PosInf),
            true,
            true,
        )
    }

    /// A fresh unbacked symbol for an int input.
    pub fn int_symbol(&mut self, how: IntSymbols) -> (usize, Ex) {
        if how.nonneg {
            self.env.new_symbol(
                Range::new(Ext::Fin(BigInt::from(0)), Ext::PosInf),
                true,
                true,
            )
        } else {
            self.env.new_symbol(range_of(None, None), false, false)
        }
    }
}

/// `re.sub(r"#\d+", "", s)`.
fn strip_uids(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '#' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `repr(list_of_str)`.
fn str_list(xs: &[String]) -> PyResult<String> {
    Value::List(std::rc::Rc::new(xs.iter().map(|x| Value::str(x)).collect())).repr()
}

/// Fakify one flat leaf against its bound spec, wiring its symbols.
/// `source` names the leaf in the messages (`L['x']`, `input0`, ...).
pub(crate) fn fakify(
    w: &mut Wirer,
    leaf: &Value,
    spec: Option<&Value>,
    source: &str,
    ints: IntSymbols,
) -> PyResult<Fake> {
    if let Some(t) = crate::keys::tensor(leaf) {
        let Some(spec) = spec else {
            return Ok(Fake::Tensor(
                t.shape.iter().map(|d| Size::Static(*d)).collect(),
                t.dtype.clone(),
            ));
        };
        let ts = spec
            .downcast::<TensorSpec>()
            .ok_or_else(|| Raise::unsupported("a tensor leaf whose spec is not a TensorSpec"))?;
        return fakify_tensor(w, t, ts, source);
    }
    if let Value::Int(i) = leaf {
        return match spec {
            Some(Value::Int(s)) => {
                if ints.check_static && s.to_big() != i.to_big() {
                    return Err(Raise::value_error(format!(
                        "shapes_spec declared {source} as static with value {}, but got {} at trace time",
                        s.to_big(),
                        i.to_big()
                    )));
                }
                Ok(Fake::Const(leaf.clone()))
            }
            Some(Value::Bool(b)) => {
                if ints.check_static && BigInt::from(u8::from(*b)) != i.to_big() {
                    return Err(Raise::value_error(format!(
                        "shapes_spec declared {source} as static with value {}, but got {} at trace time",
                        if *b { "True" } else { "False" },
                        i.to_big()
                    )));
                }
                Ok(Fake::Const(leaf.clone()))
            }
            Some(s) if is_symint(s)? => {
                let (k, u) = w.int_symbol(ints);
                w.slot(s, k, &u)?;
                Ok(Fake::Sym(k))
            }
            _ => Ok(Fake::Const(leaf.clone())),
        };
    }
    Ok(Fake::Const(leaf.clone()))
}

/// A tensor leaf under its spec (`None`: static), as dynamo wraps it.
pub(crate) fn fakify_tensor_spec(
    w: &mut Wirer,
    leaf: &Value,
    spec: Option<&Value>,
    source: &str,
) -> PyResult<Fake> {
    fakify(
        w,
        leaf,
        spec,
        source,
        IntSymbols {
            nonneg: true,
            check_static: true,
        },
    )
}

/// `isinstance(v, (IntVar, torch.SymInt))`.
fn is_symint(v: &Value) -> PyResult<bool> {
    Ok(v.downcast::<IntVar>().is_some() || matches!(expr_of(v)?, Some((_, PyType::Int))))
}

fn fakify_tensor(
    w: &mut Wirer,
    t: &torchspec_export::inputs::probe::Tensor,
    ts: &TensorSpec,
    source: &str,
) -> PyResult<Fake> {
    if ts.dims.len() != t.shape.len() {
        return Err(Raise::value_error(format!(
            "TensorSpec has {} dims but tensor {source} has {} dims",
            ts.dims.len(),
            t.shape.len()
        )));
    }
    let mut dynamic = Vec::with_capacity(ts.dims.len());
    for (i, (d, actual)) in ts.dims.iter().zip(&t.shape).enumerate() {
        match d {
            Value::Int(_) | Value::Bool(_) => {
                let want = match d {
                    Value::Int(v) => v.to_big(),
                    Value::Bool(b) => BigInt::from(u8::from(*b)),
                    _ => unreachable!("matched above"),
                };
                if want != BigInt::from(*actual) {
                    return Err(Raise::value_error(format!(
                        "shapes_spec declares dim {i} as static with value {}, but got {actual}",
                        d.py_str()?
                    )));
                }
                dynamic.push(false);
            }
            Value::None => dynamic.push(false),
            other if is_symint(other)? => dynamic.push(true),
            other => {
                return Err(Raise::value_error(format!(
                    "shapes_spec dim {i}: unexpected value {} (expected LeafIntSpec)",
                    other.repr()?
                )))
            }
        }
    }
    let mut sizes = Vec::with_capacity(t.shape.len());
    let mut syms = Vec::new();
    for (dynamic, actual) in dynamic.iter().zip(&t.shape) {
        if *dynamic {
            let (k, u) = w.dim_symbol();
            syms.push((k, u));
            sizes.push(Size::Sym(k));
        } else {
            sizes.push(Size::Static(*actual));
        }
    }
    let mut next = syms.into_iter();
    for d in &ts.dims {
        if is_symint(d)? {
            if let Some((k, u)) = next.next() {
                w.slot(d, k, &u)?;
            }
        }
    }
    Ok(Fake::Tensor(sizes, t.dtype.clone()))
}
