//! Insta snapshots of the reference's own renderings (reprs and jsonable
//! forms) for a curated set of specs in `tests/data/snapshot-cases.jsonl`.
//! These are ours, not PyTorch's: goldens live in `corpus/goldens/`.
//! Update with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).

use torchspec::case::file::parse_cases;
use torchspec::case::{eval_case, Outcome};

#[test]
fn curated_spec_renderings() {
    let text = include_str!("../data/snapshot-cases.jsonl");
    let cases = parse_cases(text).expect("snapshot cases parse");
    assert!(
        cases.len() >= 10,
        "the curated set shrank to {}",
        cases.len()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (_, case) in &cases {
            let rendered = match eval_case(case).outcome {
                Outcome::Ok(ok) => {
                    let repr = ok["repr"].as_str().unwrap_or_default().to_string();
                    let jsonable = serde_json::to_string_pretty(&ok["jsonable"]).expect("JSON");
                    format!("repr:\n{repr}\n\njsonable:\n{jsonable}")
                }
                Outcome::Error(e) => format!("error: {}: {}", e.type_name, e.message),
                Outcome::Unsupported(why) => format!("unsupported: {why}"),
            };
            insta::assert_snapshot!(case.id.as_str(), rendered);
        }
    });
    // `--unreferenced=reject`, without cargo-insta: every stored snapshot
    // belongs to a curated case.
    let ids: Vec<&str> = cases.iter().map(|(_, c)| c.id.as_str()).collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    for entry in std::fs::read_dir(&dir).expect("snapshots dir") {
        let entry = entry.expect("dir entry");
        // Subfolders hold other tests' snapshots (`programs/`).
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let id = name.trim_end_matches(".snap");
        assert!(
            ids.contains(&id),
            "snapshots/{name} belongs to no case in tests/data/snapshot-cases.jsonl: delete it"
        );
    }
}
