//! The mutant fuzzer's pieces that need no PyTorch: the change between a zoo
//! program's JSON and a mutant's as hunks, shrinking them, writing them
//! back as `(old, new)` edits, and the oracle's outcome records read as
//! readings.

use proptest::prelude::*;
use serde_json::json;
use torchspec::conformance::mutants::{apply_edits, program_json, with_program_json, Reading};
use torchspec::live::mutants::{apply_hunks, edits_of, hunks, shrink_hunks};

fn zoo_text() -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs/mlp-dynamic.pt2");
    program_json(&std::fs::read(path).expect("zoo archive")).expect("program JSON")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any set of replacements: the hunks rebuild the mutant, and so do the
    /// edits written from them.
    #[test]
    fn hunks_and_edits_rebuild_the_mutant(
        changes in prop::collection::vec((0usize..10_000, 0usize..12, "[a-z\"{}:, 0-9]{0,6}"), 1..5)
    ) {
        let old = zoo_text();
        let mut new = old.clone();
        for (at, len, text) in changes {
            let mut at = at % new.len();
            while !new.is_char_boundary(at) { at -= 1; }
            let mut end = (at + len).min(new.len());
            while !new.is_char_boundary(end) { end += 1; }
            new.replace_range(at..end, &text);
        }
        let h = hunks(&old, &new);
        prop_assert_eq!(apply_hunks(&old, &h), new.clone());
        let edits = edits_of(&old, &h);
        prop_assert_eq!(apply_edits(&old, &edits), Some(new));
    }
}

#[test]
fn shrinking_drops_the_hunks_the_signature_does_not_need() {
    let old = zoo_text();
    let new = old
        .replacen("\"max_val\": 64}", "\"max_val\": 1}", 1)
        .replacen("\"major\": 8,", "\"major\": 9,", 1);
    let all = hunks(&old, &new);
    assert_eq!(all.len(), 2, "{all:?}");
    // The "signature" needs only the schema version change.
    let (left, steps) = shrink_hunks(&old, all, 100, |t| t.contains("\"major\": 9,"));
    assert_eq!(left.len(), 1);
    assert!(steps >= 1);
    assert!(apply_hunks(&old, &left).contains("\"major\": 9,"));
    assert!(!apply_hunks(&old, &left).contains("\"max_val\": 1}"));
}

#[test]
fn an_archive_with_its_program_json_replaced_reads_back() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs/mlp-dynamic.pt2");
    let bytes = std::fs::read(path).unwrap();
    let text = zoo_text().replacen("\"minor\": 20}", "\"minor\": 21}", 1);
    let rewritten = with_program_json(&bytes, &text).unwrap();
    assert_eq!(program_json(&rewritten).unwrap(), text);
}

#[test]
fn oracle_outcomes_read_as_readings() {
    // torch.export.load: the deserializer's own exception ("original"), not
    // load()'s generic RuntimeError.
    let python = json!({"outcome": "error", "type": "RuntimeError", "message": "We ran into...",
                        "original": {"type": "KeyError", "message": "'other'"}});
    assert_eq!(
        Reading::of_python(&python),
        Some(Reading::Raises {
            exception: Some("KeyError".into()),
            message: "'other'".into()
        })
    );
    assert_eq!(
        Reading::of_python(&json!({"outcome": "ok"})),
        Some(Reading::Loads)
    );
    assert_eq!(
        Reading::of_cpp(&json!({"outcome": "error", "type": "RuntimeError", "message": "m"})),
        Some(Reading::Raises {
            exception: Some("RuntimeError".into()),
            message: "m".into()
        })
    );
    assert_eq!(Reading::of_python(&json!({"outcome": "timeout"})), None);
}
