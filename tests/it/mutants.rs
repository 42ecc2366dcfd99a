//! The mutant fuzzer's pieces that need no PyTorch: the change between a zoo
//! program's JSON and a mutant's as hunks, shrinking them, writing them
//! back as `(old, new)` edits, and the oracle's outcome records read as
//! readings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use torchspec::conformance::mutants::{apply_edits, program_json, with_program_json, Reading};
use torchspec::conformance::programs::zoo_registrations;
use torchspec::conformance::Verdict;
use torchspec::live::mutants::Mutants;
use torchspec::live::mutants::{apply_hunks, edits_of, hunks, shrink_hunks};
use torchspec::live::oracle::OracleFailure;
use torchspec::live::Step;

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

/// A fake oracle: mutant `mutant` of mlp-dynamic, which "PyTorch" refuses
/// with a planted `KeyError` whenever the text holds `planted` and loads
/// otherwise; the C++ reader always loads.
fn planted_oracle(
    mutant: String,
    planted: &'static str,
) -> impl FnMut(&str, &str, &Json) -> Result<Json, OracleFailure> {
    move |kind, _id, body| {
        let text = match kind {
            "mutant" => mutant.clone(),
            _ => body["model_json"].as_str().unwrap_or_default().to_string(),
        };
        Ok(planted_reply(kind, "mlp-dynamic", text, planted))
    }
}

/// The fake oracle's reply to `kind` (`mutant` or `mutant_load`) on program
/// JSON `text` of `program`: "PyTorch" refuses it with a planted `KeyError`
/// when it holds `planted` and loads it otherwise; the C++ reader loads.
pub fn planted_reply(kind: &str, program: &str, text: String, planted: &str) -> Json {
    let python = if text.contains(planted) {
        json!({"outcome": "error", "type": "RuntimeError", "message": "We ran into an error",
               "original": {"type": "KeyError", "message": "'planted'"}})
    } else {
        json!({"outcome": "ok"})
    };
    let cpp = json!({"outcome": "ok", "written_back": "same"});
    let golden = json!({"python": python, "cpp": cpp}).to_string();
    let mut reply = json!({"python": python, "cpp": cpp, "golden": golden});
    if kind == "mutant" {
        reply["program"] = program.into();
        reply["class"] = "schema_version".into();
        reply["mutation"] = "planted".into();
        reply["model_json"] = text.into();
    }
    reply
}

fn scratch_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("torchspec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let programs = root.join("corpus/programs");
    std::fs::create_dir_all(&programs).unwrap();
    std::fs::create_dir_all(root.join("corpus/cases")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs");
    for f in ["mlp-dynamic.pt2", "registrations.json"] {
        std::fs::copy(repo.join(f), programs.join(f)).unwrap();
    }
    root
}

#[test]
fn a_planted_difference_is_kept_as_a_mutant_the_check_fails_until_allow_listed() {
    let root = scratch_root("mutants");
    let registrations = zoo_registrations(&root).unwrap();
    // Two changes; only the minor version is what "PyTorch" refuses.
    let mutant = zoo_text()
        .replacen("\"minor\": 20}", "\"minor\": 21}", 1)
        .replacen("\"max_val\": 64}", "\"max_val\": 63}", 1);
    let mut oracle = planted_oracle(mutant, "\"minor\": 21}");
    let mut m = Mutants::new(&root, registrations.clone(), false);
    let mut t = Duration::ZERO;
    let (step, tallies) = m.judge_with(&mut oracle, 1, 0, &mut t);
    let Step::Diverge { signature, .. } = step else {
        panic!("no divergence: {step:?}");
    };
    assert_eq!(
        signature,
        "mutant schema_version: PyTorch KeyError, torchspec loads"
    );
    assert!(
        tallies.contains(&"Python and C++ readers disagree".to_string()),
        "{tallies:?}"
    );
    // Python refuses where C++ loads: an upstream packet.
    let upstream: Vec<_> = std::fs::read_dir(root.join("docs/upstream"))
        .unwrap()
        .collect();
    assert_eq!(upstream.len(), 1);

    let kept = m
        .keep_with(&mut oracle, &root, 50, 0, &signature, &mut t)
        .unwrap()
        .expect("kept");
    let file = torchspec::conformance::mutants::read_mutant(&root.join(&kept.path)).unwrap();
    // Shrunk to the one change that matters.
    assert_eq!(file.edits.len(), 1, "{:?}", file.edits);
    assert!(file.edits[0].1.contains("\"minor\": 21}"));
    let golden = root.join(format!(
        "corpus/goldens/torch-2.15.0/mutants/{}.json",
        kept.name
    ));
    assert!(golden.exists());

    // The check reads it back: a divergence, allow-listed as untriaged.
    let report = torchspec::conformance::run(&root).unwrap();
    let row = report
        .cases
        .iter()
        .find(|c| c.id == kept.name)
        .expect("a mutant row");
    assert!(
        matches!(row.verdict, Verdict::Diverge(_)),
        "{:?}",
        row.verdict
    );
    assert!(row.allowed.as_ref().is_some_and(|a| a.untriaged));
    assert!(row.failure().is_none(), "{:?}", row.failure());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_agreeing_mutant_is_agreement() {
    let root = scratch_root("mutants-agree");
    let registrations = zoo_registrations(&root).unwrap();
    let mut oracle = planted_oracle(zoo_text(), "never there");
    let mut m = Mutants::new(&root, registrations, false);
    let mut t = Duration::ZERO;
    let (step, tallies) = m.judge_with(&mut oracle, 1, 0, &mut t);
    assert_eq!(step, Step::Agree);
    assert!(
        tallies.contains(&"class schema_version: agree".to_string()),
        "{tallies:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
