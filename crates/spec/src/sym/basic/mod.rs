//! Mirrors the expression tree of sympy 1.14's core (sympy/core/{basic,
//! symbol,relational}.py, the classes of torch/utils/_sympy/functions.py):
//! the node classes with their args and the structural views the printer,
//! the orderings and the constructors all read. Nothing here canonicalizes
//! (that is `expr/`, above it), as sympy's `Basic` knows nothing of
//! `Add.flatten`.

use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::One;

use super::mpf::Mpf;

mod numbers;

pub use numbers::*;

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
