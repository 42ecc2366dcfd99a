//! Library footguns (issue 16 item 8): `to_json` writes the program as it
//! is (after a transform, the transformed one), and an error from inside an
//! archive keeps its Python exception and JSON path.

use std::path::Path;

use torchspec::export::passes::transform;
use torchspec::export::schema::{dump_program, Mode};
use torchspec::export::serialize::pt2::write_pt2;
use torchspec::export::ExportedProgram;

fn zoo(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("corpus/programs/{name}.pt2"))
}

/// The sha256 of the `models/model.json` `torch.export.save` wrote for `id`
/// (`goldens/.../programs/NAME.serialized.jsonl`).
fn saved_sha256(name: &str, id: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "corpus/goldens/torch-2.15.0/programs/{name}.serialized.jsonl"
    ));
    let text = std::fs::read_to_string(path).unwrap();
    let line: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|g: &serde_json::Value| g["id"] == id)
        .expect("the golden line");
    line["serialized"]["sha256"]
        .as_str()
        .expect("a sha256")
        .to_string()
}

#[test]
fn to_json_after_a_transform_is_the_transformed_program() {
    let ep = ExportedProgram::load_path(zoo("multi-output")).expect("loads");
    let t = transform(&ep, &["dce".to_string()]).expect("dce runs");
    let json = t.to_json().expect("writes");
    assert_ne!(json, dump_program(&ep.serialized), "not the input program");
    assert_eq!(
        sha256_hex(json.as_bytes()),
        saved_sha256("multi-output", "multi-output+dce"),
        "what torch.export.save writes after dce"
    );
}

/// A schema case PyTorch refuses with an exception at a JSON path.
fn refused_case() -> (String, String, String) {
    let cases = include_str!("../data/schema/cases.jsonl");
    let case: serde_json::Value = cases
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|c: &serde_json::Value| c["name"] == "wrong_type_dict_for_list")
        .expect("the case");
    let s = |k: &str| case[k].as_str().unwrap().to_string();
    (s("input"), s("path"), s("error"))
}

#[test]
fn an_error_inside_an_archive_keeps_its_exception_and_path() {
    let (input, path, error) = refused_case();
    let (exception, message) = error.split_once(": ").unwrap();
    let base = std::fs::read(zoo("identity")).unwrap();
    let pt2 = write_pt2(&base, "bad", input.as_bytes()).expect("an archive");
    let e = ExportedProgram::load_pt2(pt2, Mode::Default).expect_err("PyTorch refuses it");
    assert_eq!(e.exception.as_deref(), Some(exception), "{e}");
    assert_eq!(e.message, message);
    assert_eq!(e.path.as_deref(), Some(path.as_str()));
    assert_eq!(e.entry.as_deref(), Some("models/model.json"));
    assert_eq!(
        e.to_string(),
        format!("in `models/model.json`: at {path}: {error}")
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
