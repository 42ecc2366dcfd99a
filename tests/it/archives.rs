//! `.pt2` files as `torch.export.load` reads them: truncations, bytes
//! before and after the zip, a zip stored inside the archive, a missing
//! weight file, a duplicate entry, files that are no zip at all. Each file
//! is built from its recipe in `tests/data/archives/cases.jsonl`, whose
//! outcomes `oracle/make_archive_cases.py` recorded under real torch.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use torchspec::export::ExportedProgram;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

/// The file a case line describes: `make_archive_cases.py`'s `build`.
fn build(line: &Json) -> Vec<u8> {
    let mut data = match line["base"].as_str() {
        Some(base) => std::fs::read(root().join(base)).expect("base archive"),
        None => Vec::new(),
    };
    let edit = &line["edit"];
    if let Some(h) = edit["hex"].as_str() {
        data = hex(h);
    }
    if let Some(n) = edit["truncate"].as_u64() {
        data.truncate(data.len() - n as usize);
    }
    if let Some(n) = edit["keep"].as_u64() {
        data.truncate(n as usize);
    }
    let mut out = hex(edit["prepend_hex"].as_str().unwrap_or(""));
    out.extend(data);
    out.extend(hex(edit["append_hex"].as_str().unwrap_or("")));
    out
}

fn outcome(path: &Path) -> Json {
    let exc = |e: &torchspec::export::Error| serde_json::json!({"type": e.exception.clone().unwrap_or_default(), "message": e.message});
    match ExportedProgram::load_path(path) {
        Ok(ep) => {
            let names: Vec<String> = ep
                .state_dict
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect();
            serde_json::json!({"ok": {"nodes": ep.graph_module.graph.len(), "state_dict": names}})
        }
        Err(e) => {
            let mut out = serde_json::json!({"error": exc(&e)});
            if let Some(logged) = e.logged() {
                out["logged"] = exc(logged);
            }
            out
        }
    }
}

#[test]
fn archives_load_as_torch_export_load_loads_them() {
    let cases = std::fs::read_to_string(root().join("tests/data/archives/cases.jsonl"))
        .expect("cases (written by oracle/make_archive_cases.py)");
    let dir = root().join("target/tmp/archive-cases");
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines() {
        let case: Json = serde_json::from_str(line).expect("case line");
        let id = case["id"].as_str().expect("id");
        let path = dir.join(format!("{id}.pt2"));
        std::fs::write(&path, build(&case)).unwrap();
        let got = outcome(&path);
        if got != case["torch"] {
            failures.push(format!(
                "{id}:\n  torch:     {}\n  torchspec: {got}",
                case["torch"]
            ));
        }
        count += 1;
    }
    assert!(count >= 17, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} archives load otherwise than in PyTorch \
         (cases by .oracle/bin/python oracle/make_archive_cases.py):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Bytes in memory are read as `torch.export.load(io.BytesIO(b))` would
/// read a zip: the nested archive's truncation is refused, never read as
/// the zip stored inside it.
#[test]
fn a_truncated_archive_never_shows_the_zip_inside_it() {
    let nested = std::fs::read(root().join("tests/data/archives/nested.pt2")).unwrap();
    for cut in [1, 10, 22, 100] {
        let bytes = nested[..nested.len() - cut].to_vec();
        let got = ExportedProgram::load_pt2(bytes, torchspec::export::schema::Mode::Default);
        let e = got.expect_err("a truncated archive is refused");
        assert!(
            matches!(e.exception.as_deref(), Some("BadZipFile" | "RuntimeError")),
            "cut {cut}: {e}"
        );
    }
}
