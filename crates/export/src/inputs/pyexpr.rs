//! Mirrors the Python that `torch/export/_unlift.py::_convert_guards_code_to_fn`
//! generates: the guard expressions (parsed as `ast.parse(mode="eval")`
//! would), `ast.unparse` of the shadow text for the message, and evaluation
//! of the actual text on the flat inputs (`eval.rs`).

use num_bigint::BigInt;
pub use torchspec_pyval::Raise;

mod eval;
pub use eval::{eval, truth, EvalStop, GVal};

/// A guard expression node (the subset of Python the tracer prints).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An int literal (`ast.Constant` of an `int`).
    Int(BigInt),
    /// A float literal.
    Float(f64),
    /// A string literal.
    Str(String),
    /// A name (`ast.Name`), `True` and `False` included.
    Name(String),
    /// `value.attr` (`ast.Attribute`).
    Attr(Box<Expr>, String),
    /// `value[index]` (`ast.Subscript`).
    Subscript(Box<Expr>, Box<Expr>),
    /// `func(args...)` (`ast.Call`, positional arguments only).
    Call(Box<Expr>, Vec<Expr>),
    /// `-operand` (`ast.UnaryOp` with `USub`).
    Neg(Box<Expr>),
    /// `not operand` (`ast.UnaryOp` with `Not`).
    Not(Box<Expr>),
    /// `left op right` (`ast.BinOp`).
    Bin(Box<Expr>, BinOp, Box<Expr>),
    /// `left op right` with a single comparison operator (`ast.Compare`).
    Cmp(Box<Expr>, CmpOp, Box<Expr>),
    /// A chained comparison `a op1 b op2 c ...` (`ast.Compare` with two or
    /// more operators): the operands, one more than the operators.
    Chain(Vec<Expr>, Vec<CmpOp>),
    /// `a and b and ...` (`ast.BoolOp` with `And`).
    And(Vec<Expr>),
    /// `a or b or ...` (`ast.BoolOp` with `Or`).
    Or(Vec<Expr>),
}

/// An arithmetic operator of an [`Expr::Bin`] (`ast.operator`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinOp {
    /// `+` (`ast.Add`).
    Add,
    /// `-` (`ast.Sub`).
    Sub,
    /// `*` (`ast.Mult`).
    Mul,
    /// `//` (`ast.FloorDiv`).
    FloorDiv,
    /// `/` (`ast.Div`).
    TrueDiv,
    /// `%` (`ast.Mod`).
    Mod,
    /// `**` (`ast.Pow`).
    Pow,
}

/// A comparison operator of an [`Expr::Cmp`] (`ast.cmpop`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CmpOp {
    /// `==` (`ast.Eq`).
    Eq,
    /// `!=` (`ast.NotEq`).
    Ne,
    /// `<` (`ast.Lt`).
    Lt,
    /// `<=` (`ast.LtE`).
    Le,
    /// `>` (`ast.Gt`).
    Gt,
    /// `>=` (`ast.GtE`).
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
    "//", "/", "**", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "%", "(", ")", "[", "]", ".",
    ",",
];

/// CPython's tokenizer `MAXLEVEL`: opening a 201st nested bracket is
/// `SyntaxError: too many nested parentheses`.
const MAX_BRACKET_LEVEL: usize = 200;

/// The deepest guard expression tree the reference evaluates. Past it
/// CPython's recursion limits start to decide (`ast.parse` / `ast.unparse`
/// raise `RecursionError` somewhere between 300 and 1000 levels, which
/// `_convert_guards_code_to_fn` catches for the message only), so a deeper
/// tree is `Unsupported`. The bound also keeps `eval`, `unparse` and
/// `Drop` of a tree from file input far from the stack limit.
pub const MAX_EXPR_DEPTH: u32 = 100;

/// Why a guard text was not turned into an [`Expr`].
#[derive(Clone, Debug, PartialEq)]
pub enum ParseStop {
    /// CPython's `SyntaxError` message, before its `(filename, line N)`
    /// suffix; `line` is the 0-based line of the text it was found on;
    /// `detected` adds CPython's `(detected at line N)`.
    Syntax {
        /// CPython's message.
        message: String,
        /// The 0-based line of the text it was found on.
        line: usize,
        /// Whether CPython adds `(detected at line N)`.
        detected: bool,
    },
    /// A form the reference does not read (never a guess).
    Unsupported(String),
}

impl ParseStop {
    /// The `SyntaxError` as `str(e)` prints it for `filename`, the text
    /// starting on line `first_line` (1-based); an unsupported form as is.
    pub fn into_stop(self, filename: &str, first_line: usize) -> EvalStop {
        match self {
            ParseStop::Syntax {
                message,
                line,
                detected,
            } => {
                let n = first_line + line;
                let at = if detected {
                    format!(" (detected at line {n})")
                } else {
                    String::new()
                };
                Raise::new(
                    "SyntaxError",
                    format!("{message}{at} ({filename}, line {n})"),
                )
            }
            ParseStop::Unsupported(w) => Raise::Unsupported(w),
        }
    }
}

impl From<String> for ParseStop {
    fn from(w: String) -> ParseStop {
        ParseStop::Unsupported(w)
    }
}

impl From<&str> for ParseStop {
    fn from(w: &str) -> ParseStop {
        ParseStop::Unsupported(w.to_string())
    }
}

struct Tokens<'s> {
    s: &'s str,
    b: &'s [u8],
    i: usize,
    out: Vec<Tok>,
    /// Open brackets with the 0-based line each opened on.
    open: Vec<(u8, usize)>,
    /// The 0-based line of `i` (newlines are whitespace inside brackets).
    line: usize,
}

impl Tokens<'_> {
    fn line(&self) -> usize {
        self.line
    }

    fn syntax(&self, message: String) -> ParseStop {
        ParseStop::Syntax {
            message,
            line: self.line(),
            detected: false,
        }
    }

    fn number(&mut self) -> Result<(), ParseStop> {
        let (b, st) = (self.b, self.i);
        let digits = |i: &mut usize| {
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
        };
        digits(&mut self.i);
        let mut float = false;
        if self.i < b.len() && b[self.i] == b'.' {
            float = true;
            self.i += 1;
            digits(&mut self.i);
        }
        if self.i < b.len() && (b[self.i] == b'e' || b[self.i] == b'E') {
            float = true;
            self.i += 1;
            if self.i < b.len() && (b[self.i] == b'+' || b[self.i] == b'-') {
                self.i += 1;
            }
            digits(&mut self.i);
        }
        if self.i < b.len()
            && (b[self.i].is_ascii_alphabetic() || b[self.i] == b'_' || b[self.i] == b'.')
        {
            return Err(
                format!("a number form the reference does not read in `{}`", self.s).into(),
            );
        }
        let text = &self.s[st..self.i];
        self.out.push(if float {
            Tok::Float(text.parse().map_err(|_| "bad float".to_string())?)
        } else {
            Tok::Int(text.parse().map_err(|_| "bad int".to_string())?)
        });
        Ok(())
    }

    /// A `'...'` or `"..."` literal without escapes on one line.
    fn string(&mut self, quote: u8) -> Result<(), ParseStop> {
        let st = self.i + 1;
        let mut j = st;
        while j < self.b.len() && self.b[j] != quote && self.b[j] != b'\n' {
            if self.b[j] == b'\\' {
                return Err(format!("an escaped string in `{}`", self.s).into());
            }
            j += 1;
        }
        if j >= self.b.len() || self.b[j] == b'\n' {
            return Err(ParseStop::Syntax {
                message: "unterminated string literal".into(),
                line: self.line(),
                detected: true,
            });
        }
        self.out.push(Tok::Str(self.s[st..j].to_string()));
        self.i = j + 1;
        Ok(())
    }

    /// Brackets as the tokenizer tracks them (`tok->level`).
    fn bracket(&mut self, c: u8) -> Result<(), ParseStop> {
        if c == b'(' || c == b'[' {
            if self.open.len() >= MAX_BRACKET_LEVEL {
                return Err(self.syntax("too many nested parentheses".into()));
            }
            self.open.push((c, self.line()));
            return Ok(());
        }
        let want = if c == b')' { b'(' } else { b'[' };
        match self.open.pop() {
            None => Err(self.syntax(format!("unmatched '{}'", c as char))),
            Some((o, _)) if o != want => Err(self.syntax(format!(
                "closing parenthesis '{}' does not match opening parenthesis '{}'",
                c as char, o as char
            ))),
            Some(_) => Ok(()),
        }
    }

    fn run(mut self) -> Result<Vec<Tok>, ParseStop> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c.is_ascii_whitespace() {
                self.line += usize::from(c == b'\n');
                self.i += 1;
            } else if c.is_ascii_digit() {
                self.number()?;
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let st = self.i;
                while self.i < self.b.len()
                    && (self.b[self.i].is_ascii_alphanumeric() || self.b[self.i] == b'_')
                {
                    self.i += 1;
                }
                self.out.push(Tok::Name(self.s[st..self.i].to_string()));
            } else if c == b'\'' || c == b'"' {
                self.string(c)?;
            } else if let Some(op) = OPS.iter().find(|op| self.s[self.i..].starts_with(**op)) {
                if matches!(c, b'(' | b'[' | b')' | b']') {
                    self.bracket(c)?;
                }
                self.out.push(Tok::Op(op));
                self.i += op.len();
            } else {
                return Err(format!("the character {:?} in `{}`", c as char, self.s).into());
            }
        }
        if let Some(&(o, line)) = self.open.first() {
            let message = format!("'{}' was never closed", o as char);
            return Err(ParseStop::Syntax {
                message,
                line,
                detected: false,
            });
        }
        Ok(self.out)
    }
}

fn tokenize(s: &str) -> Result<Vec<Tok>, ParseStop> {
    Tokens {
        s,
        b: s.as_bytes(),
        i: 0,
        out: Vec::new(),
        open: Vec::new(),
        line: 0,
    }
    .run()
}

/// Parses one guard expression as `ast.parse(s, mode="eval")` does:
/// CPython's tokenizer errors are [`ParseStop::Syntax`], a form the
/// reference does not read (or a tree deeper than [`MAX_EXPR_DEPTH`]) is
/// [`ParseStop::Unsupported`].
pub fn parse(s: &str) -> Result<Expr, ParseStop> {
    let toks = tokenize(s)?;
    let mut p = P {
        t: &toks,
        i: 0,
        unary: 0,
    };
    let (e, _) = p.or()?;
    if p.i != toks.len() {
        return Err(format!("trailing text in `{s}`").into());
    }
    Ok(e)
}

/// The generated line `torch._assert({actual}, "Guard failed: {message}")`
/// of `_convert_guards_code_to_fn` tokenizes as that call (a tokenizer
/// error in it is the `SyntaxError` `exec` raises); a message whose quotes
/// make it some other code is `Unsupported`.
pub fn check_assert_line(actual: &str, message: &str) -> Result<(), ParseStop> {
    let line = format!("torch._assert({actual}, \"{message}\")");
    let toks = tokenize(&line)?;
    let inner = tokenize(actual)?;
    let n = inner.len();
    let shaped = toks.len() == n + 7
        && toks[..4]
            == [
                Tok::Name("torch".into()),
                Tok::Op("."),
                Tok::Name("_assert".into()),
                Tok::Op("("),
            ]
        && toks[4..4 + n] == inner[..]
        && toks[4 + n..] == [Tok::Op(","), Tok::Str(message.into()), Tok::Op(")")];
    if shaped {
        Ok(())
    } else {
        Err(format!("a guard message that changes the generated code: {line}").into())
    }
}

type Parsed = Result<(Expr, u32), ParseStop>;

/// A node over children of depth `d`, refused past [`MAX_EXPR_DEPTH`].
fn node(e: Expr, d: u32) -> Parsed {
    if d + 1 > MAX_EXPR_DEPTH {
        return Err(
            format!("a guard expression nested deeper than {MAX_EXPR_DEPTH} levels").into(),
        );
    }
    Ok((e, d + 1))
}

struct P<'a> {
    t: &'a [Tok],
    i: usize,
    /// Unary operators being parsed (`not`, `-`): the parser's recursion
    /// is bounded by them and by the tokenizer's bracket levels.
    unary: u32,
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
    /// `a or b or ...` / `a and b and ...`: one n-ary node.
    fn bool_op(
        &mut self,
        kw: &str,
        next: fn(&mut Self) -> Parsed,
        make: fn(Vec<Expr>) -> Expr,
    ) -> Parsed {
        let (first, mut d) = next(self)?;
        let mut v = vec![first];
        while self.eat_kw(kw) {
            let (e, de) = next(self)?;
            d = d.max(de);
            v.push(e);
        }
        if v.len() == 1 {
            return Ok((v.pop().expect("one operand"), d));
        }
        node(make(v), d)
    }
    /// A full expression: where brackets nest (at most 200 levels, some
    /// dozen frames each), so the stack grows on the heap when it runs low.
    fn or(&mut self) -> Parsed {
        stacker::maybe_grow(64 * 1024, 1 << 20, || {
            self.bool_op("or", Self::and, Expr::Or)
        })
    }
    fn and(&mut self) -> Parsed {
        self.bool_op("and", Self::not, Expr::And)
    }
    fn not(&mut self) -> Parsed {
        if self.eat_kw("not") {
            let (e, d) = self.unary(Self::not)?;
            return node(Expr::Not(Box::new(e)), d);
        }
        self.cmp()
    }
    /// The operand of a unary operator: the descent itself is bounded (a
    /// chain of them nests the tree one level each).
    fn unary(&mut self, operand: fn(&mut Self) -> Parsed) -> Parsed {
        if self.unary >= MAX_EXPR_DEPTH {
            return Err(
                format!("a guard expression nested deeper than {MAX_EXPR_DEPTH} levels").into(),
            );
        }
        self.unary += 1;
        let e = operand(self);
        self.unary -= 1;
        e
    }
    fn cmp_op(&mut self) -> Option<CmpOp> {
        let op = match self.peek() {
            Some(Tok::Op("==")) => CmpOp::Eq,
            Some(Tok::Op("!=")) => CmpOp::Ne,
            Some(Tok::Op("<")) => CmpOp::Lt,
            Some(Tok::Op("<=")) => CmpOp::Le,
            Some(Tok::Op(">")) => CmpOp::Gt,
            Some(Tok::Op(">=")) => CmpOp::Ge,
            _ => return None,
        };
        self.i += 1;
        Some(op)
    }
    /// `a op b` or a chain `a op1 b op2 c ...` (one flat `ast.Compare`).
    fn cmp(&mut self) -> Parsed {
        let (l, mut d) = self.arith()?;
        let mut operands = vec![l];
        let mut ops = Vec::new();
        while let Some(op) = self.cmp_op() {
            let (r, dr) = self.arith()?;
            d = d.max(dr);
            ops.push(op);
            operands.push(r);
        }
        match ops.len() {
            0 => Ok((operands.pop().expect("one operand"), d)),
            1 => {
                let r = operands.pop().expect("two operands");
                let l = operands.pop().expect("two operands");
                node(Expr::Cmp(Box::new(l), ops[0], Box::new(r)), d)
            }
            _ => node(Expr::Chain(operands, ops), d),
        }
    }
    /// A left-associative chain of binary operators.
    fn chain(
        &mut self,
        next: fn(&mut Self) -> Parsed,
        op: fn(&mut Self) -> Option<BinOp>,
    ) -> Parsed {
        let (mut l, mut d) = next(self)?;
        while let Some(o) = op(self) {
            let (r, dr) = next(self)?;
            (l, d) = node(Expr::Bin(Box::new(l), o, Box::new(r)), d.max(dr))?;
        }
        Ok((l, d))
    }
    fn arith(&mut self) -> Parsed {
        self.chain(Self::term, |p| {
            if p.eat_op("+") {
                Some(BinOp::Add)
            } else if p.eat_op("-") {
                Some(BinOp::Sub)
            } else {
                None
            }
        })
    }
    fn term(&mut self) -> Parsed {
        self.chain(Self::factor, |p| {
            if p.eat_op("*") {
                Some(BinOp::Mul)
            } else if p.eat_op("//") {
                Some(BinOp::FloorDiv)
            } else if p.eat_op("/") {
                Some(BinOp::TrueDiv)
            } else if p.eat_op("%") {
                Some(BinOp::Mod)
            } else {
                None
            }
        })
    }
    fn factor(&mut self) -> Parsed {
        if self.eat_op("-") {
            let (e, d) = self.unary(Self::factor)?;
            return node(Expr::Neg(Box::new(e)), d);
        }
        self.power()
    }
    /// `power: primary ['**' factor]` (right-associative, binds tighter
    /// than a unary minus on its left).
    fn power(&mut self) -> Parsed {
        let (base, d) = self.postfix()?;
        if !self.eat_op("**") {
            return Ok((base, d));
        }
        let (exp, de) = self.unary(Self::factor)?;
        node(
            Expr::Bin(Box::new(base), BinOp::Pow, Box::new(exp)),
            d.max(de),
        )
    }
    fn atom(&mut self) -> Parsed {
        let e = match self.t.get(self.i).cloned() {
            Some(Tok::Int(i)) => Expr::Int(i),
            Some(Tok::Float(f)) => Expr::Float(f),
            Some(Tok::Str(s)) => Expr::Str(s),
            Some(Tok::Name(n)) if !["and", "or", "not"].contains(&n.as_str()) => Expr::Name(n),
            Some(Tok::Op("(")) => {
                self.i += 1;
                let e = self.or()?;
                if !self.eat_op(")") {
                    return Err("an unclosed parenthesis".into());
                }
                return Ok(e);
            }
            t => return Err(format!("unexpected token {t:?}").into()),
        };
        self.i += 1;
        Ok((e, 1))
    }
    fn postfix(&mut self) -> Parsed {
        let (mut e, mut d) = self.atom()?;
        loop {
            if self.eat_op(".") {
                let Some(Tok::Name(n)) = self.t.get(self.i).cloned() else {
                    return Err("a bad attribute".into());
                };
                self.i += 1;
                (e, d) = node(Expr::Attr(Box::new(e), n), d)?;
            } else if self.eat_op("[") {
                let (idx, di) = self.or()?;
                if !self.eat_op("]") {
                    return Err("an unclosed subscript".into());
                }
                (e, d) = node(Expr::Subscript(Box::new(e), Box::new(idx)), d.max(di))?;
            } else if self.eat_op("(") {
                let mut args = Vec::new();
                if !self.eat_op(")") {
                    loop {
                        let (a, da) = self.or()?;
                        d = d.max(da);
                        args.push(a);
                        if self.eat_op(")") {
                            break;
                        }
                        if !self.eat_op(",") {
                            return Err("a bad call".into());
                        }
                    }
                }
                (e, d) = node(Expr::Call(Box::new(e), args), d)?;
            } else {
                return Ok((e, d));
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
const P_POWER: u8 = 12;
const P_ATOM: u8 = 14;

/// `ast.unparse(ast.parse(text, mode="eval"))`.
pub fn unparse(e: &Expr) -> String {
    let mut out = String::new();
    write(e, 0, &mut out);
    out
}

fn cmp_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => " == ",
        CmpOp::Ne => " != ",
        CmpOp::Lt => " < ",
        CmpOp::Le => " <= ",
        CmpOp::Gt => " > ",
        CmpOp::Ge => " >= ",
    }
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Or(_) => P_OR,
        Expr::And(_) => P_AND,
        Expr::Not(_) => P_NOT,
        Expr::Cmp(..) | Expr::Chain(..) => P_CMP,
        Expr::Bin(_, BinOp::Add | BinOp::Sub, _) => P_ARITH,
        Expr::Bin(_, BinOp::Pow, _) => P_POWER,
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
        Expr::Float(f) => out.push_str(&torchspec_pyval::repr::float_repr(*f)),
        Expr::Str(s) => out.push_str(&torchspec_pyval::repr::str_repr(s)),
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
                BinOp::TrueDiv => " / ",
                BinOp::Mod => " % ",
                BinOp::Pow => " ** ",
            };
            // `**` is right-associative: its left operand takes the
            // parentheses (`ast.unparse`'s `binop_rassoc`).
            let (lp, rp) = if *op == BinOp::Pow {
                (p + 1, p)
            } else {
                (p, p + 1)
            };
            write(l, lp, out);
            out.push_str(s);
            write(r, rp, out);
        }
        Expr::Cmp(l, op, r) => {
            write(l, P_CMP + 1, out);
            out.push_str(cmp_text(*op));
            write(r, P_CMP + 1, out);
        }
        Expr::Chain(operands, ops) => {
            write(&operands[0], P_CMP + 1, out);
            for (op, r) in ops.iter().zip(&operands[1..]) {
                out.push_str(cmp_text(*op));
                write(r, P_CMP + 1, out);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// File input never overflows the stack: brackets stop at CPython's
    /// 200 levels (a `SyntaxError`), any other nesting at
    /// [`MAX_EXPR_DEPTH`] (unsupported), a flat `and` chain is one node.
    #[test]
    fn hostile_guard_texts_are_bounded() {
        let syntax = |s: &str| match parse(s) {
            Err(ParseStop::Syntax { message, .. }) => message,
            other => panic!("not a SyntaxError: {other:?}"),
        };
        let deep = "(".repeat(200_000) + "x" + &")".repeat(200_000);
        assert_eq!(syntax(&deep), "too many nested parentheses");
        assert_eq!(
            syntax(&("[".repeat(201) + "x")),
            "too many nested parentheses"
        );
        let ok = "(".repeat(200) + "x" + &")".repeat(200);
        assert_eq!(parse(&ok), Ok(Expr::Name("x".into())));
        for long in [
            "-".repeat(100_000) + "x",
            "not ".repeat(100_000) + "x",
            vec!["x"; 100_000].join(" + "),
            "x".to_string() + &".a".repeat(100_000),
            "x".to_string() + &"[0]".repeat(100_000),
            "f".to_string() + &"()".repeat(100_000),
        ] {
            assert!(
                matches!(parse(&long), Err(ParseStop::Unsupported(w)) if w.contains("deeper than")),
                "{}",
                &long[..20]
            );
        }
        let wide = vec!["args[0] == 1"; 100_000].join(" and ");
        let e = parse(&wide).expect("a flat and-chain");
        assert_eq!(
            eval(&e, &[GVal::Int(1.into())])
                .map(|v| truth(&v).ok())
                .ok(),
            Some(Some(true))
        );
    }

    /// What CPython's tokenizer says, with `str(SyntaxError)`'s suffix.
    #[test]
    fn syntax_errors_read_as_cpython_prints_them() {
        let raised = |s: &str, file: &str, line: usize| match parse(s) {
            Err(stop) => match stop.into_stop(file, line) {
                Raise::Exception(e) => format!("{}: {}", e.type_name, e.message),
                Raise::Unsupported(w) => format!("unsupported: {w}"),
            },
            Ok(e) => format!("parsed {e:?}"),
        };
        assert_eq!(
            raised("x == 'b", "<unknown>", 1),
            "SyntaxError: unterminated string literal (detected at line 1) (<unknown>, line 1)"
        );
        assert_eq!(
            raised("(x\n == 'b", "<string>", 3),
            "SyntaxError: unterminated string literal (detected at line 4) (<string>, line 4)"
        );
        assert_eq!(
            raised("(x == 1", "<unknown>", 1),
            "SyntaxError: '(' was never closed (<unknown>, line 1)"
        );
        assert_eq!(
            raised("x == 1)", "<unknown>", 1),
            "SyntaxError: unmatched ')' (<unknown>, line 1)"
        );
        assert_eq!(
            raised("(x == 1]", "<unknown>", 1),
            "SyntaxError: closing parenthesis ']' does not match opening parenthesis '(' (<unknown>, line 1)"
        );
        // The generated assert line: a double quote in the message ends its literal.
        let line = check_assert_line(
            "args[0] != len(\"it's\")",
            "Guard failed: x != len(\"it's\")",
        );
        assert!(
            matches!(line, Err(ParseStop::Syntax { ref message, .. }) if message == "unterminated string literal")
        );
        assert_eq!(
            check_assert_line("args[0] == 2", "Guard failed: x == 2"),
            Ok(())
        );
    }

    #[test]
    fn unknown_names_raise_name_error() {
        let e = parse("L['y'].size()[0] == 2").unwrap();
        match eval(&e, &[]) {
            Err(Raise::Exception(e)) => {
                assert_eq!(
                    (e.type_name.as_str(), e.message.as_str()),
                    ("NameError", "name 'L' is not defined")
                )
            }
            other => panic!("{other:?}"),
        }
        let e = parse("math.cos(args[0])").unwrap();
        assert!(matches!(
            eval(&e, &[GVal::Float(1.0)]),
            Err(Raise::Unsupported(_))
        ));
    }

    /// The forms `ShapeGuardPythonPrinter` prints for torch.nn exports
    /// (docs/guard-forms.md), with Python's values; PyTorch's answers on
    /// whole programs are the goldens of `guards-printer-forms` and `nn-mha`.
    #[test]
    fn printer_forms_evaluate_as_python() {
        let run = |s: &str, n: i64, m: i64| {
            let e = parse(s).unwrap();
            let args = [GVal::Tensor(vec![n]), GVal::Tensor(vec![m])];
            match eval(&e, &args) {
                Ok(v) => format!("{v:?}"),
                Err(Raise::Exception(e)) => format!("{}: {}", e.type_name, e.message),
                Err(Raise::Unsupported(w)) => format!("unsupported: {w}"),
            }
        };
        let (x, y) = ("args[0].size()[0]", "args[1].size()[0]");
        let i = |v: i64| format!("{:?}", GVal::Int(v.into()));
        let f = |v: f64| format!("{:?}", GVal::Float(v));
        assert_eq!(run(&format!("torch.sym_max(1, 8*{y} // {x})"), 5, 2), i(3));
        assert_eq!(run(&format!("torch.sym_max(1, 8*{y} // {x})"), 9, 1), i(1));
        assert_eq!(run(&format!("torch.sym_min({x}, 2*{y})"), 7, 3), i(6));
        assert_eq!(run(&format!("torch.sym_max({x}, 1.5)"), 2, 0), f(2.0));
        assert_eq!(run(&format!("-{x} // 4"), 9, 0), i(-3));
        assert_eq!(run(&format!("-{x} % 7"), 4, 0), i(3));
        assert_eq!(
            run(&format!("{y} // {x}"), 0, 3),
            "ZeroDivisionError: integer division or modulo by zero"
        );
        assert_eq!(
            run(&format!("2 <= {x} <= 60"), 61, 0),
            format!("{:?}", GVal::Bool(false))
        );
        assert_eq!(
            run(&format!("math.floor(torch.sym_float({y}) / 3)"), 0, 16),
            i(5)
        );
        assert_eq!(run(&format!("math.trunc(-{y} / 4)"), 0, 18), i(-4));
        assert_eq!(run(&format!("max({x}, {y}, 3)"), 1, 2), i(3));
        assert_eq!(run(&format!("{y}**2"), 0, 7), i(49));
        assert_eq!(
            run(&format!("{x} != math.inf"), 1, 0),
            format!("{:?}", GVal::Bool(true))
        );
        assert!(run("torch.sym_max(1)", 0, 0).starts_with("unsupported"));
        let u = |s: &str| unparse(&parse(s).unwrap());
        assert_eq!(u("(-x) // 4 != -3"), "-x // 4 != -3");
        assert_eq!(u("not (x == 13)"), "not x == 13");
        assert_eq!(
            u("(a ** b) ** c == a ** (b ** c)"),
            "(a ** b) ** c == a ** b ** c"
        );
        assert_eq!(u("2 ** -1"), "2 ** (-1)");
        assert_eq!(u("-a ** 2"), "-a ** 2");
    }

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
