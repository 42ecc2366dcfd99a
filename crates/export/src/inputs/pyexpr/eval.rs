//! The evaluation of a guard's actual text on the flat inputs, as the
//! function `_convert_guards_code_to_fn` generates runs it: Python's int
//! and float semantics, the names its namespace holds (`NameError` for any
//! other), the calls `ShapeGuardPythonPrinter` prints.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
use torchspec_pyval::Raise;

use super::{unparse, BinOp, CmpOp, Expr};

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
        Expr::Name(n) => name(e, n),
        Expr::Subscript(b, i) => subscript(b, i, args),
        Expr::Attr(b, n) => attribute(eval(b, args)?, n),
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
        Expr::Bin(l, op, r) => binary(&eval(l, args)?, *op, &eval(r, args)?),
        Expr::Cmp(l, op, r) => compare(&eval(l, args)?, *op, &eval(r, args)?),
        Expr::Chain(operands, ops) => chain(operands, ops, args),
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
    }
}

/// A name in the generated function's namespace: the bools, `NameError`
/// for a name it does not hold, the modules, `inf` and the functions.
fn name(e: &Expr, n: &str) -> Result<GVal, EvalStop> {
    match n {
        "True" | "False" => Ok(GVal::Bool(n == "True")),
        _ if GUARD_NAMES.binary_search(&n).is_err() => Err(Raise::new(
            "NameError",
            format!("name '{n}' is not defined"),
        )),
        "torch" => Ok(GVal::Module("torch")),
        "math" => Ok(GVal::Module("math")),
        "inf" => Ok(GVal::Float(f64::INFINITY)),
        _ if FUNCS.contains(&n) => Ok(GVal::Func(
            FUNCS.iter().find(|f| **f == n).copied().unwrap_or_default(),
        )),
        _ => Err(Raise::Unsupported(format!(
            "the guard form `{}`",
            unparse(e)
        ))),
    }
}

/// `args[i]` (a flat input) or `size()[k]` (a dim, negative `k` from the
/// end); `IndexError` past either.
fn subscript(b: &Expr, i: &Expr, args: &[GVal]) -> Result<GVal, EvalStop> {
    let unsupported = |what: String| Err(Raise::Unsupported(what));
    if matches!(b, Expr::Name(n) if n == "args") {
        let Some(idx) = int_of(&eval(i, args)?) else {
            return unsupported("a non-integer `args` index".into());
        };
        let idx: usize = idx
            .try_into()
            .map_err(|_| Raise::Unsupported("a negative `args` index".into()))?;
        return match args.get(idx) {
            Some(v) => Ok(v.clone()),
            None => Err(Raise::new("IndexError", "tuple index out of range")),
        };
    }
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

/// Attribute `n` of the value `b`: a tensor's `size`, `math.inf`/`nan`,
/// a module's function; `AttributeError` for a scalar's `size`.
fn attribute(b: GVal, n: &str) -> Result<GVal, EvalStop> {
    let unsupported = |what: String| Err(Raise::Unsupported(what));
    match (b, n) {
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
    }
}

/// A binary operator on evaluated operands: float arithmetic when either
/// is a float (or for `/`), `**`, else Python's int arithmetic.
fn binary(l: &GVal, op: BinOp, r: &GVal) -> Result<GVal, EvalStop> {
    if op == BinOp::TrueDiv || matches!(l, GVal::Float(_)) || matches!(r, GVal::Float(_)) {
        return float_bin(l, op, r);
    }
    if op == BinOp::Pow {
        return int_pow(l, r);
    }
    let (Some(a), Some(b)) = (int_of(l), int_of(r)) else {
        return Err(Raise::Unsupported("arithmetic on non-integers".into()));
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

/// `a < b < c`: each operand evaluated once, stopping at the first
/// comparison that is false (and returning it).
fn chain(operands: &[Expr], ops: &[CmpOp], args: &[GVal]) -> Result<GVal, EvalStop> {
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
    #[test]
    fn guard_names_are_sorted() {
        assert!(super::GUARD_NAMES.windows(2).all(|w| w[0] < w[1]));
    }
}
