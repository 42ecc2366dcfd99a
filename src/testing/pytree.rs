//! Proptest strategies for pytrees: nested Python values over every
//! container `tree_flatten` knows (their structures are the random TreeSpecs).

use std::rc::Rc;

use num_bigint::BigInt;
use proptest::prelude::*;

use crate::pytree::{Container, Registry};
use crate::pyval::{Dict, Value};

/// The registry the strategies build with: `import torch` plus two
/// namedtuple classes registered under serialized names.
pub fn registry() -> Registry {
    let mut r = Registry::torch();
    r.register_namedtuple("my.models.Point", "my.models", "Point", &["x", "y"]);
    r.register_namedtuple("my.models.Triple", "my.models", "Triple", &["a", "b", "c"]);
    r
}

/// A leaf: None, bool, int (some beyond 64 bits), finite float, str.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::None),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::int),
        any::<i64>().prop_map(|i| Value::big(BigInt::from(i) << 70)),
        (-1e20f64..1e20).prop_map(Value::Float),
        "[a-zé日\\\\\"\n ]{0,4}".prop_map(|s| Value::str(&s)),
    ]
}

/// A dict key that survives `json.dumps` → `json.loads` of a context:
/// str, int, bool, None, finite float (not tuples, which come back as lists).
fn key() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => "[a-zé😀\"\\\\\u{7f}]{0,3}".prop_map(|s| Value::str(&s)),
        2 => (-3i64..1000).prop_map(Value::int),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::None),
        1 => prop_oneof![Just(0.5), Just(-2.25), Just(1e20), Just(1e-7)].prop_map(Value::Float),
    ]
}

fn dict_of(kids: Vec<Value>, keys: Vec<Value>) -> Dict {
    let mut d = Dict::new();
    for (k, v) in keys.into_iter().zip(kids) {
        d.insert(k, v).expect("generated keys are hashable");
    }
    d
}

/// A nested value of depth up to `depth` over tuple, list, dict,
/// OrderedDict, defaultdict, deque, namedtuple and structseq.
pub fn pytree_value(depth: u32) -> impl Strategy<Value = Value> {
    leaf().prop_recursive(depth, 48, 4, |inner| {
        let kids = prop::collection::vec(inner.clone(), 0..4);
        let keyed = || {
            (
                prop::collection::vec(inner.clone(), 0..4),
                prop::collection::vec(key(), 4),
            )
        };
        prop_oneof![
            kids.clone().prop_map(|k| Value::Tuple(Rc::new(k))),
            kids.clone().prop_map(|k| Value::List(Rc::new(k))),
            keyed().prop_map(|(k, keys)| Value::Dict(Rc::new(dict_of(k, keys)))),
            keyed().prop_map(|(k, keys)| {
                let pairs = keys.into_iter().zip(k).collect();
                Container::ordered_dict(&registry(), pairs).expect("hashable keys")
            }),
            (keyed(), prop_oneof![Just("int"), Just("list"), Just("len")]).prop_map(
                |((k, keys), factory)| {
                    let f = crate::pytree::import_attr("builtins", factory).expect("a builtin");
                    let pairs = keys.into_iter().zip(k).collect();
                    Container::defaultdict(&registry(), f, pairs).expect("hashable keys")
                }
            ),
            (kids.clone(), prop::option::of(0usize..3)).prop_map(|(k, extra)| {
                let maxlen = extra.map_or(Value::None, |e| Value::int((k.len() + e) as i64));
                Container::deque(&registry(), k, maxlen).expect("a valid maxlen")
            }),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| {
                let cls = registry()
                    .lookup("my.models.Point")
                    .cloned()
                    .expect("registered");
                Container::namedtuple(cls, vec![x, y]).expect("two fields")
            }),
            (inner.clone(), inner.clone()).prop_map(|(v, i)| {
                let cls = registry()
                    .lookup("torch.return_types.max")
                    .cloned()
                    .expect("registered");
                Container::structseq(cls, vec![v, i]).expect("two fields")
            }),
        ]
    })
}

/// A JSON-loadable context (what `json.loads` can give back): None, bool,
/// int, finite float, str, list, dict with str keys.
fn json_context() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::None),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::int),
        (-1e300f64..1e300).prop_map(Value::Float),
        "[a-zé😀\"\\\\\n]{0,3}".prop_map(|s| Value::str(&s)),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| Value::List(Rc::new(v))),
            prop::collection::vec(("[a-z]{0,2}", inner), 0..3).prop_map(|kv| {
                let mut d = Dict::new();
                for (k, v) in kv {
                    d.insert(Value::str(&k), v).expect("str keys");
                }
                Value::Dict(Rc::new(d))
            }),
        ]
    })
}

/// A TreeSpec as `treespec_loads` may build it: tuple, list, dict, deque,
/// structseq and torch.Size nodes with any JSON context (PyTorch checks none).
pub fn loaded_treespec() -> impl Strategy<Value = crate::pytree::TreeSpec> {
    use crate::pytree::TreeSpec;
    let names = [
        "builtins.tuple",
        "builtins.list",
        "builtins.dict",
        "collections.OrderedDict",
        "collections.deque",
        "torch.return_types.max",
        "torch.Size",
        "torch.fx.immutable_collections.immutable_dict",
    ];
    Just(TreeSpec::leaf()).prop_recursive(4, 32, 4, move |inner| {
        (
            prop::sample::select(names.to_vec()),
            json_context(),
            prop::collection::vec(inner, 0..4),
        )
            .prop_map(|(name, context, children)| {
                let t = registry().lookup(name).cloned().expect("registered");
                TreeSpec::new(t, context, children)
            })
    })
}
