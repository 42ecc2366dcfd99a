//! Mirrors the Python that `torch/export/_unlift.py::_convert_guards_code_to_fn`
//! generates: the guard expressions (parsed as `ast.parse(mode="eval")`
//! would), `ast.unparse` of the shadow text for the message, and evaluation
//! of the actual text on the flat inputs.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
pub use torchspec_pyval::Raise;

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

/// The names the generated guard function can see in torch 2.15.0:
/// `_convert_guards_code_to_fn`'s namespace (`SYMPY_INTERP`, `math`,
/// `inf`), its parameter `args`, and CPython 3.11's builtins (`exec` adds
/// `__builtins__`; `sorted(dir(builtins))` in a process that ran `site`).
/// Any other name raises `NameError` when its guard runs. Sorted.
const GUARD_NAMES: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "IsNonOverlappingAndDenseIndicator",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__builtins__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "args",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "cast_symbool_to_symint_guardless",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "inf",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "math",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "torch",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// A value the guard code computes with.
#[derive(Clone, Debug, PartialEq)]
pub enum GVal {
    /// A Python `int`.
    Int(BigInt),
    /// A Python `bool`.
    Bool(bool),
    /// A tensor input (its shape).
    Tensor(Vec<i64>),
    /// A bound `Tensor.size` method.
    SizeMethod(Vec<i64>),
    /// `torch.Size`.
    Size(Vec<i64>),
    /// A Python `float`.
    Float(f64),
    /// A Python `str`.
    Str(String),
    /// The module `torch` or `math` of the guard namespace.
    Module(&'static str),
    /// A function the guards call: `torch.sym_max`, `math.floor`, `abs`, ...
    Func(&'static str),
    /// Any other input (None, a list, ...).
    Other,
}

/// The functions a guard may call that the reference evaluates, as
/// `ShapeGuardPythonPrinter` prints them (`torch.sym_max` for `Max`,
/// `torch.sym_float` for `ToFloat`, `math.floor` for `FloorToInt`, ...),
/// and the builtins of the same names.
const FUNCS: &[&str] = &[
    "abs",
    "math.ceil",
    "math.floor",
    "math.isnan",
    "math.trunc",
    "max",
    "min",
    "torch.sym_float",
    "torch.sym_max",
    "torch.sym_min",
];

/// Why evaluation stopped: Python raises ([`Raise::Exception`]), or the
/// reference does not model the form ([`Raise::Unsupported`]); the
/// workspace's one such type, under the name the guard evaluator uses.
pub type EvalStop = Raise;

fn int_of(v: &GVal) -> Option<BigInt> {
    match v {
        GVal::Int(i) => Some(i.clone()),
        GVal::Bool(b) => Some(BigInt::from(*b as u8)),
        _ => None,
    }
}

/// Python's `bool(v)` of a scalar guard value; other values are not modelled.
pub fn truth(v: &GVal) -> Result<bool, EvalStop> {
    match v {
        GVal::Int(i) => Ok(!i.is_zero()),
        GVal::Bool(b) => Ok(*b),
        GVal::Float(f) => Ok(*f != 0.0),
        GVal::Str(s) => Ok(!s.is_empty()),
        other => Err(Raise::Unsupported(format!("the truth value of {other:?}"))),
    }
}

/// `type(v).__name__` of a scalar guard value.
fn scalar_type_name(v: &GVal) -> Option<&'static str> {
    Some(match v {
        GVal::Int(_) => "int",
        GVal::Bool(_) => "bool",
        GVal::Float(_) => "float",
        GVal::Str(_) => "str",
        _ => return None,
    })
}

/// Evaluates the actual guard text, where `args[i]` is the i-th flat input.
pub fn eval(e: &Expr, args: &[GVal]) -> Result<GVal, EvalStop> {
    let unsupported = |what: String| Err(Raise::Unsupported(what));
    match e {
        Expr::Int(i) => Ok(GVal::Int(i.clone())),
        Expr::Float(f) => Ok(GVal::Float(*f)),
        Expr::Str(s) => Ok(GVal::Str(s.clone())),
        Expr::Name(n) if n == "True" || n == "False" => Ok(GVal::Bool(n == "True")),
        Expr::Name(n) if GUARD_NAMES.binary_search(&n.as_str()).is_err() => Err(Raise::new(
            "NameError",
            format!("name '{n}' is not defined"),
        )),
        Expr::Name(n) if n == "torch" => Ok(GVal::Module("torch")),
        Expr::Name(n) if n == "math" => Ok(GVal::Module("math")),
        Expr::Name(n) if n == "inf" => Ok(GVal::Float(f64::INFINITY)),
        Expr::Name(n) if FUNCS.contains(&n.as_str()) => Ok(GVal::Func(
            FUNCS.iter().find(|f| **f == n).copied().unwrap_or_default(),
        )),
        Expr::Subscript(b, i) if matches!(&**b, Expr::Name(n) if n == "args") => {
            let Some(idx) = int_of(&eval(i, args)?) else {
                return unsupported("a non-integer `args` index".into());
            };
            let idx: usize = idx
                .try_into()
                .map_err(|_| Raise::Unsupported("a negative `args` index".into()))?;
            match args.get(idx) {
                Some(v) => Ok(v.clone()),
                None => Err(Raise::new("IndexError", "tuple index out of range")),
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
                        return Err(Raise::new("IndexError", "tuple index out of range"));
                    }
                    let k: usize = k.try_into().expect("in range");
                    Ok(GVal::Int(BigInt::from(dims[k])))
                }
                (b, _) => unsupported(format!("subscripting {b:?}")),
            }
        }
        Expr::Attr(b, n) => match (eval(b, args)?, n.as_str()) {
            (GVal::Tensor(s), "size") => Ok(GVal::SizeMethod(s)),
            (GVal::Module("math"), "inf") => Ok(GVal::Float(f64::INFINITY)),
            (GVal::Module("math"), "nan") => Ok(GVal::Float(f64::NAN)),
            (GVal::Module(m), attr) => {
                let full = format!("{m}.{attr}");
                match FUNCS.iter().find(|f| **f == full) {
                    Some(f) => Ok(GVal::Func(f)),
                    None => unsupported(format!("`{full}`")),
                }
            }
            // A scalar where the guard expects a tensor: Python's
            // `'int' object has no attribute 'size'`.
            (b, "size") if scalar_type_name(&b).is_some() => Err(Raise::new(
                "AttributeError",
                format!(
                    "'{}' object has no attribute 'size'",
                    scalar_type_name(&b).unwrap_or_default()
                ),
            )),
            (b, _) => unsupported(format!("`.{n}` of {b:?}")),
        },
        Expr::Call(f, a) => match (eval(f, args)?, a.is_empty()) {
            (GVal::SizeMethod(s), true) => Ok(GVal::Size(s)),
            (GVal::Func(name), _) => {
                // Python evaluates the callee, then each argument in order.
                let vals = a
                    .iter()
                    .map(|x| eval(x, args))
                    .collect::<Result<Vec<_>, _>>()?;
                call(name, &vals)
            }
            (f, _) => unsupported(format!("calling {f:?}")),
        },
        Expr::Neg(x) => match eval(x, args)? {
            GVal::Float(f) => Ok(GVal::Float(-f)),
            v => match int_of(&v) {
                Some(i) => Ok(GVal::Int(-i)),
                None => unsupported("negating a non-number".into()),
            },
        },
        Expr::Not(x) => Ok(GVal::Bool(!truth(&eval(x, args)?)?)),
        Expr::Bin(l, op, r) => {
            let (l, r) = (eval(l, args)?, eval(r, args)?);
            if *op == BinOp::TrueDiv || matches!(l, GVal::Float(_)) || matches!(r, GVal::Float(_)) {
                return float_bin(&l, *op, &r);
            }
            if *op == BinOp::Pow {
                return int_pow(&l, &r);
            }
            let (Some(a), Some(b)) = (int_of(&l), int_of(&r)) else {
                return unsupported("arithmetic on non-integers".into());
            };
            let z = || {
                Err(Raise::new(
                    "ZeroDivisionError",
                    match op {
                        BinOp::Mod => "integer modulo by zero",
                        _ => "integer division or modulo by zero",
                    },
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
                BinOp::TrueDiv | BinOp::Pow => unreachable!("float_bin, int_pow"),
            }))
        }
        Expr::Cmp(l, op, r) => compare(&eval(l, args)?, *op, &eval(r, args)?),
        // `a < b < c`: each operand evaluated once, stopping at the first
        // comparison that is false (and returning it).
        Expr::Chain(operands, ops) => {
            let mut left = eval(&operands[0], args)?;
            let mut last = GVal::Bool(true);
            for (op, r) in ops.iter().zip(&operands[1..]) {
                let right = eval(r, args)?;
                last = compare(&left, *op, &right)?;
                if !truth(&last)? {
                    return Ok(last);
                }
                left = right;
            }
            Ok(last)
        }
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

/// `int ** int` (`PowByNatural`): a non-negative exponent gives an int;
/// a negative one a float (not modelled), as does a result past 4096 bits.
fn int_pow(l: &GVal, r: &GVal) -> Result<GVal, EvalStop> {
    let (Some(a), Some(b)) = (int_of(l), int_of(r)) else {
        return Err(Raise::Unsupported("`**` on non-integers".into()));
    };
    let Ok(e) = u32::try_from(&b) else {
        return Err(Raise::Unsupported(format!("`{a} ** {b}`")));
    };
    if a.bits().saturating_mul(u64::from(e)) > 4096 {
        return Err(Raise::Unsupported(format!("`{a} ** {b}`")));
    }
    Ok(GVal::Int(num_traits::Pow::pow(a, e)))
}

/// A call of one of [`FUNCS`] on evaluated arguments.
fn call(name: &str, a: &[GVal]) -> Result<GVal, EvalStop> {
    let is_num = |v: &GVal| matches!(v, GVal::Int(_) | GVal::Bool(_) | GVal::Float(_));
    match (name, a) {
        // torch.sym_max / sym_min on Python numbers: `builtins.max(a, b)`,
        // as a float when either is a float (torch/__init__.py).
        ("torch.sym_max" | "torch.sym_min", [x, y]) if is_num(x) && is_num(y) => {
            let v = pick(name == "torch.sym_max", x, y)?;
            if matches!(x, GVal::Float(_)) || matches!(y, GVal::Float(_)) {
                return Ok(GVal::Float(as_float(&v)?));
            }
            Ok(v)
        }
        // builtins.max / min over two or more numbers: the first extreme one.
        ("max" | "min", [first, rest @ ..]) if !rest.is_empty() && a.iter().all(is_num) => {
            let mut best = first.clone();
            for v in rest {
                best = pick(name == "max", &best, v)?;
            }
            Ok(best)
        }
        ("abs", [GVal::Float(f)]) => Ok(GVal::Float(f.abs())),
        ("abs", [v]) if int_of(v).is_some() => Ok(GVal::Int(int_of(v).unwrap_or_default().abs())),
        ("torch.sym_float", [v]) if is_num(v) => Ok(GVal::Float(as_float(v)?)),
        ("math.isnan", [v]) if is_num(v) => Ok(GVal::Bool(as_float(v)?.is_nan())),
        ("math.floor" | "math.ceil" | "math.trunc", [v]) if int_of(v).is_some() => {
            Ok(GVal::Int(int_of(v).unwrap_or_default()))
        }
        ("math.floor" | "math.ceil" | "math.trunc", [GVal::Float(f)]) => {
            if f.is_nan() {
                return Err(Raise::new(
                    "ValueError",
                    "cannot convert float NaN to integer",
                ));
            }
            if f.is_infinite() {
                return Err(Raise::new(
                    "OverflowError",
                    "cannot convert float infinity to integer",
                ));
            }
            let r = match name {
                "math.floor" => f.floor(),
                "math.ceil" => f.ceil(),
                _ => f.trunc(),
            };
            let i = num_traits::FromPrimitive::from_f64(r)
                .ok_or_else(|| Raise::Unsupported(format!("`{name}({f})`")))?;
            Ok(GVal::Int(i))
        }
        _ => Err(Raise::Unsupported(format!(
            "`{name}` on {} argument(s) {a:?}",
            a.len()
        ))),
    }
}

/// `builtins.max(x, y)` (`want_max`) or `min(x, y)`: `y` only when it
/// compares strictly past `x`, so a tie or a NaN keeps `x`.
fn pick(want_max: bool, x: &GVal, y: &GVal) -> Result<GVal, EvalStop> {
    let op = if want_max { CmpOp::Gt } else { CmpOp::Lt };
    Ok(if truth(&compare(y, op, x)?)? {
        y.clone()
    } else {
        x.clone()
    })
}

/// A number as CPython's `float(int)` gives it, while that is exact (below
/// 2**53); a larger int is unsupported.
fn as_float(v: &GVal) -> Result<f64, EvalStop> {
    if let GVal::Float(f) = v {
        return Ok(*f);
    }
    let small: Option<i64> = int_of(v).and_then(|i| (&i).try_into().ok());
    match small.filter(|s| s.unsigned_abs() < (1u64 << 53)) {
        Some(s) => Ok(s as f64),
        None => Err(Raise::Unsupported(format!("float arithmetic on {v:?}"))),
    }
}

/// `+ - * /` with a float operand, and `int / int` (`long_true_divide`:
/// correctly rounded, which one IEEE division of two exact doubles is).
fn float_bin(l: &GVal, op: BinOp, r: &GVal) -> Result<GVal, EvalStop> {
    let (a, b) = (as_float(l)?, as_float(r)?);
    let both_int = !matches!(l, GVal::Float(_)) && !matches!(r, GVal::Float(_));
    Ok(GVal::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::TrueDiv if b == 0.0 => {
            let message = if both_int {
                "division by zero"
            } else {
                "float division by zero"
            };
            return Err(Raise::new("ZeroDivisionError", message));
        }
        BinOp::TrueDiv => a / b,
        BinOp::FloorDiv | BinOp::Mod | BinOp::Pow => {
            return Err(Raise::Unsupported("`//`, `%` or `**` on a float".into()))
        }
    }))
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
                    _ => return Err(Raise::Unsupported("a huge int against a float".into())),
                }
            }
            _ => {
                return match op {
                    CmpOp::Eq => Ok(GVal::Bool(false)),
                    CmpOp::Ne => Ok(GVal::Bool(true)),
                    _ => Err(Raise::Unsupported(format!("ordering {a:?} against {b:?}"))),
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
    fn guard_names_are_sorted() {
        assert!(GUARD_NAMES.windows(2).all(|w| w[0] < w[1]));
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
