//! The version matrix (`check --torch X`) and the drift report
//! (`torchspec drift A B`) on the committed golden sets of torch 2.14.1,
//! 2.13.0 and 2.15.0.

use std::collections::HashSet;
use std::path::Path;

use torchspec::conformance::{self, Verdict};
use torchspec::drift::{self, Class};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The ids of the lines that changed between `a` and `b`.
fn changed_ids(a: &str, b: &str) -> (drift::DriftReport, HashSet<String>) {
    let report = drift::compare(root(), a, b).unwrap_or_else(|e| panic!("{e}"));
    let ids = report
        .rows
        .iter()
        .flat_map(|r| r.changes.iter().map(|c| c.id.clone()))
        .collect();
    (report, ids)
}

/// The lines that changed between `a` and `b`, as (golden file relative to
/// its set, id): one id names a line of several program files.
fn changed_lines(report: &drift::DriftReport) -> HashSet<(String, String)> {
    report
        .rows
        .iter()
        .flat_map(|r| r.changes.iter().map(|c| (c.file.clone(), c.id.clone())))
        .collect()
}

/// A row of the matrix check as (golden file relative to the set of
/// `version`, line id): a serialized-bytes row `P#serialized` is line `P`.
fn row_line(c: &conformance::CaseReport, version: &str) -> (String, String) {
    let file = root().join(&c.file);
    let cases = root().join("corpus/cases");
    let regressions = root().join("corpus/regressions");
    let set = root().join(format!("corpus/goldens/torch-{version}"));
    let rel = file
        .strip_prefix(&cases)
        .map(|p| p.to_path_buf())
        .or_else(|_| {
            file.strip_prefix(&regressions)
                .map(|p| std::path::Path::new("regressions").join(p))
        })
        .or_else(|_| file.strip_prefix(&set).map(|p| p.to_path_buf()))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| c.file.to_string_lossy().into_owned());
    (rel, c.golden_id().to_string())
}

fn check_matrix(version: &str) {
    let report = conformance::run_matrix(root(), version).unwrap_or_else(|e| panic!("{e}"));
    println!("{}", report.matrix_table());
    let t = report.totals();
    let drift = t.drift;
    assert_eq!(
        t.agree + t.diverge + t.runs + t.drift + t.unsupported + t.missing,
        report.cases.len(),
        "every row has one verdict"
    );
    assert!(report.cases.len() >= 2000, "the corpus vanished");
    let (moved, _) = changed_ids(version, conformance::TARGET_TORCH);
    let moved_lines = changed_lines(&moved);
    // Goldens that moved exist between these versions (the issue's
    // `_source_to_access_path` change for 2.14.1), and the reference,
    // which follows 2.15.0, must show them as drift, not divergence.
    assert!(
        moved.changed > 0,
        "no golden moved between {version} and 2.15.0"
    );
    assert!(drift > 0, "golden lines moved but no row is drift");
    for c in &report.cases {
        match &c.verdict {
            Verdict::Drift(_) => assert!(
                moved_lines.contains(&row_line(c, version)),
                "`{}` is drift but its golden did not move",
                c.id
            ),
            Verdict::Diverge(_) => assert!(
                !moved_lines.contains(&row_line(c, version)),
                "`{}` moved between versions but counts as a divergence",
                c.id
            ),
            _ => {}
        }
    }
    // Divergences of the matrix are lines that did not move: each one is a
    // divergence (allow-listed or not) of the default check too.
    let base = conformance::run(root()).unwrap_or_else(|e| panic!("{e}"));
    let base_diverging: HashSet<&str> = base
        .cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Diverge(_)))
        .map(|c| c.id.as_str())
        .collect();
    for c in &report.cases {
        if matches!(c.verdict, Verdict::Diverge(_)) {
            assert!(
                base_diverging.contains(c.id.as_str()),
                "`{}` diverges from {version} only",
                c.id
            );
        }
    }
    // A moved line never fails the matrix check (not even as an
    // allow-listed line that "now agrees").
    for c in &report.cases {
        if moved_lines.contains(&row_line(c, version)) {
            assert!(c.failure().is_none(), "`{}` moved but fails", c.id);
        }
    }
}

#[test]
fn matrix_2_14_1_counts_moved_lines_as_drift() {
    check_matrix("2.14.1");
}

#[test]
fn matrix_2_13_0_counts_moved_lines_as_drift() {
    check_matrix("2.13.0");
}

#[test]
fn matrix_of_the_target_is_the_default_check() {
    let a = conformance::run_matrix(root(), "2.15.0").unwrap_or_else(|e| panic!("{e}"));
    let b = conformance::run(root()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.table(), b.table());
    assert_eq!(a.totals().drift, 0, "no drift against the target itself");
}

#[test]
fn a_missing_golden_set_is_a_clear_error() {
    let e = conformance::run_matrix(root(), "9.9.9").expect_err("no such set");
    assert!(
        e.to_string().contains("no golden set for torch 9.9.9")
            && e.to_string().contains("regen-goldens.sh --torch 9.9.9"),
        "{e}"
    );
    let e = drift::compare(root(), "2.15.0", "../x").expect_err("not a version");
    assert!(e.to_string().contains("not a torch version"), "{e}");
}

#[test]
fn drift_2_14_1_to_2_15_0_classifies_the_lookup_change() {
    let (report, _) = changed_ids("2.14.1", "2.15.0");
    let total: usize = report.rows.iter().map(|r| r.changes.len()).sum();
    assert!(total >= report.changed, "each changed line is in a class");
    // The `_parameters` collapse with a non-str index: lookup cases that
    // were `None` in 2.14.1 and walk the spec in 2.15.0.
    let lookups: Vec<_> = report
        .rows
        .iter()
        .flat_map(|r| r.changes.iter().map(move |c| (&r.class, c)))
        .filter(|(_, c)| c.id.starts_with("lookup-walk"))
        .collect();
    assert!(!lookups.is_empty(), "lookup-walk cases moved");
    assert!(lookups.iter().all(|(cl, _)| matches!(
        cl,
        Class::ReprAndJsonable | Class::OkToError | Class::ErrorToOk | Class::ReprOnly
    )));
    for row in &report.rows {
        assert!(
            row.changes.iter().any(|c| c.id == row.example.id),
            "the example of {} is one of its lines",
            row.class.title()
        );
    }
    let md = report.markdown();
    assert!(md.starts_with("# Drift: torch 2.14.1 → torch 2.15.0"));
    assert!(md.contains("python -c '"), "examples carry one-liners");
    // Same sets, no drift.
    let (same, _) = changed_ids("2.15.0", "2.15.0");
    assert_eq!(same.changed, 0);
    assert!(same.rows.is_empty());
}

#[test]
fn committed_drift_reports_are_up_to_date() {
    for (a, b) in [("2.14.1", "2.15.0"), ("2.13.0", "2.14.1")] {
        let path = root().join(format!("docs/drift/{a}-{b}.md"));
        let committed =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let fresh = drift::compare(root(), a, b)
            .unwrap_or_else(|e| panic!("{e}"))
            .markdown();
        assert!(
            committed == fresh,
            "{} is stale: run `cargo run --release -- drift {a} {b} > docs/drift/{a}-{b}.md`",
            path.display()
        );
    }
}
