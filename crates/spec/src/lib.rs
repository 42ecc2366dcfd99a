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
///
/// ```
/// use torchspec_pyval::{ops::Op, Value};
/// use torchspec_spec::{apply_op, is_symbolic, IntVar, UidCounter, VarArgs, VarKind};
/// let a = Value::object(IntVar::construct(VarKind::ShapeVar, VarArgs::default(), &mut UidCounter::default())?);
/// assert!(is_symbolic(&a));
/// assert!(is_symbolic(&apply_op(Op::Add, &[a.clone(), Value::int(1)])?));
/// assert!(!is_symbolic(&Value::int(1)));
/// // `a - a` simplifies to 0, still a SymInt.
/// let zero = apply_op(Op::Sub, &[a.clone(), a])?;
/// assert!(is_symbolic(&zero));
/// assert_eq!((zero.type_name(), zero.repr()?.as_str()), ("SymInt", "0"));
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
pub fn is_symbolic(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.is_symint() || o.is_symbool()
        || o.as_any().downcast_ref::<sym::SymNode>().is_some())
}

/// Apply a case-format operator, Python style: plain values compute, and a
/// symbolic operand would build a derived expression.
///
/// A derived expression prints as torch prints a `SymInt` or `SymBool`:
///
/// ```
/// use torchspec_pyval::{ops::Op, Raise, Value};
/// use torchspec_spec::{apply_op, IntVar, UidCounter, VarArgs, VarKind};
/// let mut uids = UidCounter::default();
/// let var = |kind, name: &str, min: Option<i64>, uids: &mut UidCounter| -> Result<Value, Raise> {
///     let args = VarArgs { name: Some(Value::str(name)), min: min.map(Value::int), ..VarArgs::default() };
///     Ok(Value::object(IntVar::construct(kind, args, uids)?))
/// };
/// let a = var(VarKind::ShapeVar, "a", Some(2), &mut uids)?; // a#0
/// let n = var(VarKind::IntVar, "n", None, &mut uids)?; // n#1
/// let op = |op, x: &Value, y: &Value| apply_op(op, &[x.clone(), y.clone()]);
/// let one = Value::int(1);
///
/// let e = op(Op::Add, &op(Op::Mul, &a, &Value::int(2))?, &one)?; // a * 2 + 1
/// assert_eq!((e.type_name(), e.repr()?.as_str()), ("SymInt", "2*a#0 + 1"));
/// assert_eq!(op(Op::Mul, &op(Op::Add, &a, &one)?, &n)?.repr()?, "n#1*(a#0 + 1)");
/// assert_eq!(op(Op::FloorDiv, &a, &Value::int(2))?.repr()?, "(a#0//2)");
/// assert_eq!(op(Op::Mod, &a, &Value::int(3))?.repr()?, "Mod(a#0, 3)");
/// assert_eq!(op(Op::TrueDiv, &a, &Value::int(2))?.repr()?, "IntTrueDiv(a#0, 2)");
/// assert_eq!(op(Op::Pow, &op(Op::Add, &a, &one)?, &Value::int(2))?.repr()?, "(a#0 + 1)**2");
/// assert_eq!(apply_op(Op::Neg, &[a.clone()])?.repr()?, "-a#0");
///
/// let ge = op(Op::Ge, &e, &n)?; // a * 2 + 1 >= n
/// assert_eq!((ge.type_name(), ge.repr()?.as_str()), ("SymBool", "n#1 <= 2*a#0 + 1"));
/// assert_eq!(op(Op::Eq, &a, &Value::int(3))?.repr()?, "Eq(a#0, 3)");
///
/// // Plain values compute as Python does.
/// assert_eq!(op(Op::FloorDiv, &Value::int(-7), &Value::int(2))?.repr()?, "-4");
/// # Ok::<(), Raise>(())
/// ```
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
///
/// ```
/// use torchspec_pyval::Value;
/// use torchspec_spec::{jsonable_or_self, IntVar, UidCounter, VarArgs, VarKind};
/// let args = VarArgs { name: Some(Value::str("n")), ..VarArgs::default() };
/// let n = Value::object(IntVar::construct(VarKind::IntVar, args, &mut UidCounter::default())?);
/// assert_eq!(
///     jsonable_or_self(&n)?.repr()?,
///     "{'type': 'IntVar', 'name': 'n', 'min': None, 'max': None, 'optimization_hint': None}"
/// );
/// assert_eq!(jsonable_or_self(&Value::int(4))?.repr()?, "4");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
pub fn jsonable_or_self(v: &Value) -> PyResult<Value> {
    match v {
        Value::Object(o) => match o.to_jsonable() {
            Some(r) => r,
            None => Ok(v.clone()),
        },
        _ => Ok(v.clone()),
    }
}
