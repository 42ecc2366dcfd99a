//! Mirrors torch's symbolic scalars on the spec ShapeEnv: `SymInt`,
//! `SymFloat`, `SymBool` (torch/__init__.py) and their operators
//! (torch/fx/experimental/sym_node.py: `_make_user_magic`,
//! `binary_magic_impl`), with CPython's operator dispatch around them
//! (reflected operands, NotImplemented, subclass-first comparisons).
//! The sympy side, lowest first: `basic` (the tree), `fuzzy` (three-valued
//! logic), `order` (sort keys) and `print` (`str()`), then `expr`
//! (construction, with `expr::facts`, the assumptions), then `ranges`
//! (value ranges).

pub mod basic;
pub mod expr;
mod fuzzy;
pub mod mpf;
pub mod order;
pub mod polynomial;
pub mod print;
pub mod ranges;
pub mod subst;

use std::any::Any;
use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use self::expr::{Ex, Node, Rel, Symbol};
use super::var::IntVar;
use torchspec_pyval::ops::{self, Op};
use torchspec_pyval::{float_to_bigint, PyObject, PyResult, Raise, Value};

/// The Python type of a symbolic value (`SymNode.pytype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyType {
    /// `int`: a `SymInt`.
    Int,
    /// `float`: a `SymFloat`.
    Float,
    /// `bool`: a `SymBool`.
    Bool,
}

/// A derived `SymInt` / `SymFloat` / `SymBool`: an operator result.
#[derive(Debug)]
pub struct SymNode {
    /// The sympy expression the node stands for.
    pub expr: Ex,
    /// The Python type of the value, `SymNode.pytype`.
    pub pytype: PyType,
    /// `str()` of `expr`, printed once: a case prints a leaf's expression
    /// in its `repr` and again in its jsonable.
    printed: std::cell::OnceCell<String>,
}

impl SymNode {
    /// A node for `expr` of type `pytype`, not yet printed.
    pub fn new(expr: Ex, pytype: PyType) -> SymNode {
        SymNode {
            expr,
            pytype,
            printed: std::cell::OnceCell::new(),
        }
    }
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
        out.push_str(self.printed.get_or_init(|| print::format_expr(&self.expr)));
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
        Value::Int(i) => Some(i.to_big()),
        Value::Bool(b) => Some(BigInt::from(*b as u8)),
        Value::Float(f) if f.is_infinite() => None,
        Value::Float(f) => float_to_bigint(if lower { f.floor() } else { f.ceil() }),
        _ => return Err(Raise::unsupported("a non-numeric var bound")),
    })
}

fn as_sym(v: &Value) -> PyResult<Option<Sym>> {
    let Value::Object(o) = v else { return Ok(None) };
    if let Some(var) = o.as_any().downcast_ref::<IntVar>() {
        let expr = match var.sym_expr.get() {
            Some(e) => e.clone(),
            None => {
                let sym = Symbol {
                    name: var.symbol()?,
                    lower: bound_of(&var.min, true)?,
                    upper: bound_of(&var.max, false)?,
                    integer: false,
                };
                let e: Ex = Rc::new(Node::Sym(Rc::new(sym)));
                // The var's fields never change: its symbol is built once.
                let _ = var.sym_expr.set(e.clone());
                e
            }
        };
        return Ok(Some(Sym {
            expr,
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

/// The sympy expression behind a spec var (`var.sympy_sym`, its range
/// riding along) or a derived value (`x.node.expr`), with the value's
/// Python type; `None` for any other value.
pub fn expr_of(v: &Value) -> PyResult<Option<(Ex, PyType)>> {
    Ok(as_sym(v)?.map(|s| (s.expr, s.pytype)))
}

fn wrap(expr: Ex, pytype: PyType) -> Value {
    Value::object(SymNode::new(expr, pytype))
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
            Value::Int(i) => Operand::Int(i.to_big()),
            Value::Bool(b) => Operand::Bool(*b),
            Value::Float(f) => Operand::Float(*f),
            _ => Operand::Other,
        })
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
            Operand::Sym(s) if s.pytype != PyType::Float => Operand::Sym(Sym {
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
                if let Some(v) = method(reflected_cmp(op), sb, &oa, false)? {
                    return Ok(v);
                }
            }
        }
        if let Operand::Sym(sa) = &oa {
            if let Some(v) = method(op, sa, &ob, false)? {
                return Ok(v);
            }
        }
        if let Operand::Sym(sb) = &ob {
            if let Some(v) = method(reflected_cmp(op), sb, &oa, false)? {
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
            if let Some(v) = method(op, sa, &ob, false)? {
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
    // The reflected method is tried only when the types differ.
    if let Operand::Sym(sb) = &ob {
        let same_type = matches!(&oa, Operand::Sym(sa) if sa.class == sb.class);
        if !same_type {
            if let Some(v) = method(op, sb, &oa, true)? {
                return Ok(v);
            }
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

/// The SymNode methods `_make_user_magic` wraps (sym_node.py `magic_methods`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Magic {
    Add,
    Sub,
    Mul,
    Mod,
    IntTrueDiv,
    FloatTrueDiv,
    IntFloorDiv,
    PowByNatural,
    FloatPow,
    BitwiseAnd,
    BitwiseOr,
    And,
    Or,
    Rel(Rel),
}

/// `self.__op__(other)` (or `self.__rop__(other)` when `reflected`: `other
/// op self`) on the torch class of `s`; `None` is NotImplemented.
fn method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    if matches!(other, Operand::Other) {
        return Ok(None);
    }
    match s.pytype {
        PyType::Int => symint_method(op, s, other, reflected),
        PyType::Float => symfloat_method(op, s, other, reflected),
        PyType::Bool => symbool_method(op, s, other, reflected),
    }
}

/// `isinstance(x, (float, SymFloat))`.
fn is_floaty(o: &Operand) -> bool {
    matches!(o, Operand::Float(_)) || matches!(o, Operand::Sym(s) if s.pytype == PyType::Float)
}

/// `isinstance(x, (int, SymInt))` (a bool is an int).
fn is_intlike(o: &Operand) -> bool {
    matches!(o, Operand::Int(_) | Operand::Bool(_))
        || matches!(o, Operand::Sym(s) if s.pytype == PyType::Int)
}

fn cmp_magic(op: Op) -> Magic {
    Magic::Rel(rel_of(op))
}

/// The SymInt dunders (torch/__init__.py `SymInt` and the magic methods
/// installed on it).
fn symint_method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    let me = Operand::Sym(s.clone());
    match op {
        Op::Add => user_magic(Magic::Add, &me, other, reflected),
        Op::Sub => user_magic(Magic::Sub, &me, other, reflected),
        Op::Mul => user_magic(Magic::Mul, &me, other, reflected),
        Op::Mod => user_magic(Magic::Mod, &me, other, reflected),
        Op::And => user_magic(Magic::BitwiseAnd, &me, other, reflected),
        Op::Or => user_magic(Magic::BitwiseOr, &me, other, reflected),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            user_magic(cmp_magic(op), &me, other, reflected)
        }
        Op::TrueDiv => {
            if is_floaty(other) {
                return user_magic(Magic::FloatTrueDiv, &me.sym_float()?, other, reflected);
            }
            if !is_intlike(other) {
                return Ok(None);
            }
            user_magic(Magic::IntTrueDiv, &me, other, reflected)
        }
        Op::FloorDiv => {
            if is_floaty(other) {
                // `sym_float(math.floor(sym_float(self) / other))`.
                let q = if reflected {
                    symfloat_truediv(other, &me.sym_float()?)?
                } else {
                    symfloat_truediv(&me.sym_float()?, other)?
                };
                return floor_of(&q);
            }
            if !is_intlike(other) {
                return Ok(None);
            }
            user_magic(Magic::IntFloorDiv, &me, other, reflected)
        }
        Op::Pow => {
            if is_floaty(other) {
                let f = Operand::Sym(sym_of(&me.sym_float()?));
                return if reflected {
                    symfloat_rpow(&f, other)
                } else {
                    symfloat_pow(&f, other)
                };
            }
            if !is_intlike(other) {
                return Ok(None);
            }
            // `if other >= 0` (`if self >= 0` for __rpow__): a plain int
            // decides; a SymInt guards.
            let exponent = if reflected { &me } else { other };
            match exponent {
                Operand::Int(i) if i.is_negative() => {
                    let f = Operand::Sym(sym_of(&me.sym_float()?));
                    symfloat_pow(&f, &other.sym_float()?)
                }
                Operand::Int(_) | Operand::Bool(_) => {
                    user_magic(Magic::PowByNatural, &me, other, reflected)
                }
                _ => {
                    // `other >= 0` builds a SymBool, then `bool()` guards.
                    ge_zero_check(exponent)?;
                    Err(not_allowed("evaluate_sym_node"))
                }
            }
        }
        Op::Neg | Op::Not => unreachable!("unary"),
    }
}

/// The SymFloat dunders.
fn symfloat_method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    let me = Operand::Sym(s.clone());
    let numeric = is_floaty(other) || is_intlike(other);
    match op {
        Op::Add => user_magic(Magic::Add, &me, other, reflected),
        Op::Sub => user_magic(Magic::Sub, &me, other, reflected),
        Op::Mul => user_magic(Magic::Mul, &me, other, reflected),
        Op::Mod => user_magic(Magic::Mod, &me, other, reflected),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            user_magic(cmp_magic(op), &me, other, reflected)
        }
        Op::And | Op::Or => Ok(None),
        Op::TrueDiv => {
            if !numeric {
                return Ok(None);
            }
            user_magic(Magic::FloatTrueDiv, &me, &other.sym_float()?, reflected)
        }
        Op::FloorDiv => {
            if !numeric {
                return Ok(None);
            }
            let q = if reflected {
                symfloat_truediv(&other.sym_float()?, &me)?
            } else {
                symfloat_truediv(&me, &other.sym_float()?)?
            };
            floor_of(&q)
        }
        Op::Pow => {
            if !numeric {
                return Ok(None);
            }
            if reflected {
                symfloat_rpow(&me, other)
            } else {
                symfloat_pow(&me, other)
            }
        }
        Op::Neg | Op::Not => unreachable!("unary"),
    }
}

/// The SymBool dunders: `+ - *` turn it into an int (a guard), `& |` are
/// logic, `== !=` compare; nothing else is defined.
fn symbool_method(op: Op, s: &Sym, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    let me = Operand::Sym(s.clone());
    match op {
        Op::Add => user_magic(Magic::Add, &me, other, reflected),
        Op::Sub => user_magic(Magic::Sub, &me, other, reflected),
        Op::Mul => user_magic(Magic::Mul, &me, other, reflected),
        Op::And => user_magic(Magic::And, &me, other, reflected),
        Op::Or => user_magic(Magic::Or, &me, other, reflected),
        Op::Eq | Op::Ne => user_magic(cmp_magic(op), &me, other, reflected),
        _ => Ok(None),
    }
}

fn sym_of(o: &Operand) -> Sym {
    match o {
        Operand::Sym(s) => s.clone(),
        _ => unreachable!("a symbolic operand"),
    }
}

/// `SymFloat.__truediv__` as the floor-division paths call it (`l / r`,
/// one of them a SymFloat, the other a float-like).
fn symfloat_truediv(l: &Operand, r: &Operand) -> PyResult<Value> {
    let (s, other, reflected) = match (l, r) {
        (Operand::Sym(s), _) if s.pytype == PyType::Float => (l, r, false),
        _ => (r, l, true),
    };
    Ok(
        user_magic(Magic::FloatTrueDiv, s, &other.sym_float()?, reflected)?
            .expect("numeric operands"),
    )
}

/// `math.floor(x)` on a SymFloat: `SymNode.floor` runs
/// `ShapeEnv._simplify_floor_div`, which the spec env refuses (guarding on
/// each FloorDiv inside first, else `simplify`).
fn floor_of(v: &Value) -> PyResult<Option<Value>> {
    let e = match as_sym(v)? {
        Some(s) => s.expr,
        None => return Err(Raise::unsupported("floor of a plain float")),
    };
    if expr::contains_floordiv(&e) {
        return Err(not_allowed("evaluate_expr"));
    }
    Err(not_allowed("simplify"))
}

/// `SymFloat.__pow__`: `torch._check(self >= 0)` guards on a SymBool.
fn symfloat_pow(me: &Operand, _other: &Operand) -> PyResult<Option<Value>> {
    ge_zero_check(me)?;
    Err(not_allowed("guard_or_defer_runtime_assert"))
}

/// What building `x >= 0` can raise before its `bool()` / `torch._check`
/// guards: a nan or known non-real expression (`_Inequality.__new__`).
fn ge_zero_check(x: &Operand) -> PyResult<()> {
    match x {
        Operand::Sym(s) => expr::inequality_side(&s.expr),
        _ => Ok(()),
    }
}

/// `SymFloat.__rpow__(other)` (`other ** self`): `torch._check(other >= 0)`
/// on the plain base, then `FloatPow(other, self)`.
fn symfloat_rpow(me: &Operand, other: &Operand) -> PyResult<Option<Value>> {
    let nonneg = match other {
        Operand::Int(i) => !i.is_negative(),
        Operand::Bool(_) => true,
        Operand::Float(f) => *f >= 0.0,
        _ => return Err(Raise::unsupported("a symbolic base of a SymFloat power")),
    };
    if !nonneg {
        return Err(Raise::new(
            "RuntimeError",
            "Expected cond to be True, but got False. (Could this error message be improved? If so, please report an enhancement request to PyTorch.)",
        ));
    }
    user_magic(Magic::FloatPow, me, other, true)
}

fn bool_guard_if_symbool(o: &Operand) -> PyResult<()> {
    if matches!(o, Operand::Sym(s) if s.pytype == PyType::Bool) {
        return Err(not_allowed("evaluate_sym_node"));
    }
    Ok(())
}

fn mod_pytype(l: &Operand, r: &Operand) -> PyType {
    if l.pytype() == PyType::Float || r.pytype() == PyType::Float {
        PyType::Float
    } else {
        l.pytype()
    }
}

/// `_make_user_magic`'s `binary_magic_impl` / `rbinary_magic_impl`:
/// `promote` (a bool becomes an int for `+ - *`, a SymBool guards),
/// `promote2` (an int-like operand of a float operation goes through
/// `sym_float`), `to_node`, then the SymNode method on (self, other), or on
/// (other, self) when reflected; the result's pytype follows
/// `binary_magic_impl` of the SymNode.
fn user_magic(m: Magic, me: &Operand, other: &Operand, reflected: bool) -> PyResult<Option<Value>> {
    if matches!(other, Operand::Other) {
        return Ok(None);
    }
    let (mut me, mut other) = (me.clone(), other.clone());
    if matches!(m, Magic::Add | Magic::Sub | Magic::Mul) {
        bool_guard_if_symbool(&me)?;
        bool_guard_if_symbool(&other)?;
        if let Operand::Bool(b) = other {
            other = Operand::Int(BigInt::from(b as u8));
        }
    }
    let promotes = matches!(
        m,
        Magic::Add
            | Magic::Sub
            | Magic::Mul
            | Magic::Mod
            | Magic::FloatPow
            | Magic::FloatTrueDiv
            | Magic::IntFloorDiv
            | Magic::Rel(_)
    );
    if promotes && (is_floaty(&me) || is_floaty(&other)) {
        if !is_floaty(&me) {
            me = me.sym_float()?;
        }
        if !is_floaty(&other) {
            other = other.sym_float()?;
        }
    }
    let (l, r) = if reflected { (other, me) } else { (me, other) };
    let (le, re) = (l.expr(), r.expr());
    if let Some((e, pytype)) = symop_cache_get(m, &le, &re) {
        return Ok(Some(wrap(e, pytype)));
    }
    let numbers = (expr::Num::of(&le), expr::Num::of(&re));
    let e = match m {
        Magic::Add => expr::add(&[le.clone(), re.clone()])?,
        // `operator.sub` / `operator.mul` on two sympy Numbers is Number
        // arithmetic (`Float(0.0) - 0` is Integer 0), not AssocOp's
        // identity filtering.
        Magic::Sub if numbers.0.is_some() && numbers.1.is_some() => {
            let (a, b) = (numbers.0.expect("n"), numbers.1.expect("n"));
            a.add(&b.neg())?.to_ex()
        }
        Magic::Mul if numbers.0.is_some() && numbers.1.is_some() => {
            let (a, b) = (numbers.0.expect("n"), numbers.1.expect("n"));
            a.mul(&b)?.to_ex()
        }
        Magic::Sub => expr::sub(&le, &re)?,
        Magic::Mul => expr::mul(&[le.clone(), re.clone()])?,
        Magic::Mod => {
            // `(self nonneg) and (other nonneg)` picks Mod over PythonMod;
            // when the left side's range is not modelled, a known-false
            // right side, or both classes evaluating alike, still decides.
            let plain = match ranges::mod_operand_nonneg(&le) {
                Ok(true) => Some(ranges::mod_operand_nonneg(&re)?),
                Ok(false) => Some(false),
                Err(Raise::Unsupported(why)) => match ranges::mod_operand_nonneg(&re) {
                    Ok(false) => Some(false),
                    Ok(true) => {
                        let (x, y) = (expr::modulo(true, &le, &re), expr::modulo(false, &le, &re));
                        if x != y {
                            return Err(Raise::Unsupported(why));
                        }
                        let (x, pytype) = (x?, mod_pytype(&l, &r));
                        symop_cache_put(m, &le, &re, &x, pytype);
                        return Ok(Some(wrap(x, pytype)));
                    }
                    Err(_) => return Err(Raise::Unsupported(why)),
                },
                Err(e) => return Err(e),
            };
            expr::modulo(!plain.expect("decided"), &le, &re)?
        }
        Magic::IntTrueDiv => expr::int_truediv(&le, &re)?,
        Magic::FloatTrueDiv => expr::float_truediv(&le, &re)?,
        Magic::IntFloorDiv => expr::floordiv(&le, &re)?,
        Magic::PowByNatural => expr::pow_by_natural(&le, &re)?,
        Magic::FloatPow => expr::float_pow(&le, &re)?,
        Magic::BitwiseAnd => expr::bitwise(true, &le, &re)?,
        Magic::BitwiseOr => expr::bitwise(false, &le, &re)?,
        Magic::And => expr::logic_and(&[expr::as_boolean(&le)?, expr::as_boolean(&re)?])?,
        Magic::Or => expr::logic_or(&[expr::as_boolean(&le)?, expr::as_boolean(&re)?])?,
        Magic::Rel(rel) if unbacked_against_number(&le, &re) => {
            Rc::new(Node::Rel(rel, le.clone(), re.clone()))
        }
        Magic::Rel(rel) => expr::relational(rel, &le, &re)?,
    };
    let pytype = match m {
        Magic::IntTrueDiv | Magic::FloatTrueDiv | Magic::FloatPow => PyType::Float,
        Magic::Rel(_) | Magic::And | Magic::Or => PyType::Bool,
        Magic::PowByNatural => PyType::Int,
        _ if l.pytype() == PyType::Float || r.pytype() == PyType::Float => PyType::Float,
        _ => l.pytype(),
    };
    symop_cache_put(m, &le, &re, &e, pytype);
    Ok(Some(wrap(e, pytype)))
}

/// `binary_magic_impl`'s shortcut for a comparison of a lone unbacked
/// symbol with a number: `rel_class(lhs, rhs, evaluate=False)`. Which
/// symbols are unbacked is `symbol_is_type(SymT.UNBACKED_INT)`, a name
/// that lowercased starts with `u`, so a spec var named `U` or `units` is
/// one too (a PyTorch quirk): `U < nan` is a SymBool, where sympy's
/// evaluation raises `Invalid NaN comparison`.
fn unbacked_against_number(l: &Ex, r: &Ex) -> bool {
    let unbacked = |e: &Ex| matches!(&**e, Node::Sym(s) if s.name.starts_with(['u', 'U']));
    (unbacked(l) && r.is_number()) || (unbacked(r) && l.is_number())
}

/// One entry of the ShapeEnv's `_symop_cache`: the method, both operand
/// expressions, and the result expression with its pytype.
type SymopEntry = (Magic, Ex, Ex, Ex, PyType);

thread_local! {
    /// `shape_env._symop_cache` (sym_node.py `binary_magic_impl`, Note
    /// [symbolic op memo]): keyed by `(method, self._expr, other._expr)`
    /// only, so a hit reuses the first result's *pytype* too. PyTorch's
    /// quirk, reproduced: `SymFloat(0) * SymFloat(0)` after `SymInt(0) *
    /// 0` in the same case is a SymInt (both sides' expression is `0`). A
    /// hit also skips the `%` class choice and its value-range checks.
    static SYMOP_CACHE: std::cell::RefCell<Vec<SymopEntry>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A fresh ShapeEnv: the spec ShapeEnv is made anew for every case.
pub fn reset_symop_cache() {
    SYMOP_CACHE.with(|c| c.borrow_mut().clear());
}

fn symop_cache_get(m: Magic, l: &Ex, r: &Ex) -> Option<(Ex, PyType)> {
    SYMOP_CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(cm, cl, cr, _, _)| *cm == m && cl == l && cr == r)
            .map(|(_, _, _, e, t)| (e.clone(), *t))
    })
}

fn symop_cache_put(m: Magic, l: &Ex, r: &Ex, e: &Ex, pytype: PyType) {
    SYMOP_CACHE.with(|c| {
        c.borrow_mut()
            .push((m, l.clone(), r.clone(), e.clone(), pytype))
    });
}

/// The pytype of what `apply` would return, for callers that care.
pub fn result_is_symbolic(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.as_any().downcast_ref::<SymNode>().is_some())
}
