//! Mirrors CPython 3.11's `json` module (`json.loads`, `json.dumps` with
//! default separators and `ensure_ascii=True`) over a value type that keeps
//! what serde_json cannot: `NaN`/`Infinity`, unbounded ints, and the
//! int/float distinction (`1` vs `1.0`).
//!
//! Policies where Rust and Python differ:
//! - Nesting: the parser is iterative; a document nested deeper than
//!   [`MAX_DEPTH`] levels is refused with a position (Python's C scanner
//!   raises `RecursionError` at about 996 levels, so everything Python reads
//!   we read). The bound also keeps the recursive `dumps`, `Drop` and schema
//!   walks far from the stack limit.
//! - Lone UTF-16 surrogates (`"\ud800"`): Python keeps them in a `str`, a Rust
//!   `String` cannot hold them, so they are refused with their position.
//! - Int literals over 4300 digits are refused with CPython's `ValueError`
//!   text, as `int()` does.

pub mod dump;
mod parse;
pub mod text;

use std::fmt;

use num_bigint::BigInt;
use num_traits::ToPrimitive;

pub use dump::{dumps, dumps_into};
pub use parse::{loads, loads_with_depth, MAX_DEPTH};

/// A Python int: `i64` when it fits, else a `BigInt` (never a `Big` that
/// fits `i64`, so derived equality is value equality).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PyInt {
    /// An int that fits an `i64`.
    Small(i64),
    /// An int outside the `i64` range (boxed: rare, and a `PyInt` stays 16 bytes).
    Big(Box<BigInt>),
}

impl PyInt {
    /// `b` in canonical form: `Small` when it fits an `i64`.
    pub fn from_big(b: BigInt) -> PyInt {
        match b.to_i64() {
            Some(i) => PyInt::Small(i),
            None => PyInt::Big(Box::new(b)),
        }
    }

    /// The value if it fits an `i64`.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            PyInt::Small(i) => Some(*i),
            PyInt::Big(_) => None,
        }
    }

    /// The value as a `BigInt`.
    pub fn to_bigint(&self) -> BigInt {
        match self {
            PyInt::Small(i) => BigInt::from(*i),
            PyInt::Big(b) => (**b).clone(),
        }
    }

    /// Python's `float(int)`: `None` where CPython raises `OverflowError`.
    pub fn to_f64(&self) -> Option<f64> {
        match self {
            PyInt::Small(i) => Some(*i as f64),
            PyInt::Big(b) => b.to_f64().filter(|f| f.is_finite()),
        }
    }
}

impl From<i64> for PyInt {
    fn from(i: i64) -> PyInt {
        PyInt::Small(i)
    }
}

impl fmt::Display for PyInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyInt::Small(i) => write!(f, "{i}"),
            PyInt::Big(b) => write!(f, "{b}"),
        }
    }
}

/// A value as `json.loads` returns it. Objects keep insertion order (a
/// Python `dict`); `loads` never produces duplicate keys.
///
/// ```
/// use torchspec_pyval::pyjson::{dumps, loads, PyInt, PyJson};
/// // json.loads keeps what serde_json cannot: ints vs floats, NaN, huge ints.
/// let v = loads("[1, 1.0, 1e400, NaN, 12345678901234567890123]")?;
/// let PyJson::List(items) = &v else { unreachable!() };
/// assert_eq!(items.iter().map(PyJson::type_name).collect::<Vec<_>>(), ["int", "float", "float", "float", "int"]);
/// assert_eq!(items[2], PyJson::Float(f64::INFINITY));
/// assert!(matches!(items[4], PyJson::Int(PyInt::Big(_))));
/// assert_eq!(dumps(&items[4])?, "12345678901234567890123");
/// # Ok::<(), torchspec_pyval::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PyJson {
    /// `null`, Python's `None`.
    Null,
    /// `true` or `false`, a Python `bool`.
    Bool(bool),
    /// An int literal, a Python `int`.
    Int(PyInt),
    /// A number with a fraction or exponent, or `NaN`/`Infinity`/`-Infinity`: a
    /// Python `float`.
    Float(f64),
    /// A string, a Python `str`.
    Str(String),
    /// An array, a Python `list`.
    List(Vec<PyJson>),
    /// An object, a Python `dict`: its members in document order.
    Object(Vec<(String, PyJson)>),
}

impl PyJson {
    /// Python's `type(v).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyJson::Null => "NoneType",
            PyJson::Bool(_) => "bool",
            PyJson::Int(_) => "int",
            PyJson::Float(_) => "float",
            PyJson::Str(_) => "str",
            PyJson::List(_) => "list",
            PyJson::Object(_) => "dict",
        }
    }

    /// `d.get(key)` on an object.
    ///
    /// ```
    /// use torchspec_pyval::pyjson::{loads, PyJson};
    /// let v = loads(r#"{"a": [1, 2.5]}"#)?;
    /// assert_eq!(v.get("a").map(PyJson::type_name), Some("list"));
    /// assert!(v.get("b").is_none());
    /// # Ok::<(), torchspec_pyval::Error>(())
    /// ```
    pub fn get(&self, key: &str) -> Option<&PyJson> {
        match self {
            PyJson::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl PyJson {
    /// A `dict` built by assigning `members` in order: a repeated key keeps
    /// its first position and takes its last value, so the result has no
    /// duplicate keys.
    ///
    /// ```
    /// use torchspec_pyval::pyjson::{dumps, PyJson};
    /// // d = {}; d['a'] = 1; d['b'] = 2; d['a'] = 3
    /// let d = PyJson::object([("a", PyJson::Int(1.into())), ("b", PyJson::Int(2.into())), ("a", PyJson::Int(3.into()))]);
    /// assert_eq!(dumps(&d)?, r#"{"a": 3, "b": 2}"#);
    /// # Ok::<(), torchspec_pyval::Error>(())
    /// ```
    pub fn object<K: Into<String>>(members: impl IntoIterator<Item = (K, PyJson)>) -> PyJson {
        let mut entries: Vec<(String, PyJson)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (k, v) in members {
            let k = k.into();
            match index.get(&k) {
                Some(&i) => entries[i].1 = v,
                None => {
                    index.insert(k.clone(), entries.len());
                    entries.push((k, v));
                }
            }
        }
        PyJson::Object(entries)
    }
}

impl From<bool> for PyJson {
    fn from(b: bool) -> PyJson {
        PyJson::Bool(b)
    }
}

impl From<i64> for PyJson {
    fn from(i: i64) -> PyJson {
        PyJson::Int(PyInt::Small(i))
    }
}

impl From<usize> for PyJson {
    fn from(n: usize) -> PyJson {
        match i64::try_from(n) {
            Ok(i) => PyJson::Int(PyInt::Small(i)),
            Err(_) => PyJson::Int(PyInt::from_big(BigInt::from(n))),
        }
    }
}

impl From<PyInt> for PyJson {
    fn from(i: PyInt) -> PyJson {
        PyJson::Int(i)
    }
}

impl From<String> for PyJson {
    fn from(s: String) -> PyJson {
        PyJson::Str(s)
    }
}

impl From<&str> for PyJson {
    fn from(s: &str) -> PyJson {
        PyJson::Str(s.to_owned())
    }
}

impl From<&String> for PyJson {
    fn from(s: &String) -> PyJson {
        PyJson::Str(s.clone())
    }
}

impl<T: Into<PyJson>> From<Option<T>> for PyJson {
    /// `None` is `null`.
    fn from(v: Option<T>) -> PyJson {
        v.map_or(PyJson::Null, Into::into)
    }
}

impl<T: Into<PyJson>> From<Vec<T>> for PyJson {
    fn from(items: Vec<T>) -> PyJson {
        PyJson::List(items.into_iter().map(Into::into).collect())
    }
}

/// Equality as Python's `==` on floats would not give it: NaN equals NaN,
/// so round-trip properties can compare trees with NaN in them.
pub fn same(a: &PyJson, b: &PyJson) -> bool {
    match (a, b) {
        (PyJson::Float(x), PyJson::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (PyJson::List(x), PyJson::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (PyJson::Object(x), PyJson::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => a == b,
    }
}
