//! Verdicts that cannot flatter (issue 16 item 6): `runs` is its own verdict,
//! pytree and schema exceptions are allow-list rows, an allow-list entry
//! records how its case fails, a missing golden file is a failing row, and
//! the live fuzzer's entries are untriaged. Each test builds a small corpus
//! root from the committed one.

use std::path::{Path, PathBuf};

use torchspec::conformance::{self, AllowEntry, Divergence, Report, Verdict};

const PROGRAM: &str = "odd-names";
const GOLDENS: &str = "corpus/goldens/torch-2.15.0";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn copy(root: &Path, rel: &str) {
    let to = root.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(repo().join(rel), to).unwrap_or_else(|e| panic!("{rel}: {e}"));
}

/// A corpus root holding no case file, the zoo program `odd-names` with its
/// goldens (report, probes, serialized bytes, weights), the pytree goldens, the schema cases and `allow` as allow-list.
fn scratch(tag: &str, allow: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("torchspec-verdicts-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("corpus/cases")).unwrap();
    copy(&root, &format!("corpus/programs/{PROGRAM}.pt2"));
    copy(&root, &format!("corpus/programs/{PROGRAM}.probes.jsonl"));
    for suffix in ["", ".probes", ".serialized"] {
        copy(
            &root,
            &format!("{GOLDENS}/programs/{PROGRAM}{suffix}.jsonl"),
        );
    }
    copy(&root, &format!("{GOLDENS}/weights/{PROGRAM}.jsonl"));
    copy(&root, &format!("{GOLDENS}/pytree/treespecs.jsonl"));
    copy(&root, conformance::schema::SCHEMA_CASES);
    std::fs::write(root.join(conformance::ALLOW_LIST), allow).unwrap();
    root
}

/// The allow-list lines for the committed pytree and schema exceptions.
fn known_exceptions() -> String {
    let text = std::fs::read_to_string(repo().join(conformance::ALLOW_LIST)).unwrap();
    text.lines()
        .filter(|l| l.contains("\"schema/") || l.contains("load-namedtuple-ordereddict"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn run(root: &Path) -> Report {
    conformance::run(root).unwrap_or_else(|e| panic!("{e}"))
}

fn row<'a>(report: &'a Report, id: &str) -> &'a conformance::CaseReport {
    report
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no row `{id}`"))
}

#[test]
fn a_kernel_error_against_runs_is_runs_never_agree() {
    let root = scratch("runs", &known_exceptions());
    let report = run(&root);
    let probe = row(&report, "odd-names/dtype");
    assert_eq!(probe.verdict, Verdict::Runs, "PyTorch's kernel raised");
    assert!(probe.failure().is_none(), "`runs` is not a failure");
    let t = report.totals();
    assert_eq!(t.runs, 1);
    assert_eq!(
        t.agree + t.runs + t.diverge + t.unsupported + t.missing,
        t.cases
    );
    let table = report.table();
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let runs = header
        .iter()
        .position(|h| *h == "runs")
        .expect("a `runs` column");
    let all: Vec<&str> = table.lines().last().unwrap().split_whitespace().collect();
    // `all` has no category cell.
    assert_eq!(all[runs - 1], "1", "{table}");
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn pytree_and_schema_exceptions_are_allow_listed_rows() {
    let root = scratch("rows", "");
    let report = run(&root);
    assert!(report.cases.iter().filter(|c| c.kind == "pytree").count() > 200);
    assert!(report.cases.iter().filter(|c| c.kind == "schema").count() >= 50);
    let failing: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.failure().is_some())
        .map(|c| c.id.as_str())
        .collect();
    // (Every schema row agrees since the loose list fields.)
    assert_eq!(failing, ["load-namedtuple-ordereddict"]);
    assert!(matches!(
        row(&report, "load-namedtuple-ordereddict").verdict,
        Verdict::Unsupported(_)
    ));
    // With the committed entries, they are allow-listed and pass.
    std::fs::write(root.join(conformance::ALLOW_LIST), known_exceptions()).unwrap();
    let report = run(&root);
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    assert_eq!(report.totals().allowed, 1);
    let _ = std::fs::remove_dir_all(&root);
}

fn entry(verdict: Option<&str>, differs: Option<&[&str]>) -> AllowEntry {
    AllowEntry {
        reason: "why".into(),
        verdict: verdict.map(str::to_string),
        differs: differs.map(|d| d.iter().map(|s| s.to_string()).collect()),
        untriaged: false,
    }
}

#[test]
fn an_allow_listed_case_must_fail_as_recorded() {
    let diverge = Verdict::Diverge(Divergence::new("diff", vec!["ok.repr".into()]));
    let unsupported = Verdict::Unsupported("not modelled".into());
    assert_eq!(
        entry(Some("diverge"), Some(&["ok.repr"])).mismatch(&diverge),
        None
    );
    assert_eq!(entry(None, None).mismatch(&diverge), None);
    assert_eq!(
        entry(Some("unsupported"), None).mismatch(&unsupported),
        None
    );
    let other_field = entry(Some("diverge"), Some(&["error.message"])).mismatch(&diverge);
    assert!(other_field.is_some_and(|m| m.contains("differs in [\"ok.repr\"]")));
    let other_kind = entry(Some("unsupported"), None).mismatch(&diverge);
    assert!(
        other_kind.is_some_and(|m| m.contains("allow-listed as `unsupported` but is `diverge`"))
    );
    for fixed in [Verdict::Agree, Verdict::Runs] {
        assert!(entry(None, None).mismatch(&fixed).is_some(), "{fixed:?}");
    }
    // And in the check: an entry recorded as a divergence of a row that is
    // unsupported fails.
    let allow = known_exceptions().replace(
        "\"verdict\": \"unsupported\"}",
        "\"verdict\": \"diverge\", \"differs\": [\"pprint\"]}",
    );
    let root = scratch("recorded", &allow);
    let failures = run(&root).failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures
        .iter()
        .all(|f| f.contains("is allow-listed as `diverge` but is `unsupported`")));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn allow_list_fields_are_read_and_checked() {
    let dir = std::env::temp_dir().join(format!("torchspec-allow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("allow.jsonl");
    let read = |text: &str| {
        std::fs::write(&path, text).unwrap();
        conformance::read_allow_list(&path)
    };
    let list = read(
        r#"{"id": "a", "reason": "r", "verdict": "diverge", "differs": ["z", "ok.repr"], "untriaged": true}"#,
    )
    .unwrap();
    assert_eq!(
        list["a"].differs.as_deref(),
        Some(&["ok.repr".to_string(), "z".to_string()][..])
    );
    assert!(list["a"].untriaged);
    for (bad, says) in [
        (
            r#"{"id": "a", "reason": "r", "verdict": "agree"}"#,
            "`verdict` must be",
        ),
        (
            r#"{"id": "a", "reason": "r", "differs": ["x"]}"#,
            "`differs` needs",
        ),
        (
            r#"{"id": "a", "reason": "r", "verdict": "diverge", "differs": "x"}"#,
            "array of strings",
        ),
        (
            r#"{"id": "a", "reason": "r", "untriaged": 1}"#,
            "must be a bool",
        ),
    ] {
        let e = read(bad).expect_err(bad).to_string();
        assert!(e.contains(says), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_golden_file_is_a_failing_row() {
    for (suffix, id, category) in [
        ("", "odd-names", "report"),
        (".probes", "odd-names/probes", "probes"),
        (".serialized", "odd-names#serialized", "serialized bytes"),
    ] {
        let root = scratch(&format!("missing{suffix}"), &known_exceptions());
        std::fs::remove_file(root.join(format!("{GOLDENS}/programs/{PROGRAM}{suffix}.jsonl")))
            .unwrap();
        let report = run(&root);
        let missing = row(&report, id);
        assert_eq!(missing.verdict, Verdict::MissingGolden, "{suffix}");
        assert_eq!(missing.category, category);
        assert!(missing
            .failure()
            .is_some_and(|f| f.contains("has no golden")));
        assert_eq!(report.failures().len(), 1, "{:?}", report.failures());
        let _ = std::fs::remove_dir_all(&root);
    }
    let root = scratch("missing-weights", &known_exceptions());
    std::fs::remove_file(root.join(format!("{GOLDENS}/weights/{PROGRAM}.jsonl"))).unwrap();
    let report = run(&root);
    let missing = row(&report, "odd-names#weights");
    assert_eq!(missing.verdict, Verdict::MissingGolden);
    assert_eq!(missing.category, "weights sha256");
    assert_eq!(report.failures().len(), 1, "{:?}", report.failures());
    let _ = std::fs::remove_dir_all(&root);
    let root = scratch("missing-pytree", &known_exceptions());
    std::fs::remove_file(root.join(format!("{GOLDENS}/pytree/treespecs.jsonl"))).unwrap();
    std::fs::remove_file(root.join(conformance::schema::SCHEMA_CASES)).unwrap();
    let report = run(&root);
    let missing: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::MissingGolden)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        missing,
        ["pytree/treespecs.jsonl", conformance::schema::SCHEMA_CASES]
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn untriaged_entries_have_their_own_column() {
    let untriaged = r#"{"id": "load-namedtuple-ordereddict", "reason": "live", "verdict": "unsupported", "untriaged": true}"#;
    let allow = known_exceptions()
        .lines()
        .filter(|l| !l.contains("load-namedtuple-ordereddict"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + untriaged;
    let root = scratch("untriaged", &allow);
    let report = run(&root);
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    let t = report.totals();
    assert_eq!((t.allowed, t.untriaged), (1, 1));
    let table = report.table();
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let col = header
        .iter()
        .position(|h| *h == "untriaged")
        .expect("an `untriaged` column");
    let all: Vec<&str> = table.lines().last().unwrap().split_whitespace().collect();
    // `no golden` is two words of the header, one cell of a row; `all` has
    // no category cell.
    assert_eq!(all[col - 2], "1", "{table}");
    let _ = std::fs::remove_dir_all(&root);
}
