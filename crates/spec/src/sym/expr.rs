//! Mirrors the part of sympy 1.14 (sympy/core/{add,mul,power,relational}.py,
//! sympy/logic/boolalg.py) and of torch/utils/_sympy/functions.py that the
//! spec ShapeEnv reaches: automatic canonicalization when an expression is
//! built (`Add.flatten`, `Mul.flatten`, `Pow`, `FloorDiv.eval`, `Mod.eval`,
//! `PythonMod.eval`, `IntTrueDiv.eval`, relational evaluation, `And`/`Or`/`Not`).

use std::rc::Rc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::facts::{facts, is_even, Facts};
use super::mpf::Mpf;
use torchspec_pyval::{PyResult, Raise};

/// A sympy expression node. Children are shared (`Rc`); equality is
/// sympy's structural `==` (which is what `expr in args`, `p == q` test).
pub type Ex = Rc<Node>;

/// The sympy classes an expression node can be, with their args.
#[derive(Debug, PartialEq)]
pub enum Node {
    /// `sympy.Integer`.
    Int(BigInt),
    /// `sympy.Float` (53-bit precision, from a Python float).
    Float(f64),
    /// `sympy.Float` of a higher precision (`ToFloat` of an integer past 15
    /// digits, and arithmetic with one): an mpmath `mpf` with its `_prec`.
    BigFloat(Box<Mpf>),
    /// torch's `int_oo` / `-int_oo` (torch/utils/_sympy/numbers.py).
    IntOo {
        /// Whether it is `-int_oo`.
        neg: bool,
    },
    /// sympy's `oo` / `-oo` (what a Float overflow or `ToFloat(int_oo)` gives).
    Inf {
        /// Whether it is `-oo`.
        neg: bool,
    },
    /// sympy's `nan` (`int_oo - int_oo`, `0*int_oo`, ...).
    NaN,
    /// `sympy.Symbol("name#uid")`, with no assumptions. The value range the
    /// spec ShapeEnv registers for it (`var_to_range`) rides along; it is
    /// not part of sympy's equality, but names are unique per case.
    Sym(Rc<Symbol>),
    /// `sympy.Add`, canonical: flattened, like terms collected, no zero
    /// terms; the numeric term (if any) first, the rest in `sort_key` order.
    Add(Vec<Ex>),
    /// `sympy.Mul`, canonical: numeric coefficient (if not 1) first, then
    /// the factors in `sort_key` order, equal bases merged into powers.
    Mul(Vec<Ex>),
    /// `sympy.Pow` with an integer exponent >= 2 (the only kind built here).
    Pow(Ex, Ex),
    /// An applied sympy/torch function.
    Fn(Func, Vec<Ex>),
    /// `Eq`, `Ne`, `<`, `<=`, `>`, `>=`.
    Rel(Rel, Ex, Ex),
    /// `sympy.And` of its args, canonical (flattened, sorted, no duplicates).
    And(Vec<Ex>),
    /// `sympy.Or` of its args, canonical (flattened, sorted, no duplicates).
    Or(Vec<Ex>),
    /// `sympy.Not` of its arg (a relational negates instead).
    Not(Ex),
    /// `sympy.true`.
    True,
    /// `sympy.false`.
    False,
}

/// A `sympy.Symbol` with the value range the spec ShapeEnv registered for it;
/// equal by name only.
#[derive(Debug)]
pub struct Symbol {
    /// The symbol's name, `name#uid`.
    pub name: String,
    /// `var_to_range[sym]`: `None` is an infinite bound.
    pub lower: Option<BigInt>,
    /// The upper end of `var_to_range[sym]` (`None`: infinite).
    pub upper: Option<BigInt>,
    /// `integer=True`: an unbacked symbol of a real ShapeEnv (`u0`); a
    /// spec var's symbol has no assumptions.
    pub integer: bool,
}

impl PartialEq for Symbol {
    fn eq(&self, other: &Symbol) -> bool {
        self.name == other.name
    }
}

/// The torch sympy functions an op can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// torch's `FloorDiv(base, divisor)`: integer `//`.
    FloorDiv,
    /// torch's `Mod(p, q)`: `%` for non-negative operands.
    Mod,
    /// torch's `PythonMod(p, q)`: Python's `%` (the result takes the divisor's
    /// sign).
    PythonMod,
    /// torch's `IntTrueDiv(a, b)`: `/` of two ints, a float.
    IntTrueDiv,
    /// torch's `FloatTrueDiv(a, b)`: `/` of floats.
    FloatTrueDiv,
    /// torch's `ToFloat(x)`: `float(x)` of an int.
    ToFloat,
    /// torch's `BitwiseFn_bitwise_and(a, b)`: `a & b`.
    BitwiseAnd,
    /// torch's `BitwiseFn_bitwise_or(a, b)`: `a | b`.
    BitwiseOr,
    /// torch's `PowByNatural(base, exp)`: an int to a non-negative int power.
    PowByNatural,
    /// torch's `FloatPow(base, exp)`: `**` of floats.
    FloatPow,
}

impl Func {
    /// The function's class name, as `str()` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Func::FloorDiv => "FloorDiv",
            Func::Mod => "Mod",
            Func::PythonMod => "PythonMod",
            Func::IntTrueDiv => "IntTrueDiv",
            Func::FloatTrueDiv => "FloatTrueDiv",
            Func::ToFloat => "ToFloat",
            Func::BitwiseAnd => "BitwiseFn_bitwise_and",
            Func::BitwiseOr => "BitwiseFn_bitwise_or",
            Func::PowByNatural => "PowByNatural",
            Func::FloatPow => "FloatPow",
        }
    }

    /// The class attribute `precedence` the torch functions set (the
    /// printer parenthesizes by it); `None` for plain `Function`s (70).
    pub fn precedence(self) -> Option<u32> {
        match self {
            Func::FloorDiv
            | Func::Mod
            | Func::PythonMod
            | Func::IntTrueDiv
            | Func::FloatTrueDiv => Some(35),
            Func::BitwiseAnd => Some(38),
            Func::BitwiseOr => Some(36),
            Func::PowByNatural => Some(50),
            Func::FloatPow => Some(60),
            Func::ToFloat => None,
        }
    }
}

/// The relational classes: sympy's `Eq`, `Ne`, `Lt`, `Le`, `Gt`, `Ge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `Eq(a, b)` (`Equality`).
    Eq,
    /// `Ne(a, b)` (`Unequality`).
    Ne,
    /// `a < b` (`StrictLessThan`).
    Lt,
    /// `a <= b` (`LessThan`).
    Le,
    /// `a > b` (`StrictGreaterThan`).
    Gt,
    /// `a >= b` (`GreaterThan`).
    Ge,
}

impl Rel {
    /// sympy's class name (`class_key` and printing).
    pub fn class_name(self) -> &'static str {
        match self {
            Rel::Eq => "Equality",
            Rel::Ne => "Unequality",
            Rel::Lt => "StrictLessThan",
            Rel::Le => "LessThan",
            Rel::Gt => "StrictGreaterThan",
            Rel::Ge => "GreaterThan",
        }
    }
    /// `Relational.negated`: `~(a < b)` is `a >= b`.
    pub fn negated(self) -> Rel {
        match self {
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
        }
    }
    /// `Relational.reversed`: `a < b` is `b > a`.
    pub fn reversed(self) -> Rel {
        match self {
            Rel::Eq => Rel::Eq,
            Rel::Ne => Rel::Ne,
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
        }
    }
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// `sympy.Integer(i)`.
pub fn int(i: impl Into<BigInt>) -> Ex {
    Rc::new(Node::Int(i.into()))
}
/// A 53-bit `sympy.Float` of the double `f`, as is.
pub fn float(f: f64) -> Ex {
    Rc::new(Node::Float(f))
}
/// `sympy.true` or `sympy.false`.
pub fn boolean(b: bool) -> Ex {
    Rc::new(if b { Node::True } else { Node::False })
}

impl Node {
    /// `expr.is_Number`: an Integer, a Float, `int_oo`, `oo` or `nan`.
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            Node::Int(_)
                | Node::Float(_)
                | Node::BigFloat(_)
                | Node::IntOo { .. }
                | Node::Inf { .. }
                | Node::NaN
        )
    }
    /// The value of a `sympy.Integer`.
    pub fn as_int(&self) -> Option<&BigInt> {
        match self {
            Node::Int(i) => Some(i),
            _ => None,
        }
    }
    /// Whether the node is the Integer `v`.
    pub fn is_int_value(&self, v: i64) -> bool {
        matches!(self, Node::Int(i) if *i == BigInt::from(v))
    }
    /// `isinstance(x, sympy.logic.boolalg.Boolean)`.
    pub fn is_boolean(&self) -> bool {
        matches!(
            self,
            Node::Rel(..) | Node::And(_) | Node::Or(_) | Node::Not(_) | Node::True | Node::False
        )
    }
    /// A BooleanAtom: `sympy.true` or `sympy.false`.
    pub fn is_bool_atom(&self) -> bool {
        matches!(self, Node::True | Node::False)
    }
    /// `expr.is_Atom`.
    pub fn is_atom(&self) -> bool {
        self.is_number() || matches!(self, Node::Sym(_) | Node::True | Node::False)
    }
}

/// A numeric value: sympy `Integer`, `Float`, `int_oo`, `oo` or `nan`.
#[derive(Clone, Debug)]
pub enum Num {
    /// `sympy.Integer`.
    Int(BigInt),
    /// A 53-bit `sympy.Float`.
    Float(f64),
    /// A Float above 53 bits of precision (zero only as the lone result of
    /// a `%`: `Float._new` makes a zero sum or product `S.Zero`).
    BigFloat(Mpf),
    /// torch's `int_oo` (`true`: `-int_oo`).
    IntOo(bool),
    /// sympy's `oo` (`true`: `-oo`).
    Inf(bool),
    /// sympy's `nan`.
    NaN,
}

/// `Float._new`: a Float result of arithmetic that is exactly zero is
/// `S.Zero` (an Integer), an infinite one is `oo`, a NaN is `nan`.
fn float_result(f: f64) -> Num {
    if f == 0.0 {
        Num::Int(BigInt::zero())
    } else if f.is_nan() {
        Num::NaN
    } else if f.is_infinite() {
        Num::Inf(f < 0.0)
    } else {
        Num::Float(f)
    }
}

impl Num {
    /// The node's value, if it is a number.
    pub fn of(e: &Node) -> Option<Num> {
        match e {
            Node::Int(i) => Some(Num::Int(i.clone())),
            Node::Float(f) => Some(Num::Float(*f)),
            Node::BigFloat(m) => Some(Num::BigFloat((**m).clone())),
            Node::IntOo { neg } => Some(Num::IntOo(*neg)),
            Node::Inf { neg } => Some(Num::Inf(*neg)),
            Node::NaN => Some(Num::NaN),
            _ => None,
        }
    }
    /// The number as an expression node.
    pub fn to_ex(&self) -> Ex {
        match self {
            Num::Int(i) => int(i.clone()),
            Num::Float(f) => float(*f),
            Num::BigFloat(m) => Rc::new(Node::BigFloat(Box::new(m.clone()))),
            Num::IntOo(neg) => Rc::new(Node::IntOo { neg: *neg }),
            Num::Inf(neg) => Rc::new(Node::Inf { neg: *neg }),
            Num::NaN => Rc::new(Node::NaN),
        }
    }
    /// The value as a double: `int_oo`, `oo` and an Integer past the double
    /// range are infinite, `nan` is NaN.
    pub fn to_f64(&self) -> f64 {
        match self {
            Num::Int(i) => i.to_f64().unwrap_or(f64::INFINITY),
            Num::Float(f) => *f,
            Num::BigFloat(m) => m.to_f64(),
            Num::IntOo(neg) | Num::Inf(neg) => {
                if *neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Num::NaN => f64::NAN,
        }
    }
    /// Whether the number is zero (an Integer, or a Float of any precision).
    pub fn is_zero(&self) -> bool {
        match self {
            Num::Int(i) => i.is_zero(),
            Num::Float(f) => *f == 0.0,
            Num::BigFloat(m) => m.is_zero(),
            _ => false,
        }
    }
    /// Whether the number is the Integer 1.
    pub fn is_one(&self) -> bool {
        matches!(self, Num::Int(i) if i.is_one())
    }
    /// Whether the number is below zero (`-int_oo` and `-oo` are, `nan` is
    /// not).
    pub fn is_negative(&self) -> bool {
        match self {
            Num::Int(i) => i.is_negative(),
            Num::Float(f) => *f < 0.0,
            Num::BigFloat(m) => m.neg,
            Num::IntOo(neg) | Num::Inf(neg) => *neg,
            Num::NaN => false,
        }
    }
    /// Whether the number is above zero (`int_oo` and `oo` are, `nan` is not).
    pub fn is_positive(&self) -> bool {
        match self {
            Num::Int(i) => i.is_positive(),
            Num::Float(f) => *f > 0.0,
            Num::BigFloat(m) => !m.neg && !m.is_zero(),
            Num::IntOo(neg) | Num::Inf(neg) => !*neg,
            Num::NaN => false,
        }
    }
    /// `is_finite` (an Integer, a Float, and `int_oo`, which says it is an
    /// integer and so finite).
    pub fn is_finite(&self) -> bool {
        matches!(
            self,
            Num::Int(_) | Num::Float(_) | Num::BigFloat(_) | Num::IntOo(_)
        )
    }
    /// This number as an `mpf` at `prec` bits (an Integer rounded by
    /// `from_int`, a double exactly), for arithmetic with a [`Num::BigFloat`];
    /// `None` for zero or a non-finite number.
    fn as_mpf(&self, prec: u32) -> Option<Mpf> {
        match self {
            Num::Int(i) => Mpf::from_int(i, prec),
            Num::Float(f) => Mpf::from_f64(*f, prec),
            Num::BigFloat(m) if !m.is_zero() => Some(m.clone()),
            _ => None,
        }
    }
    /// The precision `Float.__add__` / `__mul__` work at: the larger `_prec`
    /// (an Integer has none, a double 53 bits); `None` when neither operand
    /// is a [`Num::BigFloat`].
    fn big_prec(&self, o: &Num) -> Option<u32> {
        let p = |n: &Num| match n {
            Num::BigFloat(m) => Some(m.prec),
            _ => None,
        };
        match (p(self), p(o)) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
        }
    }
    /// `Float._new(mpf, prec)`: zero is `S.Zero`.
    fn big_float_result(m: Option<Mpf>) -> PyResult<Num> {
        Ok(match m {
            None => Num::Int(BigInt::zero()),
            Some(m) => Num::BigFloat(super::mpf::in_range(m)?),
        })
    }
    /// Number addition: Integer/Float as sympy, `int_oo` as
    /// torch/utils/_sympy/numbers.py `IntInfinity.__add__`.
    pub fn add(&self, o: &Num) -> PyResult<Num> {
        Ok(match (self, o) {
            (Num::NaN, _) | (_, Num::NaN) => Num::NaN,
            (Num::Int(a), Num::Int(b)) => Num::Int(a + b),
            (Num::IntOo(a), Num::IntOo(b)) | (Num::Inf(a), Num::Inf(b)) => {
                if a == b {
                    self.clone()
                } else {
                    Num::NaN
                }
            }
            (Num::IntOo(_), Num::Inf(_)) | (Num::Inf(_), Num::IntOo(_)) => {
                return Err(Raise::unsupported("int_oo plus oo"))
            }
            (Num::IntOo(_), _) | (Num::Inf(_), _) => self.clone(),
            (_, Num::IntOo(_)) | (_, Num::Inf(_)) => o.clone(),
            _ => match self.big_prec(o) {
                Some(prec) => match (self.as_mpf(prec), o.as_mpf(prec)) {
                    (Some(a), Some(b)) => Num::big_float_result(Mpf::add(&a, &b, prec)?)?,
                    // `x + 0` rounds x to the working precision.
                    (Some(a), None) | (None, Some(a)) => Num::big_float_result(a.round_to(prec))?,
                    (None, None) => Num::Int(BigInt::zero()),
                },
                None => float_result(self.to_f64() + o.to_f64()),
            },
        })
    }
    /// Number multiplication (`IntInfinity.__mul__` for `int_oo`).
    pub fn mul(&self, o: &Num) -> PyResult<Num> {
        Ok(match (self, o) {
            (Num::NaN, _) | (_, Num::NaN) => Num::NaN,
            (Num::Int(a), Num::Int(b)) => Num::Int(a * b),
            (Num::IntOo(_), Num::Inf(_)) | (Num::Inf(_), Num::IntOo(_)) => {
                return Err(Raise::unsupported("int_oo times oo"))
            }
            (Num::IntOo(n), x) | (x, Num::IntOo(n)) => {
                if x.is_zero() {
                    Num::NaN
                } else {
                    Num::IntOo(*n != x.is_negative())
                }
            }
            (Num::Inf(n), x) | (x, Num::Inf(n)) => {
                if x.is_zero() {
                    Num::NaN
                } else {
                    Num::Inf(*n != x.is_negative())
                }
            }
            _ => match self.big_prec(o) {
                Some(prec) => match (self.as_mpf(prec), o.as_mpf(prec)) {
                    (Some(a), Some(b)) => Num::big_float_result(Mpf::mul(&a, &b, prec))?,
                    _ => Num::Int(BigInt::zero()),
                },
                None => float_result(self.to_f64() * o.to_f64()),
            },
        })
    }
    /// `-x` (`Number.__neg__`): `nan` stays `nan`.
    pub fn neg(&self) -> Num {
        match self {
            Num::Int(i) => Num::Int(-i),
            Num::Float(f) => Num::Float(-f),
            Num::BigFloat(m) => Num::BigFloat(m.neg()),
            Num::IntOo(n) => Num::IntOo(!n),
            Num::Inf(n) => Num::Inf(!n),
            Num::NaN => Num::NaN,
        }
    }
    /// Exact numeric comparison (sympy compares Integer with Float exactly);
    /// `int_oo` sits just below `oo`.
    pub fn num_cmp(&self, o: &Num) -> Option<std::cmp::Ordering> {
        fn rank(n: &Num) -> i8 {
            match n {
                Num::Inf(true) => -2,
                Num::IntOo(true) => -1,
                Num::IntOo(false) => 1,
                Num::Inf(false) => 2,
                _ => 0,
            }
        }
        if matches!(self, Num::NaN) || matches!(o, Num::NaN) {
            return None;
        }
        let (ra, rb) = (rank(self), rank(o));
        if ra != 0 || rb != 0 {
            return Some(ra.cmp(&rb));
        }
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(b)),
            (Num::Int(a), Num::Float(b)) => torchspec_pyval::Value::big(a.clone())
                .as_number()
                .and_then(|x| x.num_cmp(&torchspec_pyval::Value::Float(*b).as_number()?)),
            (Num::Float(a), Num::Int(b)) => Num::Int(b.clone())
                .num_cmp(&Num::Float(*a))
                .map(|o| o.reverse()),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(b),
            (Num::BigFloat(a), Num::Int(b)) => a.cmp_int(b).ok(),
            (Num::Int(a), Num::BigFloat(b)) => b.cmp_int(a).ok().map(|o| o.reverse()),
            (Num::BigFloat(a), Num::BigFloat(b)) => Mpf::cmp_value(a, b).ok(),
            (Num::BigFloat(a), Num::Float(b)) => a.cmp_f64(*b),
            (Num::Float(a), Num::BigFloat(b)) => b.cmp_f64(*a).map(|o| o.reverse()),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Add
// ---------------------------------------------------------------------------

/// `expr.as_coeff_Mul()`: the leading numeric coefficient and the rest.
pub fn as_coeff_mul(e: &Ex) -> (Num, Ex) {
    if let Some(n) = Num::of(e) {
        return (n, int(1));
    }
    if let Node::Mul(args) = &**e {
        if let Some(n) = Num::of(&args[0]) {
            let rest = if args.len() == 2 {
                args[1].clone()
            } else {
                Rc::new(Node::Mul(args[1..].to_vec()))
            };
            return (n, rest);
        }
    }
    (Num::Int(BigInt::one()), e.clone())
}

/// `Add.make_args`.
pub fn add_args(e: &Ex) -> Vec<Ex> {
    match &**e {
        Node::Add(a) => a.clone(),
        _ => vec![e.clone()],
    }
}

/// `Mul.make_args`.
pub fn mul_args(e: &Ex) -> Vec<Ex> {
    match &**e {
        Node::Mul(a) => a.clone(),
        _ => vec![e.clone()],
    }
}

/// `_keep_coeff(c, rest)` / `c*rest` for a term of a sum: distributes
/// nothing, only attaches the coefficient.
fn attach_coeff(c: &Num, rest: &Ex) -> Ex {
    if c.is_one() {
        return rest.clone();
    }
    if rest.is_int_value(1) {
        return c.to_ex();
    }
    let mut args = vec![c.to_ex()];
    args.extend(mul_args(rest));
    Rc::new(Node::Mul(args))
}

/// `sympy.Add(*args)` (Add.flatten): flatten nested sums, add up the
/// numbers, collect terms with equal non-numeric part, drop zeros.
pub fn add(args: &[Ex]) -> PyResult<Ex> {
    // AssocOp.__new__ drops the identity (Integer 0) before flattening, so a
    // lone Float 0.0 survives while `0.0 + 0.0` folds to Integer 0.
    let args: Vec<Ex> = args
        .iter()
        .filter(|a| !a.is_int_value(0))
        .cloned()
        .collect();
    match args.len() {
        0 => return Ok(int(0)),
        1 => return Ok(args[0].clone()),
        _ => {}
    }
    let mut coeff = Num::Int(BigInt::zero());
    let mut terms: Vec<(Ex, Num)> = Vec::new();
    let mut flat = Vec::new();
    for a in &args {
        flat.extend(add_args(a));
    }
    for a in flat {
        if let Some(n) = Num::of(&a) {
            coeff = coeff.add(&n)?;
            continue;
        }
        let (c, rest) = as_coeff_mul(&a);
        match terms.iter_mut().find(|(r, _)| *r == rest) {
            Some((_, cc)) => *cc = cc.add(&c)?,
            None => terms.push((rest, c)),
        }
    }
    if matches!(coeff, Num::NaN) {
        return Ok(coeff.to_ex());
    }
    let mut out: Vec<Ex> = Vec::new();
    for (rest, c) in terms {
        if c.is_zero() {
            continue;
        }
        match c {
            Num::NaN => return Err(Raise::unsupported("a nan coefficient in a sum")),
            // `Mul(c, s)` runs Mul's machinery (oo absorbs signed factors).
            Num::Inf(_) if !matches!(*rest, Node::Mul(_)) => out.push(mul(&[c.to_ex(), rest])?),
            _ => out.push(attach_coeff(&c, &rest)),
        }
    }
    if let Num::Inf(neg) = coeff {
        // Add.flatten: oo absorbs the terms that are real or of its sign.
        out.retain(|t| {
            let f = facts(t);
            let same_sign = if neg { f.nonpos() } else { f.nonneg() };
            !(same_sign == Some(true) || f.real == Some(true))
        });
    }
    super::order::sort_canonical(&mut out);
    if !coeff.is_zero() {
        out.insert(0, coeff.to_ex());
    }
    Ok(match out.len() {
        0 => int(0),
        1 => out.pop().expect("one term"),
        _ => Rc::new(Node::Add(out)),
    })
}

/// `a - b`, built as `Add(a, -b)`.
pub fn sub(a: &Ex, b: &Ex) -> PyResult<Ex> {
    add(&[a.clone(), neg(b)?])
}

/// `-a`: a number negates in place, anything else is `Mul(-1, a)`.
pub fn neg(a: &Ex) -> PyResult<Ex> {
    // `Number.__neg__` negates in place: `-Float(0.0)` stays a Float.
    if let Some(n) = Num::of(a) {
        return Ok(n.neg().to_ex());
    }
    mul(&[int(-1), a.clone()])
}

// ---------------------------------------------------------------------------
// Mul and Pow
// ---------------------------------------------------------------------------

/// `base**exp` as a factor: its base and integer exponent.
fn base_exp(e: &Ex) -> (Ex, BigInt) {
    match &**e {
        Node::Pow(b, x) => match x.as_int() {
            Some(i) => (b.clone(), i.clone()),
            None => (e.clone(), BigInt::one()),
        },
        _ => (e.clone(), BigInt::one()),
    }
}

fn make_pow(base: &Ex, exp: &BigInt) -> Ex {
    if exp.is_one() {
        base.clone()
    } else {
        Rc::new(Node::Pow(base.clone(), int(exp.clone())))
    }
}

/// `sympy.Mul(*args)` (Mul.flatten): multiply the numbers, merge equal
/// bases by adding exponents, and distribute a number over a sum when the
/// product has exactly two factors (`2*(a + 1)` is `2*a + 2`).
pub fn mul(args: &[Ex]) -> PyResult<Ex> {
    // AssocOp.__new__ drops the identity (Integer 1) first.
    let args: Vec<Ex> = args
        .iter()
        .filter(|a| !a.is_int_value(1))
        .cloned()
        .collect();
    match args.len() {
        0 => return Ok(int(1)),
        1 => return Ok(args[0].clone()),
        _ => {}
    }
    let args = &args[..];
    // Mul.flatten's two-argument special case: Rational * Add distributes.
    if args.len() == 2 {
        let (a, b) = (&args[0], &args[1]);
        let (num, other) = if matches!(**b, Node::Int(_)) {
            (b, a)
        } else {
            (a, b)
        };
        // `global_parameters.distribute and b.is_commutative`: a sum with an
        // opaque `BitwiseFn` of a Boolean stays whole (`-(a + (a | False))`).
        let sum = match (&**num, &**other) {
            (Node::Int(n), Node::Add(terms)) if super::order::is_commutative(other) => {
                Some((n, terms))
            }
            _ => None,
        };
        if let Some((n, terms)) = sum {
            if n.is_zero() {
                return Ok(int(0));
            }
            if n.is_one() {
                return Ok(other.clone());
            }
            let c = Num::Int(n.clone());
            let mut out = Vec::new();
            for t in terms {
                let (tc, rest) = as_coeff_mul(t);
                out.push(attach_coeff(&c.mul(&tc)?, &rest));
            }
            return add(&out);
        }
    }
    let mut coeff = Num::Int(BigInt::one());
    let mut powers: Vec<(Ex, BigInt)> = Vec::new();
    let mut flat = Vec::new();
    for a in args {
        flat.extend(mul_args(a));
    }
    for a in flat {
        if let Some(n) = Num::of(&a) {
            coeff = coeff.mul(&n)?;
            continue;
        }
        let (b, e) = base_exp(&a);
        match powers.iter_mut().find(|(pb, _)| *pb == b) {
            Some((_, pe)) => *pe += e,
            None => powers.push((b, e)),
        }
    }
    if coeff.is_zero() || matches!(coeff, Num::NaN) {
        return Ok(coeff.to_ex());
    }
    let mut out: Vec<Ex> = Vec::new();
    for (b, e) in powers {
        if e.is_zero() {
            continue;
        }
        out.push(make_pow(&b, &e));
    }
    super::order::sort_canonical(&mut out);
    if out.is_empty() {
        return Ok(coeff.to_ex());
    }
    if out.len() == 1 && coeff.is_one() {
        return Ok(out.pop().expect("one factor"));
    }
    // A number times a single sum distributes (the two-argument rule above
    // applied to the folded product).
    if let Num::Inf(neg) = coeff {
        // Mul.flatten: oo absorbs the factors of known sign.
        let mut neg = neg;
        out.retain(|t| {
            let f = facts(t);
            if f.pos == Some(true) {
                return false;
            }
            if f.neg == Some(true) {
                neg = !neg;
                return false;
            }
            true
        });
        coeff = Num::Inf(neg);
        if out.is_empty() {
            return Ok(coeff.to_ex());
        }
    }
    // Mul.flatten's last step: a finite number times a single sum
    // distributes (`1.5*(a + 1)` is `1.5*a + 1.5`, `int_oo*(a + 1)` too).
    // (`not nc_part`: a non-commutative sum stays a factor.)
    if out.len() == 1 && coeff.is_finite() {
        match &*out[0] {
            Node::Add(terms) if super::order::is_commutative(&out[0]) => {
                if let Num::Int(_) = coeff {
                    return mul(&[coeff.to_ex(), out[0].clone()]);
                }
                let mut dist = Vec::new();
                for t in terms {
                    let (tc, rest) = as_coeff_mul(t);
                    dist.push(attach_coeff(&coeff.mul(&tc)?, &rest));
                }
                return add(&dist);
            }
            _ => {}
        }
    }
    if !coeff.is_one() {
        out.insert(0, coeff.to_ex());
    }
    Ok(Rc::new(Node::Mul(out)))
}

/// `sympy.Pow(base, n)` for an integer `n >= 0`: numbers fold, products
/// distribute the power over their factors, powers multiply exponents.
pub fn pow_int(base: &Ex, n: &BigInt) -> PyResult<Ex> {
    if n.is_zero() {
        return Ok(int(1));
    }
    if n.is_one() {
        return Ok(base.clone());
    }
    match &**base {
        // 0, 1 and -1 to any power need no arithmetic (`(-c)**n` splits
        // off `(-1)**n` however large n is).
        Node::Int(b) if b.is_zero() || b.is_one() => Ok(base.clone()),
        Node::Int(b) if *b == BigInt::from(-1) => Ok(int(if n.is_odd() { -1 } else { 1 })),
        Node::Int(b) => {
            let e = n
                .to_u32()
                .filter(|e| b.bits() * (*e as u64) <= 1 << 16)
                .ok_or_else(|| Raise::unsupported("a huge integer power"))?;
            Ok(int(num_traits::pow(b.clone(), e as usize)))
        }
        Node::Float(_) | Node::BigFloat(_) | Node::Inf { .. } => {
            Err(Raise::unsupported("a power of a Float"))
        }
        // IntInfinity._eval_power: a positive exponent keeps int_oo.
        Node::IntOo { neg: false } | Node::NaN => Ok(base.clone()),
        // NegativeIntInfinity._eval_power: the sign of an odd power stays.
        Node::IntOo { neg: true } => Ok(Rc::new(Node::IntOo { neg: n.is_odd() })),
        Node::Mul(args) => {
            let mut out = Vec::new();
            for a in args {
                out.push(pow_int(a, n)?);
            }
            mul(&out)
        }
        Node::Pow(b, e) => match e.as_int() {
            Some(e) => pow_int(b, &(e * n)),
            None => Ok(make_pow(base, n)),
        },
        _ => Ok(make_pow(base, n)),
    }
}

/// `safe_pow(base, exp)` (torch/utils/_sympy/functions.py): Python ints,
/// but a magnitude past `sys.maxsize` at any squaring step is `int_oo`
/// (signed by the base's sign for an odd exponent).
fn safe_pow(base: &BigInt, exp: &BigInt) -> PyResult<Num> {
    /// `_safe_pow` on a non-negative base; `None` is `int_oo`.
    fn unsigned(base: &BigInt, exp: &BigInt, max: &BigInt) -> Option<BigInt> {
        if exp.is_zero() {
            return Some(BigInt::one());
        }
        let half = unsigned(base, &(exp / 2), max)?;
        let mut r = &half * &half;
        if r > *max {
            return None;
        }
        if exp.is_odd() {
            r *= base;
            if r > *max {
                return None;
            }
        }
        Some(r)
    }
    if exp.is_negative() {
        return Err(Raise::value_error("Exponent must be non-negative."));
    }
    let neg = base.is_negative() && exp.is_odd();
    Ok(match unsigned(&base.abs(), exp, &BigInt::from(i64::MAX)) {
        Some(r) => Num::Int(if neg { -r } else { r }),
        None => Num::IntOo(neg),
    })
}

/// `PowByNatural(base, exp)` with its `eval`.
pub fn pow_by_natural(base: &Ex, exp: &Ex) -> PyResult<Ex> {
    if let (Node::Int(b), Node::Int(e)) = (&**base, &**exp) {
        return Ok(safe_pow(b, e)?.to_ex());
    }
    if let Node::Int(e) = &**exp {
        // "Rely on regular sympy Pow for this".
        if e.is_negative() {
            return Err(Raise::unsupported("a negative integer power"));
        }
        return pow_int(base, e);
    }
    if matches!(**exp, Node::IntOo { neg: false } | Node::Inf { neg: false }) {
        let fb = facts(base);
        if fb.nonneg() == Some(true) {
            return Ok(Rc::new(Node::IntOo { neg: false }));
        }
        if fb.neg == Some(true) {
            return Err(Raise::unsupported("zoo"));
        }
    }
    Ok(func(Func::PowByNatural, vec![base.clone(), exp.clone()]))
}

/// CPython's `float ** float` when the result is complex (a negative base
/// to a non-integer power): `complex.__pow__`'s `_Py_c_pow`, as `repr`.
fn complex_pow_repr(a: f64, b: f64) -> String {
    let vabs = a.abs();
    let len = vabs.powf(b);
    let at = 0.0f64.atan2(a);
    let phase = at * b;
    let (re, im) = (len * phase.cos(), len * phase.sin());
    let r = torchspec_pyval::float_repr;
    let im_s = if im.is_nan() {
        "nan".to_string()
    } else {
        r(im)
    };
    if re == 0.0 && re.is_sign_positive() {
        format!("{im_s}j")
    } else {
        let sign = if im_s.starts_with('-') { "" } else { "+" };
        format!("({}{sign}{im_s}j)", r(re))
    }
}

/// `FloatPow(base, exp)`: two numbers fold through Python's float `**`.
pub fn float_pow(base: &Ex, exp: &Ex) -> PyResult<Ex> {
    if let (Some(b), Some(e)) = (Num::of(base), Num::of(exp)) {
        if matches!(b, Num::NaN) || matches!(e, Num::NaN) {
            return Err(Raise::unsupported("FloatPow of nan"));
        }
        let (x, y) = (b.to_f64(), e.to_f64());
        if x == 0.0 && y < 0.0 && y.is_finite() {
            return Err(zero_division("0.0 cannot be raised to a negative power"));
        }
        if x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0 {
            return Err(Raise::type_error(format!(
                "cannot create mpf from {}",
                complex_pow_repr(x, y)
            )));
        }
        let r = x.powf(y);
        if r.is_infinite() && x.is_finite() && y.is_finite() {
            return Err(Raise::new(
                "OverflowError",
                "(34, 'Numerical result out of range')",
            ));
        }
        // sympy.Float(r): a zero stays Float 0.0; inf is oo.
        return Ok(if r.is_infinite() {
            Rc::new(Node::Inf { neg: r < 0.0 })
        } else if r.is_nan() {
            Rc::new(Node::NaN)
        } else {
            float(r)
        });
    }
    Ok(func(Func::FloatPow, vec![base.clone(), exp.clone()]))
}

/// `expr.atoms(FloorDiv)` is not empty.
pub fn contains_floordiv(e: &Ex) -> bool {
    match &**e {
        Node::Fn(Func::FloorDiv, _) => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(contains_floordiv)
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => contains_floordiv(a) || contains_floordiv(b),
        Node::Not(a) => contains_floordiv(a),
        _ => false,
    }
}

/// `TypeError` of a BooleanAtom in arithmetic (`BooleanAtom._noop`).
fn boolean_atom_error() -> Raise {
    Raise::type_error("BooleanAtom not allowed in this context.")
}

// ---------------------------------------------------------------------------
// torch functions
// ---------------------------------------------------------------------------

fn zero_division(msg: &str) -> Raise {
    Raise::new("ZeroDivisionError", msg)
}

fn func(f: Func, args: Vec<Ex>) -> Ex {
    Rc::new(Node::Fn(f, args))
}

/// Divide every term of `p` by the integer `g` (exact by construction).
fn div_int_exact(p: &Ex, g: &BigInt) -> PyResult<Ex> {
    let mut out = Vec::new();
    for t in add_args(p) {
        let (c, rest) = as_coeff_mul(&t);
        match c {
            Num::Int(c) => out.push(attach_coeff(&Num::Int(c / g), &rest)),
            _ => return Err(Raise::unsupported("FloorDiv gcd with a Float")),
        }
    }
    add(&out)
}

/// `term / factor` for a factor known to occur in every term's `Mul.make_args`.
fn div_factor(p: &Ex, x: &Ex) -> PyResult<Ex> {
    // A sum that is the factor itself (`(x - 1) / (x - 1)`) is 1, not taken
    // term by term.
    if p == x {
        return Ok(int(1));
    }
    let mut out = Vec::new();
    for t in add_args(p) {
        let mut args = mul_args(&t);
        if let Some(i) = args.iter().position(|a| a == x) {
            args.remove(i);
        }
        out.push(if args.is_empty() { int(1) } else { mul(&args)? });
    }
    add(&out)
}

/// torch `simple_floordiv_gcd(p, q)`: the common integer content times the
/// factors of `q` that occur syntactically in every term of `p`. Returned
/// as the integer part and the symbolic factors.
fn simple_floordiv_gcd(p: &Ex, q: &Ex) -> (BigInt, Vec<Ex>) {
    fn integer_coefficient(x: &Ex) -> BigInt {
        mul_args(x)
            .iter()
            .filter_map(|a| a.as_int().map(|i| i.abs()))
            .fold(BigInt::one(), |acc, i| acc * i)
    }
    fn integer_factor(e: &Ex) -> BigInt {
        let mut it = add_args(e).into_iter().map(|t| integer_coefficient(&t));
        let first = it.next().unwrap_or_else(BigInt::zero);
        it.fold(first, |acc, i| acc.gcd(&i))
    }
    let g = integer_factor(p).gcd(&integer_factor(q));
    let (pd, qd) = if g.is_zero() || g.is_one() {
        (p.clone(), q.clone())
    } else {
        match (div_int_exact(p, &g), div_int_exact(q, &g)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => (p.clone(), q.clone()),
        }
    };
    let base_splits: Vec<Vec<Ex>> = add_args(&pd).iter().map(mul_args).collect();
    let mut syms = Vec::new();
    for x in mul_args(&qd) {
        if base_splits.iter().all(|s| s.contains(&x)) {
            syms.push(x);
        }
    }
    (g, syms)
}

/// `FloorDiv(base, divisor)` with `FloorDiv.eval`.
pub fn floordiv(base: &Ex, divisor: &Ex) -> PyResult<Ex> {
    let fd = facts(divisor);
    if fd.zero == Some(true) {
        return Err(zero_division("division by zero"));
    }
    let infinite = |e: &Ex| matches!(**e, Node::IntOo { .. } | Node::Inf { .. });
    if infinite(base) && infinite(divisor)
        || matches!(**base, Node::NaN)
        || matches!(**divisor, Node::NaN)
    {
        return Ok(Rc::new(Node::NaN));
    }
    let fb = facts(base);
    if fb.zero == Some(true) {
        return Ok(int(0));
    }
    // A BooleanAtom operand (`a // True`) reaches arithmetic (`p / gcd`,
    // `term / divisor`, `base.args[1] * divisor`) and raises there.
    if base.is_bool_atom() || divisor.is_bool_atom() {
        if base == divisor {
            return Ok(int(1));
        }
        return Err(boolean_atom_error());
    }
    if fb.integer == Some(true) && divisor.is_int_value(1) {
        return Ok(base.clone());
    }
    if fb.integer == Some(true) && divisor.is_int_value(-1) {
        return mul(&[base.clone(), int(-1)]);
    }
    if base == divisor {
        return Ok(int(1));
    }
    if let (Node::Int(b), Node::Int(d)) = (&**base, &**divisor) {
        return Ok(int(b.div_floor(d)));
    }
    if base.is_number() && divisor.is_number() && (infinite(base) || infinite(divisor)) {
        let r =
            Num::of(base).expect("number").to_f64() / Num::of(divisor).expect("number").to_f64();
        return Ok(if r == f64::INFINITY {
            Rc::new(Node::IntOo { neg: false })
        } else if r == f64::NEG_INFINITY {
            Rc::new(Node::IntOo { neg: true })
        } else if r.is_nan() {
            Rc::new(Node::NaN)
        } else {
            int(torchspec_pyval::float_to_bigint(r.floor()).expect("finite"))
        });
    }
    if base.is_number() && divisor.is_number() {
        return Err(Raise::unsupported("FloorDiv of Floats"));
    }
    // `simple_floordiv_gcd` takes int_oo as an atom (not an Integer, so no
    // integer factor); a sum divisor goes on to sympy's polynomial gcd,
    // which fails or divides in the EX domain with int_oo in it.
    if (has_infinity(base) || has_infinity(divisor)) && matches!(**divisor, Node::Add(_)) {
        if let Some(e) = int_oo_gcd_failure(base, divisor) {
            return Err(e);
        }
        return Err(Raise::unsupported("FloorDiv's gcd with int_oo"));
    }
    if let Node::Fn(Func::FloorDiv, a) = &**base {
        let d = mul(&[a[1].clone(), divisor.clone()])?;
        return floordiv(&a[0], &d);
    }
    // (x + y) // b is x // b + y // b for the terms whose quotient is an
    // integer.
    if let Node::Int(d) = &**divisor {
        let mut taken = Vec::new();
        let mut quotients = Vec::new();
        for t in add_args(base) {
            // `-int_oo / d` is `-int_oo` for a positive d, an integer: the
            // term is taken, and `base - (-int_oo)` then adds `int_oo` to
            // `-int_oo` (nan). Any other `int_oo / d` is sympy's `oo` or
            // `-oo`, not an integer (IntInfinity.__truediv__ and
            // NegativeIntInfinity.__truediv__ differ).
            if let Node::IntOo { neg } = &*t {
                if *neg && d.is_positive() {
                    quotients.push(Rc::new(Node::IntOo { neg: true }));
                    taken.push(t.clone());
                }
                continue;
            }
            let (c, rest) = as_coeff_mul(&t);
            if let Num::Int(c) = &c {
                if (c % d).is_zero() && facts(&rest).integer == Some(true) {
                    quotients.push(attach_coeff(&Num::Int(c / d), &rest));
                    taken.push(t.clone());
                }
            }
        }
        if !taken.is_empty() {
            let taken_sum = if taken.len() == 1 {
                taken[0].clone()
            } else {
                Rc::new(Node::Add(taken))
            };
            let rest = sub(base, &taken_sum)?;
            let q = floordiv(&rest, divisor)?;
            let mut all = vec![q];
            all.extend(quotients);
            return add(&all);
        }
    }
    let (g, syms) = simple_floordiv_gcd(base, divisor);
    if matches!(**divisor, Node::Add(_)) && g.is_one() && syms.is_empty() {
        // torch falls back to sympy.gcd (a polynomial gcd) here. Modelled:
        // the base an integer multiple of the divisor, or the divisor a
        // factor of the base.
        if let Some(k) = integer_multiple(base, divisor)? {
            return floordiv(&k, &int(1));
        }
        if let Node::Mul(args) = &**base {
            if let Some(i) = args.iter().position(|a| a == divisor) {
                let mut rest = args.clone();
                rest.remove(i);
                return floordiv(&simplify_quotient(&mul(&rest)?)?, &int(1));
            }
        }
        if let Some(q) = integer_over_poly(base, divisor)? {
            return Ok(q);
        }
        // Otherwise sympy.gcd must be proved 1 (see `poly_coprime`); other
        // polynomial gcds (`(x*y + x)//(x**2 + x)`) are not modelled.
        // The quotients come out expanded, as simplify leaves them when
        // the common factor cancels syntactically; from a power of a sum
        // with a content it keeps the power (`(3*a + 6)**3 / (a + 2)` is
        // `27*(a + 2)**2`): not modelled.
        if let (false, Some((b, d))) = (
            has_power_of_sum(base) || has_power_of_sum(divisor),
            linear_gcd_quotients(base, divisor)?,
        ) {
            return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?);
        }
        if let Some((b, d)) = monomial_gcd_quotients(base, divisor)? {
            return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?);
        }
        if !poly_coprime(base, divisor) && !certified_coprime(base, divisor) {
            return Err(Raise::unsupported(
                "sympy.gcd of two polynomials with a common factor (FloorDiv's safe_gcd)",
            ));
        }
    }
    if !(g.is_zero() || g.is_one() && syms.is_empty()) {
        let mut b = div_int_exact(base, &g)?;
        let mut d = div_int_exact(divisor, &g)?;
        for x in &syms {
            b = div_factor(&b, x)?;
            d = div_factor(&d, x)?;
        }
        return floordiv(&simplify_quotient(&b)?, &simplify_quotient(&d)?);
    }
    Ok(func(Func::FloorDiv, vec![base.clone(), divisor.clone()]))
}

/// `FloorDiv(n, q)` for an integer `n` and a polynomial `q`: `sympy.gcd`
/// is the gcd of `n` and `q`'s integer content, taken from the expanded
/// `q` (`a**2 - a*(a - 2)` is `2*a`: `6 // that` is `3 // a`). `None` when
/// it is 1; unsupported when the expanded quotient's terms share a factor
/// (what `sympy.simplify` makes of it is not modelled).
fn integer_over_poly(base: &Ex, divisor: &Ex) -> PyResult<Option<Ex>> {
    let (Node::Int(n), Some(qq)) = (&**base, as_poly(divisor)) else {
        return Ok(None);
    };
    let g = qq.iter().fold(n.abs(), |g, (c, _)| g.gcd(c));
    if g.is_zero() || g.is_one() {
        return Ok(None);
    }
    // A power of a sum in `q` can keep its structure through simplify
    // (`b**3 - (b - 4)**3` over 4 is `b**3/4 - (b - 4)**3/4`) unless the
    // expanded quotient is linear (`(b + 3)**2 - b**2` over 3 is `2*b + 3`):
    // not modelled.
    let power_of_sum = |t: &Ex| {
        mul_args(t)
            .iter()
            .any(|f| matches!(&**f, Node::Pow(b, _) if matches!(**b, Node::Add(_))))
    };
    let linear = qq
        .iter()
        .all(|(_, m)| m.iter().map(|(_, k)| *k).sum::<u32>() <= 1);
    if !linear && add_args(divisor).iter().any(power_of_sum) {
        return Err(Raise::unsupported(
            "sympy.simplify of a quotient with a power of a sum (FloorDiv's safe_gcd)",
        ));
    }
    let quotient: Poly = poly_norm(qq.iter().map(|(c, m)| (c / &g, m.clone())).collect());
    // simplify's `cancel` expands the quotient, and the expanded sum is
    // the shortest form it finds unless its terms share a factor.
    let quotient = poly_to_ex(&quotient)?;
    if !simplify_stable(&quotient) {
        return Err(Raise::unsupported(
            "sympy.simplify of a polynomial quotient (FloorDiv's safe_gcd)",
        ));
    }
    floordiv(&int(n / &g), &quotient).map(Some)
}

/// An item simplify leaves alone: a symbol, its integer power, or a torch
/// function whose arguments simplify leaves alone.
fn simplify_atomic(f: &Ex) -> bool {
    match &**f {
        Node::Sym(_) => true,
        Node::Pow(b, e) => matches!(**b, Node::Sym(_)) && e.as_int().is_some(),
        Node::Fn(Func::FloorDiv | Func::Mod | Func::PythonMod, args) => args
            .iter()
            .all(|a| matches!(**a, Node::Int(_)) || simplify_stable(a)),
        _ => false,
    }
}

/// A monomial: an integer coefficient times simplify-atomic items.
fn simplify_monomial(e: &Ex) -> bool {
    let (c, rest) = as_coeff_mul(e);
    matches!(c, Num::Int(_))
        && (rest.is_int_value(1) || mul_args(&rest).iter().all(simplify_atomic))
}

/// Expressions `sympy.simplify` returns unchanged (checked against sympy
/// 1.14 shape by shape): monomials, and sums of monomials with no factor
/// common to every term (`a*b + a` would become `a*(b + 1)`).
fn simplify_stable(e: &Ex) -> bool {
    match &**e {
        Node::Add(terms) => {
            if !terms.iter().all(simplify_monomial) {
                return false;
            }
            let mut common: Option<Vec<Ex>> = None;
            for t in terms {
                let (_, rest) = as_coeff_mul(t);
                let bases: Vec<Ex> = if rest.is_int_value(1) {
                    vec![]
                } else {
                    mul_args(&rest)
                        .iter()
                        .map(|f| match &**f {
                            Node::Pow(b, _) => b.clone(),
                            _ => f.clone(),
                        })
                        .collect()
                };
                common = Some(match common {
                    None => bases,
                    Some(c) => c.into_iter().filter(|b| bases.contains(b)).collect(),
                });
            }
            common.is_none_or(|c| c.is_empty())
        }
        _ => simplify_monomial(e),
    }
}

/// A sum of integer multiples of single atomic items (the shape the sign
/// rule of `simplify_quotient` was checked on).
fn is_plain_linear(e: &Ex) -> bool {
    let Node::Add(terms) = &**e else { return false };
    simplify_stable(e)
        && terms.iter().all(|t| {
            let (_, rest) = as_coeff_mul(t);
            rest.is_int_value(1) || simplify_atomic(&rest)
        })
}

/// simplify's `together` / `gcd_terms` step on a sum of monomials whose
/// terms all share a generator: the common monomial and the positive
/// integer content come out (`a*b + a` is `a*(b + 1)`, `2*a**2 + 2*a` is
/// `2*a*(a + 1)`, `-a*b - a` is `a*(-b - 1)`), when what stays inside is
/// itself stable. `None` when there is no common generator.
fn factor_common_monomial(x: &Ex) -> PyResult<Option<Ex>> {
    let Node::Add(terms) = &**x else {
        return Ok(None);
    };
    if !terms.iter().all(simplify_monomial) {
        return Ok(None);
    }
    let Some(p) = as_poly(x) else { return Ok(None) };
    if p.len() != terms.len() {
        return Ok(None);
    }
    let mut common: Vec<(Ex, u32)> = p[0].1.clone();
    for (_, m) in &p[1..] {
        common = common
            .into_iter()
            .filter_map(|(g, k)| {
                m.iter()
                    .find(|(h, _)| *h == g)
                    .map(|(_, j)| (g.clone(), k.min(*j)))
            })
            .collect();
    }
    if common.is_empty() {
        return Ok(None);
    }
    let content = p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c));
    let mut inner = Vec::new();
    for (c, m) in &p {
        let mut f = vec![int(c / &content)];
        for (g, k) in m {
            let k0 = common.iter().find(|(h, _)| h == g).map_or(0, |(_, j)| *j);
            if *k > k0 {
                f.push(make_pow(g, &BigInt::from(k - k0)));
            }
        }
        inner.push(mul(&f)?);
    }
    let inner = add(&inner)?;
    if !simplify_stable(&inner) || factor_common_monomial(&inner)?.is_some() {
        return Err(Raise::unsupported(
            "sympy.simplify of a nested factorization",
        ));
    }
    let mut f = vec![int(content)];
    for (g, k) in &common {
        f.push(make_pow(g, &BigInt::from(*k)));
    }
    f.push(inner);
    // Mul(2, a, a + 1) keeps the sum (no two-argument distribution).
    let factored = mul(&f)?;
    // simplify keeps the shorter by `count_ops`, the factored one on a tie
    // (`x**2 + x` is `x*(x + 1)`, `x**3 + x` stays).
    if count_ops(&factored)? > count_ops(x)? {
        return Ok(Some(x.clone()));
    }
    Ok(Some(factored))
}

/// `sympy.count_ops(e)` for sums, products and powers of symbols and
/// integers: an ADD or SUB between terms (a NEG if every term is
/// negative), a MUL between factors (a NEG for a negative coefficient, which
/// counts as a factor unless it is 1), a POW per power.
fn count_ops(e: &Ex) -> PyResult<usize> {
    Ok(match &**e {
        Node::Add(terms) => {
            let mut ops = terms.len() - 1;
            let mut negs = 0;
            for t in terms {
                if super::facts::could_extract_minus_sign(t) {
                    negs += 1;
                    ops += count_ops(&neg(t)?)?;
                } else {
                    ops += count_ops(t)?;
                }
            }
            ops + usize::from(negs == terms.len())
        }
        Node::Mul(_) => {
            let (c, rest) = as_coeff_mul(e);
            let factors = if rest.is_int_value(1) {
                vec![]
            } else {
                mul_args(&rest)
            };
            let coeff = usize::from(!matches!(&c, Num::Int(i) if i.abs().is_one()));
            let mut ops = usize::from(c.is_negative()) + (factors.len() + coeff).saturating_sub(1);
            for f in &factors {
                ops += count_ops(f)?;
            }
            ops
        }
        Node::Pow(b, x) => 1 + count_ops(b)? + count_ops(x)?,
        Node::Fn(_, args) => {
            let mut ops = 1;
            for a in args {
                ops += count_ops(a)?;
            }
            ops
        }
        _ => 0,
    })
}

/// `sympy.simplify(x)` for the quotients FloorDiv's gcd path builds, as far
/// as it is modelled: atoms, monomials and content-1 linear sums stay; a
/// product of a coefficient, symbols and one such sum is rewritten the way
/// simplify's operation count prefers (`signsimp` pulls the sign out of an
/// all-negative sum; a negative coefficient moves into a mixed-sign sum:
/// `-3*b*(1 - a)` is `3*b*(a - 1)`). Anything else is not modelled.
fn simplify_quotient(x: &Ex) -> PyResult<Ex> {
    let atomic = simplify_atomic;
    if let Some(f) = factor_common_monomial(x)? {
        return Ok(f);
    }
    match &**x {
        Node::Int(_) => return Ok(x.clone()),
        _ if simplify_stable(x) => return Ok(x.clone()),
        Node::Mul(_) => {
            let (c, rest) = as_coeff_mul(x);
            let factors = mul_args(&rest);
            if let Num::Int(ci) = &c {
                if factors.iter().all(atomic) {
                    return Ok(x.clone());
                }
                let sums: Vec<&Ex> = factors
                    .iter()
                    .filter(|f| matches!(***f, Node::Add(_)))
                    .collect();
                // (A sum with content > 1 also gives its content up:
                // `-a*(2*b - 2)` is `2*a*(1 - b)`; not modelled.)
                if sums.len() == 1
                    && is_plain_linear(sums[0])
                    && as_poly(sums[0]).is_some_and(|p| {
                        p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c)).is_one()
                    })
                    && factors
                        .iter()
                        .all(|f| atomic(f) || matches!(**f, Node::Add(_)))
                {
                    let a = sums[0];
                    let n = add_args(a).len();
                    let negs = add_args(a)
                        .iter()
                        .filter(|t| super::facts::could_extract_minus_sign(t))
                        .count();
                    let flip = negs == n || (ci.is_negative() && negs > 0 && negs < n);
                    if !flip {
                        return Ok(x.clone());
                    }
                    let mut out = vec![int(-ci.clone())];
                    for f in &factors {
                        out.push(if f == a { neg(f)? } else { f.clone() });
                    }
                    return mul(&out);
                }
            }
        }
        _ => {}
    }
    Err(Raise::unsupported(format!(
        "sympy.simplify of `{}` in FloorDiv's gcd path",
        super::print::sstr(x)
    )))
}

/// Whether an infinity or nan occurs in `e`.
pub fn has_infinity(e: &Ex) -> bool {
    match &**e {
        Node::IntOo { .. } | Node::Inf { .. } | Node::NaN => true,
        Node::Add(a) | Node::Mul(a) | Node::Fn(_, a) | Node::And(a) | Node::Or(a) => {
            a.iter().any(has_infinity)
        }
        Node::Pow(a, b) | Node::Rel(_, a, b) => has_infinity(a) || has_infinity(b),
        Node::Not(a) => has_infinity(a),
        _ => false,
    }
}

/// The class name Python reports for a sympy Boolean in an operator error.
fn boolean_class_name(e: &Ex) -> &'static str {
    match &**e {
        Node::True => "BooleanTrue",
        Node::False => "BooleanFalse",
        Node::Rel(op, ..) => op.class_name(),
        Node::And(_) => "And",
        Node::Or(_) => "Or",
        _ => "Not",
    }
}

/// Python float `%` as sympy's `Float.__mod__` does it: an integral ratio
/// gives Float 0.0, otherwise the floored remainder (sign of the divisor).
fn float_mod(x: f64, y: f64) -> Num {
    let r = x / y;
    if r.is_finite() && r.fract() == 0.0 {
        return Num::Float(0.0);
    }
    let mut m = x % y;
    if m != 0.0 && ((y < 0.0) != (m < 0.0)) {
        m += y;
    }
    float_result(m)
}

/// `p % q` of two numbers when one is a [`Num::BigFloat`]:
/// `Float.__mod__` (a Float dividend: an integral quotient `p/q`, rounded,
/// gives a Float zero; otherwise `mpf_mod`) and `Rational.__mod__` (an
/// Integer dividend: the exact remainder rounded to the divisor's
/// precision).
fn big_float_mod(p: &Num, q: &Num) -> PyResult<Ex> {
    let prec = p.big_prec(q).expect("a BigFloat operand");
    let float_zero = || -> PyResult<Ex> { Ok(Num::BigFloat(Mpf::zero(prec)).to_ex()) };
    let (Some(a), Some(b)) = (p.as_mpf(prec), q.as_mpf(prec)) else {
        // A zero dividend: `p/q` is zero, an integral quotient, for a Float
        // `p`; `Rational.__mod__` rounds an exact zero to a Float zero.
        return float_zero();
    };
    let float = |n: &Num| matches!(n, Num::Float(_) | Num::BigFloat(_));
    if float(p) && float(q) {
        let integral = Mpf::div(&a, &b, prec).is_none_or(|r| r.is_integer_valued());
        if integral {
            return float_zero();
        }
    }
    match Mpf::modulo(&a, &b, prec)? {
        Some(m) => Ok(Num::BigFloat(super::mpf::in_range(m)?).to_ex()),
        None if matches!(p, Num::Int(_)) => float_zero(),
        None => Ok(int(0)),
    }
}

/// An expanded polynomial: (integer coefficient, generators with
/// exponents) per term, generators being symbols and torch function
/// applications (as sympy's `parallel_poly_from_expr` takes them).
type Poly = Vec<(BigInt, Vec<(Ex, u32)>)>;

fn poly_norm(mut p: Poly) -> Poly {
    for (_, m) in p.iter_mut() {
        m.sort_by(|a, b| super::order::compare(&a.0, &b.0));
    }
    let mut out: Poly = Vec::new();
    for (c, m) in p {
        match out.iter_mut().find(|(_, n)| *n == m) {
            Some((cc, _)) => *cc += c,
            None => out.push((c, m)),
        }
    }
    out.retain(|(c, _)| !c.is_zero());
    out
}

fn poly_mul(a: &Poly, b: &Poly) -> Poly {
    let mut out = Vec::new();
    for (ca, ma) in a {
        for (cb, mb) in b {
            let mut m = ma.clone();
            for (g, k) in mb {
                match m.iter_mut().find(|(h, _)| h == g) {
                    Some((_, kk)) => *kk += k,
                    None => m.push((g.clone(), *k)),
                }
            }
            out.push((ca * cb, m));
        }
    }
    poly_norm(out)
}

/// `e` expanded as a polynomial over symbols and torch function
/// applications (the generators `parallel_poly_from_expr` would take).
fn as_poly(e: &Ex) -> Option<Poly> {
    Some(match &**e {
        Node::Int(i) => poly_norm(vec![(i.clone(), vec![])]),
        Node::Sym(_) | Node::Fn(..) => vec![(BigInt::one(), vec![(e.clone(), 1)])],
        Node::Add(a) => {
            let mut out = Vec::new();
            for t in a {
                out.extend(as_poly(t)?);
            }
            poly_norm(out)
        }
        Node::Mul(a) => {
            let mut acc: Poly = vec![(BigInt::one(), vec![])];
            for f in a {
                acc = poly_mul(&acc, &as_poly(f)?);
            }
            acc
        }
        Node::Pow(b, x) => {
            let n = x.as_int()?.to_u32().filter(|n| *n <= 8)?;
            let pb = as_poly(b)?;
            let mut acc: Poly = vec![(BigInt::one(), vec![])];
            for _ in 0..n {
                acc = poly_mul(&acc, &pb);
            }
            acc
        }
        _ => return None,
    })
}

/// `p` with generator `x` replaced by the polynomial `v`.
fn poly_subst(p: &Poly, x: &Ex, v: &Poly) -> Poly {
    let mut out = Vec::new();
    for (c, m) in p {
        let k = m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k);
        let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| g != x).cloned().collect();
        let mut term: Poly = vec![(c.clone(), rest)];
        for _ in 0..k {
            term = poly_mul(&term, v);
        }
        out.extend(term);
    }
    poly_norm(out)
}

fn poly_gens(p: &Poly) -> Vec<Ex> {
    let mut g: Vec<Ex> = Vec::new();
    for (_, m) in p {
        for (x, _) in m {
            if !g.contains(x) {
                g.push(x.clone());
            }
        }
    }
    g
}

fn poly_to_ex(p: &Poly) -> PyResult<Ex> {
    let mut terms = Vec::new();
    for (c, m) in p {
        let mut f = vec![int(c.clone())];
        for (g, k) in m {
            f.push(make_pow(g, &BigInt::from(*k)));
        }
        terms.push(mul(&f)?);
    }
    add(&terms)
}

/// `p / (x + c0)` by synthetic division in `x`; `None` unless exact.
fn poly_div_monic_linear(p: &Poly, x: &Ex, c0: &BigInt) -> Option<Poly> {
    // Group by the x-free part, divide each univariate polynomial.
    // (the x-free monomial, the coefficients of its univariate polynomial in x)
    #[allow(clippy::type_complexity)]
    let mut groups: Vec<(Vec<(Ex, u32)>, Vec<BigInt>)> = Vec::new();
    for (c, m) in p {
        let k = m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k) as usize;
        let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| g != x).cloned().collect();
        let slot = match groups.iter().position(|(r, _)| *r == rest) {
            Some(i) => i,
            None => {
                groups.push((rest, Vec::new()));
                groups.len() - 1
            }
        };
        let v = &mut groups[slot].1;
        if v.len() <= k {
            v.resize(k + 1, BigInt::zero());
        }
        v[k] += c;
    }
    let mut out: Poly = Vec::new();
    for (rest, coeffs) in groups {
        // coeffs[k] is the x**k coefficient; divide by (x + c0).
        let n = coeffs.len();
        if n < 2 {
            return None;
        }
        let mut q = vec![BigInt::zero(); n - 1];
        let mut carry = BigInt::zero();
        for k in (1..n).rev() {
            q[k - 1] = &coeffs[k] + &carry;
            carry = -&q[k - 1] * c0;
        }
        // Remainder: coeffs[0] + carry must be zero.
        if !(&coeffs[0] + &carry).is_zero() {
            return None;
        }
        for (k, c) in q.into_iter().enumerate() {
            let mut m = rest.clone();
            if k > 0 {
                m.push((x.clone(), k as u32));
            }
            out.push((c, m));
        }
    }
    Some(poly_norm(out))
}

/// `sympy.gcd(p, q)` of `±int_oo` and a polynomial of degree >= 1 in one
/// generator: both become polynomials over `EX`; the subresultant PRS
/// pseudo-divides the polynomial by the constant `[EX(int_oo)]`, and
/// `c*int_oo - int_oo*c` is nan, not zero, so the degree never drops:
/// `PolynomialDivisionFailed`, naming the polynomial's dense coefficients.
fn int_oo_gcd_failure(p: &Ex, q: &Ex) -> Option<Raise> {
    let (inf, other) = match (&**p, &**q) {
        (Node::IntOo { neg }, _) if !q.is_number() => (*neg, q),
        (_, Node::IntOo { neg }) if !p.is_number() => (*neg, p),
        _ => return None,
    };
    let poly = as_poly(other)?;
    let gens = poly_gens(&poly);
    if gens.len() != 1 {
        return None;
    }
    let degree = |m: &Vec<(Ex, u32)>| m.first().map_or(0, |(_, k)| *k);
    let top = poly.iter().map(|(_, m)| degree(m)).max()?;
    if top == 0 {
        return None;
    }
    let coeffs: Vec<String> = (0..=top)
        .rev()
        .map(|d| {
            let c = poly
                .iter()
                .filter(|(_, m)| degree(m) == d)
                .fold(BigInt::zero(), |acc, (c, _)| acc + c);
            format!("EX({c})")
        })
        .collect();
    let g = if inf { "-int_oo" } else { "int_oo" };
    Some(Raise::new(
        "PolynomialDivisionFailed",
        format!(
            "couldn't reduce degree in a polynomial division algorithm when dividing [{}] by \
             [EX({g})]. This can happen when it's not possible to detect zero in the coefficient \
             domain. The domain of computation is EX. You may want to use a different \
             simplification algorithm. Note that in general it's not possible to guarantee to \
             detect zero in this domain.",
            coeffs.join(", ")
        ),
    ))
}

/// `sympy.gcd(p, q)` when it is a monomial: both sides expanded sums of
/// monomials (integer coefficient times powers of symbols and torch
/// functions), their common content and common powers `m` not 1, and the
/// cofactors `p/m`, `q/m` proved coprime. Returns the cofactors, term by
/// term (what `base / gcd` cancels to before `sympy.simplify`).
fn monomial_gcd_quotients(p: &Ex, q: &Ex) -> PyResult<Option<(Ex, Ex)>> {
    fn plain_terms(e: &Ex) -> bool {
        add_args(e).iter().all(|t| {
            mul_args(t).iter().all(|f| match &**f {
                Node::Int(_) | Node::Sym(_) | Node::Fn(..) => true,
                Node::Pow(b, x) => {
                    matches!(**b, Node::Sym(_) | Node::Fn(..)) && x.as_int().is_some()
                }
                _ => false,
            })
        })
    }
    if !plain_terms(p) || !plain_terms(q) {
        return Ok(None);
    }
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return Ok(None);
    };
    // The content and the least power of each generator over all terms.
    let monomial = |a: &Poly| -> (BigInt, Vec<(Ex, u32)>) {
        let content = a.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c));
        let mut gens: Vec<(Ex, u32)> = a[0].1.clone();
        for (_, m) in a {
            gens = gens
                .into_iter()
                .filter_map(|(g, k)| {
                    let j = m.iter().find(|(h, _)| *h == g).map_or(0, |(_, j)| *j);
                    (j.min(k) > 0).then_some((g, j.min(k)))
                })
                .collect();
        }
        (content, gens)
    };
    let (cp, mp) = monomial(&pp);
    let (cq, mq) = monomial(&qq);
    let content = cp.gcd(&cq);
    let common: Vec<(Ex, u32)> = mp
        .iter()
        .filter_map(|(g, k)| {
            let j = mq.iter().find(|(h, _)| h == g).map_or(0, |(_, j)| *j);
            (j.min(*k) > 0).then(|| (g.clone(), j.min(*k)))
        })
        .collect();
    if content.is_zero() || (content.is_one() && common.is_empty()) {
        return Ok(None);
    }
    // The common content and powers divide both sides by construction.
    let (Some(b), Some(d)) = (
        poly_div_monomial(&pp, &content, &common),
        poly_div_monomial(&qq, &content, &common),
    ) else {
        return Ok(None);
    };
    let (b, d) = (poly_to_ex(&b)?, poly_to_ex(&d)?);
    if !(poly_coprime(&b, &d) || certified_coprime(&b, &d)) {
        return Ok(None);
    }
    Ok(Some((b, d)))
}

/// Whether a factor of a term of `e` is a power of a sum whose integer
/// content is not 1 (simplify's `as_content_primitive` takes it out).
fn has_power_of_sum(e: &Ex) -> bool {
    let content_one = |b: &Ex| {
        as_poly(b).is_some_and(|p| p.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c)).is_one())
    };
    add_args(e).iter().any(|t| {
        mul_args(t).iter().any(
            |f| matches!(&**f, Node::Pow(b, _) if matches!(**b, Node::Add(_)) && !content_one(b)),
        )
    })
}

/// `sympy.gcd(p, q)` when one side's primitive part is `x + c0` (one
/// generator, positive unit leading coefficient) and divides the other:
/// the gcd is that factor; returns `(p/gcd, q/gcd)`.
fn linear_gcd_quotients(p: &Ex, q: &Ex) -> PyResult<Option<(Ex, Ex)>> {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return Ok(None);
    };
    for (a, b) in [(&pp, &qq), (&qq, &pp)] {
        let gens = poly_gens(a);
        if gens.len() != 1 {
            continue;
        }
        let (mut c1, mut c0) = (BigInt::zero(), BigInt::zero());
        let mut linear = true;
        for (c, m) in a.iter() {
            match m.as_slice() {
                [] => c0 += c,
                [(_, 1)] => c1 += c,
                _ => linear = false,
            }
        }
        if !linear || c1.is_zero() {
            continue;
        }
        let g = c1.gcd(&c0);
        let (c1, c0) = (&c1 / &g, &c0 / &g);
        if c1 != BigInt::one() {
            continue;
        }
        let x = &gens[0];
        let (Some(qa), Some(qb)) = (
            poly_div_monic_linear(a, x, &c0),
            poly_div_monic_linear(b, x, &c0),
        ) else {
            continue;
        };
        let (ea, eb) = (poly_to_ex(&qa)?, poly_to_ex(&qb)?);
        return Ok(Some(if std::ptr::eq(a, &pp) {
            (ea, eb)
        } else {
            (eb, ea)
        }));
    }
    Ok(None)
}

/// Whether `sympy.gcd(p, q)` is provably 1 (the integer content is already
/// coprime here): no generator in common; or one side of degree 1 in a
/// generator `x` with a unit coefficient (`x = v` then solves it, and it is
/// irreducible), which the other side either lacks or does not vanish on
/// after substituting `x = v`; or one side linear in a single generator
/// (its primitive part has the root `-c0/c1`) not vanishing the other.
fn poly_coprime(p: &Ex, q: &Ex) -> bool {
    if p.is_number() || q.is_number() {
        return true;
    }
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    // sympy.gcd takes the integer contents' gcd too: `(2*a + 12)**3` and
    // `8*a + 16` share 8.
    let content = |a: &Poly| a.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c));
    if !content(&pp).gcd(&content(&qq)).is_one() {
        return false;
    }
    let (gp, gq) = (poly_gens(&pp), poly_gens(&qq));
    if !gp.iter().any(|g| gq.contains(g)) {
        return true;
    }
    for (a, b, gb) in [(&pp, &qq, &gq), (&qq, &pp, &gp)] {
        for x in poly_gens(a) {
            let deg = |m: &Vec<(Ex, u32)>| m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k);
            if a.iter().any(|(_, m)| deg(m) > 1) {
                continue;
            }
            let lead: Vec<&(BigInt, Vec<(Ex, u32)>)> =
                a.iter().filter(|(_, m)| deg(m) == 1).collect();
            // a == u*x + rest with u = +-1.
            if lead.len() != 1 || lead[0].1.len() != 1 || !lead[0].0.abs().is_one() {
                continue;
            }
            if !gb.contains(&x) {
                return true;
            }
            let u = lead[0].0.clone();
            // x = -rest/u = -u*rest.
            let v: Poly = poly_norm(
                a.iter()
                    .filter(|(_, m)| deg(m) == 0)
                    .map(|(c, m)| (-(c * &u), m.clone()))
                    .collect(),
            );
            return !poly_subst(b, &x, &v).is_empty();
        }
    }
    let linear_root = |a: &Poly| -> Option<(Ex, BigInt, BigInt)> {
        let gens = poly_gens(a);
        if gens.len() != 1 {
            return None;
        }
        let (mut c1, mut c0) = (BigInt::zero(), BigInt::zero());
        for (c, m) in a {
            match m.as_slice() {
                [] => c0 += c,
                [(_, 1)] => c1 += c,
                _ => return None,
            }
        }
        if c1.is_zero() {
            return None;
        }
        let g = c1.gcd(&c0);
        Some((gens[0].clone(), c1 / &g, c0 / &g))
    };
    for (a, b) in [(&pp, &qq), (&qq, &pp)] {
        if let Some((x, c1, c0)) = linear_root(a) {
            // b(-c0/c1) scaled by c1**deg, per x-free part.
            let deg = b
                .iter()
                .map(|(_, m)| m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k))
                .max()
                .unwrap_or(0);
            let mut groups: Vec<(Vec<(Ex, u32)>, BigInt)> = Vec::new();
            for (c, m) in b {
                let k = m.iter().find(|(g, _)| *g == x).map_or(0, |(_, k)| *k);
                let rest: Vec<(Ex, u32)> = m.iter().filter(|(g, _)| *g != x).cloned().collect();
                let v = c
                    * num_traits::pow(-c0.clone(), k as usize)
                    * num_traits::pow(c1.clone(), (deg - k) as usize);
                match groups.iter_mut().find(|(r, _)| *r == rest) {
                    Some((_, s)) => *s += v,
                    None => groups.push((rest, v)),
                }
            }
            return !groups.iter().all(|(_, s)| s.is_zero());
        }
    }
    false
}

/// Whether `sympy.gcd(p, q)` is 1, decided exactly (never guessed): the
/// integer contents are coprime, and for each generator `x` both share,
/// some integer point for the other generators keeps both leading
/// coefficients in `x` nonzero and gives univariate images with a constant
/// gcd. (A common factor of positive degree in `x` would divide both images
/// at every such point; one of degree 0 in every shared generator is an
/// integer, ruled out by the contents.) `false` means "not shown coprime".
fn certified_coprime(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    let content = |a: &Poly| a.iter().fold(BigInt::zero(), |g, (c, _)| g.gcd(c));
    if !content(&pp).gcd(&content(&qq)).is_one() {
        return false;
    }
    let (gp, gq) = (poly_gens(&pp), poly_gens(&qq));
    let mut all = gp.clone();
    for g in &gq {
        if !all.contains(g) {
            all.push(g.clone());
        }
    }
    const POINTS: [i64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    let degree = |a: &Poly, x: &Ex| {
        a.iter()
            .map(|(_, m)| m.iter().find(|(g, _)| g == x).map_or(0, |(_, k)| *k))
            .max()
            .unwrap_or(0)
    };
    'shared: for x in gp.iter().filter(|g| gq.contains(g)) {
        let (dp, dq) = (degree(&pp, x), degree(&qq, x));
        if dp > 256 || dq > 256 {
            return false;
        }
        for attempt in 0..6 {
            let value = |g: &Ex| -> BigInt {
                let i = all.iter().position(|h| h == g).unwrap_or(0);
                BigInt::from(POINTS[(i + 5 * attempt) % POINTS.len()] * (1 + attempt as i64))
            };
            let image = |a: &Poly, d: u32| -> Vec<BigInt> {
                let mut out = vec![BigInt::zero(); d as usize + 1];
                for (c, m) in a {
                    let mut v = c.clone();
                    let mut k = 0;
                    for (g, e) in m {
                        if g == x {
                            k = *e;
                        } else {
                            v *= num_traits::pow(value(g), *e as usize);
                        }
                    }
                    out[k as usize] += v;
                }
                out
            };
            let (ip, iq) = (image(&pp, dp), image(&qq, dq));
            if ip[dp as usize].is_zero() || iq[dq as usize].is_zero() {
                continue;
            }
            if univariate_gcd_degree(ip, iq) == 0 {
                continue 'shared;
            }
        }
        return false;
    }
    true
}

/// The degree of the gcd over Q of two integer polynomials (coefficients
/// by degree, leading ones nonzero): primitive pseudo-remainder sequence.
fn univariate_gcd_degree(mut a: Vec<BigInt>, mut b: Vec<BigInt>) -> usize {
    fn trim(v: &mut Vec<BigInt>) {
        while v.last().is_some_and(Zero::is_zero) {
            v.pop();
        }
    }
    fn primitive(v: &mut [BigInt]) {
        let g = v.iter().fold(BigInt::zero(), |g, c| g.gcd(c));
        if !g.is_zero() && !g.is_one() {
            for c in v.iter_mut() {
                *c /= &g;
            }
        }
    }
    trim(&mut a);
    trim(&mut b);
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    while !b.is_empty() {
        if b.len() == 1 {
            return 0;
        }
        let lb = b[b.len() - 1].clone();
        let mut r = a;
        while r.len() >= b.len() {
            let shift = r.len() - b.len();
            let lr = r[r.len() - 1].clone();
            for c in r.iter_mut() {
                *c *= &lb;
            }
            for (i, c) in b.iter().enumerate() {
                r[shift + i] -= &lr * c;
            }
            trim(&mut r);
            primitive(&mut r);
        }
        a = b;
        b = r;
    }
    a.len().saturating_sub(1)
}

/// `Some(k)` when `base == k*divisor` for an integer `k`.
fn integer_multiple(base: &Ex, divisor: &Ex) -> PyResult<Option<Ex>> {
    let (bt, dt) = (add_args(base), add_args(divisor));
    if bt.len() != dt.len() {
        return Ok(None);
    }
    let (c0, _) = as_coeff_mul(&bt[0]);
    let (d0, _) = as_coeff_mul(&dt[0]);
    if let (Num::Int(c0), Num::Int(d0)) = (c0, d0) {
        if !d0.is_zero() && (&c0 % &d0).is_zero() {
            let k = int(&c0 / &d0);
            if mul(&[k.clone(), divisor.clone()])? == *base {
                return Ok(Some(k));
            }
        }
    }
    Ok(None)
}

/// `p / q` for two monomials whose quotient is a monomial with an integer
/// coefficient: `None` when q's coefficient does not divide p's, or a
/// factor of q is not a factor of p (to at least the same power).
fn monomial_quotient(p: &Ex, q: &Ex) -> Option<Ex> {
    let (Num::Int(cp), rp) = as_coeff_mul(p) else {
        return None;
    };
    let (Num::Int(cq), rq) = as_coeff_mul(q) else {
        return None;
    };
    if cq.is_zero() || !(&cp % &cq).is_zero() {
        return None;
    }
    let factors = |e: &Ex| -> Vec<(Ex, BigInt)> {
        if e.is_int_value(1) {
            Vec::new()
        } else {
            mul_args(e).iter().map(base_exp).collect()
        }
    };
    let mut left = factors(&rp);
    for (b, k) in factors(&rq) {
        let (_, e) = left.iter_mut().find(|(pb, e)| *pb == b && *e >= k)?;
        *e -= k;
    }
    let mut out = vec![int(&cp / &cq)];
    out.extend(
        left.iter()
            .filter(|(_, e)| !e.is_zero())
            .map(|(b, e)| make_pow(b, e)),
    );
    mul(&out).ok()
}

/// `r = p / q; r.is_integer` and `r.is_positive`, for the cases sympy
/// decides: `q` an integer dividing every coefficient of integer terms,
/// or `p` a multiple `k*q` of `q`.
fn ratio_facts(p: &Ex, q: &Ex) -> (Option<bool>, Option<bool>) {
    if let Node::Int(d) = &**q {
        let mut all_int = true;
        for t in add_args(p) {
            let (c, rest) = as_coeff_mul(&t);
            match c {
                Num::Int(ref c) if (c % d).is_zero() && facts(&rest).integer == Some(true) => {}
                _ => all_int = false,
            }
        }
        let fp = facts(p);
        let pos = if d.is_positive() { fp.pos } else { fp.neg };
        return (if all_int { Some(true) } else { None }, pos);
    }
    // `p / q` cancels to a product `r` when q's coefficient divides p's and
    // each factor of q is a factor of p (to at most its power in p): Mul
    // merges the bases, and r's facts are the quotient's (`2*a*x / (-2*a)`
    // is `-x`; `6*a / (3*a)` is 2).
    if !q.is_number() {
        if let Some(r) = monomial_quotient(p, q) {
            let fr = facts(&r);
            return (fr.integer, fr.pos);
        }
    }
    // Otherwise r = p*q**-1: positive when both signs are known alike.
    let (fp, fq) = (facts(p), facts(q));
    let pos = if (fp.pos == Some(true) && fq.pos == Some(true))
        || (fp.neg == Some(true) && fq.neg == Some(true))
    {
        Some(true)
    } else {
        None
    };
    (None, pos)
}

/// `Mod(p, q)` (torch's, for non-negative operands) or `PythonMod(p, q)`,
/// with their `eval`.
pub fn modulo(python: bool, p: &Ex, q: &Ex) -> PyResult<Ex> {
    let fq = facts(q);
    if fq.zero == Some(true) {
        return Err(zero_division("Modulo by zero"));
    }
    if p.is_int_value(0) {
        return Ok(int(0));
    }
    // `p in (q, -q)` negates q first: a sympy Boolean has no `__neg__`.
    if q.is_boolean() {
        return Err(Raise::type_error(format!(
            "bad operand type for unary -: '{}'",
            boolean_class_name(q)
        )));
    }
    if p.is_boolean() {
        return Err(Raise::unsupported("Mod of a Boolean"));
    }
    if p == q || *p == neg(q)? || q.is_int_value(1) {
        return Ok(int(0));
    }
    if let (Some(a), Some(b)) = (Num::of(p), Num::of(q)) {
        if !python {
            // `if p < 0: raise AssertionError(p)`; `if q < 1: ...(q)`.
            if a.is_negative() {
                return Err(Raise::new("AssertionError", super::print::sstr(p)));
            }
            if b.num_cmp(&Num::Int(BigInt::one())) == Some(std::cmp::Ordering::Less) {
                return Err(Raise::new("AssertionError", super::print::sstr(q)));
            }
        }
        return match (a, b) {
            (Num::Int(a), Num::Int(b)) => Ok(int(a.mod_floor(&b))),
            // IntInfinity.__mod__ / __rmod__, and a Float mod of oo: nan.
            (Num::IntOo(_) | Num::Inf(_), _) | (_, Num::IntOo(_) | Num::Inf(_)) => {
                Ok(Rc::new(Node::NaN))
            }
            (a @ Num::BigFloat(_), b) | (a, b @ Num::BigFloat(_)) => big_float_mod(&a, &b),
            (Num::Float(_), Num::Int(_) | Num::Float(_)) | (Num::Int(_), Num::Float(_)) => {
                let (x, y) = (
                    Num::of(p).expect("n").to_f64(),
                    Num::of(q).expect("n").to_f64(),
                );
                Ok(float_mod(x, y).to_ex())
            }
            _ => Err(Raise::unsupported("Mod of an infinity")),
        };
    }
    // `r = p / q` is 0 for a Float zero `p` (0.0 times anything folds to
    // Integer 0), and `r.is_integer` returns 0.
    if matches!(**p, Node::Float(f) if f == 0.0) {
        return Ok(int(0));
    }
    // `r = p / q` is 0 for an infinite `q` (`1/int_oo` is 0).
    if matches!(**q, Node::IntOo { .. } | Node::Inf { .. }) && !p.is_number() {
        return Ok(int(0));
    }
    if has_infinity(p) || has_infinity(q) {
        // Modelled: `Mod(int_oo, x)` for a symbol x (`int_oo < x` is false),
        // and an `oo` dividend over a real divisor (`oo < q` is false; the
        // `sympy.Mod(p, q) == 0` test of PythonMod gives nan != 0). Other
        // forms reach sympy's polynomial gcd.
        let q_real = facts(q).real == Some(true) && !has_infinity(q);
        match &**p {
            // torch's Mod.eval never reaches sympy's gcd: `r = p / q` with an
            // opaque function `q` (`BitwiseFn_bitwise_and(int_oo, a)`) is not
            // known integer, and `int_oo < q` is False.
            Node::IntOo { neg: false }
                if !python && (!has_infinity(q) || matches!(**q, Node::Fn(..))) => {}
            Node::Inf { .. } if q_real => {}
            _ => {
                // `p < q` is IntInfinity.__lt__: False for int_oo, so
                // PythonMod goes on to `sympy.Mod(p, q)` and its gcd.
                if matches!(**p, Node::IntOo { neg: false }) {
                    if let Some(e) = int_oo_gcd_failure(p, q) {
                        return Err(e);
                    }
                }
                return Err(Raise::unsupported(
                    "Mod with int_oo (sympy's polynomial gcd)",
                ));
            }
        }
        return Ok(func(
            if python { Func::PythonMod } else { Func::Mod },
            vec![p.clone(), q.clone()],
        ));
    }
    if q.is_int_value(2) {
        match is_even(p) {
            Some(true) => return Ok(int(0)),
            Some(false) => return Ok(int(1)),
            None => {}
        }
    }
    let (r_int, r_pos) = ratio_facts(p, q);
    if r_int == Some(true) {
        return Ok(int(0));
    }
    if rel_eval(Rel::Lt, p, q)? == Some(true) && r_pos == Some(true) {
        return Ok(p.clone());
    }
    // PythonMod's last test, `sympy.Mod(p, q) == 0`: for a monomial `q`
    // dividing every term of `p`, sympy's gcd is `q` itself (up to sign),
    // leaving `Mod(p/q, ±1)`, which is 0 for an integer `p/q`. The same
    // holds for a polynomial `q` of which `p` is an integer multiple
    // with a positive factor (`2*a + 4` and `a + 2`: the gcd is `a + 2`,
    // then `Mod(2, 1)`).
    if python && (monomial_divides_integrally(p, q) || positive_multiple(p, q)) {
        return Ok(int(0));
    }
    if python {
        match float_ratio_multiple(p, q) {
            Some(true) => return Ok(int(0)),
            Some(false) => {}
            None => {
                return Err(Raise::unsupported(
                    "Mod of a Float multiple, integer past 2**53",
                ))
            }
        }
    }
    Ok(func(
        if python { Func::PythonMod } else { Func::Mod },
        vec![p.clone(), q.clone()],
    ))
}

/// `sympy.Mod(p, q) == 0` by sympy's ratio step, where one of `p` and `q`
/// has a Float coefficient and both are a number times the same term
/// (`1.0*ToFloat(a)` and `ToFloat(a)`): `r = p / q` folds to the Float
/// `cp / cq`, and `rv = p - int(r)*q` is `(cp - int(r)*cq)` times the term,
/// 0 when that coefficient is (`Float._new` makes a zero `S.Zero`). Each
/// step is one 53-bit rounding, as f64 arithmetic; `None` for an integer
/// coefficient f64 does not hold exactly (its conversion rounds too).
fn float_ratio_multiple(p: &Ex, q: &Ex) -> Option<bool> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2**53
    let ((cp, tp), (cq, tq)) = (as_coeff_mul(p), as_coeff_mul(q));
    if tp != tq || tp.is_number() || !(matches!(cp, Num::Float(_)) || matches!(cq, Num::Float(_))) {
        return Some(false);
    }
    let exact = |n: &Num| match n {
        Num::Float(f) => Some(*f),
        Num::Int(i) => i.to_f64().filter(|f| f.abs() < EXACT),
        _ => None,
    };
    let (a, b) = (exact(&cp)?, exact(&cq)?);
    let r = a / b;
    if !r.is_finite() {
        // `int(r)` raises for nan and infinities: no ratio step.
        return Some(false);
    }
    // `int(r)` is exact, and an f64 as well: `d * cq` is one rounding.
    let d = r.trunc();
    Some(a - d * b == 0.0)
}

/// Whether `q` is one monomial (integer coefficient times powers of
/// generators) that divides every term of the polynomial `p`, with an
/// integer quotient.
fn monomial_divides_integrally(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    let [(c, m)] = qq.as_slice() else {
        return false;
    };
    if c.is_zero() || m.is_empty() {
        return false;
    }
    poly_div_monomial(&pp, c, m)
        .and_then(|quotient| poly_to_ex(&poly_norm(quotient)).ok())
        .is_some_and(|x| facts(&x).integer == Some(true))
}

/// Whether `p` is `c * q` for a positive integer `c` and a polynomial `q`
/// of two terms or more (sympy distributes `c * (x + y)`, so `p` is the
/// expanded sum): the terms of `q`, each times `c`, are those of `p`. A
/// negative `c` is not 0 in sympy: `gcd_terms(p/G)` keeps `3*(-a - 2)/(a +
/// 2)` uncancelled (`Mod(-3*a - 6, a + 2)` is `(a + 2)*Mod(...)`).
fn positive_multiple(p: &Ex, q: &Ex) -> bool {
    let (Some(pp), Some(qq)) = (as_poly(p), as_poly(q)) else {
        return false;
    };
    if qq.len() < 2 || pp.len() != qq.len() {
        return false;
    }
    let (cq, mq) = &qq[0];
    let Some((cp, _)) = pp.iter().find(|(_, m)| m == mq) else {
        return false;
    };
    if cq.is_zero() || !(cp % cq).is_zero() {
        return false;
    }
    let c = cp / cq;
    c.is_positive()
        && qq
            .iter()
            .all(|(cq, mq)| pp.iter().any(|(cp, mp)| mp == mq && *cp == cq * &c))
}

/// `a / (c * m)` term by term for a monomial `c * m` (integer `c`, powers
/// `m`); `None` unless `c` divides every coefficient and `m` every
/// monomial of `a`.
fn poly_div_monomial(a: &Poly, c: &BigInt, m: &[(Ex, u32)]) -> Option<Poly> {
    let mut quotient: Poly = Vec::with_capacity(a.len());
    for (ac, am) in a {
        if c.is_zero() || !(ac % c).is_zero() {
            return None;
        }
        let mut rest = am.clone();
        for (g, k) in m {
            match rest.iter_mut().find(|(h, _)| h == g) {
                Some((_, j)) if *j >= *k => *j -= k,
                _ => return None,
            }
        }
        rest.retain(|(_, j)| *j > 0);
        quotient.push((ac / c, rest));
    }
    Some(quotient)
}

/// `IntTrueDiv(a, b)`: folds to a Float for two integers.
pub fn int_truediv(a: &Ex, b: &Ex) -> PyResult<Ex> {
    if facts(b).zero == Some(true) {
        return Err(zero_division("division by zero"));
    }
    if let (Node::Int(x), Node::Int(y)) = (&**a, &**b) {
        // Python's int / int is correctly rounded.
        let v = torchspec_pyval::ops::binary(
            torchspec_pyval::ops::Op::TrueDiv,
            &torchspec_pyval::Value::big(x.clone()),
            &torchspec_pyval::Value::big(y.clone()),
        )?;
        if let torchspec_pyval::Value::Float(f) = v {
            return Ok(float(f));
        }
    }
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        if matches!(x, Num::IntOo(_)) || matches!(y, Num::IntOo(_)) {
            return Ok(sympy_float(x.to_f64() / y.to_f64()));
        }
        return Err(Raise::unsupported("IntTrueDiv of these numbers"));
    }
    Ok(func(Func::IntTrueDiv, vec![a.clone(), b.clone()]))
}

/// `FloatTrueDiv(a, b)`.
pub fn float_truediv(a: &Ex, b: &Ex) -> PyResult<Ex> {
    if facts(b).zero == Some(true) {
        return Err(zero_division("division by zero"));
    }
    if let (Some(x), Some(y)) = (Num::of(a), Num::of(b)) {
        return Ok(sympy_float(x.to_f64() / y.to_f64()));
    }
    Ok(func(Func::FloatTrueDiv, vec![a.clone(), b.clone()]))
}

/// `sympy.Float(f)` of a Python float: inf is `oo`, nan is `nan`, a zero
/// stays Float 0.0.
fn sympy_float(f: f64) -> Ex {
    if f.is_nan() {
        Rc::new(Node::NaN)
    } else if f.is_infinite() {
        Rc::new(Node::Inf { neg: f < 0.0 })
    } else {
        float(f)
    }
}

/// `ToFloat(x)`.
pub fn to_float(a: &Ex) -> PyResult<Ex> {
    match &**a {
        // `sympy.Float(int(n))` takes max(15, len(str(n))) digits of
        // precision: past 15 digits it is no longer a double.
        Node::Int(i) if i.abs() < BigInt::from(1_000_000_000_000_000i64) => {
            Ok(float(i.to_f64().expect("small")))
        }
        Node::Int(i) => match Mpf::from_int_digits(i) {
            Some(m) => Ok(Rc::new(Node::BigFloat(Box::new(super::mpf::in_range(m)?)))),
            None => Ok(float(0.0)),
        },
        Node::Inf { .. } => Ok(a.clone()),
        Node::IntOo { neg } => Ok(Rc::new(Node::Inf { neg: *neg })),
        _ => Ok(func(Func::ToFloat, vec![a.clone()])),
    }
}

/// `BitwiseFn_bitwise_and` / `_or` (`make_opaque_bitwise_fn`): two
/// Booleans combine logically; a Boolean counts as 0/1 only to fold two
/// integers (otherwise the unevaluated function keeps its original args).
pub fn bitwise(and: bool, a: &Ex, b: &Ex) -> PyResult<Ex> {
    // `is_Boolean`: BooleanAtom and BooleanFunction, not a Relational.
    let is_boolean_cls = |e: &Ex| {
        matches!(
            **e,
            Node::True | Node::False | Node::And(_) | Node::Or(_) | Node::Not(_)
        )
    };
    if is_boolean_cls(a) && is_boolean_cls(b) {
        return if and {
            logic_and(&[a.clone(), b.clone()])
        } else {
            logic_or(&[a.clone(), b.clone()])
        };
    }
    let conv = |e: &Ex| -> PyResult<Ex> {
        Ok(match &**e {
            Node::True => int(1),
            Node::False => int(0),
            Node::And(_) | Node::Or(_) | Node::Not(_) => {
                return Err(Raise::unsupported("bool() of a BooleanFunction"))
            }
            _ => e.clone(),
        })
    };
    let (ca, cb) = (conv(a)?, conv(b)?);
    if let (Node::Int(x), Node::Int(y)) = (&*ca, &*cb) {
        return Ok(int(if and { x & y } else { x | y }));
    }
    Ok(func(
        if and {
            Func::BitwiseAnd
        } else {
            Func::BitwiseOr
        },
        vec![a.clone(), b.clone()],
    ))
}

// ---------------------------------------------------------------------------
// Relationals
// ---------------------------------------------------------------------------

/// `is_eq(lhs, rhs)` (sympy/core/relational.py), for the node kinds here.
fn is_eq(l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    if l == r {
        return Ok(Some(true));
    }
    let lb = matches!(**l, Node::True | Node::False);
    let rb = matches!(**r, Node::True | Node::False);
    if lb && rb {
        return Ok(Some(false));
    }
    let l_sym = matches!(**l, Node::Sym(_));
    let r_sym = matches!(**r, Node::Sym(_));
    if !(l_sym || r_sym) && l.is_boolean() != r.is_boolean() {
        return Ok(Some(false));
    }
    if l.is_boolean() || r.is_boolean() {
        return Ok(None);
    }
    let dif = sub(l, r)?;
    let z = facts(&dif).zero;
    if z.is_some() {
        return Ok(z);
    }
    // `dif.as_coeff_Add()` with a Float constant: an integral float plus a
    // non-integer rest (or vice versa) cannot be zero.
    if let Node::Add(terms) = &*dif {
        if let Node::BigFloat(c) = &*terms[0] {
            let rest = add(&terms[1..])?;
            if c.is_integer_valued() && facts(&rest).integer == Some(false) {
                return Ok(Some(false));
            }
        }
        if let Node::Float(c) = &*terms[0] {
            let rest = add(&terms[1..])?;
            let fr = facts(&rest);
            if c.fract() == 0.0 {
                if fr.integer == Some(false) {
                    return Ok(Some(false));
                }
            } else if fr.integer == Some(true) {
                // t.is_rational is False for no node here.
            }
        }
    }
    Ok(None)
}

/// `is_ge(lhs, rhs)`.
fn is_ge(l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    if let (Some(Num::IntOo(x)), Some(Num::IntOo(y))) = (Num::of(l), Num::of(r)) {
        // _n2: `int_oo - int_oo` is nan, not comparable; nothing decides.
        if x == y {
            return Ok(None);
        }
    }
    if let (Some(a), Some(b)) = (Num::of(l), Num::of(r)) {
        return Ok(a.num_cmp(&b).map(|o| o != std::cmp::Ordering::Less));
    }
    let (fl, fr) = (facts(l), facts(r));
    if fl.real == Some(true) && fr.real == Some(true) {
        let d = sub(l, r)?;
        return Ok(facts(&d).nonneg());
    }
    Ok(None)
}

/// The truth value sympy finds when constructing `op(l, r)`, if any.
pub fn rel_eval(op: Rel, l: &Ex, r: &Ex) -> PyResult<Option<bool>> {
    let not = |v: Option<bool>| v.map(|b| !b);
    Ok(match op {
        Rel::Eq => is_eq(l, r)?,
        Rel::Ne => not(is_eq(l, r)?),
        Rel::Ge => is_ge(l, r)?,
        Rel::Le => is_ge(r, l)?,
        Rel::Lt => not(is_ge(l, r)?),
        Rel::Gt => not(is_ge(r, l)?),
    })
}

/// `_Inequality.__new__`'s check of one side (the left first): it must not
/// be known non-real, nor nan.
pub fn inequality_side(me: &Ex) -> PyResult<()> {
    if super::order::not_real_by_commutativity(me) {
        return Err(Raise::type_error(format!(
            "Invalid comparison of non-real {}",
            super::print::sstr(me)
        )));
    }
    if matches!(**me, Node::NaN) {
        return Err(Raise::type_error("Invalid NaN comparison"));
    }
    Ok(())
}

/// `sympy.Eq(l, r)`, `sympy.Gt(l, r)`, ...
pub fn relational(op: Rel, l: &Ex, r: &Ex) -> PyResult<Ex> {
    if !matches!(op, Rel::Eq | Rel::Ne) {
        inequality_side(l)?;
        inequality_side(r)?;
        // is_ge: `if not (isinstance(lhs, Expr) and isinstance(rhs, Expr))`.
        if l.is_boolean() || r.is_boolean() {
            return Err(Raise::type_error("Can only compare inequalities with Expr"));
        }
    } else if matches!(**l, Node::NaN) || matches!(**r, Node::NaN) {
        // is_eq: only Booleans equal Booleans.
        let other = if matches!(**l, Node::NaN) { r } else { l };
        if other.is_boolean() {
            return Ok(boolean(op == Rel::Ne));
        }
        return Err(Raise::unsupported("Eq with nan"));
    }
    // (A Boolean side is decided by is_eq's class rule below, infinity or not.)
    if (has_infinity(l) || has_infinity(r))
        && !(l.is_number() && r.is_number())
        && !(l.is_boolean() || r.is_boolean())
    {
        // Modelled: an infinity atom against an expression free of them,
        // which sympy decides when that expression is real (or a Boolean,
        // for Eq/Ne) and otherwise leaves unevaluated.
        let is_inf_atom = |e: &Ex| matches!(**e, Node::IntOo { .. } | Node::Inf { .. } | Node::NaN);
        let (inf, other, inf_left) = if is_inf_atom(l) {
            (l, r, true)
        } else {
            (r, l, false)
        };
        let Some(n) = Num::of(inf).filter(|_| is_inf_atom(inf)) else {
            // An infinity inside a product or sum: Add/Mul.flatten already
            // absorbed every term or factor of known sign into it, so the
            // sign is unknown and is_ge cannot decide.
            // is_eq likewise finds neither is_infinite nor dif.is_zero.
            return Ok(Rc::new(Node::Rel(op, l.clone(), r.clone())));
        };
        if has_infinity(other) || matches!(n, Num::NaN) {
            return Err(Raise::unsupported("a relational with an infinity inside"));
        }
        // int_oo is an extended-real integer: is_ge / is_eq go through the
        // difference (`int_oo - x`) and its sign, as for any real pair.
        if matches!(n, Num::IntOo(_)) && !other.is_boolean() {
            return Ok(match rel_eval(op, l, r)? {
                Some(b) => boolean(b),
                None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
            });
        }
        let decided = if other.is_boolean() {
            match op {
                Rel::Eq => Some(false),
                Rel::Ne => Some(true),
                _ => None,
            }
        } else if matches!(n, Num::Inf(_)) && facts(other).real == Some(true) {
            // inf_left: `inf op other`; an infinity compares past any real.
            let inf_big = n.is_positive() == inf_left;
            Some(match op {
                Rel::Eq => false,
                Rel::Ne => true,
                Rel::Gt | Rel::Ge => inf_big,
                Rel::Lt | Rel::Le => !inf_big,
            })
        } else {
            None
        };
        return Ok(match decided {
            Some(b) => boolean(b),
            None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
        });
    }
    Ok(match rel_eval(op, l, r)? {
        Some(b) => boolean(b),
        None => Rc::new(Node::Rel(op, l.clone(), r.clone())),
    })
}

// ---------------------------------------------------------------------------
// Logic
// ---------------------------------------------------------------------------

/// `~x` (`Not(x)`): a relational negates, `Not(Not(x))` is `x`.
pub fn logic_not(a: &Ex) -> PyResult<Ex> {
    Ok(match &**a {
        Node::True => boolean(false),
        Node::False => boolean(true),
        Node::Rel(op, l, r) => Rc::new(Node::Rel(op.negated(), l.clone(), r.clone())),
        Node::Not(x) => x.clone(),
        _ => Rc::new(Node::Not(a.clone())),
    })
}

/// `Relational.canonical`, as `And`/`Or` use it to find duplicates and
/// contradictions.
fn canonical(e: &Ex) -> PyResult<Ex> {
    let Node::Rel(op, l, r) = &**e else {
        return Ok(e.clone());
    };
    let (mut op, mut l, mut r) = (*op, l.clone(), r.clone());
    if r.is_number() {
        if let (Some(a), Some(b)) = (Num::of(&l), Num::of(&r)) {
            if a.num_cmp(&b) == Some(std::cmp::Ordering::Greater) {
                std::mem::swap(&mut l, &mut r);
                op = op.reversed();
            }
        }
    } else if l.is_number() || super::order::ordered_cmp(&l, &r) == std::cmp::Ordering::Greater {
        std::mem::swap(&mut l, &mut r);
        op = op.reversed();
    }
    if super::facts::could_extract_minus_sign(&l) {
        return Ok(Rc::new(Node::Rel(op.reversed(), neg(&l)?, neg(&r)?)));
    }
    if !r.is_number() && super::facts::could_extract_minus_sign(&r) {
        let nr = neg(&r)?;
        if super::order::ordered_cmp(&l, &nr) == std::cmp::Ordering::Greater {
            return Ok(Rc::new(Node::Rel(op, nr, neg(&l)?)));
        }
    }
    Ok(Rc::new(Node::Rel(op, l, r)))
}

fn lattice(is_and: bool, args: &[Ex]) -> PyResult<Ex> {
    let (zero, identity) = if is_and {
        (Node::False, Node::True)
    } else {
        (Node::True, Node::False)
    };
    // Or._new_args_filter drops relationals equal after `canonical` among
    // the arguments as given, before flattening (the first one stays);
    // And._new_args_filter does it after, over `ordered(args)`.
    let filtered;
    let args = if is_and {
        args
    } else {
        match relational_filter(args)? {
            Some(kept) => {
                filtered = kept;
                &filtered[..]
            }
            None => return Ok(Rc::new(zero)),
        }
    };
    let mut flat: Vec<Ex> = Vec::new();
    for a in args {
        match (&**a, is_and) {
            (Node::And(xs), true) | (Node::Or(xs), false) => flat.extend(xs.iter().cloned()),
            _ => flat.push(a.clone()),
        }
    }
    if flat.iter().any(|a| **a == zero) {
        return Ok(Rc::new(zero));
    }
    flat.retain(|a| **a != identity);
    let mut uniq: Vec<Ex> = Vec::new();
    for a in flat {
        if !uniq.contains(&a) {
            uniq.push(a);
        }
    }
    super::order::sort_ordered(&mut uniq);
    let mut out = if is_and {
        match relational_filter(&uniq)? {
            Some(kept) => kept,
            None => return Ok(Rc::new(zero)),
        }
    } else {
        uniq
    };
    Ok(match out.len() {
        0 => Rc::new(identity),
        1 => out.pop().expect("one arg"),
        _ => Rc::new(if is_and {
            Node::And(out)
        } else {
            Node::Or(out)
        }),
    })
}

/// The relational pass of `And/Or._new_args_filter`: a relational whose
/// `canonical` form came before is dropped; one whose negation's did makes
/// the whole `zero` (`None`).
fn relational_filter(args: &[Ex]) -> PyResult<Option<Vec<Ex>>> {
    let mut rels: Vec<Ex> = Vec::new();
    let mut out = Vec::new();
    for x in args {
        if matches!(**x, Node::Rel(..)) {
            let c = canonical(x)?;
            if rels.contains(&c) {
                continue;
            }
            let neg_c = canonical(&logic_not(&c)?)?;
            if rels.contains(&neg_c) {
                return Ok(None);
            }
            rels.push(c);
        }
        out.push(x.clone());
    }
    Ok(Some(out))
}

/// `sympy.And(*args)`: flattened, `false` absorbs, `true` drops out, duplicates
/// and contradictions of relationals folded.
pub fn logic_and(args: &[Ex]) -> PyResult<Ex> {
    lattice(true, args)
}

/// `sympy.Or(*args)`: flattened, `true` absorbs, `false` drops out, duplicates
/// and contradictions of relationals folded.
pub fn logic_or(args: &[Ex]) -> PyResult<Ex> {
    lattice(false, args)
}

/// `as_Boolean(x)` for what `to_node` wraps: an `Integer` 0/1 becomes
/// `false`/`true` (sympy compares `Integer(1) == True`), anything else raises.
pub fn as_boolean(e: &Ex) -> PyResult<Ex> {
    match &**e {
        Node::Int(i) if i.is_zero() => Ok(boolean(false)),
        Node::Int(i) if i.is_one() => Ok(boolean(true)),
        // A Symbol is a Boolean too (its `is_zero` is unknown).
        Node::Sym(_) => Ok(e.clone()),
        _ if e.is_boolean() => Ok(e.clone()),
        _ => Err(Raise::type_error(format!(
            "expecting bool or Boolean, not `{}`.",
            super::print::sstr(e)
        ))),
    }
}

/// The assumptions sympy derives for `e` (`facts::facts`).
pub fn facts_of(e: &Ex) -> Facts {
    facts(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(coeffs: &[i64]) -> Vec<BigInt> {
        coeffs.iter().map(|&c| BigInt::from(c)).collect()
    }

    #[test]
    fn univariate_gcd_degrees() {
        // (x - 1)(x + 2) and (x - 1)(x + 3): gcd x - 1.
        assert_eq!(univariate_gcd_degree(p(&[-2, 1, 1]), p(&[-3, 2, 1])), 1);
        // x^2 + 1 and x + 1: coprime.
        assert_eq!(univariate_gcd_degree(p(&[1, 0, 1]), p(&[1, 1])), 0);
        // (x + 1)^2 and (x + 1)^3.
        assert_eq!(univariate_gcd_degree(p(&[1, 2, 1]), p(&[1, 3, 3, 1])), 2);
        // A constant is coprime with anything.
        assert_eq!(univariate_gcd_degree(p(&[5]), p(&[0, 0, 1])), 0);
    }
}
