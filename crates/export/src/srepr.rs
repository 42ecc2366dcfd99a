//! Reads the sympy `srepr` strings a serialized program stores
//! (`Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Integer(1))`)
//! far enough for the loader: `str()` of every subexpression, which is the
//! key `GraphModuleDeserializer._parse_sym_expr` caches in
//! `symbol_name_to_symbol` and range constraints are filtered by.
//!
//! `srepr` lists an `Add`'s terms in the order `str()` prints them, so
//! printing follows the arguments. Functions beyond `Add`/`Mul`/`Pow`
//! print as `Name(args)`.

mod minmax;

pub use minmax::{min_max_simplified, Simplified};

/// A parsed `srepr` node.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Call(String, Vec<Node>),
    Str(String),
    Int(String),
    /// `name=value`, the value as written (`positive=True`).
    Kw(String, String),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn node(&mut self) -> Option<Node> {
        self.depth += 1;
        if self.depth > 200 {
            return None;
        }
        self.skip_ws();
        let c = *self.s.get(self.i)?;
        let out = if c == b'\'' || c == b'"' {
            let start = self.i + 1;
            let end = start + self.s[start..].iter().position(|&b| b == c)?;
            self.i = end + 1;
            Node::Str(String::from_utf8_lossy(&self.s[start..end]).into_owned())
        } else if c == b'-' || c.is_ascii_digit() {
            let start = self.i;
            self.i += 1;
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'.')
            {
                self.i += 1;
            }
            Node::Int(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
        } else {
            let start = self.i;
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
            {
                self.i += 1;
            }
            let name = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
            if name.is_empty() {
                return None;
            }
            self.skip_ws();
            match self.s.get(self.i) {
                Some(b'(') => {
                    self.i += 1;
                    let mut args = Vec::new();
                    loop {
                        self.skip_ws();
                        if self.s.get(self.i) == Some(&b')') {
                            self.i += 1;
                            break;
                        }
                        args.push(self.node()?);
                        self.skip_ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b')') => {
                                self.i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                    Node::Call(name, args)
                }
                Some(b'=') => {
                    self.i += 1;
                    self.skip_ws();
                    let at = self.i;
                    self.node()?;
                    let value = String::from_utf8_lossy(&self.s[at..self.i])
                        .trim_end()
                        .to_string();
                    Node::Kw(name, value)
                }
                _ => Node::Call(name, Vec::new()),
            }
        };
        self.depth -= 1;
        Some(out)
    }
}

fn positional(args: &[Node]) -> Vec<&Node> {
    args.iter().filter(|a| !matches!(a, Node::Kw(..))).collect()
}

/// Whether a term prints with a leading minus (so `Add` writes ` - `).
fn negative(n: &Node) -> bool {
    match n {
        Node::Call(f, args) if f == "Integer" => {
            matches!(positional(args).first(), Some(Node::Int(i)) if i.starts_with('-'))
        }
        Node::Call(f, args) if f == "Mul" => positional(args).first().is_some_and(|a| negative(a)),
        _ => false,
    }
}

fn print(n: &Node) -> Option<String> {
    match n {
        Node::Int(i) => Some(i.clone()),
        Node::Str(s) => Some(s.clone()),
        Node::Kw(..) => None,
        Node::Call(f, args) => {
            let args = positional(args);
            match f.as_str() {
                "Symbol" | "Dummy" => match args.first() {
                    Some(Node::Str(s)) => Some(s.clone()),
                    _ => None,
                },
                "Integer" => match args.first() {
                    Some(Node::Int(i)) => Some(i.clone()),
                    _ => None,
                },
                "Add" => {
                    let mut out = String::new();
                    for (k, t) in args.iter().enumerate() {
                        let s = print(t)?;
                        if k == 0 {
                            out.push_str(&s);
                        } else if negative(t) {
                            out.push_str(" - ");
                            out.push_str(s.strip_prefix('-').unwrap_or(&s));
                        } else {
                            out.push_str(" + ");
                            out.push_str(&s);
                        }
                    }
                    Some(out)
                }
                "Mul" => {
                    let mut factors = Vec::new();
                    let mut sign = "";
                    for (k, a) in args.iter().enumerate() {
                        let s = print(a)?;
                        if k == 0 && s == "-1" && args.len() > 1 {
                            sign = "-";
                            continue;
                        }
                        let is_add = matches!(a, Node::Call(g, _) if g == "Add");
                        factors.push(if is_add { format!("({s})") } else { s });
                    }
                    Some(format!("{sign}{}", factors.join("*")))
                }
                "Pow" if args.len() == 2 => {
                    let base = print(args[0])?;
                    let exp = print(args[1])?;
                    let wrap = |a: &Node, s: String| match a {
                        Node::Call(g, _) if g == "Add" || g == "Mul" => format!("({s})"),
                        _ => s,
                    };
                    Some(format!("{}**{}", wrap(args[0], base), wrap(args[1], exp)))
                }
                _ => {
                    let parts = args.iter().map(|a| print(a)).collect::<Option<Vec<_>>>()?;
                    Some(format!("{f}({})", parts.join(", ")))
                }
            }
        }
    }
}

fn walk(n: &Node, out: &mut Vec<String>) {
    if let Node::Call(f, args) = n {
        if matches!(
            f.as_str(),
            "Integer" | "Float" | "Rational" | "BooleanTrue" | "BooleanFalse" | "true" | "false"
        ) {
            return;
        }
        if f != "Symbol" {
            for a in args {
                walk(a, out);
            }
        }
        if let Some(s) = print(n) {
            out.push(s);
        }
    }
}

/// `str()` of the expression and of each subexpression that is not a number
/// (the keys `_parse_sym_expr` caches); empty when the text does not parse.
pub fn subexpression_strs(srepr: &str) -> Vec<String> {
    let mut p = Parser {
        s: srepr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    if let Some(n) = p.node() {
        walk(&n, &mut out);
    }
    out
}

/// What an `srepr` text is, read for a user of the program rather than
/// the loader: see [`read_expr`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadExpr {
    /// An integer literal (`Integer(4)`), as its decimal digits.
    Int(String),
    /// One symbol (`Symbol('s77', positive=True, integer=True)`): its name.
    Symbol(String),
    /// Any other expression: `str()` of it (`2*s77 + 1`) and the names of
    /// its free symbols in order of first appearance.
    Expr(String, Vec<String>),
}

/// [`ReadExpr`] of an `srepr` text; `None` when it does not parse.
pub fn read_expr(srepr: &str) -> Option<ReadExpr> {
    fn symbols(n: &Node, out: &mut Vec<String>) {
        if let Node::Call(f, args) = n {
            if f == "Symbol" || f == "Dummy" {
                if let Some(Node::Str(s)) = positional(args).first() {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
                return;
            }
            args.iter().for_each(|a| symbols(a, out));
        }
    }
    let mut p = Parser {
        s: srepr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let n = p.node()?;
    p.skip_ws();
    if p.i != p.s.len() {
        return None;
    }
    Some(match &n {
        Node::Call(f, args) if f == "Integer" => match positional(args).first() {
            Some(Node::Int(i)) => ReadExpr::Int(i.clone()),
            _ => return None,
        },
        Node::Call(f, args) if f == "Symbol" => match positional(args).first() {
            Some(Node::Str(s)) => ReadExpr::Symbol(s.clone()),
            _ => return None,
        },
        _ => {
            let mut names = Vec::new();
            symbols(&n, &mut names);
            ReadExpr::Expr(print(&n)?, names)
        }
    })
}

/// The name of a bare symbol (`Symbol('u0', integer=True)` → `u0`); `None`
/// for any other expression.
pub fn bare_symbol(srepr: &str) -> Option<String> {
    let mut p = Parser {
        s: srepr.as_bytes(),
        i: 0,
        depth: 0,
    };
    match p.node()? {
        Node::Call(f, args) if f == "Symbol" => match positional(&args).first() {
            Some(Node::Str(name)) => Some(name.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `a*s + b` with integers `a != 0`, `b` and one symbol `s` (the form of
/// every derived `Dim`): `(a, s, b)`; `None` for any other expression.
pub fn linear_form(srepr: &str) -> Option<(num_bigint::BigInt, String, num_bigint::BigInt)> {
    use num_bigint::BigInt;
    let mut p = Parser {
        s: srepr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let int = |n: &Node| match n {
        Node::Call(f, a) if f == "Integer" => match positional(a).first() {
            Some(Node::Int(i)) => i.parse::<BigInt>().ok(),
            _ => None,
        },
        _ => None,
    };
    let sym = |n: &Node| match n {
        Node::Call(f, a) if f == "Symbol" => match positional(a).first() {
            Some(Node::Str(s)) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    };
    let term = |n: &Node| match n {
        Node::Call(f, a) if f == "Mul" => match positional(a)[..] {
            [k, x] => Some((int(k)?, sym(x)?)),
            _ => None,
        },
        other => Some((BigInt::from(1), sym(other)?)),
    };
    let n = p.node()?;
    let (a, s, b) = match &n {
        Node::Call(f, args) if f == "Add" => match positional(args)[..] {
            [x, y] => match (int(x), int(y)) {
                (Some(b), None) => term(y).map(|(a, s)| (a, s, b))?,
                (None, Some(b)) => term(x).map(|(a, s)| (a, s, b))?,
                _ => return None,
            },
            _ => return None,
        },
        other => term(other).map(|(a, s)| (a, s, BigInt::from(0)))?,
    };
    (a != BigInt::from(0)).then_some((a, s, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_sympy_str() {
        let s = |e: &str| subexpression_strs(e).pop().unwrap_or_default();
        assert_eq!(
            s("Add(Integer(5), Mul(Integer(-1), Symbol('s77', positive=True, integer=True)))"),
            "5 - s77"
        );
        assert_eq!(
            s("Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Integer(-3))"),
            "2*s77 - 3"
        );
        assert_eq!(s("Add(Mul(Integer(-1), Integer(2), Symbol('s77', positive=True, integer=True)), Integer(-3))"), "-2*s77 - 3");
        assert_eq!(s("Add(Symbol('s0', positive=True, integer=True), Symbol('s77', positive=True, integer=True), Integer(1))"), "s0 + s77 + 1");
        assert_eq!(
            s("Pow(Symbol('s77', positive=True, integer=True), Integer(2))"),
            "s77**2"
        );
        assert_eq!(
            subexpression_strs(
                "Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Integer(1))"
            ),
            vec!["s77", "2*s77", "2*s77 + 1"]
        );
    }

    #[test]
    fn reads_linear_forms() {
        let l = |e: &str| linear_form(e).map(|(a, s, b)| (a.to_string(), s, b.to_string()));
        let sym = "Symbol('s40', positive=True, integer=True)";
        let t = |a: &str, b: &str| Some((a.to_string(), "s40".to_string(), b.to_string()));
        assert_eq!(l(sym), t("1", "0"));
        assert_eq!(l(&format!("Mul(Integer(3), {sym})")), t("3", "0"));
        assert_eq!(
            l(&format!("Add(Mul(Integer(3), {sym}), Integer(1))")),
            t("3", "1")
        );
        assert_eq!(
            l(&format!("Add(Integer(-1), Mul(Integer(2), {sym}))")),
            t("2", "-1")
        );
        assert_eq!(l(&format!("Add({sym}, Integer(4))")), t("1", "4"));
        assert_eq!(l(&format!("Pow({sym}, Integer(2))")), None);
        assert_eq!(l(&format!("Add({sym}, {sym})")), None);
        assert_eq!(l("Integer(3)"), None);
    }
}

/// A term of the sum in a comparison with zero.
#[derive(Clone, Debug, PartialEq)]
pub enum SumTerm {
    /// A `Symbol(name)`, by its name.
    Symbol(String),
    /// A number, and whether it is `>= 0`.
    Number(bool),
    /// Any other term (a product, a power, a non-integer number).
    Other,
}

/// `sum >= 0` (`GreaterThan(sum, 0)`) or `0 <= sum` (`LessThan(0, sum)`):
/// the terms of `sum` (an `Add`'s arguments, or `sum` itself), and whether
/// `sum` is a bare symbol. `None` for any other expression.
pub fn comparison_with_zero(srepr: &str) -> Option<(Vec<SumTerm>, bool)> {
    let mut p = Parser {
        s: srepr.as_bytes(),
        i: 0,
        depth: 0,
    };
    let zero = |n: &Node| {
        matches!(n, Node::Call(f, a) if f == "Integer"
            && matches!(positional(a).first(), Some(Node::Int(i)) if i == "0"))
    };
    let Node::Call(f, args) = p.node()? else {
        return None;
    };
    let args = positional(&args);
    let sum = match (f.as_str(), args.as_slice()) {
        ("GreaterThan", [lhs, rhs]) if zero(rhs) => *lhs,
        ("LessThan", [lhs, rhs]) if zero(lhs) => *rhs,
        _ => return None,
    };
    let term = |n: &Node| match n {
        Node::Call(f, a) if f == "Symbol" => match positional(a).first() {
            Some(Node::Str(s)) => SumTerm::Symbol(s.clone()),
            _ => SumTerm::Other,
        },
        Node::Call(f, a) if f == "Integer" => match positional(a).first() {
            Some(Node::Int(i)) => SumTerm::Number(!i.starts_with('-')),
            _ => SumTerm::Other,
        },
        _ => SumTerm::Other,
    };
    let terms = match sum {
        Node::Call(f, a) if f == "Add" => positional(a).into_iter().map(term).collect(),
        n => vec![term(n)],
    };
    let bare = matches!(terms.as_slice(), [SumTerm::Symbol(_)])
        && !matches!(sum, Node::Call(f, _) if f == "Add");
    Some((terms, bare))
}
