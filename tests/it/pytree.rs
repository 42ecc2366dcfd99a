//! TreeSpecs against PyTorch's goldens (`corpus/goldens/torch-2.15.0/pytree/`,
//! written by `oracle/pytree_cases.py`), and round-trip properties.

use proptest::prelude::*;
use serde_json::Value as Json;
use torchspec::pytree::{
    tree_flatten, tree_unflatten, treespec_dumps, treespec_loads, treespec_pprint, Registry,
    TreeSpec,
};
use torchspec::pyval::{PyResult, Raise, Value};
use torchspec::testing::pytree::{loaded_treespec, pytree_value, registry};

const GOLDENS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/corpus/goldens/torch-2.15.0/pytree/treespecs.jsonl"
);
const REGEN: &str = "regenerate with `oracle/regen-goldens.sh`";

/// Golden ids where the reference reports `Unsupported` for one field,
/// with the reason. The list only shrinks: an entry that agrees fails the test.
const UNSUPPORTED: &[(&str, &str, &str)] = &[(
    "load-namedtuple-ordereddict",
    "pprint",
    "calling `OrderedDict(*children)` from a namedtuple context",
)];

fn registry_from(header: &Json) -> Registry {
    let mut r = Registry::torch();
    for entry in header["register"]
        .as_array()
        .expect("a `register` header line")
    {
        let [name, module, qualname, fields] = entry.as_array().expect("an entry").as_slice()
        else {
            panic!("register entry {entry}");
        };
        let fields: Vec<&str> = fields
            .as_array()
            .expect("fields")
            .iter()
            .map(|f| f.as_str().expect("a field"))
            .collect();
        r.register_namedtuple(
            name.as_str().expect("name"),
            module.as_str().expect("module"),
            qualname.as_str().expect("qualname"),
            &fields,
        );
    }
    r
}

/// Compare an outcome with a golden that is either a string or {"error": ...}
/// (or, with `error_key`, an error object under that key of the line).
fn check_field(
    failures: &mut Vec<String>,
    unsupported_hits: &mut Vec<String>,
    id: &str,
    field: &str,
    got: PyResult<String>,
    want: &Json,
) {
    let want_error = want.get("error").or(if want.get("type").is_some() {
        Some(want)
    } else {
        None
    });
    let ok = match (&got, want_error) {
        (Ok(s), None) => want.as_str() == Some(s.as_str()),
        (Err(Raise::Exception(e)), Some(w)) => {
            w["type"].as_str() == Some(e.type_name.as_str())
                && w["message"].as_str() == Some(e.message.as_str())
        }
        (Err(Raise::Unsupported(_)), _) => {
            if UNSUPPORTED.iter().any(|(i, f, _)| *i == id && *f == field) {
                unsupported_hits.push(format!("{id}/{field}"));
                return;
            }
            false
        }
        _ => false,
    };
    if UNSUPPORTED.iter().any(|(i, f, _)| *i == id && *f == field) {
        failures.push(format!(
            "{id}: `{field}` is allow-listed as unsupported but the reference now answers {got:?}; \
             delete its entry from UNSUPPORTED in tests/it/pytree.rs"
        ));
    } else if !ok {
        failures.push(format!("{id}: `{field}`\n  want {want}\n  got  {got:?}"));
    }
}

#[test]
fn pytree_goldens() {
    let text =
        std::fs::read_to_string(GOLDENS).unwrap_or_else(|e| panic!("{GOLDENS}: {e}; {REGEN}"));
    let mut lines = text.lines();
    let header: Json = serde_json::from_str(lines.next().expect("a header")).expect("JSON");
    let reg = registry_from(&header);
    let (mut failures, mut hits) = (Vec::new(), Vec::new());
    let mut count = 0;
    for line in lines {
        count += 1;
        let g: Json = serde_json::from_str(line).expect("a golden line is JSON");
        let id = g["id"].as_str().expect("an id");
        let input = g["input"].as_str().expect("an input");
        let loaded = treespec_loads(input, &reg);
        if let Some(err) = g.get("error") {
            check_field(
                &mut failures,
                &mut hits,
                id,
                "loads",
                loaded.map(|s| s.to_string()),
                err,
            );
            continue;
        }
        let spec = match loaded {
            Ok(spec) => spec,
            Err(e) => {
                check_field(&mut failures, &mut hits, id, "loads", Err(e), &g["str"]);
                continue;
            }
        };
        let f = &mut failures;
        let h = &mut hits;
        check_field(f, h, id, "str", spec.to_str(), &g["str"]);
        if g["num_leaves"].as_u64() != Some(spec.num_leaves() as u64) {
            f.push(format!(
                "{id}: num_leaves {} != {}",
                spec.num_leaves(),
                g["num_leaves"]
            ));
        }
        match g.get("dumps") {
            Some(d) => check_field(f, h, id, "dumps", treespec_dumps(&spec), d),
            None => check_field(f, h, id, "dumps", treespec_dumps(&spec), &g["dumps_error"]),
        }
        check_field(f, h, id, "pprint", treespec_pprint(&spec), &g["pprint"]);
        let leaves: Vec<Value> = (0..=spec.num_leaves() as i64).map(Value::int).collect();
        let unflat = tree_unflatten(&leaves, &spec).map(|v| v.repr().unwrap_or_default());
        check_field(f, h, id, "unflatten", unflat, &g["unflatten_error"]);
    }
    assert!(count > 200, "only {count} golden lines; {REGEN}");
    for (id, field, why) in UNSUPPORTED {
        if !hits.contains(&format!("{id}/{field}")) && !failures.iter().any(|m| m.starts_with(id)) {
            failures.push(format!(
                "{id}/{field} ({why}) is allow-listed but not reached"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} golden lines disagree with PyTorch ({REGEN} if the oracle changed):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn pytree_str_of_call_spec_shape() {
    // `print(ep.call_spec)`: the second child starts a new line, indented by 2.
    let s = r#"[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]"#;
    let spec = treespec_loads(s, &Registry::torch()).expect("loads");
    assert_eq!(
        spec.to_string(),
        "TreeSpec(tuple, None, [TreeSpec(tuple, None, [*]),\n  TreeSpec(dict, [], [])])"
    );
    assert_eq!(treespec_dumps(&spec).expect("dumps"), s);
}

#[test]
fn pytree_function_context_is_unsupported_not_guessed() {
    let s = r#"[1, {"type": "collections.namedtuple", "context": "collections.namedtuple", "children_spec": []}]"#;
    let spec = treespec_loads(s, &Registry::torch()).expect("loads");
    assert!(matches!(spec.to_str(), Err(Raise::Unsupported(_))));
}

fn spec_roundtrip(spec: &TreeSpec, reg: &Registry) -> Result<(), TestCaseError> {
    let text = treespec_dumps(spec).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    let back = treespec_loads(&text, reg).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    prop_assert_eq!(&back, spec, "{}", text);
    prop_assert_eq!(treespec_dumps(&back).ok(), Some(text));
    prop_assert_eq!(back.to_str().ok(), spec.to_str().ok());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pytree_dumps_loads_round_trip(tree in pytree_value(5)) {
        let reg = registry();
        let (_, spec) = tree_flatten(&tree, &reg);
        spec_roundtrip(&spec, &reg)?;
    }

    #[test]
    fn pytree_loaded_specs_round_trip(spec in loaded_treespec()) {
        spec_roundtrip(&spec, &registry())?;
    }

    #[test]
    fn pytree_flatten_unflatten_round_trip(tree in pytree_value(5)) {
        let reg = registry();
        let (leaves, spec) = tree_flatten(&tree, &reg);
        prop_assert_eq!(leaves.len(), spec.num_leaves());
        let back = tree_unflatten(&leaves, &spec).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert!(torchspec::pytree::value_eq(&back, &tree), "{:?} != {:?}", back.repr(), tree.repr());
        prop_assert_eq!(back.repr().ok(), tree.repr().ok());
        prop_assert_eq!(treespec_pprint(&spec).map(|_| ()).ok(), Some(()));
    }
}

#[test]
fn pytree_loads_is_total_on_every_prefix_of_the_golden_inputs() {
    // Evaluation never panics: every truncation of every input is a value
    // or a Python exception (or `Unsupported`).
    let text = std::fs::read_to_string(GOLDENS).expect("goldens");
    let reg = registry_from(&serde_json::from_str(text.lines().next().unwrap()).unwrap());
    for line in text.lines().skip(1).step_by(3) {
        let g: Json = serde_json::from_str(line).unwrap();
        let input = g["input"].as_str().unwrap();
        // At most ~100 cut points per input keeps this linear in the corpus.
        let step = (input.len() / 100).max(1);
        for (i, _) in input.char_indices().step_by(step) {
            let _ = treespec_loads(&input[..i], &reg).map(|s| (s.to_str(), treespec_dumps(&s)));
        }
    }
}
