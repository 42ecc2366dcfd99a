#![warn(missing_docs)]
//! Mirrors torch/fx/experimental/dynamic_spec.py (PyTorch 2.15.0): the spec
//! vars, the tensor and container specs, `ParamsSpec` and `ShapesSpec`.
//! Knows nothing about files, JSON or sources.

mod containers;
mod fastrepr;
pub mod source;
pub mod sym;
pub mod var;

pub use containers::{
    DictSpec, ObjectSpec, ParamsSpec, SeqSpec, ShapesSpec, ShapesSpecArgs, TensorSpec,
};
pub use var::{IntVar, UidCounter, VarArgs, VarKind};

use torchspec_pyval::{ops, PyResult, Value};

/// `_INDENT`: two spaces per nesting level.
pub(crate) const INDENT: &str = "  ";

/// Whether `v` is a torch symbolic value (`SymInt` / `SymBool`), whose
/// operators build expressions instead of computing.
pub fn is_symbolic(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.is_symint() || o.is_symbool()
        || o.as_any().downcast_ref::<sym::SymNode>().is_some())
}

/// Apply a case-format operator, Python style: plain values compute, and a
/// symbolic operand would build a derived expression.
pub fn apply_op(op: ops::Op, args: &[Value]) -> PyResult<Value> {
    if args.iter().any(is_symbolic) {
        return sym::apply(op, args);
    }
    match args {
        [a] => ops::unary(op, a),
        [a, b] => ops::binary(op, a, b),
        _ => unreachable!("op arity is checked when the case is parsed"),
    }
}

/// `spec.to_jsonable() if hasattr(spec, "to_jsonable") else spec`.
pub fn jsonable_or_self(v: &Value) -> PyResult<Value> {
    match v {
        Value::Object(o) => match o.to_jsonable() {
            Some(r) => r,
            None => Ok(v.clone()),
        },
        _ => Ok(v.clone()),
    }
}
