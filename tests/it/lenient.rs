//! What `torch.export.load` reads on with and where it then trips (issue
//! 20): the loose fields `_dict_to_dataclass` does not type-check, and
//! `expr_str` through `sympy.sympify`. Each line of
//! `tests/data/lenient/cases.jsonl` is a zoo program with one edit of its
//! `models/model.json` and PyTorch's outcome (written by
//! `oracle/make_lenient_cases.py` from torch 2.15.0: the innermost
//! exception, as `oracle/mutant_outcomes.py` records it). A loose edit must
//! also be refused in strict mode, naming the rule.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value as Json;
use torchspec::export::registrations::Registrations;
use torchspec::export::schema::Mode;
use torchspec::export::ExportedProgram;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The zoo archive with each `(old, new)` replaced once in its program JSON.
fn edited_pt2(program: &str, edits: &[(String, String)]) -> Vec<u8> {
    let path = root()
        .join("corpus/programs")
        .join(format!("{program}.pt2"));
    let bytes = std::fs::read(path).expect("zoo archive");
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut entry = zin.by_index(i).expect("entry");
        let name = entry.name().to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("entry reads");
        if name.ends_with("models/model.json") {
            let mut text = String::from_utf8(data).expect("utf-8");
            for (old, new) in edits {
                assert!(text.contains(old.as_str()), "{program} has no {old}");
                text = text.replacen(old.as_str(), new, 1);
            }
            data = text.into_bytes();
        }
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        out.start_file(name, options).expect("start");
        out.write_all(&data).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

fn check(case: &Json, registrations: &Arc<Registrations>) -> Result<(), String> {
    let name = case["name"].as_str().unwrap_or("?");
    let program = case["program"].as_str().expect("program");
    let edits: Vec<(String, String)> = case["edits"]
        .as_array()
        .expect("edits")
        .iter()
        .map(|e| {
            (
                e[0].as_str().unwrap().to_string(),
                e[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pytorch = &case["pytorch"];
    let bytes = edited_pt2(program, &edits);
    let ours = ExportedProgram::load_pt2_in(bytes.clone(), Mode::Default, registrations);
    match (pytorch["outcome"].as_str(), ours) {
        (Some("ok"), Ok(_)) => {}
        (Some("ok"), Err(e)) => return Err(format!("{name}: PyTorch loads it, we refuse: {e}")),
        (_, Ok(_)) => {
            return Err(format!(
                "{name}: PyTorch raises {}: {}, we load it",
                pytorch["type"], pytorch["message"]
            ))
        }
        (_, Err(e)) => {
            let want = format!(
                "{}: {}",
                pytorch["type"].as_str().unwrap_or("?"),
                pytorch["message"].as_str().unwrap_or("?")
            );
            let got = e.to_string();
            if !got.ends_with(&want) {
                return Err(format!("{name}:\n  want `{want}`\n  got  `{got}`"));
            }
        }
    }
    if case["loose"].as_bool() == Some(true) {
        match ExportedProgram::load_pt2_in(bytes, Mode::Strict, registrations) {
            Ok(_) => return Err(format!("{name}: strict mode loads a loose value")),
            Err(e) if !e.to_string().contains("strict rule `loose-field`") => {
                return Err(format!("{name}: strict mode does not name the rule: {e}"))
            }
            Err(_) => {}
        }
    }
    Ok(())
}

#[test]
fn loose_fields_and_expr_str_as_torch_export_load_reads_them() {
    let registrations = Arc::new(
        Registrations::read(root().join("corpus/programs/registrations.json"))
            .expect("registrations read"),
    );
    let text = std::fs::read_to_string(root().join("tests/data/lenient/cases.jsonl"))
        .expect("cases (oracle/make_lenient_cases.py writes them)");
    let mut failures = Vec::new();
    let mut n = 0;
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).expect("a JSON line");
        n += 1;
        if let Err(f) = check(&case, &registrations) {
            failures.push(f);
        }
    }
    assert!(n > 0);
    assert!(
        failures.is_empty(),
        "{} of {n} cases disagree with torch 2.15.0 (tests/data/lenient/cases.jsonl, written by `.oracle/bin/python oracle/make_lenient_cases.py`):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
