//! What a `ShapesSpec` does to `torch.export.export` (strict and
//! non-strict), `make_fx` and `torch.compile` in PyTorch 2.15.0
//! (`shared/export-spec-format.md`): the spec is bound to the call's
//! inputs (`torch/fx/experimental/_spec_binding.py`), every dynamic dim and
//! int gets an unbacked symbol, bounds, repeated vars, derived dims and
//! assumptions are wired into the ShapeEnv (`symbolic_shapes.py`'s
//! `_wire_spec_slot`, `_emit_pending_spec_assumption`,
//! `_finalize_spec_wiring`), and the traced graph comes out with its
//! placeholders, range constraints and `_assert_scalar` nodes
//! (`torch/fx/passes/runtime_assert.py`).
//!
//! The body traced is the contract's fixed shape-agnostic one, so what
//! comes out depends only on the inputs, the spec and the API. What the
//! model does not cover is [`Raise::Unsupported`], never a guess.
//!
//! ```
//! use torchspec_pyval::Value;
//! use torchspec_spec_export::{evaluate, Api, Call, Param, ParamKind};
//! use torchspec_export::inputs::probe::Tensor;
//!
//! let x = Value::object(Tensor { shape: vec![4, 3], dtype: "float32".into() });
//! let call = Call::new(Api::Export, vec![Param::new("x", ParamKind::PositionalOrKeyword)], vec![x]);
//! let out = evaluate(&call);
//! let traced = out.result.unwrap();
//! assert_eq!(traced.placeholders[0].0, "x");
//! assert!(out.wiring.is_empty());
//! ```

#![warn(missing_docs)]

mod api;
mod auto_dynamic;
mod binding;
mod compile;
mod graph;
mod keys;
mod leaves;
mod shape_env;
mod strides;
mod wiring;

pub use api::evaluate;

use num_bigint::BigInt;
use torchspec_pyval::{PyException, PyResult, Value};

#[doc(no_inline)]
pub use torchspec_pyval::Raise;

/// Which PyTorch entry point the spec drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `torch.export.export(..., strict=False)`.
    Export,
    /// `torch.export.export(..., strict=True)`.
    ExportStrict,
    /// `make_fx(f, tracing_mode="fake", dynamic_shapes=...)(*args)`.
    MakeFx,
    /// `torch.compile(module, backend=..., dynamic_shapes=...)`.
    Compile,
}

impl Api {
    /// The case format's name of the API.
    pub fn name(self) -> &'static str {
        match self {
            Api::Export => "export",
            Api::ExportStrict => "export_strict",
            Api::MakeFx => "make_fx",
            Api::Compile => "compile",
        }
    }

    /// The API named `name` in the case format.
    pub fn from_name(name: &str) -> Option<Api> {
        [Api::Export, Api::ExportStrict, Api::MakeFx, Api::Compile]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

/// `inspect.Parameter.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `POSITIONAL_ONLY`.
    PositionalOnly,
    /// `POSITIONAL_OR_KEYWORD`.
    PositionalOrKeyword,
    /// `VAR_POSITIONAL` (`*args`).
    VarPositional,
    /// `KEYWORD_ONLY`.
    KeywordOnly,
    /// `VAR_KEYWORD` (`**kwargs`).
    VarKeyword,
}

impl ParamKind {
    /// The kind named `name` (`inspect.Parameter`'s kind names).
    pub fn from_name(name: &str) -> Option<ParamKind> {
        Some(match name {
            "POSITIONAL_ONLY" => ParamKind::PositionalOnly,
            "POSITIONAL_OR_KEYWORD" => ParamKind::PositionalOrKeyword,
            "VAR_POSITIONAL" => ParamKind::VarPositional,
            "KEYWORD_ONLY" => ParamKind::KeywordOnly,
            "VAR_KEYWORD" => ParamKind::VarKeyword,
            _ => return None,
        })
    }
}

/// One parameter of `forward` after `self`.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ParamKind,
    /// Its default value, if it has one.
    pub default: Option<Value>,
}

impl Param {
    /// A parameter without a default.
    pub fn new(name: &str, kind: ParamKind) -> Param {
        Param {
            name: name.to_string(),
            kind,
            default: None,
        }
    }
}

/// Which leaves the fixed body reads (`touch_all` reads ints too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// Tensors and ints.
    TouchAll,
    /// Tensors only.
    TouchTensors,
}

/// A later call of a compiled module: positional and keyword inputs.
#[derive(Clone, Debug)]
pub struct LaterCall {
    /// The positional inputs.
    pub args: Vec<Value>,
    /// The keyword inputs, in order.
    pub kwargs: Vec<(Value, Value)>,
}

/// One `export_spec` case, evaluated up to the API call: every VALUE is
/// already a Python value (tensors are `torchspec_export::inputs::probe::Tensor`,
/// registered pytree types `torchspec_export::pytree::Container`).
#[derive(Clone, Debug)]
pub struct Call {
    /// The entry point.
    pub api: Api,
    /// `forward`'s parameters after `self`.
    pub signature: Vec<Param>,
    /// The positional inputs.
    pub args: Vec<Value>,
    /// The keyword inputs, in order (keys as given).
    pub kwargs: Vec<(Value, Value)>,
    /// `dynamic_shapes=`: `None` when the keyword is not passed.
    pub spec: Option<Value>,
    /// The argument of `@dynamic_spec(...)` on `forward`, if decorated.
    pub decorator: Option<Value>,
    /// The module's parameters, by dotted name, in registration order.
    pub parameters: Vec<(String, Value)>,
    /// The module's buffers, by dotted name, in registration order.
    pub buffers: Vec<(String, Value)>,
    /// The fixed body.
    pub body: Body,
    /// Extra keyword arguments of the API call.
    pub options: Vec<(String, Value)>,
    /// `compile` only: the calls after the first.
    pub calls: Vec<LaterCall>,
}

impl Call {
    /// A call of `api` with `signature` on `args` and nothing else.
    pub fn new(api: Api, signature: Vec<Param>, args: Vec<Value>) -> Call {
        Call {
            api,
            signature,
            args,
            kwargs: Vec::new(),
            spec: None,
            decorator: None,
            parameters: Vec::new(),
            buffers: Vec::new(),
            body: Body::TouchAll,
            options: Vec::new(),
            calls: Vec::new(),
        }
    }
}

/// One traced call of the spec wiring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wiring {
    /// `_wire_spec_slot(spec, size)`: `str` of the size's expression, and
    /// `IntVar NAME#UID` or `expr ` + `str` of the spec's expression.
    Slot(String, String),
    /// `_emit_pending_spec_assumption(env, b)`: `str` of `b` after the
    /// bound symbols are substituted.
    Emit(String),
}

/// One size of a placeholder tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A plain int.
    Int(BigInt),
    /// The sympy `str` of a symbolic size (a number too, once replaced).
    Expr(String),
}

/// A placeholder's `meta["val"]`.
#[derive(Clone, Debug)]
pub enum Placeholder {
    /// A tensor: its sizes and dtype name.
    Tensor(Vec<Dim>, String),
    /// A `SymInt`: the `str` of its expression.
    SymInt(String),
    /// Any other value.
    Const(Value),
}

/// What a later call of a compiled module did.
#[derive(Clone, Debug)]
pub enum LaterOutcome {
    /// Whether the backend compiled again during the call.
    Recompiled(bool),
    /// The exception the call raised.
    Error(PyException),
}

/// One entry of `ep.range_constraints`: the symbol, its lower and upper
/// bound (`None` for `-int_oo` / `int_oo`).
pub type RangeConstraint = (String, Option<BigInt>, Option<BigInt>);

/// The traced graph, as the result's `ok` shows it.
#[derive(Clone, Debug)]
pub struct Traced {
    /// Every placeholder in order, with its name.
    pub placeholders: Vec<(String, Placeholder)>,
    /// `ep.range_constraints` (export only): symbol, lower, upper (`None`
    /// for `-int_oo` / `int_oo`).
    pub range_constraints: Option<Vec<RangeConstraint>>,
    /// The message of every `_assert_scalar` node, in order.
    pub asserts: Vec<String>,
    /// `compile` with later calls: what each did.
    pub calls: Option<Vec<LaterOutcome>>,
}

/// The result of one case: the traced graph or what was raised (or not
/// modelled), and the wiring calls made on the way.
#[derive(Debug)]
pub struct Outcome {
    /// The traced graph, or the exception.
    pub result: PyResult<Traced>,
    /// The wiring calls, in call order.
    pub wiring: Vec<Wiring>,
}
