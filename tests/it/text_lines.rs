//! `eval`'s result lines, written straight to JSON text (`case/text.rs`),
//! are byte for byte the lines of `eval_case` written through serde: on
//! every corpus case and regression, and on generated cases of each family.

use proptest::prelude::*;
use torchspec::case::eval::eval_case_into;
use torchspec::case::file::{eval_cases, eval_cases_holding, read_cases};
use torchspec::case::text::line_of;
use torchspec::case::{eval_case, Case};
use torchspec::testing::{derived, lookup, strategies};

fn check(case: &Case) -> Result<(), String> {
    let slow = line_of(&eval_case(case));
    let mut fast = Vec::new();
    eval_case_into(case, &mut fast, &mut String::new());
    if fast == slow {
        Ok(())
    } else {
        Err(format!(
            "case `{}`:\n  serde: {}\n  text:  {}",
            case.id,
            String::from_utf8_lossy(&slow),
            String::from_utf8_lossy(&fast)
        ))
    }
}

#[test]
fn corpus_lines_are_the_same() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files = Vec::new();
    for dir in ["cases", "regressions"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("corpus dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 10, "corpus files found: {}", files.len());
    let mut n = 0;
    for path in files {
        for (_, case) in read_cases(&path).expect("corpus file reads") {
            if let Err(e) = check(&case) {
                panic!("{}: {e}", path.display());
            }
            n += 1;
        }
    }
    assert!(n > 1000, "corpus cases checked: {n}");
}

#[test]
fn a_file_past_the_held_output_reads_twice_with_the_same_lines() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/cases/gen-lookup-s1.jsonl");
    let text = std::fs::read_to_string(&path).expect("corpus file");
    let (mut once, mut twice) = (Vec::new(), Vec::new());
    eval_cases(|| Ok(text.as_bytes()), &mut once).expect("evaluates");
    eval_cases_holding(|| Ok(text.as_bytes()), &mut twice, 200).expect("evaluates");
    assert!(once.len() > 2000, "lines: {}", once.len());
    assert_eq!(
        String::from_utf8_lossy(&once),
        String::from_utf8_lossy(&twice)
    );
    // A malformed last line: no line at all, whichever way it is read.
    let bad = format!("{text}{{\"id\": 1}}\n");
    let mut none = Vec::new();
    assert!(eval_cases_holding(|| Ok(bad.as_bytes()), &mut none, 200).is_err());
    assert!(none.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn build_lines_are_the_same(case in strategies::build_case()) {
        check(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn derived_lines_are_the_same(case in derived::derived_case()) {
        check(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lookup_lines_are_the_same(case in lookup::lookup_case()) {
        check(&case).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn source_name_lines_are_the_same(case in lookup::source_name_case()) {
        check(&case).map_err(TestCaseError::fail)?;
    }
}
