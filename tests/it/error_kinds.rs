//! The reader's error as a Rust program matches on it (issue 36 item 2):
//! one `ErrorKind` per stage that refused, the cause as `source()`, and the
//! message, file, archive entry and JSON path as before.

use std::error::Error as _;
use std::path::{Path, PathBuf};

use torchspec::export::{ErrorKind, ExportedProgram};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn program_json(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/data/programs").join(name)).unwrap()
}

/// `bytes` written to a scratch file named `name`.
fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("torchspec-error-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[track_caller]
fn check(path: &Path, kind: ErrorKind, exception: Option<&str>, message_has: &str) {
    let e = ExportedProgram::load_path(path).expect_err("refused");
    assert_eq!(e.kind(), kind, "{e}");
    assert_eq!(e.exception.as_deref(), exception, "{e}");
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: ", path.display())), "{text}");
    assert!(text.contains(message_has), "{text}");
}

#[test]
fn each_stage_has_its_kind() {
    let mlp = std::fs::read(root().join("corpus/programs/mlp-dynamic.pt2")).unwrap();
    let linear = program_json("linear.json");
    let refused = |name: &str, bytes: &[u8], kind, exception: &str, message_has: &str| {
        check(&scratch(name, bytes), kind, Some(exception), message_has)
    };
    refused(
        "empty.pt2",
        b"",
        ErrorKind::NotAnArchive,
        "BadZipFile",
        "File is not a zip file",
    );
    refused(
        "truncated.pt2",
        &mlp[..mlp.len() - 10],
        ErrorKind::NotAnArchive,
        "BadZipFile",
        "",
    );
    refused(
        "garbage.json",
        b"{not json",
        ErrorKind::NotAProgram,
        "JSONDecodeError",
        "",
    );
    refused(
        "latin1.json",
        b"{\"a\": \"\xe9\"}",
        ErrorKind::NotAProgram,
        "UnicodeDecodeError",
        "",
    );
    refused(
        "major-9.json",
        linear.replace("\"major\": 8", "\"major\": 9").as_bytes(),
        ErrorKind::SchemaVersion,
        "SerializeError",
        "at $.schema_version: SerializeError: Serialized schema version",
    );
}

#[test]
fn a_program_pytorch_refuses_is_refused_with_its_exception() {
    let path = root().join("corpus/programs/custom-op.pt2");
    check(
        &path,
        ErrorKind::Refused,
        Some("SerializeError"),
        "in `models/model.json`: SerializeError: We failed to resolve torch.ops.torchspec.scale.default",
    );
}

#[test]
fn what_the_reference_does_not_model_is_unsupported() {
    // A device index past `DeviceIndex`'s range wraps in PyTorch; a CUDA
    // device at a negative wrapped index is not modelled (a CPU one is).
    let json = program_json("linear.json").replacen(
        r#""device": {"type": "cpu", "index": null}"#,
        r#""device": {"type": "cuda", "index": 200}"#,
        1,
    );
    let path = scratch("device-index.json", json.as_bytes());
    let e = ExportedProgram::load_path(&path).expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(
        e.to_string().ends_with(
            "unsupported by the reference loader: a cuda device index of 200 (`DeviceIndex` -56)"
        ),
        "{e}"
    );
}

#[test]
fn an_io_error_is_the_source() {
    let path = root().join("corpus/programs/no-such-program.json");
    let e = ExportedProgram::load_path(&path).expect_err("no file");
    assert_eq!(e.kind(), ErrorKind::Io);
    let io = e
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("the io::Error is the source");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(
        e.to_string(),
        format!("{}: cannot read: {io}", path.display())
    );
}

#[test]
fn the_logged_exception_is_the_source_of_the_fallbacks_refusal() {
    // An archive without its last byte: `load_pt2`'s stream reader raises
    // (logged), then `zipfile`'s pre-2.8 path refuses it.
    let zip = std::fs::read(root().join("corpus/programs/mlp-dynamic.pt2")).unwrap();
    let e = ExportedProgram::load_pt2(zip[..zip.len() - 1].to_vec(), Default::default())
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::NotAnArchive, "{e}");
    let logged = e.logged().expect("load_pt2's RuntimeError was logged");
    assert_eq!(
        logged.exception.as_deref(),
        Some("RuntimeError"),
        "{logged}"
    );
    assert_eq!(
        e.source().expect("a source").to_string(),
        logged.to_string()
    );
}
