//! The differential test: every corpus case, evaluated by the reference,
//! against PyTorch's golden (`corpus/goldens/torch-2.15.0/`). Divergences
//! print the case id and a diff; the allow-list may only shrink.

use std::path::Path;

use torchspec::conformance::{self, Verdict};

#[test]
fn corpus_agrees_with_pytorch_goldens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = conformance::run(root).unwrap_or_else(|e| panic!("{e}"));
    println!("{}", report.table());
    // An empty or vanished corpus must not pass as "no failures".
    assert!(
        report.cases.len() >= 2000,
        "only {} corpus cases found",
        report.cases.len()
    );
    let programs = report.cases.iter().filter(|c| c.kind == "program").count();
    assert!(
        programs >= 100,
        "only {programs} program rows found (corpus/programs/ vanished?)"
    );
    let agreeing = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Agree)
        .count();
    assert!(agreeing > 0, "no case agrees with PyTorch");
    let failures = report.failures();
    assert!(
        failures.is_empty(),
        "{} conformance failure(s); the table above counts them (run `cargo run --release -- check`):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
