//! TreeSpecs: the shapes PyTorch prints, and round-trip properties. The
//! goldens of `oracle/pytree_cases.py` (`corpus/goldens/torch-2.15.0/pytree/`)
//! are rows of the conformance check (`src/conformance/pytree.rs`).

use proptest::prelude::*;
use serde_json::Value as Json;
use torchspec::pytree::{
    tree_flatten, tree_unflatten, treespec_dumps, treespec_loads, treespec_pprint, Registry,
    TreeSpec,
};
use torchspec::pyval::Raise;
use torchspec::testing::pytree::{loaded_treespec, pytree_value, registry};

const GOLDENS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/corpus/goldens/torch-2.15.0/pytree/treespecs.jsonl"
);
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
    let header = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let reg = torchspec::conformance::pytree::registry_from(&header).unwrap();
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
