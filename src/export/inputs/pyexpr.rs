//! Mirrors the Python that `torch/export/_unlift.py::_convert_guards_code_to_fn`
//! generates: the guard expressions (parsed as `ast.parse(mode="eval")`
//! would), `ast.unparse` of the shadow text for the message, and evaluation
//! of the actual text on the flat inputs.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

/// A guard expression node (the subset of Python the tracer prints).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(BigInt),
    Float(f64),
    Str(String),
    Name(String),
    Attr(Box<Expr>, String),
    Subscript(Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Box<Expr>, BinOp, Box<Expr>),
    Cmp(Box<Expr>, CmpOp, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(BigInt),
    Float(f64),
    Str(String),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "//", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "%", "(", ")", "[", "]", ".", ",",
];

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let mut float = false;
            if i < b.len() && b[i] == b'.' {
                float = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                float = true;
                i += 1;
                if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                    i += 1;
                }
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'_' || b[i] == b'.') {
                return Err(format!(
                    "a number form the reference does not read in `{s}`"
                ));
            }
            if float {
                out.push(Tok::Float(
                    s[st..i].parse().map_err(|_| "bad float".to_string())?,
                ));
            } else {
                out.push(Tok::Int(
                    s[st..i].parse().map_err(|_| "bad int".to_string())?,
                ));
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(s[st..i].to_string()));
        } else if c == b'\'' {
            let st = i + 1;
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                if b[i] == b'\\' {
                    return Err(format!("an escaped string in `{s}`"));
                }
                i += 1;
            }
            if i >= b.len() {
                return Err(format!("an unterminated string in `{s}`"));
            }
            out.push(Tok::Str(s[st..i].to_string()));
            i += 1;
        } else if let Some(op) = OPS.iter().find(|op| s[i..].starts_with(**op)) {
            out.push(Tok::Op(op));
            i += op.len();
        } else {
            return Err(format!("the character {:?} in `{s}`", c as char));
        }
    }
    Ok(out)
}

/// Parses one guard expression; `Err` names what the reference does not read.
pub fn parse(s: &str) -> Result<Expr, String> {
    let toks = tokenize(s)?;
    let mut p = P { t: &toks, i: 0 };
    let e = p.or()?;
    if p.i != toks.len() {
        return Err(format!("trailing text in `{s}`"));
    }
    Ok(e)
}

struct P<'a> {
    t: &'a [Tok],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Name(n)) if n == kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Result<Expr, String> {
        let mut v = vec![self.and()?];
        while self.eat_kw("or") {
            v.push(self.and()?);
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Expr::Or(v)
        })
    }
    fn and(&mut self) -> Result<Expr, String> {
        let mut v = vec![self.not()?];
        while self.eat_kw("and") {
            v.push(self.not()?);
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Expr::And(v)
        })
    }
    fn not(&mut self) -> Result<Expr, String> {
        if self.eat_kw("not") {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Expr, String> {
        let l = self.arith()?;
        let op = match self.peek() {
            Some(Tok::Op("==")) => CmpOp::Eq,
            Some(Tok::Op("!=")) => CmpOp::Ne,
            Some(Tok::Op("<")) => CmpOp::Lt,
            Some(Tok::Op("<=")) => CmpOp::Le,
            Some(Tok::Op(">")) => CmpOp::Gt,
            Some(Tok::Op(">=")) => CmpOp::Ge,
            _ => return Ok(l),
        };
        self.i += 1;
        let r = self.arith()?;
        if matches!(
            self.peek(),
            Some(Tok::Op("==" | "!=" | "<" | "<=" | ">" | ">="))
        ) {
            return Err("a chained comparison".into());
        }
        Ok(Expr::Cmp(Box::new(l), op, Box::new(r)))
    }
    fn arith(&mut self) -> Result<Expr, String> {
        let mut l = self.term()?;
        loop {
            let op = if self.eat_op("+") {
                BinOp::Add
            } else if self.eat_op("-") {
                BinOp::Sub
            } else {
                return Ok(l);
            };
            l = Expr::Bin(Box::new(l), op, Box::new(self.term()?));
        }
    }
    fn term(&mut self) -> Result<Expr, String> {
        let mut l = self.factor()?;
        loop {
            let op = if self.eat_op("*") {
                BinOp::Mul
            } else if self.eat_op("//") {
                BinOp::FloorDiv
            } else if self.eat_op("%") {
                BinOp::Mod
            } else {
                return Ok(l);
            };
            l = Expr::Bin(Box::new(l), op, Box::new(self.factor()?));
        }
    }
    fn factor(&mut self) -> Result<Expr, String> {
        if self.eat_op("-") {
            return Ok(Expr::Neg(Box::new(self.factor()?)));
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Expr, String> {
        let mut e = match self.t.get(self.i).cloned() {
            Some(Tok::Int(i)) => {
                self.i += 1;
                Expr::Int(i)
            }
            Some(Tok::Float(f)) => {
                self.i += 1;
                Expr::Float(f)
            }
            Some(Tok::Str(s)) => {
                self.i += 1;
                Expr::Str(s)
            }
            Some(Tok::Name(n)) if !["and", "or", "not"].contains(&n.as_str()) => {
                self.i += 1;
                Expr::Name(n)
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                let e = self.or()?;
                if !self.eat_op(")") {
                    return Err("an unclosed parenthesis".into());
                }
                e
            }
            t => return Err(format!("unexpected token {t:?}")),
        };
        loop {
            if self.eat_op(".") {
                match self.t.get(self.i).cloned() {
                    Some(Tok::Name(n)) => {
                        self.i += 1;
                        e = Expr::Attr(Box::new(e), n);
                    }
                    _ => return Err("a bad attribute".into()),
                }
            } else if self.eat_op("[") {
                let idx = self.or()?;
                if !self.eat_op("]") {
                    return Err("an unclosed subscript".into());
                }
                e = Expr::Subscript(Box::new(e), Box::new(idx));
            } else if self.eat_op("(") {
                let mut args = Vec::new();
                if !self.eat_op(")") {
                    loop {
                        args.push(self.or()?);
                        if self.eat_op(")") {
                            break;
                        }
                        if !self.eat_op(",") {
                            return Err("a bad call".into());
                        }
                    }
                }
                e = Expr::Call(Box::new(e), args);
            } else {
                return Ok(e);
            }
        }
    }
}

// ast.unparse precedences (Lib/ast.py `_Precedence`).
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_NOT: u8 = 3;
const P_CMP: u8 = 4;
const P_ARITH: u8 = 9;
const P_TERM: u8 = 10;
const P_FACTOR: u8 = 11;
const P_ATOM: u8 = 14;

/// `ast.unparse(ast.parse(text, mode="eval"))`.
pub fn unparse(e: &Expr) -> String {
    let mut out = String::new();
    write(e, 0, &mut out);
    out
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Or(_) => P_OR,
        Expr::And(_) => P_AND,
        Expr::Not(_) => P_NOT,
        Expr::Cmp(..) => P_CMP,
        Expr::Bin(_, BinOp::Add | BinOp::Sub, _) => P_ARITH,
        Expr::Bin(..) => P_TERM,
        Expr::Neg(_) => P_FACTOR,
        _ => P_ATOM,
    }
}

fn write(e: &Expr, need: u8, out: &mut String) {
    let p = prec(e);
    let paren = p < need;
    if paren {
        out.push('(');
    }
    match e {
        Expr::Int(i) => out.push_str(&i.to_string()),
        Expr::Float(f) => out.push_str(&crate::pyval::repr::float_repr(*f)),
        Expr::Str(s) => out.push_str(&crate::pyval::repr::str_repr(s)),
        Expr::Name(n) => out.push_str(n),
        Expr::Attr(b, n) => {
            write(b, P_ATOM, out);
            out.push('.');
            out.push_str(n);
        }
        Expr::Subscript(b, i) => {
            write(b, P_ATOM, out);
            out.push('[');
            write(i, 0, out);
            out.push(']');
        }
        Expr::Call(f, args) => {
            write(f, P_ATOM, out);
            out.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write(a, 0, out);
            }
            out.push(')');
        }
        Expr::Neg(x) => {
            out.push('-');
            write(x, P_FACTOR, out);
        }
        Expr::Not(x) => {
            out.push_str("not ");
            write(x, P_NOT, out);
        }
        Expr::Bin(l, op, r) => {
            let s = match op {
                BinOp::Add => " + ",
                BinOp::Sub => " - ",
                BinOp::Mul => " * ",
                BinOp::FloorDiv => " // ",
                BinOp::Mod => " % ",
            };
            write(l, p, out);
            out.push_str(s);
            write(r, p + 1, out);
        }
        Expr::Cmp(l, op, r) => {
            let s = match op {
                CmpOp::Eq => " == ",
                CmpOp::Ne => " != ",
                CmpOp::Lt => " < ",
                CmpOp::Le => " <= ",
                CmpOp::Gt => " > ",
                CmpOp::Ge => " >= ",
            };
            write(l, P_CMP + 1, out);
            out.push_str(s);
            write(r, P_CMP + 1, out);
        }
        Expr::And(v) | Expr::Or(v) => {
            let s = if matches!(e, Expr::And(_)) {
                " and "
            } else {
                " or "
            };
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    out.push_str(s);
                }
                write(x, p + 1, out);
            }
        }
    }
    if paren {
        out.push(')');
    }
}

/// A value the guard code computes with.
#[derive(Clone, Debug, PartialEq)]
pub enum GVal {
    Int(BigInt),
    Bool(bool),
    /// A tensor input (its shape).
    Tensor(Vec<i64>),
    /// A bound `Tensor.size` method.
    SizeMethod(Vec<i64>),
    /// `torch.Size`.
    Size(Vec<i64>),
    Float(f64),
    Str(String),
    /// Any other input (None, a list, ...).
    Other,
}

/// Why evaluation stopped.
#[derive(Debug)]
pub enum EvalStop {
    /// Python raises (type, message).
    Raise(&'static str, String),
    /// Not modelled.
    Unsupported(String),
}

fn int_of(v: &GVal) -> Option<BigInt> {
    match v {
        GVal::Int(i) => Some(i.clone()),
        GVal::Bool(b) => Some(BigInt::from(*b as u8)),
        _ => None,
    }
}

pub fn truth(v: &GVal) -> Result<bool, EvalStop> {
    match v {
        GVal::Int(i) => Ok(!i.is_zero()),
        GVal::Bool(b) => Ok(*b),
        GVal::Float(f) => Ok(*f != 0.0),
        GVal::Str(s) => Ok(!s.is_empty()),
        other => Err(EvalStop::Unsupported(format!(
            "the truth value of {other:?}"
        ))),
    }
}

/// Evaluates the actual guard text, where `args[i]` is the i-th flat input.
pub fn eval(e: &Expr, args: &[GVal]) -> Result<GVal, EvalStop> {
    let unsupported = |what: String| Err(EvalStop::Unsupported(what));
    match e {
        Expr::Int(i) => Ok(GVal::Int(i.clone())),
        Expr::Float(f) => Ok(GVal::Float(*f)),
        Expr::Str(s) => Ok(GVal::Str(s.clone())),
        Expr::Name(n) if n == "True" || n == "False" => Ok(GVal::Bool(n == "True")),
        Expr::Subscript(b, i) if matches!(&**b, Expr::Name(n) if n == "args") => {
            let Some(idx) = int_of(&eval(i, args)?) else {
                return unsupported("a non-integer `args` index".into());
            };
            let idx: usize = idx
                .try_into()
                .map_err(|_| EvalStop::Unsupported("a negative `args` index".into()))?;
            match args.get(idx) {
                Some(v) => Ok(v.clone()),
                None => Err(EvalStop::Raise(
                    "IndexError",
                    "tuple index out of range".into(),
                )),
            }
        }
        Expr::Subscript(b, i) => {
            let base = eval(b, args)?;
            let idx = eval(i, args)?;
            match (base, int_of(&idx)) {
                (GVal::Size(dims), Some(k)) => {
                    let n = BigInt::from(dims.len());
                    let k = if k.is_negative() { k + &n } else { k };
                    if k.is_negative() || k >= n {
                        return Err(EvalStop::Raise(
                            "IndexError",
                            "tuple index out of range".into(),
                        ));
                    }
                    let k: usize = k.try_into().expect("in range");
                    Ok(GVal::Int(BigInt::from(dims[k])))
                }
                (b, _) => unsupported(format!("subscripting {b:?}")),
            }
        }
        Expr::Attr(b, n) if n == "size" => match eval(b, args)? {
            GVal::Tensor(s) => Ok(GVal::SizeMethod(s)),
            b => unsupported(format!("`.size` of {b:?}")),
        },
        Expr::Call(f, a) if a.is_empty() => match eval(f, args)? {
            GVal::SizeMethod(s) => Ok(GVal::Size(s)),
            f => unsupported(format!("calling {f:?}")),
        },
        Expr::Neg(x) => match int_of(&eval(x, args)?) {
            Some(i) => Ok(GVal::Int(-i)),
            None => unsupported("negating a non-integer".into()),
        },
        Expr::Not(x) => Ok(GVal::Bool(!truth(&eval(x, args)?)?)),
        Expr::Bin(l, op, r) => {
            let (Some(a), Some(b)) = (int_of(&eval(l, args)?), int_of(&eval(r, args)?)) else {
                return unsupported("arithmetic on non-integers".into());
            };
            let z = || {
                Err(EvalStop::Raise(
                    "ZeroDivisionError",
                    match op {
                        BinOp::Mod => "integer modulo by zero",
                        _ => "integer division or modulo by zero",
                    }
                    .into(),
                ))
            };
            Ok(GVal::Int(match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::FloorDiv if b.is_zero() => return z(),
                BinOp::Mod if b.is_zero() => return z(),
                BinOp::FloorDiv => a.div_floor(&b),
                BinOp::Mod => a.mod_floor(&b),
            }))
        }
        Expr::Cmp(l, op, r) => compare(&eval(l, args)?, *op, &eval(r, args)?),
        // Python's `and`/`or` return an operand, not a bool.
        Expr::And(v) => {
            let mut last = GVal::Bool(true);
            for x in v {
                last = eval(x, args)?;
                if !truth(&last)? {
                    return Ok(last);
                }
            }
            Ok(last)
        }
        Expr::Or(v) => {
            let mut last = GVal::Bool(false);
            for x in v {
                last = eval(x, args)?;
                if truth(&last)? {
                    return Ok(last);
                }
            }
            Ok(last)
        }
        other => unsupported(format!("the guard form `{}`", unparse(other))),
    }
}

/// Python's comparison of two guard values (ints, bools, floats, strs).
fn compare(a: &GVal, op: CmpOp, b: &GVal) -> Result<GVal, EvalStop> {
    use std::cmp::Ordering;
    let num = |v: &GVal| -> Option<Result<f64, BigInt>> {
        match v {
            GVal::Float(f) => Some(Ok(*f)),
            other => int_of(other).map(Err),
        }
    };
    let ord: Option<Ordering> = match (a, b) {
        (GVal::Str(x), GVal::Str(y)) => Some(x.cmp(y)),
        _ => match (num(a), num(b)) {
            (Some(Err(x)), Some(Err(y))) => Some(x.cmp(&y)),
            (Some(x), Some(y)) => {
                // int vs float: exact only while the int fits a double exactly.
                let f = |v: Result<f64, BigInt>| match v {
                    Ok(f) => Some(f),
                    Err(i) => {
                        let small: Option<i64> = (&i).try_into().ok();
                        small
                            .filter(|s| s.unsigned_abs() < (1u64 << 53))
                            .map(|s| s as f64)
                    }
                };
                match (f(x), f(y)) {
                    (Some(x), Some(y)) => x.partial_cmp(&y),
                    _ => return Err(EvalStop::Unsupported("a huge int against a float".into())),
                }
            }
            _ => {
                return match op {
                    CmpOp::Eq => Ok(GVal::Bool(false)),
                    CmpOp::Ne => Ok(GVal::Bool(true)),
                    _ => Err(EvalStop::Unsupported(format!(
                        "ordering {a:?} against {b:?}"
                    ))),
                }
            }
        },
    };
    // A NaN compares unordered: only `!=` holds.
    let Some(o) = ord else {
        return Ok(GVal::Bool(op == CmpOp::Ne));
    };
    Ok(GVal::Bool(match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::Ne => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparse_normalizes_parentheses() {
        let u = |s: &str| unparse(&parse(s).unwrap());
        assert_eq!(
            u("(2*x.size()[0]) == y.size()[0]"),
            "2 * x.size()[0] == y.size()[0]"
        );
        assert_eq!(
            u("((-1) + z.size()[0]) == x.size()[0]"),
            "-1 + z.size()[0] == x.size()[0]"
        );
        assert_eq!(
            u("(3*x.size()[0]) == (6*(x.size()[0] // 2))"),
            "3 * x.size()[0] == 6 * (x.size()[0] // 2)"
        );
        assert_eq!(u("(x.size()[0] % 2) == 0"), "x.size()[0] % 2 == 0");
        assert_eq!(u("d['a'].size()[0] == 2"), "d['a'].size()[0] == 2");
        assert_eq!(
            u("n >= 0 and n <= x.size()[0]"),
            "n >= 0 and n <= x.size()[0]"
        );
    }
}
