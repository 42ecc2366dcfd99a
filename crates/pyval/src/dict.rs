//! Mirrors CPython's `dict`: insertion order, and key equality by `==`, so a
//! later equal key (`True` after `1`) replaces the value but keeps the first
//! key object.

use smallvec::SmallVec;

use super::{PyResult, Value};

/// Entries kept inline: every `to_jsonable` dict (`{"type": ..., key: ...}`)
/// and most spec fields fit, so a `Value::Dict` is one allocation.
const INLINE: usize = 2;

/// A Python `dict`: entries in insertion order, keys compared by Python `==`.
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::{Dict, Value};
/// // d = {}; d[1] = 'int'; d[1.0] = 'float'; d[True] = 'bool'
/// let mut d = Dict::new();
/// d.insert(Value::int(1), Value::str("int"))?;
/// d.insert(Value::Float(1.0), Value::str("float"))?;
/// d.insert(Value::Bool(true), Value::str("bool"))?;
/// // One key: the first one inserted, with the last value.
/// assert_eq!(d.len(), 1);
/// assert_eq!(Value::Dict(Rc::new(d)).repr()?, "{1: 'bool'}");
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Dict {
    entries: SmallVec<[(Value, Value); INLINE]>,
}

impl Dict {
    /// An empty dict, `{}`.
    pub fn new() -> Dict {
        Dict::default()
    }

    /// An empty dict with room for `n` entries.
    pub fn with_capacity(n: usize) -> Dict {
        Dict {
            entries: SmallVec::with_capacity(n),
        }
    }

    /// Append a key known to be hashable and not equal to any key present
    /// (copying another dict's keys).
    pub fn push_distinct(&mut self, key: Value, value: Value) {
        self.entries.push((key, value));
    }

    /// `d[key] = value`: raises for an unhashable key.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Dict, Raise, Value};
    /// let mut d = Dict::new();
    /// d.insert(Value::str("a"), Value::int(1))?;
    /// d.insert(Value::str("a"), Value::int(2))?;
    /// assert_eq!(d.get(&Value::str("a")).unwrap().repr()?, "2");
    /// // {[1]: 2}
    /// let key = Value::List(Rc::new(vec![Value::int(1)]));
    /// assert_eq!(d.insert(key, Value::int(2)).unwrap_err(), Raise::type_error("unhashable type: 'list'"));
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn insert(&mut self, key: Value, value: Value) -> PyResult<()> {
        key.check_hashable()?;
        match self.position(&key) {
            Some(i) => self.entries[i].1 = value,
            None => self.entries.push((key, value)),
        }
        Ok(())
    }

    /// A dict literal with distinct constant `str` keys (`{"type": ..., ...}`),
    /// built without lookups.
    pub fn from_static_pairs<const N: usize>(pairs: [(&'static str, Value); N]) -> Dict {
        debug_assert!(pairs
            .iter()
            .enumerate()
            .all(|(i, (k, _))| pairs[..i].iter().all(|(q, _)| q != k)));
        let mut entries = SmallVec::with_capacity(N);
        for (k, v) in pairs {
            entries.push((Value::static_str(k), v));
        }
        Dict { entries }
    }

    /// `{k1: v1, k2: v2}` with distinct constant `str` keys, in place.
    pub fn from_two_static(k1: &'static str, v1: Value, k2: &'static str, v2: Value) -> Dict {
        debug_assert_ne!(k1, k2);
        Dict {
            entries: SmallVec::from_buf([(Value::static_str(k1), v1), (Value::static_str(k2), v2)]),
        }
    }

    fn position(&self, key: &Value) -> Option<usize> {
        self.entries
            .iter()
            .position(|(k, _)| k.is(key) || k.key_eq(key))
    }

    /// `d.get(key)` for a key already known to be hashable.
    ///
    /// ```
    /// use torchspec_pyval::{Dict, Value};
    /// let mut d = Dict::new();
    /// d.insert(Value::Bool(true), Value::int(0))?;
    /// assert_eq!(d.get(&Value::int(1)).unwrap().repr()?, "0");
    /// assert!(d.get(&Value::int(2)).is_none());
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn get(&self, key: &Value) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// `d.get(name)` for a `str` key, without building one: only a `str`
    /// key can equal a `str`. Names are short: a byte loop after the length
    /// check beats a call to `memcmp` per key.
    #[inline]
    pub fn get_str(&self, name: &str) -> Option<&Value> {
        let name = name.as_bytes();
        self.entries
            .iter()
            .find(|(k, _)| {
                matches!(k, Value::Str(s)
                    if s.len() == name.len() && s.as_bytes().iter().eq(name.iter()))
            })
            .map(|(_, v)| v)
    }

    /// `key in d` (raises for an unhashable key, as Python does).
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Dict, Raise, Value};
    /// let mut d = Dict::new();
    /// d.insert(Value::Bool(true), Value::int(0))?;
    /// assert!(d.contains(&Value::int(1))?); // 1 in {True: 0}
    /// let key = Value::List(Rc::new(vec![Value::int(1)]));
    /// assert_eq!(Dict::new().contains(&key).unwrap_err(), Raise::type_error("unhashable type: 'list'"));
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn contains(&self, key: &Value) -> PyResult<bool> {
        key.check_hashable()?;
        Ok(self.position(key).is_some())
    }

    /// `len(d)`.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `not d`: whether the dict has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `d.keys()`, in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// `d.items()`, in insertion order, by reference.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// `dict(x)`: copy a dict, or build one from an iterable of pairs, with
    /// CPython's messages for an element that is not a pair.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Dict, Raise, Value};
    /// let pair = |k: &str, v| Value::Tuple(Rc::new(vec![Value::str(k), Value::int(v)]));
    /// // dict([('a', 1), ('b', 2)])
    /// let d = Dict::from_value(&Value::List(Rc::new(vec![pair("a", 1), pair("b", 2)])))?;
    /// assert_eq!(Value::Dict(Rc::new(d)).repr()?, "{'a': 1, 'b': 2}");
    /// // dict([1]) and dict([(1, 2, 3)])
    /// assert_eq!(
    ///     Dict::from_value(&Value::List(Rc::new(vec![Value::int(1)]))).unwrap_err(),
    ///     Raise::type_error("cannot convert dictionary update sequence element #0 to a sequence")
    /// );
    /// let triple = Value::Tuple(Rc::new(vec![Value::int(1), Value::int(2), Value::int(3)]));
    /// assert_eq!(
    ///     Dict::from_value(&Value::List(Rc::new(vec![triple]))).unwrap_err(),
    ///     Raise::value_error("dictionary update sequence element #0 has length 3; 2 is required")
    /// );
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn from_value(x: &Value) -> PyResult<Dict> {
        if let Value::Dict(d) = x {
            return Ok(d.as_ref().clone());
        }
        let mut d = Dict::new();
        for (i, item) in x.iterate()?.into_iter().enumerate() {
            let pair = item.iterate().map_err(|_| {
                super::Raise::type_error(format!(
                    "cannot convert dictionary update sequence element #{i} to a sequence"
                ))
            })?;
            if pair.len() != 2 {
                return Err(super::Raise::value_error(format!(
                    "dictionary update sequence element #{i} has length {}; 2 is required",
                    pair.len()
                )));
            }
            let mut it = pair.into_iter();
            let (k, v) = (
                it.next().unwrap_or(Value::None),
                it.next().unwrap_or(Value::None),
            );
            d.insert(k, v)?;
        }
        Ok(d)
    }
}
