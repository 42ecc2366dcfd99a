//! Each name declared once: `oracle/names.json` is what `torchspec::names`
//! writes from the Rust declarations (`Pass`, `CaseKind`, the pipelines),
//! no other file keeps its own list of pass names, and the goldens and the
//! case corpus hold exactly the declared pipelines and kinds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use torchspec::case::CaseKind;
use torchspec::export::passes::Pass;
use torchspec::names::{names_json, GOLDEN_PIPELINES, NAMES_JSON};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// As rust-analyzer's `ensure_file_contents`: a stale file is rewritten,
/// and the test fails so the new one is reviewed and committed.
#[test]
fn names_json_is_written_from_the_declarations() {
    let path = root().join(NAMES_JSON);
    let want = names_json();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        std::fs::write(&path, &want).expect("write oracle/names.json");
        panic!(
            "{NAMES_JSON} was not what the Rust declarations (src/names.rs, `Pass`, \
             `CaseKind`) write; it has been rewritten: review and commit it \
             (`cargo test --test it names` checks it again)"
        );
    }
}

/// The files, under `dir`, whose name ends in one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, exts, out);
        } else if exts.iter().any(|e| p.to_string_lossy().ends_with(e)) {
            out.push(p);
        }
    }
}

/// A pass name is written, quoted, only by its declaration, by the code of
/// the pass in the oracle (`capture_programs.py`'s `make_pass`) and in `names.json`:
/// every other list, help text and pipeline reads the declaration.
#[test]
fn pass_names_are_written_once() {
    let root = root();
    let mut paths = Vec::new();
    for dir in ["src", "crates", "benches", "oracle", "fuzz/fuzz_targets"] {
        files(&root.join(dir), &[".rs", ".py", ".sh", ".json"], &mut paths);
    }
    let expected: BTreeSet<&str> = [
        "crates/export/src/passes/mod.rs",
        "oracle/capture_programs.py",
        "oracle/names.json",
    ]
    .into();
    for pass in Pass::ALL {
        let quoted = [format!("\"{pass}\""), format!("'{pass}'")];
        let found: BTreeSet<String> = paths
            .iter()
            .filter(|p| {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                quoted.iter().any(|q| text.contains(q.as_str()))
            })
            .map(|p| {
                p.strip_prefix(&root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
        assert_eq!(
            found, expected,
            "the files that spell pass `{pass}` in quotes: read it from `Pass` \
             (Rust) or oracle/names.json (Python, shell) instead"
        );
    }
}

/// Every program golden (`NAME.jsonl`, `NAME.serialized.jsonl`) of every
/// torch version, and each `METADATA.json`, holds the declared pipelines in
/// their order.
#[test]
fn golden_pipelines_are_the_goldens() {
    let want: Vec<Vec<String>> = GOLDEN_PIPELINES
        .iter()
        .map(|p| p.iter().map(|p| p.name().to_string()).collect())
        .collect();
    let goldens = root().join("corpus/goldens");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&goldens)
        .expect("corpus/goldens")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("programs").is_dir())
        .collect();
    versions.sort();
    assert!(!versions.is_empty());
    for version in versions {
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(version.join("METADATA.json")).expect("METADATA.json"),
        )
        .expect("METADATA.json is JSON");
        let meta_pipelines: Vec<Vec<String>> =
            serde_json::from_value(meta["program_pipelines"].clone()).expect("pipelines");
        assert_eq!(meta_pipelines, want, "{}/METADATA.json", version.display());
        let mut paths = Vec::new();
        files(&version.join("programs"), &[".jsonl"], &mut paths);
        for path in paths.iter().filter(|p| {
            let name = p.to_string_lossy();
            !name.ends_with(".probes.jsonl") && !name.ends_with("-probes.jsonl")
        }) {
            let text = std::fs::read_to_string(path).expect("golden reads");
            let have: Vec<Vec<String>> = text
                .lines()
                .map(|l| {
                    let line: serde_json::Value = serde_json::from_str(l).expect("golden line");
                    serde_json::from_value(line["passes"].clone()).expect("`passes`")
                })
                .collect();
            assert_eq!(
                have,
                want,
                "{}: its pipelines are not `torchspec::names::GOLDEN_PIPELINES` \
                 (oracle/regen-goldens.sh --programs-only)",
                path.display()
            );
        }
    }
}

/// Each declared case kind has case files in `corpus/cases/`, and no case
/// file there holds another kind.
#[test]
fn case_kinds_are_the_corpus() {
    let mut paths = Vec::new();
    files(&root().join("corpus/cases"), &[".jsonl"], &mut paths);
    let mut seen = BTreeSet::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("case file reads");
        for line in text.lines().filter(|l| !l.is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).expect("case line");
            let kind = case["kind"].as_str().unwrap_or_default();
            let known = CaseKind::from_name(kind)
                .unwrap_or_else(|| panic!("{}: undeclared kind `{kind}`", path.display()));
            seen.insert(known.name());
        }
    }
    let declared: BTreeSet<&str> = CaseKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(seen, declared, "the case kinds of corpus/cases/*.jsonl");
}
