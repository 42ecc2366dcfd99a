//! Mirrors torch's symbolic scalars on the spec ShapeEnv: `SymInt`,
//! `SymFloat`, `SymBool` (torch/__init__.py) and their operators
//! (torch/fx/experimental/sym_node.py: `_make_user_magic`,
//! `binary_magic_impl`), with CPython's operator dispatch around them
//! (reflected operands, NotImplemented, subclass-first comparisons).
//! The sympy side lives in `expr` (construction), `facts` (assumptions and
//! value ranges), `order` (sort keys) and `print` (`str()`).

pub mod expr;
pub mod facts;
pub mod order;
pub mod print;

use std::any::Any;
use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use self::expr::{Ex, Node, Rel, Symbol};
use super::var::IntVar;
use crate::pyval::ops::{self, Op};
use crate::pyval::{float_to_bigint, PyObject, PyResult, Raise, Value};

/// The Python type of a symbolic value (`SymNode.pytype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyType {
    Int,
    Float,
    Bool,
}

/// A derived `SymInt` / `SymFloat` / `SymBool`: an operator result.
#[derive(Debug)]
pub struct SymNode {
    pub expr: Ex,
    pub pytype: PyType,
}

/// `_SpecShapeEnv` refuses everything that would evaluate an expression.
pub fn not_allowed(what: &str) -> Raise {
    Raise::type_error(format!(
        "_SpecShapeEnv: '{what}' is not allowed at spec-definition time. Use IntVar / ShapeVar only inside TensorSpec / ShapesSpec."
    ))
}

impl PyObject for SymNode {
    fn type_name(&self) -> &'static str {
        match self.pytype {
            PyType::Int => "SymInt",
            PyType::Float => "SymFloat",
            PyType::Bool => "SymBool",
        }
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str(&print::sstr(&self.expr));
        Ok(())
    }
    fn truth(&self) -> Option<PyResult<bool>> {
        // `bool()` guards, which the spec env forbids (even for a constant).
        Some(Err(not_allowed("evaluate_sym_node")))
    }
    fn check_hashable(&self) -> PyResult<()> {
        match self.pytype {
            // SymInt.__hash__ refuses anything but nested ints.
            PyType::Int => Err(Raise::type_error("unhashable type: non-nested SymInt")),
            // SymBool / SymFloat hash their value, which needs a guard.
            _ => Err(not_allowed("evaluate_sym_node")),
        }
    }
    fn is_symint(&self) -> bool {
        self.pytype == PyType::Int
    }
    fn is_symbool(&self) -> bool {
        self.pytype == PyType::Bool
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Where a symbolic operand sits in the class tree; comparisons try the
/// right operand's reflected method first when its class is a proper
/// subclass of the left's (`SymInt` <- `IntVar` <- `ShapeVar`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    SymInt,
    IntVar,
    ShapeVar,
    SymFloat,
    SymBool,
}

impl Class {
    fn is_proper_subclass_of(self, other: Class) -> bool {
        matches!(
            (self, other),
            (Class::IntVar, Class::SymInt)
                | (Class::ShapeVar, Class::SymInt)
                | (Class::ShapeVar, Class::IntVar)
        )
    }
}

#[derive(Clone, Debug)]
struct Sym {
    expr: Ex,
    pytype: PyType,
    class: Class,
}

fn bound_of(v: &Value, lower: bool) -> PyResult<Option<BigInt>> {
    Ok(match v {
        Value::None => None,
        Value::Int(i) => Some(i.clone()),
        Value::Bool(b) => Some(BigInt::from(*b as u8)),
        Value::Float(f) if f.is_infinite() => None,
        Value::Float(f) => float_to_bigint(if lower { f.floor() } else { f.ceil() }),
        _ => return Err(Raise::unsupported("a non-numeric var bound")),
    })
}

fn as_sym(v: &Value) -> PyResult<Option<Sym>> {
    let Value::Object(o) = v else { return Ok(None) };
    if let Some(var) = o.as_any().downcast_ref::<IntVar>() {
        let sym = Symbol {
            name: var.symbol()?,
            lower: bound_of(&var.min, true)?,
            upper: bound_of(&var.max, false)?,
        };
        return Ok(Some(Sym {
            expr: Rc::new(Node::Sym(Rc::new(sym))),
            pytype: PyType::Int,
            class: match var.kind {
                super::VarKind::IntVar => Class::IntVar,
                super::VarKind::ShapeVar => Class::ShapeVar,
            },
        }));
    }
    if let Some(n) = o.as_any().downcast_ref::<SymNode>() {
        return Ok(Some(Sym {
            expr: n.expr.clone(),
            pytype: n.pytype,
            class: match n.pytype {
                PyType::Int => Class::SymInt,
                PyType::Float => Class::SymFloat,
                PyType::Bool => Class::SymBool,
            },
        }));
    }
    Ok(None)
}

fn wrap(expr: Ex, pytype: PyType) -> Value {
    Value::object(SymNode { expr, pytype })
}

/// An operand as `to_node` sees it.
#[derive(Clone, Debug)]
enum Operand {
    Sym(Sym),
    Int(BigInt),
    Float(f64),
    Bool(bool),
    /// Anything else: the magic methods return NotImplemented for it.
    Other,
}

impl Operand {
    fn of(v: &Value) -> PyResult<Operand> {
        if let Some(s) = as_sym(v)? {
            return Ok(Operand::Sym(s));
        }
        Ok(match v {
            Value::Int(i) => Operand::Int(i.clone()),
            Value::Bool(b) => Operand::Bool(*b),
            Value::Float(f) => Operand::Float(*f),
            _ => Operand::Other,
        })
    }
    fn is_floaty(&self) -> bool {
        matches!(self, Operand::Float(_))
            || matches!(self, Operand::Sym(s) if s.pytype == PyType::Float)
    }
    fn pytype(&self) -> PyType {
        match self {
            Operand::Sym(s) => s.pytype,
            Operand::Float(_) => PyType::Float,
            Operand::Bool(_) => PyType::Bool,
            _ => PyType::Int,
        }
    }
    /// `to_node(self.node, x).expr`.
    fn expr(&self) -> Ex {
        match self {
            Operand::Sym(s) => s.expr.clone(),
            Operand::Int(i) => expr::int(i.clone()),
            Operand::Float(f) => expr::float(*f),
            Operand::Bool(b) => expr::boolean(*b),
            Operand::Other => unreachable!("NotImplemented operands have no node"),
        }
    }
    /// `torch.sym_float(x)` for the promotion of mixed int/float operands.
    fn sym_float(&self) -> PyResult<Operand> {
        Ok(match self {
            Operand::Sym(s) if s.pytype == PyType::Int => Operand::Sym(Sym {
                expr: expr::to_float(&s.expr)?,
                pytype: PyType::Float,
                class: Class::SymFloat,
            }),
            Operand::Int(i) => {
                Operand::Float(i.to_f64().filter(|f| f.is_finite()).ok_or_else(|| {
                    Raise::new("OverflowError", "int too large to convert to float")
                })?)
            }
            Operand::Bool(b) => Operand::Float(if *b { 1.0 } else { 0.0 }),
            other => other.clone(),
        })
    }
}

/// Apply a case-format operator where at least one operand is symbolic.
pub fn apply(op: Op, args: &[Value]) -> PyResult<Value> {
    match args {
        [a] => unary(op, a),
        [a, b] => binary(op, a, b),
        _ => unreachable!("op arity is checked when the case is parsed"),
    }
}

fn unary(op: Op, a: &Value) -> PyResult<Value> {
    let s = as_sym(a)?.expect("a symbolic operand");
    match op {
        Op::Neg => match s.pytype {
            PyType::Bool => Err(Raise::type_error("bad operand type for unary -: 'SymBool'")),
            t => Ok(wrap(expr::neg(&s.expr)?, t)),
        },
        // torch.sym_not: `__sym_not__` on a SymBool, else `not a`, which
        // calls bool() and so a guard.
        Op::Not => match s.pytype {
            PyType::Bool => Ok(wrap(expr::logic_not(&s.expr)?, PyType::Bool)),
            _ => Err(not_allowed("evaluate_sym_node")),
        },
        _ => unreachable!("binary operator {op:?} applied as unary"),
    }
}

fn is_comparison(op: Op) -> bool {
    matches!(op, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
}

fn reflected_cmp(op: Op) -> Op {
    match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        o => o,
    }
}

fn type_name(v: &Value) -> &'static str {
    v.type_name()
}

fn binary(op: Op, a: &Value, b: &Value) -> PyResult<Value> {
    let (oa, ob) = (Operand::of(a)?, Operand::of(b)?);
    if is_comparison(op) {
        // Subclass first: `SymInt < IntVar` asks `IntVar.__gt__` first.
        if let (Operand::Sym(sa), Operand::Sym(sb)) = (&oa, &ob) {
            if sb.class.is_proper_subclass_of(sa.class) {
                if let Some(v) = method(reflected_cmp(op), sb, &oa)? {
                    return Ok(v);
                }
            }
        }
        if let Operand::Sym(sa) = &oa {
            if let Some(v) = method(op, sa, &ob)? {
                return Ok(v);
            }
        }
        if let Operand::Sym(sb) = &ob {
            if let Some(v) = method(reflected_cmp(op), sb, &oa)? {
                return Ok(v);
            }
        }
        return match op {
            // `==` falls back to identity.
            Op::Eq => Ok(Value::Bool(a.is(b))),
            Op::Ne => Ok(Value::Bool(!a.is(b))),
            _ => Err(Raise::type_error(format!(
                "'{}' not supported between instances of '{}' and '{}'",
                op.symbol(),
                type_name(a),
                type_name(b)
            ))),
        };
    }
    match &oa {
        Operand::Sym(sa) => {
            if let Some(v) = method(op, sa, &ob)? {
                return Ok(v);
            }
        }
        Operand::Int(_) | Operand::Float(_) | Operand::Bool(_) => {}
        Operand::Other => {
            // A sequence times a SymInt repeats: `__index__` guards.
            if op == Op::Mul && matches!(a, Value::Str(_) | Value::List(_) | Value::Tuple(_)) {
                return Err(not_allowed("evaluate_sym_node"));
            }
            if matches!(a, Value::Str(_) | Value::List(_) | Value::Tuple(_)) {
                return ops::binary(op, a, b);
            }
        }
    }
    if let Operand::Sym(sb) = &ob {
        if let Some(v) = rmethod(op, sb, &oa)? {
            return Ok(v);
        }
    }
    if op == Op::Mul && matches!(b, Value::Str(_) | Value::List(_) | Value::Tuple(_)) {
        return Err(not_allowed("evaluate_sym_node"));
    }
    Err(Raise::type_error(format!(
        "unsupported operand type(s) for {}: '{}' and '{}'",
        op.symbol(),
        type_name(a),
        type_name(b)
    )))
}

fn rel_of(op: Op) -> Rel {
    match op {
        Op::Eq => Rel::Eq,
        Op::Ne => Rel::Ne,
        Op::Lt => Rel::Lt,
        Op::Le => Rel::Le,
        Op::Gt => Rel::Gt,
        _ => Rel::Ge,
    }
}

/// `self.__op__(other)`; `None` is NotImplemented.
fn method(op: Op, s: &Sym, other: &Operand) -> PyResult<Option<Value>> {
    if matches!(other, Operand::Other) {
        return Ok(None);
    }
    match s.pytype {
        PyType::Bool => bool_method(op, s, other, false),
        PyType::Int => int_method(op, s, other, false),
        PyType::Float => float_method(op, &Operand::Sym(s.clone()), other),
    }
}

/// `self.__rop__(other)` (`other op self`); `None` is NotImplemented.
fn rmethod(op: Op, s: &Sym, other: &Operand) -> PyResult<Option<Value>> {
    if matches!(other, Operand::Other) {
        return Ok(None);
    }
    match s.pytype {
        PyType::Bool => bool_method(op, s, other, true),
        PyType::Int => int_method(op, s, other, true),
        PyType::Float => float_method(op, other, &Operand::Sym(s.clone())),
    }
}

fn bool_method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    match op {
        // `bool_becomes_int_magic_methods`: the SymBool is turned into an
        // int with a guard.
        Op::Add | Op::Sub | Op::Mul => Err(not_allowed("evaluate_sym_node")),
        Op::And | Op::Or => {
            let o = match other {
                Operand::Float(_) => return Ok(None),
                Operand::Sym(x) if x.pytype != PyType::Bool => {
                    return Err(Raise::unsupported("SymBool & SymInt"))
                }
                _ => expr::as_boolean(&other.expr())?,
            };
            let (l, r) = if reflected {
                (o, s.expr.clone())
            } else {
                (s.expr.clone(), o)
            };
            let e = if op == Op::And {
                expr::logic_and(&[l, r])?
            } else {
                expr::logic_or(&[l, r])?
            };
            Ok(Some(wrap(e, PyType::Bool)))
        }
        Op::Eq | Op::Ne => {
            if other.is_floaty() {
                return Err(Raise::unsupported("SymBool == float"));
            }
            let e = expr::relational(rel_of(op), &s.expr, &other.expr())?;
            Ok(Some(wrap(e, PyType::Bool)))
        }
        _ => Ok(None),
    }
}

fn int_method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    if matches!(other, Operand::Sym(x) if x.pytype == PyType::Bool) {
        return match op {
            Op::Add | Op::Sub | Op::Mul => Err(not_allowed("evaluate_sym_node")),
            _ => Err(Raise::unsupported("SymInt with a SymBool operand")),
        };
    }
    if matches!(other, Operand::Bool(_)) && !matches!(op, Op::Add | Op::Sub | Op::Mul) {
        return Err(Raise::unsupported("SymInt with a bool operand"));
    }
    let me = Operand::Sym(s.clone());
    let (l, r) = if reflected {
        (other.clone(), me)
    } else {
        (me, other.clone())
    };
    if other.is_floaty() {
        return match op {
            Op::FloorDiv => Err(not_allowed("simplify")),
            Op::Pow => Err(if reflected {
                Raise::unsupported("float ** SymInt")
            } else {
                not_allowed("guard_or_defer_runtime_assert")
            }),
            Op::And | Op::Or => Ok(None),
            _ => float_method(op, &l.sym_float()?, &r.sym_float()?),
        };
    }
    let (le, re) = (int_like(&l), int_like(&r));
    let result = |e: Ex, t: PyType| Ok(Some(wrap(e, t)));
    match op {
        Op::Add => result(expr::add(&[le, re])?, PyType::Int),
        Op::Sub => result(expr::sub(&le, &re)?, PyType::Int),
        Op::Mul => result(expr::mul(&[le, re])?, PyType::Int),
        Op::FloorDiv => result(expr::floordiv(&le, &re)?, PyType::Int),
        Op::Mod => {
            let python = !(facts::known_nonneg(&le) && facts::known_nonneg(&re));
            result(expr::modulo(python, &le, &re)?, PyType::Int)
        }
        Op::TrueDiv => result(expr::int_truediv(&le, &re)?, PyType::Float),
        Op::Pow => {
            // SymInt.__pow__: `if other >= 0` picks pow_by_natural, which
            // needs a plain exponent; __rpow__ tests `self >= 0`, a guard.
            if reflected {
                return Err(not_allowed("evaluate_sym_node"));
            }
            match &r {
                Operand::Int(n) if !n.is_negative() => result(expr::pow_int(&le, n)?, PyType::Int),
                Operand::Int(_) => Err(not_allowed("guard_or_defer_runtime_assert")),
                _ => Err(not_allowed("evaluate_sym_node")),
            }
        }
        Op::And => result(expr::bitwise(true, &le, &re)?, PyType::Int),
        Op::Or => result(expr::bitwise(false, &le, &re)?, PyType::Int),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            result(expr::relational(rel_of(op), &le, &re)?, PyType::Bool)
        }
        Op::Neg | Op::Not => unreachable!("unary"),
    }
}

/// A bool operand of an int operation counts as 0/1 (sympy adds `true`
/// as 1).
fn int_like(o: &Operand) -> Ex {
    match o {
        Operand::Bool(b) => expr::int(*b as u8),
        _ => o.expr(),
    }
}

/// `SymFloat` operations (and SymInt ones promoted to float): `l op r`.
fn float_method(op: Op, l: &Operand, r: &Operand) -> PyResult<Option<Value>> {
    if matches!(l, Operand::Sym(x) if x.pytype == PyType::Bool)
        || matches!(r, Operand::Sym(x) if x.pytype == PyType::Bool)
    {
        return Err(Raise::unsupported("SymFloat with a SymBool operand"));
    }
    let (l, r) = (l.sym_float()?, r.sym_float()?);
    let (le, re) = (l.expr(), r.expr());
    let result = |e: Ex, t: PyType| Ok(Some(wrap(e, t)));
    match op {
        Op::Add => result(expr::add(&[le, re])?, PyType::Float),
        Op::Sub => result(expr::sub(&le, &re)?, PyType::Float),
        Op::Mul => result(expr::mul(&[le, re])?, PyType::Float),
        Op::TrueDiv => result(expr::float_truediv(&le, &re)?, PyType::Float),
        Op::Mod => result(expr::modulo(true, &le, &re)?, PyType::Float),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            result(expr::relational(rel_of(op), &le, &re)?, PyType::Bool)
        }
        Op::And | Op::Or => Ok(None),
        _ => Err(Raise::unsupported(format!("`{}` on a SymFloat", op.name()))),
    }
}

/// The pytype of what `apply` would return, for callers that care.
pub fn result_is_symbolic(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.as_any().downcast_ref::<SymNode>().is_some())
}

#[allow(dead_code)]
fn _unused(o: &Operand) -> PyType {
    o.pytype()
}
