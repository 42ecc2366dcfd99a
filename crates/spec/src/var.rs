//! Mirrors torch/fx/experimental/dynamic_spec.py: `IntVar`, `ShapeVar`, and
//! the `ValueRanges(min, max)` check their constructor runs
//! (torch/utils/_sympy/value_ranges.py: `simple_sympify`, `sympy_generic_le`).

use std::any::Any;
use std::cmp::Ordering;

use num_bigint::BigInt;

use torchspec_pyval::ops::{binary, Op};
use torchspec_pyval::{float_repr, Dict, PyObject, PyResult, Raise, Value};

/// Which of the two var classes (`ShapeVar` subclasses `IntVar`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// `IntVar`: an integer var, unbounded unless given bounds.
    IntVar,
    /// `ShapeVar`: a shape dim, an `IntVar` with `min >= 0` (0 by default).
    ShapeVar,
}

impl VarKind {
    /// The class name, `type(v).__name__`.
    ///
    /// ```
    /// use torchspec_spec::VarKind;
    /// assert_eq!(VarKind::ShapeVar.name(), "ShapeVar");
    /// assert_eq!(VarKind::IntVar.name(), "IntVar");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            VarKind::IntVar => "IntVar",
            VarKind::ShapeVar => "ShapeVar",
        }
    }
}

/// The keyword arguments of a var constructor; `None` means "not passed",
/// `Some(Value::None)` means `None` passed explicitly.
///
/// ```
/// use torchspec_pyval::Value;
/// use torchspec_spec::{IntVar, UidCounter, VarArgs, VarKind};
/// // IntVar('b', min=-1, max=8, optimization_hint=3)
/// let args = VarArgs {
///     name: Some(Value::str("b")),
///     min: Some(Value::int(-1)),
///     max: Some(Value::int(8)),
///     optimization_hint: Some(Value::int(3)),
/// };
/// let b = Value::object(IntVar::construct(VarKind::IntVar, args, &mut UidCounter::default())?);
/// assert_eq!(b.repr()?, "IntVar(b#0, min=-1, max=8, optimization_hint=3)");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct VarArgs {
    /// `name=`: the var's name.
    pub name: Option<Value>,
    /// `min=`: the lower bound.
    pub min: Option<Value>,
    /// `max=`: the upper bound.
    pub max: Option<Value>,
    /// `optimization_hint=`: a hint value for optimization.
    pub optimization_hint: Option<Value>,
}

/// A spec var: a `SymInt` whose symbol is `name#uid`.
///
/// Its `to_jsonable()` names the var without its uid:
///
/// ```
/// use torchspec_pyval::Value;
/// use torchspec_spec::{jsonable_or_self, IntVar, UidCounter, VarArgs, VarKind};
/// let args = VarArgs { name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default() };
/// let a = Value::object(IntVar::construct(VarKind::ShapeVar, args, &mut UidCounter::default())?);
/// assert_eq!(
///     jsonable_or_self(&a)?.repr()?,
///     "{'type': 'ShapeVar', 'name': 'a', 'min': 2, 'max': None, 'optimization_hint': None}"
/// );
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct IntVar {
    /// Which class the var is.
    pub kind: VarKind,
    /// `name`: `"anon"` when not passed or `None`.
    pub name: Value,
    /// The per-case uid from `IntVar._uid_counter`, the `uid` of `name#uid`.
    pub uid: u64,
    /// `min`: `None` for no lower bound (`0` by default for a `ShapeVar`).
    pub min: Value,
    /// `max`: `None` for no upper bound.
    pub max: Value,
    /// `optimization_hint`, or `None`.
    pub optimization_hint: Value,
    /// The sympy symbol of the var with its range, made on first use
    /// (`sym::as_sym`).
    pub(crate) sym_expr: std::cell::OnceCell<crate::sym::expr::Ex>,
    /// `repr()`, made on first use, and whether it is plain (printable
    /// ASCII only, so one line whatever indents it).
    printed: std::cell::OnceCell<(String, bool)>,
    /// A writer's text of the var (the JSON of its `to_jsonable()`), made
    /// on first use: the var never changes.
    text: std::cell::OnceCell<Box<[u8]>>,
}

/// The per-case `IntVar._uid_counter`: each var constructed takes the next
/// uid, printed after its name.
///
/// ```
/// use torchspec_pyval::Value;
/// use torchspec_spec::{IntVar, UidCounter, VarArgs, VarKind};
/// let mut uids = UidCounter::default();
/// let a = IntVar::construct(VarKind::ShapeVar, VarArgs::default(), &mut uids)?;
/// let b = IntVar::construct(VarKind::ShapeVar, VarArgs::default(), &mut uids)?;
/// assert_eq!((a.uid, b.uid), (0, 1));
/// assert_eq!(Value::object(b).repr()?, "ShapeVar(anon#1, min=0)");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug, Default)]
pub struct UidCounter(u64);

impl IntVar {
    /// `IntVar(...)` / `ShapeVar(...)`, with every check in PyTorch's order.
    ///
    /// ```
    /// use torchspec_pyval::{Raise, Value};
    /// use torchspec_spec::{IntVar, UidCounter, VarArgs, VarKind};
    /// let mut uids = UidCounter::default();
    /// // ShapeVar('a', min=2)
    /// let args = VarArgs { name: Some(Value::str("a")), min: Some(Value::int(2)), ..VarArgs::default() };
    /// let a = IntVar::construct(VarKind::ShapeVar, args, &mut uids)?;
    /// assert_eq!(Value::object(a).repr()?, "ShapeVar(a#0, min=2)");
    ///
    /// // ShapeVar('x', min=-1) and IntVar('x', min=5, max=2) raise as PyTorch does.
    /// let args = VarArgs { name: Some(Value::str("x")), min: Some(Value::int(-1)), ..VarArgs::default() };
    /// assert_eq!(
    ///     IntVar::construct(VarKind::ShapeVar, args, &mut uids).unwrap_err(),
    ///     Raise::value_error("ShapeVar requires min >= 0 (a shape dim is non-negative); got min=-1. Use IntVar(...) for unrestricted scalars.")
    /// );
    /// let args = VarArgs {
    ///     name: Some(Value::str("x")),
    ///     min: Some(Value::int(5)),
    ///     max: Some(Value::int(2)),
    ///     ..VarArgs::default()
    /// };
    /// assert_eq!(
    ///     IntVar::construct(VarKind::IntVar, args, &mut uids).unwrap_err(),
    ///     Raise::new("ValueRangeError", "Invalid ranges [5:2]")
    /// );
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn construct(kind: VarKind, args: VarArgs, uids: &mut UidCounter) -> PyResult<IntVar> {
        let min = match (kind, args.min) {
            (_, Some(m)) => m,
            (VarKind::IntVar, None) => Value::None,
            (VarKind::ShapeVar, None) => Value::int(0),
        };
        if kind == VarKind::ShapeVar {
            // `if min < 0` runs before the uid counter: `min=None` fails here
            // with Python's comparison TypeError.
            if binary(Op::Lt, &min, &Value::int(0))?.truth()? {
                return Err(Raise::value_error(format!(
                    "ShapeVar requires min >= 0 (a shape dim is non-negative); got min={}. Use IntVar(...) for unrestricted scalars.",
                    min.py_str()?
                )));
            }
        }
        let name = match args.name {
            None | Some(Value::None) => Value::static_str("anon"),
            Some(n) => n,
        };
        let uid = uids.0;
        uids.0 += 1;
        let max = args.max.unwrap_or(Value::None);
        value_ranges(&min, &max)?;
        Ok(IntVar {
            kind,
            name,
            uid,
            min,
            max,
            optimization_hint: args.optimization_hint.unwrap_or(Value::None),
            sym_expr: std::cell::OnceCell::new(),
            printed: std::cell::OnceCell::new(),
            text: std::cell::OnceCell::new(),
        })
    }

    /// The var's text as `make` writes it, made once and kept (a result
    /// writer's JSON of `to_jsonable()`, say).
    ///
    /// ```
    /// # use torchspec_spec::IntVar;
    /// # fn demo(var: &IntVar) -> torchspec_pyval::PyResult<()> {
    /// let text = var.cached_text(|| Ok(b"{...}".to_vec()))?;
    /// assert_eq!(text, var.cached_text(|| unreachable!())?);
    /// # Ok(()) }
    /// ```
    pub fn cached_text(&self, make: impl FnOnce() -> PyResult<Vec<u8>>) -> PyResult<&[u8]> {
        if let Some(t) = self.text.get() {
            return Ok(t);
        }
        let made = make()?.into_boxed_slice();
        Ok(self.text.get_or_init(|| made))
    }

    /// The sympy symbol name, `name#uid`.
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// use torchspec_spec::{IntVar, UidCounter, VarArgs, VarKind};
    /// let args = VarArgs { name: Some(Value::str("a")), ..VarArgs::default() };
    /// let a = IntVar::construct(VarKind::IntVar, args, &mut UidCounter::default())?;
    /// assert_eq!(a.symbol()?, "a#0");
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn symbol(&self) -> PyResult<String> {
        Ok(format!("{}#{}", self.name.py_str()?, self.uid))
    }

    /// `repr()`: a var's fields never change, and a spec prints it once
    /// per dim that names it, so it is printed once and kept.
    pub(crate) fn printed(&self) -> PyResult<&str> {
        Ok(&self.printed_and_plain()?.0)
    }

    /// `repr()` and whether it is printable ASCII only (DEL included).
    pub(crate) fn printed_and_plain(&self) -> PyResult<&(String, bool)> {
        if let Some(p) = self.printed.get() {
            return Ok(p);
        }
        let mut text = String::new();
        self.write_repr_uncached(&mut text)?;
        let plain = text.bytes().all(|b| (0x20..0x80).contains(&b));
        Ok(self.printed.get_or_init(|| (text, plain)))
    }

    /// `repr()`, printed afresh.
    fn write_repr_uncached(&self, out: &mut String) -> PyResult<()> {
        out.push_str(self.kind.name());
        out.push('(');
        self.name.write_str(out)?;
        out.push('#');
        out.push_str(itoa::Buffer::new().format(self.uid));
        for (label, v) in [
            (", min=", &self.min),
            (", max=", &self.max),
            (", optimization_hint=", &self.optimization_hint),
        ] {
            if !matches!(v, Value::None) {
                out.push_str(label);
                v.write_str(out)?;
            }
        }
        out.push(')');
        Ok(())
    }
}

impl PyObject for IntVar {
    fn type_name(&self) -> &'static str {
        self.kind.name()
    }

    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str(self.printed()?);
        Ok(())
    }

    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        let d = Dict::from_static_pairs([
            ("type", Value::static_str(self.kind.name())),
            ("name", self.name.clone()),
            ("min", self.min.clone()),
            ("max", self.max.clone()),
            ("optimization_hint", self.optimization_hint.clone()),
        ]);
        Some(Ok(Value::Dict(d.into())))
    }

    fn truth(&self) -> Option<PyResult<bool>> {
        // `bool(SymInt)` asks the ShapeEnv to evaluate, which the spec env forbids.
        Some(Err(Raise::type_error(
            "_SpecShapeEnv: 'evaluate_sym_node' is not allowed at spec-definition time. Use IntVar / ShapeVar only inside TensorSpec / ShapesSpec.",
        )))
    }

    fn is_symint(&self) -> bool {
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A bound after `simple_sympify`: the range endpoints sympy sees.
#[derive(Clone, Debug)]
enum Bound {
    Int(BigInt),
    Float(f64),
    Bool(bool),
    /// torch's `int_oo` (`neg`: `-int_oo`).
    IntOo {
        neg: bool,
    },
    /// sympy's `oo`, from a float infinity.
    Oo {
        neg: bool,
    },
}

impl Bound {
    fn sympify(v: &Value) -> PyResult<Bound> {
        Ok(match v {
            Value::Bool(b) => Bound::Bool(*b),
            Value::Int(i) => Bound::Int(i.to_big()),
            Value::Float(f) if f.is_infinite() => Bound::Oo { neg: *f < 0.0 },
            Value::Float(f) => Bound::Float(*f),
            other => {
                return Err(Raise::new(
                    "AssertionError",
                    format!(
                        "not simple sympy type <class '{}'>: {}",
                        other.type_name(),
                        other.py_str()?
                    ),
                ))
            }
        })
    }

    /// Position on the extended line: `-oo < -int_oo < finite < int_oo < oo`.
    fn rank(&self) -> (i8, Option<f64>, Option<&BigInt>) {
        match self {
            Bound::Oo { neg: true } => (-2, None, None),
            Bound::IntOo { neg: true } => (-1, None, None),
            Bound::Int(i) => (0, None, Some(i)),
            Bound::Float(f) => (0, Some(*f), None),
            Bound::IntOo { neg: false } => (1, None, None),
            Bound::Oo { neg: false } => (2, None, None),
            Bound::Bool(_) => unreachable!("bools are not ordered with numbers"),
        }
    }

    fn le(&self, other: &Bound) -> bool {
        let (ra, fa, ia) = self.rank();
        let (rb, fb, ib) = other.rank();
        if ra != rb || ra != 0 {
            return ra <= rb;
        }
        let a = match (ia, fa) {
            (Some(i), _) => Value::big(i.clone()),
            (_, Some(f)) => Value::Float(f),
            _ => unreachable!(),
        };
        let b = match (ib, fb) {
            (Some(i), _) => Value::big(i.clone()),
            (_, Some(f)) => Value::Float(f),
            _ => unreachable!(),
        };
        a.as_number()
            .zip(b.as_number())
            .and_then(|(x, y)| x.num_cmp(&y))
            .is_some_and(|o| o != Ordering::Greater)
    }

    /// `str()` of the sympy object.
    fn sympy_str(&self) -> PyResult<String> {
        Ok(match self {
            Bound::Int(i) => i.to_string(),
            Bound::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Bound::IntOo { neg } => format!("{}int_oo", if *neg { "-" } else { "" }),
            Bound::Oo { neg } => format!("{}oo", if *neg { "-" } else { "" }),
            Bound::Float(f) => {
                // sympy prints Floats with 15 significant digits
                // (`2.50000000000000`); not modelled yet.
                return Err(Raise::unsupported(format!(
                    "printing the sympy Float {} in a ValueRanges error",
                    float_repr(*f)
                )));
            }
        })
    }
}

/// `ValueRanges(min or -int_oo, max or int_oo)`: only its checks matter here.
fn value_ranges(min: &Value, max: &Value) -> PyResult<()> {
    let lower = match min {
        Value::None => Bound::IntOo { neg: true },
        v => Bound::sympify(v)?,
    };
    let upper = match max {
        Value::None => Bound::IntOo { neg: false },
        v => Bound::sympify(v)?,
    };
    let ok = match (&lower, &upper) {
        (Bound::Bool(_), Bound::Bool(_)) | (Bound::Bool(_), _) | (_, Bound::Bool(_)) => {
            match (&lower, &upper) {
                (Bound::Bool(l), Bound::Bool(u)) => !*l || *u,
                (Bound::Bool(_), _) => {
                    return Err(Raise::new(
                        "AssertionError",
                        format!("({}, {})", lower.sympy_str()?, upper.sympy_str()?),
                    ))
                }
                _ => {
                    return Err(Raise::new(
                        "AssertionError",
                        "upper must be a sympy.Expr when lower is a sympy.Expr",
                    ))
                }
            }
        }
        _ => lower.le(&upper),
    };
    if !ok {
        return Err(Raise::new(
            "ValueRangeError",
            format!(
                "Invalid ranges [{}:{}]",
                lower.sympy_str()?,
                upper.sympy_str()?
            ),
        ));
    }
    Ok(())
}
