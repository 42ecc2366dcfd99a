//! Proptest strategies for `pyjson::PyJson` values (as `json.loads` could
//! return them: finite or not, unbounded ints, unique object keys), and
//! twists of a document for the schema reader's robustness properties.

use num_bigint::BigInt;
use proptest::prelude::*;

use crate::pyjson::{PyInt, PyJson};

pub fn arb_int() -> impl Strategy<Value = PyInt> {
    prop_oneof![
        any::<i64>().prop_map(PyInt::Small),
        (any::<i128>(), any::<u64>())
            .prop_map(|(a, b)| PyInt::from_big(BigInt::from(a) * BigInt::from(b))),
    ]
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z_]{0,6}"]
}

/// A Python dict from entries: one entry per key, first position, last value.
fn dict(entries: Vec<(String, PyJson)>) -> PyJson {
    let mut out: Vec<(String, PyJson)> = Vec::new();
    for (k, v) in entries {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(e) => e.1 = v,
            None => out.push((k, v)),
        }
    }
    PyJson::Object(out)
}

/// Any value; floats finite when `finite` (what `dumps` can write).
pub fn arb_pyjson(finite: bool) -> impl Strategy<Value = PyJson> {
    let float = any::<f64>().prop_filter("finite", move |f| !finite || f.is_finite());
    let leaf = prop_oneof![
        Just(PyJson::Null),
        any::<bool>().prop_map(PyJson::Bool),
        arb_int().prop_map(PyJson::Int),
        float.prop_map(PyJson::Float),
        any::<String>().prop_map(PyJson::Str),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(PyJson::List),
            prop::collection::vec((arb_key(), inner), 0..6).prop_map(dict),
        ]
    })
}

/// One change to a document, at the node reached by following `steps`
/// (each picks a child by index modulo the child count).
#[derive(Clone, Debug)]
pub enum Twist {
    Replace(PyJson),
    DeleteKey,
    AddKey(String, PyJson),
    WrapInList,
}

pub fn arb_twist() -> impl Strategy<Value = (Vec<usize>, Twist)> {
    let value = prop_oneof![
        arb_pyjson(true),
        Just(PyJson::Str("Infinity".into())),
        Just(PyJson::Object(vec![])),
        Just(PyJson::Int(PyInt::Small(99))),
    ];
    let twist = prop_oneof![
        value.clone().prop_map(Twist::Replace),
        Just(Twist::DeleteKey),
        ("[a-z_]{1,8}", value).prop_map(|(k, v)| Twist::AddKey(k, v)),
        Just(Twist::WrapInList),
    ];
    (prop::collection::vec(any::<usize>(), 0..12), twist)
}

/// Applies `twist` at `steps` (stopping early at a leaf).
pub fn apply_twist(doc: &mut PyJson, steps: &[usize], twist: Twist) {
    let mut node = doc;
    for &s in steps {
        let n = match &*node {
            PyJson::List(items) => items.len(),
            PyJson::Object(entries) => entries.len(),
            _ => 0,
        };
        if n == 0 {
            break;
        }
        let i = s % n;
        node = match node {
            PyJson::List(items) => &mut items[i],
            PyJson::Object(entries) => &mut entries[i].1,
            _ => unreachable!(),
        };
    }
    match twist {
        Twist::Replace(v) => *node = v,
        Twist::DeleteKey => {
            if let PyJson::Object(entries) = node {
                if !entries.is_empty() {
                    entries.remove(0);
                }
            }
        }
        Twist::AddKey(k, v) => {
            if let PyJson::Object(entries) = node {
                if !entries.iter().any(|(ok, _)| *ok == k) {
                    entries.push((k, v));
                }
            }
        }
        Twist::WrapInList => {
            let inner = std::mem::replace(node, PyJson::Null);
            *node = PyJson::List(vec![inner]);
        }
    }
}
