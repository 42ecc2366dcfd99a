//! Mirrors `sympy.sympify(expr_str, locals=...)` as
//! `GraphModuleDeserializer._parse_sym_expr` calls it (sympy/core/sympify.py,
//! sympy/parsing/sympy_parser.py `parse_expr`), as far as the loader
//! decides on it: the text without its newlines (`a.replace('\n', '')`),
//! Python's `tokenize` (an open bracket at the end is `TokenError: ('EOF in
//! multi-line statement', (2, 0))`), the `eval`-mode grammar (`SyntaxError:
//! invalid syntax`), both wrapped in `SympifyError`, and the few whole
//! expressions whose value the loader then trips on (`True`, `oo`, an
//! integer literal).
//!
//! A text whose fate is not modelled (CPython's specialized syntax
//! messages, unterminated strings, keywords) is `Parsed::Other`: the loader
//! reads on, as it did before this module.

use num_bigint::BigInt;

/// What `sympify` made of a text it could parse.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// The Python constant `True`, `False` or `None` (not a sympy object:
    /// `_process_sym_expr` then reads `.is_Integer` of it).
    PyConst(&'static str),
    /// An integer literal (`sympy.Integer`).
    Int(BigInt),
    /// `oo`, `nan` or `zoo` (`1/0`): `int()` of it is
    /// `TypeError: Cannot convert {name} to int` (`zoo` says `complex`).
    NotInt(&'static str),
    /// `lambda: expr`, a `Lambda((), expr)`: `_process_sym_expr` walks it,
    /// and the ShapeEnv's first evaluation of it looks its `Tuple` argument
    /// up in a handler table (`KeyError: <class 'sympy.core.containers.Tuple'>`).
    Lambda,
    /// Anything else, or a text this module does not decide on.
    Other,
}

/// What evaluating a [`Parsed::Lambda`] raises.
pub const LAMBDA_KEY_ERROR: &str = "<class 'sympy.core.containers.Tuple'>";

/// A Python exception: type and message.
pub type PyErr = (&'static str, String);

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Number(String),
    /// The literal as written, quotes included.
    Str(String),
    Op(&'static str),
    /// A character Python's tokenizer reports as `ERRORTOKEN` (`$`, `?`).
    Error,
}

const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", ":=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|",
    "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=", "!",
];

enum Lexed {
    Tokens(Vec<Tok>),
    /// `TokenError` of `tokenize.generate_tokens`.
    TokenError(&'static str),
    /// Not modelled.
    Unknown,
}

fn lex(s: &str) -> Lexed {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' || c == b'\x0c' {
            i += 1;
            continue;
        }
        if c == b'#' || c == b'\\' || c == b'\r' {
            return Lexed::Unknown;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        if ch.is_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() {
                let ch = s[i..].chars().next().unwrap_or(' ');
                if ch.is_alphanumeric() || ch == '_' {
                    i += ch.len_utf8();
                } else {
                    break;
                }
            }
            let name = &s[start..i];
            if i < b.len() && (b[i] == b'\'' || b[i] == b'"') {
                // A string prefix (`r'..'`, `b".."`) is not modelled.
                return Lexed::Unknown;
            }
            out.push(Tok::Name(name.to_string()));
            continue;
        }
        if !c.is_ascii() {
            return Lexed::Unknown;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'.' || b[i].is_ascii_alphabetic()) {
                // Floats, exponents, hex and imaginary literals: not modelled.
                return Lexed::Unknown;
            }
            out.push(Tok::Number(s[start..i].replace('_', "")));
            continue;
        }
        if c == b'\'' || c == b'"' {
            let start = i;
            i += 1;
            loop {
                match b.get(i) {
                    None => return Lexed::Unknown,
                    Some(b'\\') => i += 2,
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            if b[start..i].len() >= 3 && b[start..i].starts_with(&[c, c]) && b.get(i) == Some(&c) {
                // A triple-quoted string.
                return Lexed::Unknown;
            }
            out.push(Tok::Str(s[start..i].to_string()));
            continue;
        }
        if c == b'$' || c == b'?' || c == b'`' {
            out.push(Tok::Error);
            i += 1;
            continue;
        }
        // Longest first, as the list is ordered; the first byte rules most
        // operators out before a comparison.
        let Some(op) = OPS
            .iter()
            .find(|op| op.as_bytes()[0] == c && b[i..].starts_with(op.as_bytes()))
        else {
            return Lexed::Unknown;
        };
        match *op {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
        out.push(Tok::Op(op));
        i += op.len();
    }
    if depth > 0 {
        return Lexed::TokenError("('EOF in multi-line statement', (2, 0))");
    }
    Lexed::Tokens(out)
}

/// Why the grammar walk stopped.
enum Stop {
    /// Plainly `invalid syntax`: a token no expression can continue with,
    /// or the end where an operand must come.
    Invalid,
    /// A form this module does not model.
    Unknown,
}

struct P<'a> {
    t: &'a [Tok],
    i: usize,
    depth: usize,
}

const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }

    fn op(&self, o: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(x)) if *x == o)
    }

    fn name(&self, n: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(x)) if x == n)
    }

    /// `or_test` and below; comparisons, `not`, `and`, `or` included.
    fn expr(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > 100 {
            return Err(Stop::Unknown);
        }
        self.not_test()?;
        while self.name("and") || self.name("or") {
            self.i += 1;
            self.not_test()?;
        }
        self.depth -= 1;
        Ok(())
    }

    fn not_test(&mut self) -> Result<(), Stop> {
        while self.name("not") {
            self.i += 1;
        }
        self.binary()?;
        loop {
            let cmp = matches!(
                self.peek(),
                Some(Tok::Op("<" | ">" | "<=" | ">=" | "==" | "!="))
            );
            if cmp {
                self.i += 1;
            } else if self.name("in") || self.name("is") {
                return Err(Stop::Unknown);
            } else {
                return Ok(());
            }
            self.binary()?;
        }
    }

    fn binary(&mut self) -> Result<(), Stop> {
        self.unary()?;
        while let Some(Tok::Op(
            "+" | "-" | "*" | "/" | "//" | "%" | "@" | "**" | "<<" | ">>" | "&" | "|" | "^",
        )) = self.peek()
        {
            self.i += 1;
            self.unary()?;
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<(), Stop> {
        while let Some(Tok::Op("+" | "-" | "~")) = self.peek() {
            self.i += 1;
        }
        self.atom()?;
        // Trailers: calls, subscripts, attributes; `!` is factorial_notation.
        loop {
            if self.op("(") {
                self.i += 1;
                self.args(")")?;
            } else if self.op("[") {
                return Err(Stop::Unknown);
            } else if self.op(".") {
                self.i += 1;
                match self.peek() {
                    Some(Tok::Name(n)) if !KEYWORDS.contains(&n.as_str()) => self.i += 1,
                    _ => return Err(Stop::Unknown),
                }
            } else if self.op("!") {
                return Err(Stop::Unknown);
            } else {
                return Ok(());
            }
        }
    }

    /// Call arguments up to `close`: expressions and `name=expr`.
    fn args(&mut self, close: &str) -> Result<(), Stop> {
        loop {
            if self.op(close) {
                self.i += 1;
                return Ok(());
            }
            if let (Some(Tok::Name(_)), Some(Tok::Op("="))) =
                (self.t.get(self.i), self.t.get(self.i + 1))
            {
                self.i += 2;
            }
            if self.op("*") || self.op("**") {
                return Err(Stop::Unknown);
            }
            self.expr()?;
            if self.op(",") {
                self.i += 1;
            } else if self.op(close) {
                self.i += 1;
                return Ok(());
            } else {
                return Err(Stop::Unknown);
            }
        }
    }

    fn atom(&mut self) -> Result<(), Stop> {
        match self.peek().cloned() {
            Some(Tok::Name(n)) => {
                if KEYWORDS.contains(&n.as_str()) {
                    return Err(Stop::Unknown);
                }
                self.i += 1;
                Ok(())
            }
            Some(Tok::Number(_)) | Some(Tok::Str(_)) => {
                self.i += 1;
                while matches!(self.peek(), Some(Tok::Str(_))) {
                    self.i += 1;
                }
                Ok(())
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                self.args(")")
            }
            // The end, a binary operator or `;` where an operand must be.
            None => Err(Stop::Invalid),
            Some(Tok::Op(
                "*" | "/" | "//" | "%" | "@" | "**" | "<<" | ">>" | "&" | "|" | "^" | ";" | ")"
                | "<" | ">" | "<=" | ">=" | "==" | "!=",
            )) => {
                if self.op(")") {
                    Err(Stop::Unknown)
                } else {
                    Err(Stop::Invalid)
                }
            }
            Some(Tok::Error) => Err(Stop::Invalid),
            Some(_) => Err(Stop::Unknown),
        }
    }
}

fn sympify_error(text: &str, base: &str, message: &str) -> PyErr {
    (
        "SympifyError",
        format!(
            "Sympify of expression 'could not parse {}' failed, because of exception being raised:\n{base}: {message}",
            torchspec_pyval::str_repr(text)
        ),
    )
}

/// What `sympify` made of a text, with the names of its free symbols when
/// they are plain to see (`None` otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Sympified {
    /// What the text parsed to.
    pub value: Parsed,
    /// The names of its free symbols (`expr.free_symbols`), when plain to see.
    pub free_symbols: Option<Vec<String>>,
    /// The name, when the whole text is one symbol (`s0`,
    /// `Symbol('s0', integer=True)`).
    pub bare: Option<String>,
    /// The symbols made with `positive=True` in the text.
    pub positive: Vec<String>,
    /// The text is `symbol + N` (either order) with an integer `N >= 1`.
    pub plus_positive_int: bool,
    /// The text is `Max(...)` with a positive integer literal among its
    /// arguments, possibly times or plus a positive integer: sympy proves
    /// it positive (`Max._eval_is_positive`: any argument), whatever its
    /// other symbols are.
    pub positive_max: bool,
}

impl Sympified {
    /// A value whose symbols this module does not read off the text.
    fn opaque(value: Parsed) -> Sympified {
        Sympified {
            value,
            free_symbols: None,
            bare: None,
            positive: Vec::new(),
            plus_positive_int: false,
            positive_max: false,
        }
    }
}

/// Names `from sympy import *` or the builtins give a meaning (not a
/// `Symbol` for `auto_symbol`), among those a hand-edited text may hold.
const SYMPY_NAMES: &[&str] = &[
    "True", "False", "None", "oo", "nan", "zoo", "pi", "E", "I", "S", "N", "O", "Q", "C",
];

/// `sympy.sympify(expr_str, locals=...)`; `known(name)` says whether
/// `name` is in `locals` (a symbol parsed before: `symbol_name_to_symbol`).
pub fn sympify_in(expr_str: &str, known: &dyn Fn(&str) -> bool) -> Result<Sympified, PyErr> {
    // `parse_expr` refuses its locals before it reads the text: a
    // `Symbol('')` parsed before is cached under its `str`, "".
    if known("") {
        return Err(("ValueError", "cannot use \"\" in local_dict".to_string()));
    }
    let value = sympify(expr_str)?;
    let text = expr_str.replace('\n', "");
    let Lexed::Tokens(tokens) = lex(&text) else {
        return Ok(Sympified::opaque(value));
    };
    if value == Parsed::Other {
        if let Some(e) = failing_call(&tokens, known) {
            return Err(e);
        }
    }
    if value == Parsed::Lambda {
        return Ok(Sympified::opaque(value));
    }
    let free_symbols = free_symbols(&tokens);
    let one_symbol = match tokens.as_slice() {
        [Tok::Name(_)] => true,
        [Tok::Name(f), Tok::Op("("), Tok::Str(_), rest @ ..] => {
            f == "Symbol" && rest.iter().filter(|t| **t == Tok::Op("(")).count() == 0
        }
        _ => false,
    };
    let bare = match (&free_symbols, one_symbol) {
        (Some(names), true) if names.len() == 1 => Some(names[0].clone()),
        _ => None,
    };
    let mut positive = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if let (Tok::Name(f), Some(Tok::Op("(")), Some(Tok::Str(lit))) =
            (t, tokens.get(i + 1), tokens.get(i + 2))
        {
            if f != "Symbol" {
                continue;
            }
            let mut j = i + 3;
            while let (
                Some(Tok::Op(",")),
                Some(Tok::Name(k)),
                Some(Tok::Op("=")),
                Some(Tok::Name(v)),
            ) = (
                tokens.get(j),
                tokens.get(j + 1),
                tokens.get(j + 2),
                tokens.get(j + 3),
            ) {
                if k == "positive" && v == "True" {
                    positive.push(lit.get(1..lit.len() - 1).unwrap_or_default().to_string());
                }
                j += 4;
            }
        }
    }
    // One symbol (a name or a `Symbol(...)` call without nested calls),
    // `+`, and a positive integer literal.
    let symbol_len = |ts: &[Tok]| match ts {
        [Tok::Name(_), ..] if !matches!(ts.get(1), Some(Tok::Op("("))) => Some(1),
        [Tok::Name(f), Tok::Op("("), rest @ ..] if f == "Symbol" => {
            rest.iter().position(|t| *t == Tok::Op(")")).map(|p| p + 3)
        }
        _ => None,
    };
    let positive_int = |t: &Tok| matches!(t, Tok::Number(n) if n.bytes().any(|c| c != b'0'));
    let plus_positive_int = match symbol_len(&tokens) {
        Some(k) => {
            matches!(&tokens[k..], [Tok::Op("+"), n] if positive_int(n))
        }
        None => match tokens.as_slice() {
            [n, Tok::Op("+"), rest @ ..] if positive_int(n) => symbol_len(rest) == Some(rest.len()),
            _ => false,
        },
    };
    let positive_max = positive_max(&tokens);
    Ok(Sympified {
        value,
        free_symbols,
        bare,
        positive,
        plus_positive_int,
        positive_max,
    })
}

/// [`Sympified::positive_max`]: `Max(.., N, ..)`, `Max(..) + N`, `N*Max(..)`
/// or `Max(..)*N` with integer literals `N >= 1`.
fn positive_max(tokens: &[Tok]) -> bool {
    let positive_int = |t: &Tok| matches!(t, Tok::Number(n) if n.bytes().any(|c| c != b'0'));
    let core = match tokens {
        [n, Tok::Op("*"), rest @ ..] if positive_int(n) => rest,
        [rest @ .., Tok::Op("*" | "+"), n] if positive_int(n) => rest,
        _ => tokens,
    };
    let [Tok::Name(f), Tok::Op("("), args @ .., Tok::Op(")")] = core else {
        return false;
    };
    if f != "Max" {
        return false;
    }
    // The top-level arguments; the first `(` must close at the end.
    let mut depth = 0usize;
    let mut start = 0;
    let mut found = false;
    for (i, t) in args.iter().enumerate() {
        match t {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Tok::Op(",") if depth == 0 => {
                found |= matches!(&args[start..i], [n] if positive_int(n));
                start = i + 1;
            }
            _ => {}
        }
    }
    found |= matches!(&args[start..], [n] if positive_int(n));
    depth == 0 && found
}

/// The names of the free symbols: `Symbol('name', ...)` and the bare names
/// `auto_symbol` turns into symbols.
fn free_symbols(tokens: &[Tok]) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Tok::Name(n) = t else { continue };
        let next = tokens.get(i + 1);
        let prev = i.checked_sub(1).and_then(|j| tokens.get(j));
        if matches!(next, Some(Tok::Op("("))) {
            if n == "Symbol" {
                match (tokens.get(i + 2), tokens.get(i + 3)) {
                    (Some(Tok::Str(lit)), Some(Tok::Op("," | ")"))) => {
                        let name = lit.get(1..lit.len() - 1)?;
                        if name.contains('\\') {
                            return None;
                        }
                        out.push(name.to_string());
                    }
                    _ => return None,
                }
            }
            continue;
        }
        if matches!(next, Some(Tok::Op("="))) || matches!(prev, Some(Tok::Op("."))) {
            continue;
        }
        if SYMPY_NAMES.contains(&n.as_str()) {
            continue;
        }
        let plain = n
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !plain {
            return None;
        }
        out.push(n.clone());
    }
    out.sort();
    out.dedup();
    Some(out)
}

/// `untokenize` of the transformed tokens (`auto_symbol`, `auto_number`),
/// as `parse_expr`'s `ValueError` shows it: a name or number is followed by
/// a space.
fn transformed_code(tokens: &[Tok], known: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1);
        let is_string = matches!(t, Tok::Str(_));
        match t {
            Tok::Name(n) => {
                let call = matches!(next, Some(Tok::Op("(" | "=")));
                if call || SYMPY_NAMES.contains(&n.as_str()) || known(n) {
                    out.push_str(n);
                    out.push(' ');
                } else {
                    out.push_str("Symbol (");
                    out.push_str(&torchspec_pyval::str_repr(n));
                    out.push_str(" )");
                }
            }
            Tok::Number(n) => {
                out.push_str("Integer (");
                out.push_str(n);
                out.push_str(" )");
            }
            Tok::Str(lit) => {
                if prev_string {
                    out.push(' ');
                }
                out.push_str(lit);
            }
            Tok::Op(o) => out.push_str(o),
            Tok::Error => {}
        }
        prev_string = is_string;
    }
    out
}

/// A text that is one call `Symbol(x, ...)` whose name is not a string, or
/// `Integer('...')` of a string that is no int: the exception `eval` of the
/// transformed code raises, which `parse_expr` re-raises `from
/// ValueError(f"Error from parse_expr with transformed code: {code!r}")`
/// (the cause is what is reported).
fn failing_call(tokens: &[Tok], known: &dyn Fn(&str) -> bool) -> Option<PyErr> {
    let (Some(Tok::Name(f)), Some(Tok::Op("(")), Some(Tok::Op(")"))) =
        (tokens.first(), tokens.get(1), tokens.last())
    else {
        return None;
    };
    // One call: the first `(` closes at the end.
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate().skip(1) {
        match t {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => {
                depth -= 1;
                if depth == 0 && i != tokens.len() - 1 {
                    return None;
                }
            }
            _ => {}
        }
    }
    let first = tokens.get(2)?;
    let first_ends = matches!(tokens.get(3), Some(Tok::Op("," | ")")));
    let fails = match (f.as_str(), first) {
        ("Symbol", Tok::Name(_) | Tok::Number(_)) => first_ends,
        ("Integer", Tok::Str(lit)) if first_ends && tokens.len() == 4 => {
            let body = lit.get(1..lit.len() - 1)?;
            !body.contains('\\') && !is_int_literal(&body.replace(' ', ""))
        }
        _ => false,
    };
    fails.then(|| {
        (
            "ValueError",
            format!(
                "Error from parse_expr with transformed code: {}",
                torchspec_pyval::str_repr(&transformed_code(tokens, known))
            ),
        )
    })
}

/// The value of a constant integer expression sympy evaluates to an
/// `Integer`: decimal literals, `Integer(n)`, parentheses, unary `+`/`-`,
/// binary `+`, `-` and `*` (anything else: not decided here).
fn const_int(tokens: &[Tok]) -> Option<BigInt> {
    struct C<'t> {
        t: &'t [Tok],
        i: usize,
        depth: usize,
    }
    impl C<'_> {
        fn peek(&self) -> Option<&Tok> {
            self.t.get(self.i)
        }
        fn op(&mut self, o: &str) -> bool {
            let hit = matches!(self.peek(), Some(Tok::Op(p)) if *p == o);
            self.i += usize::from(hit);
            hit
        }
        fn expr(&mut self) -> Option<BigInt> {
            let mut v = self.term()?;
            loop {
                if self.op("+") {
                    v += self.term()?;
                } else if self.op("-") {
                    v -= self.term()?;
                } else {
                    return Some(v);
                }
            }
        }
        fn term(&mut self) -> Option<BigInt> {
            let mut v = self.unary()?;
            while self.op("*") {
                v *= self.unary()?;
            }
            Some(v)
        }
        fn unary(&mut self) -> Option<BigInt> {
            self.depth += 1;
            if self.depth > 200 {
                return None;
            }
            let v = if self.op("-") {
                self.unary().map(|v| -v)
            } else if self.op("+") {
                self.unary()
            } else {
                self.atom()
            };
            self.depth -= 1;
            v
        }
        fn atom(&mut self) -> Option<BigInt> {
            match self.peek()?.clone() {
                Tok::Number(n) => {
                    self.i += 1;
                    n.parse().ok()
                }
                Tok::Op("(") => {
                    self.i += 1;
                    let v = self.expr()?;
                    self.op(")").then_some(v)
                }
                Tok::Name(n) if n == "Integer" => {
                    self.i += 1;
                    if !self.op("(") {
                        return None;
                    }
                    let neg = self.op("-");
                    let v: BigInt = match self.peek()? {
                        Tok::Number(n) => n.parse().ok()?,
                        _ => return None,
                    };
                    self.i += 1;
                    self.op(")").then_some(if neg { -v } else { v })
                }
                _ => None,
            }
        }
    }
    let mut c = C {
        t: tokens,
        i: 0,
        depth: 0,
    };
    let v = c.expr()?;
    (c.i == tokens.len()).then_some(v)
}

/// Whether CPython's `int(s)` reads `s` in base 10.
fn is_int_literal(s: &str) -> bool {
    let t = s.trim();
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let b = body.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_digit()
        && b[b.len() - 1].is_ascii_digit()
        && b.iter()
            .enumerate()
            .all(|(i, &c)| c.is_ascii_digit() || (c == b'_' && b[i + 1] != b'_'))
}

/// `SympifyError` of a `SyntaxError: invalid syntax` on `line`.
fn syntax_error(text: &str, line: u32) -> PyErr {
    // CPython's `SyntaxError.__str__`: `"%S (%U, line %ld)"`.
    let msg = "invalid syntax";
    let file = "<string>";
    sympify_error(text, "SyntaxError", &format!("{msg} ({file}, line {line})"))
}

/// `sympy.sympify(expr_str, locals=...)` as far as modelled.
pub fn sympify(expr_str: &str) -> Result<Parsed, PyErr> {
    let text = expr_str.replace('\n', "");
    let tokens = match lex(&text) {
        Lexed::Tokens(t) => t,
        Lexed::TokenError(m) => return Err(sympify_error(&text, "TokenError", m)),
        Lexed::Unknown => return Ok(Parsed::Other),
    };
    if tokens.is_empty() {
        return Err(syntax_error(&text, 0));
    }
    if tokens[0] == Tok::Name("lambda".into()) {
        // With parameters, `_process_sym_expr` of the `Lambda` fails.
        return match tokens.get(1) {
            Some(Tok::Op(":")) if tokens.len() > 2 => Ok(Parsed::Lambda),
            _ if tokens.contains(&Tok::Op(":")) => {
                Err(("IndexError", "tuple index out of range".to_string()))
            }
            _ => Ok(Parsed::Other),
        };
    }
    let mut p = P {
        t: &tokens,
        i: 0,
        depth: 0,
    };
    match p.expr() {
        Ok(()) => {}
        Err(Stop::Invalid) => return Err(syntax_error(&text, 1)),
        Err(Stop::Unknown) => return Ok(Parsed::Other),
    }
    match tokens.get(p.i) {
        None => {}
        // An operand or `;` where the expression has ended.
        Some(Tok::Op(";") | Tok::Error | Tok::Name(_) | Tok::Number(_)) => {
            return Err(syntax_error(&text, 1))
        }
        Some(_) => return Ok(Parsed::Other),
    }
    // The whole expression, without redundant parentheses.
    let mut core: &[Tok] = &tokens;
    while core.len() >= 2 && core[0] == Tok::Op("(") && core[core.len() - 1] == Tok::Op(")") {
        core = &core[1..core.len() - 1];
    }
    Ok(match core {
        [Tok::Name(n)] => match n.as_str() {
            "True" => Parsed::PyConst("bool"),
            "False" => Parsed::PyConst("bool"),
            "None" => Parsed::PyConst("NoneType"),
            "oo" => Parsed::NotInt("oo"),
            "nan" => Parsed::NotInt("nan"),
            "zoo" => Parsed::NotInt("complex"),
            _ => Parsed::Other,
        },
        [Tok::Number(n)] => n.parse().map_or(Parsed::Other, Parsed::Int),
        // `-1`, `2*3 - 1`, `Integer(-1)`: sympy evaluates integer arithmetic
        // to an `Integer` (`NegativeOne` is one).
        _ if const_int(core).is_some() => const_int(core).map_or(Parsed::Other, Parsed::Int),
        [Tok::Number(a), Tok::Op("/"), Tok::Number(z)] if z.bytes().all(|c| c == b'0') => {
            if a.bytes().all(|c| c == b'0') {
                Parsed::NotInt("nan")
            } else {
                Parsed::NotInt("complex")
            }
        }
        _ => Parsed::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> String {
        match sympify(s) {
            Ok(p) => format!("{p:?}"),
            Err((t, m)) => format!("{t}: {m}"),
        }
    }

    #[test]
    fn texts_pytorch_writes_parse() {
        for s in [
            "Symbol('s77', positive=True, integer=True)",
            "Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Integer(1))",
            "GreaterThan(Symbol('u0', integer=True), Integer(0))",
            "s0\n+1",
            "s0\t+ 1",
        ] {
            assert_eq!(kind(s), "Other", "{s}");
        }
    }

    #[test]
    fn integer_arithmetic_is_an_integer() {
        for (s, v) in [
            ("-1", "Int(-1)"),
            ("- 1", "Int(-1)"),
            ("(-1)", "Int(-1)"),
            ("--1", "Int(1)"),
            ("Integer(-1)", "Int(-1)"),
            ("-Integer(1)", "Int(-1)"),
            ("2*3 - 1", "Int(5)"),
            ("1-2*(3+1)", "Int(-7)"),
        ] {
            assert_eq!(kind(s), v, "{s}");
        }
        for s in ["3/2", "-oo", "2**3", "-s0", "Integer(1) + s0"] {
            assert!(!kind(s).starts_with("Int("), "{s}: {}", kind(s));
        }
    }

    #[test]
    fn a_max_with_a_positive_literal_is_positive() {
        let positive = |s: &str| sympify_in(s, &|_| false).map(|p| p.positive_max);
        for s in [
            "Max(2, s0)",
            "Max(s0, 1)",
            "2*Max(3, s0, s1)",
            "Max(2, s0) + 1",
            "Max(s0*2, 5)",
        ] {
            assert_eq!(positive(s), Ok(true), "{s}");
        }
        for s in [
            "Max(0, s0)",
            "Min(2, s0)",
            "Max(-1, s0)",
            "Max(2, s0) - 1",
            "s0 + 2",
            "Max(s0)",
        ] {
            assert_eq!(positive(s), Ok(false), "{s}");
        }
    }
}
