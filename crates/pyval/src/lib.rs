#![warn(missing_docs)]
//! Mirrors the CPython 3.11 object model as far as the case format needs it:
//! None, bool, int, float, str, list, tuple, dict, slice, plus opaque objects
//! (the torch types, supplied by `spec/`) behind the [`PyObject`] protocol.

mod dict;
pub mod error;
mod identifier_table;
mod int;
pub mod ops;
mod printable_table;
pub mod pyjson;
pub mod repr;
pub mod set;

use std::any::Any;
use std::fmt;
use std::rc::Rc;

use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};

pub use dict::Dict;
pub use error::{Error, ErrorKind, Result};
pub use int::Int;
pub use repr::in_ranges;
pub use repr::{float_repr, splitlines, str_repr, write_indented_lines};

/// `str.isidentifier()`, from CPython 3.11's tables
/// (`oracle/gen_unicode_tables.py`).
///
/// ```
/// use torchspec_pyval::is_identifier;
/// assert!(is_identifier("naïve_x") && is_identifier("名前"));
/// assert!(!is_identifier("😀_x") && !is_identifier("a\u{200b}b") && !is_identifier("1x"));
/// ```
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    in_ranges(&identifier_table::START, first)
        && chars.all(|c| in_ranges(&identifier_table::CONTINUE, c))
}

/// `keyword.iskeyword(s)`: CPython 3.11's hard keywords (`keyword.kwlist`).
///
/// ```
/// use torchspec_pyval::is_keyword;
/// assert!(is_keyword("lambda") && is_keyword("None"));
/// assert!(!is_keyword("match") && !is_keyword("print") && !is_keyword("none"));
/// ```
pub fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

/// A Python value. Containers are reference-counted so that copying a value
/// is cheap; objects compare by identity like Python objects do.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::{Dict, Value};
/// let mut d = Dict::new();
/// d.insert(Value::str("a"), Value::int(1))?;
/// d.insert(Value::int(2), Value::List(Rc::new(vec![Value::None])))?;
/// let v = Value::List(Rc::new(vec![
///     Value::Dict(Rc::new(d)),
///     Value::Tuple(Rc::new(vec![Value::int(2)])),
///     Value::Tuple(Rc::new(vec![])),
///     Value::Slice(Rc::new([Value::int(1), Value::None, Value::int(2)])),
/// ]));
/// assert_eq!(v.repr()?, "[{'a': 1, 2: [None]}, (2,), (), slice(1, None, 2)]");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Clone, Debug)]
pub enum Value {
    /// `None`.
    None,
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    Int(Int),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(PyStr),
    /// A `list`, its items shared by reference count.
    List(Rc<Vec<Value>>),
    /// A `tuple`, its items shared by reference count.
    Tuple(Rc<Vec<Value>>),
    /// A `dict`, in insertion order.
    Dict(Rc<Dict>),
    /// `slice(start, stop, step)`.
    Slice(Rc<[Value; 3]>),
    /// Any other object: an `IntVar`, a spec, a derived `SymInt`, ...
    Object(Rc<dyn PyObject>),
}

/// A `str` value: a literal of the program (a `to_jsonable` key, a type
/// name), or text made at run time, shared by reference count. Both read as
/// `&str`; which one a string is never shows.
#[derive(Clone)]
pub enum PyStr {
    /// A literal of the program: no allocation.
    Static(&'static str),
    /// Text made at run time, shared by reference count.
    Shared(Rc<str>),
}

impl std::ops::Deref for PyStr {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        match self {
            PyStr::Static(s) => s,
            PyStr::Shared(s) => s,
        }
    }
}

impl AsRef<str> for PyStr {
    fn as_ref(&self) -> &str {
        self
    }
}

impl fmt::Debug for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for PyStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl PartialEq for PyStr {
    fn eq(&self, other: &PyStr) -> bool {
        **self == **other
    }
}
impl Eq for PyStr {}

impl std::hash::Hash for PyStr {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl From<&str> for PyStr {
    fn from(s: &str) -> PyStr {
        PyStr::Shared(Rc::from(s))
    }
}

impl From<String> for PyStr {
    fn from(s: String) -> PyStr {
        PyStr::Shared(Rc::from(s))
    }
}

impl From<Rc<str>> for PyStr {
    fn from(s: Rc<str>) -> PyStr {
        PyStr::Shared(s)
    }
}

/// What a Python exception carries into a result: `type(e).__name__` and `str(e)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PyException {
    /// The exception's class name, `type(e).__name__` (`ValueError`).
    pub type_name: String,
    /// The exception's text, `str(e)`.
    pub message: String,
}

/// Why evaluation stopped: PyTorch would raise, or the reference does not
/// model this yet (never a guess at PyTorch's output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Raise {
    /// PyTorch raises this Python exception.
    Exception(PyException),
    /// The reference does not model this yet; the text says what.
    Unsupported(String),
}

/// The outcome of running Python code: a value, or the `Raise` that stopped it.
pub type PyResult<T> = Result<T, Raise>;

/// `TYPE: message` for an exception, `unsupported by the reference: WHAT`
/// for what is not modelled.
///
/// ```
/// use torchspec_pyval::Raise;
/// assert_eq!(Raise::new("KeyError", "'x'").to_string(), "KeyError: 'x'");
/// assert_eq!(Raise::unsupported("a symbolic exponent").to_string(),
///            "unsupported by the reference: a symbolic exponent");
/// ```
impl fmt::Display for Raise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Raise::Exception(e) => write!(f, "{}: {}", e.type_name, e.message),
            Raise::Unsupported(why) => write!(f, "unsupported by the reference: {why}"),
        }
    }
}

impl std::error::Error for Raise {}

impl Raise {
    /// The Python exception `type_name(message)`.
    ///
    /// ```
    /// use torchspec_pyval::{PyException, Raise};
    /// assert_eq!(
    ///     Raise::new("ZeroDivisionError", "division by zero"),
    ///     Raise::Exception(PyException { type_name: "ZeroDivisionError".into(), message: "division by zero".into() })
    /// );
    /// ```
    pub fn new(type_name: &str, message: impl Into<String>) -> Raise {
        Raise::Exception(PyException {
            type_name: type_name.to_string(),
            message: message.into(),
        })
    }
    /// A `TypeError` with `message`.
    pub fn type_error(message: impl Into<String>) -> Raise {
        Raise::new("TypeError", message)
    }
    /// A `ValueError` with `message`.
    pub fn value_error(message: impl Into<String>) -> Raise {
        Raise::new("ValueError", message)
    }
    /// A `Raise::Unsupported`: the reference does not model `what` yet.
    pub fn unsupported(what: impl Into<String>) -> Raise {
        Raise::Unsupported(what.into())
    }
}

/// The protocol an opaque object offers the value model. Every method
/// mirrors one Python dunder; `None` means the type does not define it.
#[allow(clippy::len_without_is_empty)] // mirrors `__len__`, which has no `is_empty`
pub trait PyObject: fmt::Debug + Any {
    /// `type(x).__name__`.
    fn type_name(&self) -> &'static str;
    /// `repr(x)`, appended to `out`.
    fn write_repr(&self, out: &mut String) -> PyResult<()>;
    /// `x.to_jsonable()` if the type has that method.
    fn to_jsonable(&self) -> Option<PyResult<Value>> {
        None
    }
    /// `list(iter(x))` if the type defines `__iter__`.
    fn iterate(&self) -> Option<PyResult<Vec<Value>>> {
        None
    }
    /// `len(x)` if the type defines `__len__` (drives truthiness).
    fn len(&self) -> Option<usize> {
        None
    }
    /// `x.items()` if the type has that method.
    fn items(&self) -> Option<Vec<(Value, Value)>> {
        None
    }
    /// `bool(x)` for types with their own `__bool__`.
    fn truth(&self) -> Option<PyResult<bool>> {
        None
    }
    /// Whether `hash(x)` works; objects hash by identity unless they say otherwise.
    fn check_hashable(&self) -> PyResult<()> {
        Ok(())
    }
    /// `isinstance(x, torch.SymInt)`.
    fn is_symint(&self) -> bool {
        false
    }
    /// `isinstance(x, torch.SymBool)`.
    fn is_symbool(&self) -> bool {
        false
    }
    /// The object as `dyn Any`, to downcast it to its concrete type.
    fn as_any(&self) -> &dyn Any;
}

impl Value {
    /// An `int` that fits an `i64`.
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// assert_eq!(Value::int(-7).repr()?, "-7");
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn int(i: i64) -> Value {
        Value::Int(Int::Small(i))
    }
    /// An int of any size.
    ///
    /// ```
    /// use num_bigint::BigInt;
    /// use torchspec_pyval::Value;
    /// // 2**70
    /// let v = Value::big(BigInt::from(1u8) << 70);
    /// assert_eq!(v.repr()?, "1180591620717411303424");
    /// // Canonical: a big int that fits an i64 is a small one.
    /// assert!(matches!(Value::big(BigInt::from(5)), Value::Int(torchspec_pyval::Int::Small(5))));
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn big(i: BigInt) -> Value {
        Value::Int(Int::from(i))
    }
    /// A `str` made at run time (copies `s`).
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// assert_eq!(Value::str("it's").repr()?, r#""it's""#);
    /// assert_eq!(Value::str("tab\tnl\n\x7f é \u{2028}").repr()?, r"'tab\tnl\n\x7f é \u2028'");
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn str(s: &str) -> Value {
        Value::Str(PyStr::from(s))
    }

    /// A constant `str` (a dict key of `to_jsonable`, a type name): no
    /// allocation, as CPython's literals are made once.
    pub fn static_str(s: &'static str) -> Value {
        Value::Str(PyStr::Static(s))
    }
    /// An opaque object (an `IntVar`, a spec, ...) as a value.
    pub fn object<T: PyObject>(o: T) -> Value {
        Value::Object(Rc::new(o))
    }

    /// `type(x).__name__`.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::Value;
    /// assert_eq!(Value::None.type_name(), "NoneType");
    /// assert_eq!(Value::Float(1.0).type_name(), "float");
    /// assert_eq!(Value::Tuple(Rc::new(vec![])).type_name(), "tuple");
    /// ```
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Slice(_) => "slice",
            Value::Object(o) => o.type_name(),
        }
    }

    /// Downcast an object to a concrete type.
    pub fn downcast<T: 'static>(&self) -> Option<&T> {
        match self {
            // Upcast to `dyn Any`: one virtual call (`type_id`), not two.
            Value::Object(o) => (&**o as &dyn Any).downcast_ref::<T>(),
            _ => None,
        }
    }

    /// `isinstance(x, int)`: bool is an int in Python.
    pub fn is_int(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Bool(_))
    }

    /// `x is y` for the objects where identity is observable.
    pub fn is(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::None, Value::None) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b),
            (Value::List(a), Value::List(b)) => Rc::ptr_eq(a, b),
            (Value::Dict(a), Value::Dict(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// `repr(x)`.
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// let reprs: Vec<String> = [
    ///     Value::None,
    ///     Value::Bool(true),
    ///     Value::Float(0.1),
    ///     Value::Float(1e16),
    ///     Value::Float(-0.0),
    ///     Value::Float(f64::INFINITY),
    ///     Value::Float(f64::NAN),
    ///     Value::str(r#"both ' and ""#),
    /// ]
    /// .iter()
    /// .map(|v| v.repr())
    /// .collect::<Result<_, _>>()?;
    /// assert_eq!(reprs, ["None", "True", "0.1", "1e+16", "-0.0", "inf", "nan", r#"'both \' and "'"#]);
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn repr(&self) -> PyResult<String> {
        // Spec reprs run to hundreds of bytes; growing from small costs more
        // than the spare capacity.
        let cap = if matches!(self, Value::Object(_)) {
            1024
        } else {
            32
        };
        let mut out = String::with_capacity(cap);
        self.write_repr(&mut out)?;
        Ok(out)
    }

    /// `str(x)` (also what an f-string `{x}` prints for these types).
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::Value;
    /// assert_eq!(Value::Float(1.5).py_str()?, "1.5");
    /// assert_eq!(Value::str("x").py_str()?, "x");
    /// assert_eq!(Value::List(Rc::new(vec![Value::str("x")])).py_str()?, "['x']");
    /// assert_eq!(Value::None.py_str()?, "None");
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn py_str(&self) -> PyResult<String> {
        match self {
            Value::Str(s) => Ok(s.to_string()),
            _ => self.repr(),
        }
    }

    /// `str(x)`, appended to `out`.
    pub fn write_str(&self, out: &mut String) -> PyResult<()> {
        match self {
            Value::Str(s) => {
                out.push_str(s);
                Ok(())
            }
            _ => self.write_repr(out),
        }
    }

    /// `bool(x)`.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::Value;
    /// assert!(!Value::int(0).truth()?);
    /// assert!(!Value::str("").truth()?);
    /// assert!(!Value::List(Rc::new(vec![])).truth()?);
    /// assert!(!Value::Float(0.0).truth()?);
    /// assert!(Value::str(" ").truth()?);
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn truth(&self) -> PyResult<bool> {
        Ok(match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => !i.is_zero(),
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(v) | Value::Tuple(v) => !v.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Slice(_) => true,
            Value::Object(o) => {
                if let Some(t) = o.truth() {
                    return t;
                }
                o.len().is_none_or(|n| n > 0)
            }
        })
    }

    /// `list(x)`: iterate an iterable, or raise like `iter(x)` does.
    ///
    /// ```
    /// use torchspec_pyval::{Raise, Value};
    /// let chars = Value::str("ab").iterate()?;
    /// assert_eq!(chars.iter().map(|c| c.repr()).collect::<Result<Vec<_>, _>>()?, ["'a'", "'b'"]);
    /// assert_eq!(Value::int(1).iterate().unwrap_err(), Raise::type_error("'int' object is not iterable"));
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn iterate(&self) -> PyResult<Vec<Value>> {
        match self {
            Value::Str(s) => Ok(s
                .chars()
                .map(|c| Value::str(c.encode_utf8(&mut [0; 4])))
                .collect()),
            Value::List(v) | Value::Tuple(v) => Ok(v.as_ref().clone()),
            Value::Dict(d) => Ok(d.keys().cloned().collect()),
            Value::Object(o) => match o.iterate() {
                Some(r) => r,
                None => Err(not_iterable(self)),
            },
            _ => Err(not_iterable(self)),
        }
    }

    /// `x.items()`, or the AttributeError Python raises when there is none.
    ///
    /// ```
    /// use torchspec_pyval::{Raise, Value};
    /// assert_eq!(
    ///     Value::None.items().unwrap_err(),
    ///     Raise::new("AttributeError", "'NoneType' object has no attribute 'items'")
    /// );
    /// ```
    pub fn items(&self) -> PyResult<Vec<(Value, Value)>> {
        match self {
            Value::Dict(d) => Ok(d.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            Value::Object(o) => o.items().ok_or_else(|| no_attribute(self, "items")),
            _ => Err(no_attribute(self, "items")),
        }
    }

    /// `hash(x)` succeeds: the precondition of being a dict key.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Raise, Value};
    /// assert!(Value::Tuple(Rc::new(vec![Value::int(1)])).check_hashable().is_ok());
    /// assert_eq!(
    ///     Value::List(Rc::new(vec![Value::int(1)])).check_hashable().unwrap_err(),
    ///     Raise::type_error("unhashable type: 'list'")
    /// );
    /// ```
    pub fn check_hashable(&self) -> PyResult<()> {
        match self {
            Value::List(_) | Value::Dict(_) | Value::Slice(_) => Err(Raise::type_error(format!(
                "unhashable type: '{}'",
                self.type_name()
            ))),
            Value::Tuple(items) => items.iter().try_for_each(Value::check_hashable),
            Value::Object(o) => o.check_hashable(),
            _ => Ok(()),
        }
    }

    /// Python `==` between two hashable values, as dict lookup uses it
    /// (identity first, then `__eq__`): `1 == 1.0 == True`.
    ///
    /// ```
    /// use torchspec_pyval::Value;
    /// assert!(Value::int(1).key_eq(&Value::Float(1.0)));
    /// assert!(Value::Bool(true).key_eq(&Value::int(1)));
    /// assert!(!Value::str("1").key_eq(&Value::int(1)));
    /// ```
    pub fn key_eq(&self, other: &Value) -> bool {
        if let (Some(a), Some(b)) = (self.as_number(), other.as_number()) {
            return a.num_eq(&b);
        }
        match (self, other) {
            (Value::None, Value::None) => true,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Tuple(a), Value::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.is(y) || x.key_eq(y))
            }
            _ => self.is(other),
        }
    }

    /// The value as a numeric operand (a `bool` widened to an int), or `None`
    /// if it is not a `bool`, `int` or `float`.
    pub fn as_number(&self) -> Option<Number<'_>> {
        match self {
            Value::Bool(b) => Some(Number::Int(if *b { BigCow::One } else { BigCow::Zero })),
            Value::Int(Int::Small(i)) => Some(Number::Int(BigCow::Small(*i))),
            Value::Int(Int::Big(i)) => Some(Number::Int(BigCow::Ref(i))),
            Value::Float(f) => Some(Number::Float(*f)),
            _ => None,
        }
    }
}

/// An int or float operand, with bools already widened to ints.
#[derive(Clone, Debug)]
pub enum Number<'a> {
    /// An `int`, or a `bool` widened to one.
    Int(BigCow<'a>),
    /// A `float`.
    Float(f64),
}

/// An int operand, held without allocating: `0` or `1` (a widened `bool`), an
/// `i64`, or a borrowed `BigInt`.
#[derive(Clone, Debug)]
pub enum BigCow<'a> {
    /// `0` (`False`).
    Zero,
    /// `1` (`True`).
    One,
    /// An int that fits an `i64`.
    Small(i64),
    /// A borrowed int outside the `i64` range.
    Ref(&'a BigInt),
}

impl BigCow<'_> {
    /// The value as an owned `BigInt`.
    pub fn to_big(&self) -> BigInt {
        match self {
            BigCow::Zero => BigInt::zero(),
            BigCow::One => BigInt::from(1),
            BigCow::Small(i) => BigInt::from(*i),
            BigCow::Ref(b) => (*b).clone(),
        }
    }

    /// The value if it fits an `i64`: the fast path of comparisons.
    fn small(&self) -> Option<i64> {
        match self {
            BigCow::Zero => Some(0),
            BigCow::One => Some(1),
            BigCow::Small(i) => Some(*i),
            BigCow::Ref(_) => None,
        }
    }
}

impl Number<'_> {
    fn num_eq(&self, other: &Number<'_>) -> bool {
        self.num_cmp(other) == Some(std::cmp::Ordering::Equal)
    }

    /// Exact comparison, as CPython compares int with float (no rounding of
    /// the int); `None` when a NaN is involved.
    pub fn num_cmp(&self, other: &Number<'_>) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some(match (a.small(), b.small()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => a.to_big().cmp(&b.to_big()),
            }),
            (Number::Float(a), Number::Float(b)) => a.partial_cmp(b),
            (Number::Int(a), Number::Float(b)) => int_float_cmp(&a.to_big(), *b),
            (Number::Float(a), Number::Int(b)) => {
                int_float_cmp(&b.to_big(), *a).map(|o| o.reverse())
            }
        }
    }
}

fn int_float_cmp(i: &BigInt, f: f64) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        });
    }
    // Compare against floor(f), then break ties on the fractional part.
    let fl = f.floor();
    let fb = float_to_bigint(fl).expect("finite float");
    match i.cmp(&fb) {
        Ordering::Equal if f > fl => Some(Ordering::Less),
        o => Some(o),
    }
}

/// The exact integer value of an integral finite float.
pub fn float_to_bigint(f: f64) -> Option<BigInt> {
    if !f.is_finite() {
        return None;
    }
    if f.abs() < 9.0e15 {
        return f.to_i64().map(BigInt::from);
    }
    let bits = f.to_bits();
    let sign = if bits >> 63 == 1 { -1 } else { 1 };
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let m = BigInt::from(mant) * sign;
    Some(if exp >= 0 {
        m << exp as usize
    } else {
        m >> (-exp) as usize
    })
}

fn not_iterable(v: &Value) -> Raise {
    Raise::type_error(format!("'{}' object is not iterable", v.type_name()))
}

/// The `AttributeError` Python raises for `v.attr` when `type(v)` has no
/// attribute `attr`.
pub fn no_attribute(v: &Value, attr: &str) -> Raise {
    Raise::new(
        "AttributeError",
        format!("'{}' object has no attribute '{}'", v.type_name(), attr),
    )
}
