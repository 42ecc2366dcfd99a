//! Reading exported programs: archive and JSON errors word for word (never
//! a panic or a large allocation), both input forms agreeing, strict mode,
//! and insta snapshots of the graph text before and after each pass (our
//! renderings; PyTorch's are the goldens under `corpus/goldens/`).

use std::io::Write;
use std::path::{Path, PathBuf};

use torchspec::export::archive::Pt2Archive;
use torchspec::export::schema::Mode;
use torchspec::export::ExportedProgram;

fn zoo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/programs")
        .join(format!("{name}.pt2"))
}

fn program_json(name: &str) -> Vec<u8> {
    Pt2Archive::open(zoo(name))
        .and_then(|mut a| a.read_program())
        .expect("zoo archive reads")
}

/// A stored (uncompressed) zip of `entries`.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in entries {
        w.start_file(*name, opts).expect("start entry");
        w.write_all(data).expect("write entry");
    }
    w.finish().expect("finish zip").into_inner()
}

fn load_err(bytes: Vec<u8>) -> String {
    match ExportedProgram::load_pt2(bytes, Mode::Default) {
        Ok(_) => panic!("loaded a broken archive"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn archive_errors_name_what_is_wrong() {
    let good = std::fs::read(zoo("identity")).expect("zoo archive");
    // What `torch.export.load` raises (a stream reader's `RuntimeError` is
    // caught and the file read as the pre-2.8 layout, whose refusal it is).
    const FALLBACK: &str = "RuntimeError: We ran into an error when deserializing the saved file";
    let v: [(&str, &[u8]); 2] = [("arc/.data/version", b"3\n"), ("arc/archive_version", b"0")];
    let with_version = |entries: &[(&str, &[u8])]| {
        let mut all = entries.to_vec();
        all.extend_from_slice(&v);
        zip_of(&all)
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            good[..good.len() / 2].to_vec(),
            "BadZipFile: File is not a zip file",
        ),
        ("empty", Vec::new(), "BadZipFile: File is not a zip file"),
        (
            "no version record",
            zip_of(&[("arc/archive_format", b"pt2")]),
            FALLBACK,
        ),
        (
            "no program",
            with_version(&[("arc/archive_format", b"pt2")]),
            FALLBACK,
        ),
        (
            "other program",
            with_version(&[
                ("arc/archive_format", b"pt2"),
                ("arc/models/other.json", b"{}"),
            ]),
            "archive `arc` has no program `models/model.json` (programs: other)",
        ),
        (
            "wrong format",
            with_version(&[("arc/archive_format", b"zip")]),
            "AssertionError: Invalid archive format",
        ),
        (
            "no format",
            with_version(&[("arc/models/model.json", b"{}")]),
            FALLBACK,
        ),
    ];
    for (what, bytes, expected) in cases {
        let err = load_err(bytes);
        assert!(
            err.starts_with(expected),
            "{what}: got `{err}`, expected `{expected}`"
        );
    }
}

#[test]
fn a_huge_declared_size_is_refused_before_reading() {
    let mut bytes = zip_of(&[
        ("arc/archive_format", b"pt2"),
        ("arc/models/model.json", b"{}"),
    ]);
    // Declare 4 GiB - 1 for model.json in both its local and central headers.
    let name = b"arc/models/model.json";
    let mut patched = 0;
    for sig in [[0x50u8, 0x4b, 0x03, 0x04], [0x50, 0x4b, 0x01, 0x02]] {
        let (size_at, name_at) = if sig[2] == 3 { (22, 30) } else { (24, 46) };
        let mut i = 0;
        while i + name_at + name.len() <= bytes.len() {
            if bytes[i..i + 4] == sig && &bytes[i + name_at..i + name_at + name.len()] == name {
                bytes[i + size_at..i + size_at + 4].copy_from_slice(&0xffff_fffeu32.to_le_bytes());
                patched += 1;
            }
            i += 1;
        }
    }
    assert_eq!(patched, 2, "test archive layout changed");
    // miniz refuses the directory (a stored entry whose sizes differ), so
    // `torch.export.load` falls back and refuses; nothing is allocated.
    let err = load_err(bytes);
    assert!(
        err.starts_with("RuntimeError: We ran into an error when deserializing"),
        "{err}"
    );
}

#[test]
fn json_errors_carry_python_text_and_path() {
    let cases: Vec<(&[u8], &str)> = vec![
        (b"", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
        (b"{\"graph_module\": ", "JSONDecodeError: Expecting value: line 1 column 18 (char 17)"),
        (b"\xff", "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ];
    for (input, expected) in cases {
        let err = ExportedProgram::load_json(input, Mode::Default)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(expected), "got `{err}`, expected `{expected}`");
    }
    // A newer major version is PyTorch's SerializeError at its path.
    let text = String::from_utf8(program_json("identity")).expect("utf-8");
    let bumped = text.replace("\"major\": 8", "\"major\": 9");
    let err = ExportedProgram::load_json(bumped.as_bytes(), Mode::Default)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        err,
        "at $.schema_version: SerializeError: Serialized schema version SchemaVersion(major=9, minor=20) does not match our current schema version (8, 20)."
    );
}

#[test]
fn strict_mode_reports_what_default_mode_ignores() {
    let text = String::from_utf8(program_json("identity")).expect("utf-8");
    let extended = text.replacen(
        "{\"graph_module\": {",
        "{\"graph_module\": {\"extra\": 1, ",
        1,
    );
    let lenient =
        ExportedProgram::load_json(extended.as_bytes(), Mode::Default).expect("default mode");
    assert!(lenient.diagnostics.is_empty());
    let strict =
        ExportedProgram::load_json(extended.as_bytes(), Mode::Strict).expect("strict mode");
    let found: Vec<String> = strict.diagnostics.iter().map(|d| d.to_string()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("$.graph_module.extra"), "{found:?}");
}

#[test]
fn json_and_archive_give_the_same_report() {
    for name in [
        "multi-output",
        "derived-dims",
        "cond",
        "buffer-mutation-decomposed",
    ] {
        let from_pt2 = ExportedProgram::load_path(zoo(name)).expect("archive loads");
        let from_json =
            ExportedProgram::load_json(&program_json(name), Mode::Default).expect("json loads");
        let mut a = torchspec::json::report(&from_pt2);
        let b = torchspec::json::report(&from_json);
        assert!(a
            .as_object_mut()
            .and_then(|m| m.remove("state_dict"))
            .is_some());
        assert_eq!(a, b, "{name}");
        // And it writes back PyTorch's bytes.
        assert_eq!(
            torchspec::export::schema::dump_program(&from_json.serialized).as_bytes(),
            program_json(name).as_slice(),
            "{name}"
        );
    }
}

/// Graph text before and after each pass, for a handful of programs.
#[test]
fn graph_text_before_and_after_passes() {
    let programs = [
        "unbacked-nonzero",
        "multi-output",
        "buffer-mutation-decomposed",
        "cond",
    ];
    let pipelines: &[&[&str]] = &[
        &[],
        &["dce"],
        &["remove-runtime-assertions", "dce"],
        &[
            "remove-runtime-assertions",
            "add-inline-constraint-assertions",
        ],
        &["common-getitem-elimination"],
        &["remove-unnecessary-copy"],
    ];
    let mut names = Vec::new();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots/programs");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for p in programs {
            let ep = ExportedProgram::load_path(zoo(p)).expect("zoo program loads");
            for pipeline in pipelines {
                let passes: Vec<String> = pipeline.iter().map(|s| s.to_string()).collect();
                let rendered = match torchspec::export::passes::transform(&ep, &passes) {
                    Ok(t) => format!(
                        "{}\n\n{}",
                        t.graph_module.graph.to_python_string(),
                        t.graph_module.signature
                    ),
                    Err(e) => format!("error: {e}"),
                };
                let name = if pipeline.is_empty() {
                    p.to_string()
                } else {
                    format!("{p}+{}", pipeline.join("+"))
                };
                insta::assert_snapshot!(name.as_str(), rendered);
                names.push(name);
            }
        }
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/programs");
    for entry in std::fs::read_dir(&dir).expect("snapshots/programs") {
        let file = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let id = file.trim_end_matches(".snap");
        assert!(
            names.iter().any(|n| n == id),
            "snapshots/programs/{file} is unreferenced: delete it"
        );
    }
}

/// Malformed probe lines (`check-inputs`): each is a `bad_probe` naming its
/// line and JSON path, word for word, and the lines around it are still
/// read.
#[test]
fn malformed_probe_lines_name_line_and_path() {
    use torchspec::export::inputs::probe::parse_probes;
    let ok = r#"{"id": "a", "args": {"tuple": []}, "kwargs": {"dict": []}}"#;
    let last = r#"{"id": "z", "kind": "ok", "args": {"tuple": []}, "kwargs": {"dict": []}}"#;
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("[1]", None, "at $: a probe must be a JSON object"),
        ("{\"id\": 1}", None, "at $.id: must be a string"),
        (
            r#"{"args": {"tuple": []}, "kwargs": {"dict": []}}"#,
            None,
            "at $: missing key `id`",
        ),
        (
            r#"{"id": "b", "args": {"tuple": []}}"#,
            Some("b"),
            "at $: missing key `kwargs`",
        ),
        (
            r#"{"id": "b", "kind": 3, "args": {"tuple": []}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.kind: must be a string",
        ),
        (
            r#"{"id": "a", "args": {"tuple": []}, "kwargs": {"dict": []}}"#,
            Some("a"),
            "at $.id: duplicate id \"a\"",
        ),
        (
            r#"{"id": "b", "args": [], "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args: must be a {\"tuple\": [...]}",
        ),
        (
            r#"{"id": "b", "args": {"tuple": [{"tensor": {"shape": [2, -1], "dtype": "float32"}}]}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args.tuple[0].tensor.shape: must be non-negative integers",
        ),
        (
            r#"{"id": "b", "args": {"tuple": [{"tensor": {"shape": [2], "dtype": "float33"}}]}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args.tuple[0].tensor.dtype: unknown dtype 'float33'",
        ),
        (
            r#"{"id": "b", "args": {"tuple": [{"tensor": {"shape": [3], "dtype": "float32", "data": [1.0, 2.0]}}]}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args.tuple[0].tensor.data: has shape [2], not [3]",
        ),
        (
            r#"{"id": "b", "args": {"tuple": [{"tensor": {"shape": [2, 2], "dtype": "float32", "data": [[1.0, 2.0], [3.0]]}}]}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args.tuple[0].tensor.data: is not the nested lists of numbers of shape [2, 2]",
        ),
        (
            r#"{"id": "b", "args": {"tuple": [{"set": []}]}, "kwargs": {"dict": []}}"#,
            Some("b"),
            "at $.args.tuple[0]: unknown object `set`",
        ),
        (
            r#"{"id": "b", "args": {"tuple": []}, "kwargs": {"dict": [["k"]]}}"#,
            Some("b"),
            "at $.kwargs.dict[0]: a dict entry must be a [key, value] pair",
        ),
        (
            r#"{"id": "b", "args": {"tuple": []}, "kwargs": {"dict": [[[], 1]]}}"#,
            Some("b"),
            "at $.kwargs.dict[0]: TypeError: unhashable type: 'list'",
        ),
        (
            "{\"id\"",
            None,
            "invalid JSON: Expecting ':' delimiter: line 1 column 6 (char 5)",
        ),
    ];
    for (line, id, expected) in cases {
        let text = format!("{ok}\n\n{line}\n{last}\n");
        let lines = parse_probes(&text);
        assert_eq!(lines.len(), 3, "for {line}");
        assert!(lines[0].is_ok() && lines[2].is_ok(), "neighbours of {line}");
        let bad = lines[1].as_ref().expect_err(line);
        assert_eq!(
            (bad.line, bad.id.as_deref(), bad.error.to_string().as_str()),
            (3, *id, *expected),
            "for {line}"
        );
        assert_eq!(
            torchspec::json::to_serde(&bad.to_json())["bad_probe"]["line"],
            3
        );
    }
}

/// Probe-format v1: `kind` is optional, unknown keys are ignored, `data`
/// is nested lists, absent, or `[]` for a shape with a zero-size dim, ints
/// of any size and the `$float` forms are VALUEs.
#[test]
fn probe_lines_read_as_specified() {
    use torchspec::export::inputs::probe::parse_probes;
    let lines = [
        r#"{"id": "p0", "args": {"tuple": [{"tensor": {"shape": [0, 3], "dtype": "float32", "data": []}}]}, "kwargs": {"dict": []}}"#,
        r#"{"id": "p1", "args": {"tuple": [{"tensor": {"shape": [2, 0], "dtype": "int64", "data": [[], []]}}]}, "kwargs": {"dict": []}, "note": "x", "outcome": 1}"#,
        r#"{"id": "p2", "kind": "ok", "args": {"tuple": [{"tensor": {"shape": [3, 0, 2], "dtype": "bool", "data": []}}, 123456789012345678901234567890, {"$float": "-inf"}]}, "kwargs": {"dict": [["k", {"tensor": {"shape": [], "dtype": "float8_e4m3fn", "data": 1.5}}]]}}"#,
        r#"{"id": "p3", "args": {"tuple": [{"tensor": {"shape": [2, 2], "dtype": "bfloat16"}}]}, "kwargs": {"dict": []}}"#,
    ];
    let parsed = parse_probes(&lines.join("\n"));
    let ids: Vec<_> = parsed
        .iter()
        .map(|l| l.as_ref().map(|p| (p.id.as_str(), p.kind.as_deref())))
        .map(|r| r.map_err(|b| b.error.to_string()))
        .collect();
    assert_eq!(
        ids,
        vec![
            Ok(("p0", None)),
            Ok(("p1", None)),
            Ok(("p2", Some("ok"))),
            Ok(("p3", None))
        ]
    );
    let p2 = parsed[2].as_ref().unwrap();
    assert_eq!(p2.args[1].repr().unwrap(), "123456789012345678901234567890");
    assert_eq!(p2.args[2].repr().unwrap(), "-inf");
}

/// What the loading process registered decides what needs it: without
/// `registrations.json` a custom op does not resolve and a registered
/// pytree type is missing (the loader raises as a fresh `import torch`
/// does: `tests/it/ops.rs` has the custom op's text); with it both agree
/// with the goldens the conformance check compares.
#[test]
fn registrations_decide_custom_ops_and_pytree_types() {
    use std::sync::Arc;
    use torchspec::export::passes::transform;
    use torchspec::export::registrations::Registrations;

    let regs = Arc::new(
        Registrations::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs/registrations.json"),
        )
        .expect("registrations read"),
    );
    let dce = vec!["dce".to_string()];

    let e = ExportedProgram::load_path(zoo("custom-op")).expect_err("torchspec ops unregistered");
    assert!(
        e.to_string().contains(
            "SerializeError: We failed to resolve torch.ops.torchspec.scale.default to an operator."
        ),
        "{e}"
    );
    let ep = ExportedProgram::load_path_in(zoo("custom-op"), Mode::Default, &regs)
        .expect("loads with them");
    let after = transform(&ep, &dce).expect("DCE runs");
    let graph = after.graph_module.graph.to_python_string();
    assert!(
        graph.contains("torch.ops.torchspec.add_into.default"),
        "the mutating op is impure and stays:\n{graph}"
    );

    let e = ExportedProgram::load_path(zoo("pytree-types")).expect_err("Point is not registered");
    assert!(e.to_string().contains("NotImplementedError"), "{e}");
    let ep = ExportedProgram::load_path_in(zoo("pytree-types"), Mode::Default, &regs)
        .expect("loads with Point and Pair registered");
    let report = torchspec::json::report(&ep);
    assert!(
        report["in_spec_str"]
            .as_str()
            .is_some_and(|s| s.contains("<class 'zoo_types.Point'>") && s.contains("TreeSpec(Pair")),
        "{report}"
    );
}

/// The pre-2.8 layout (`version` and `serialized_exported_program.json` at
/// the root): read as `torch.export.load`'s fallback reads it, its checks
/// worded as PyTorch words them.
#[test]
fn legacy_archives_are_read_or_refused_as_pytorch_does() {
    let program = Pt2Archive::open(zoo("mlp-static"))
        .and_then(|mut a| a.read_program())
        .expect("zoo program");
    let full = |version: &[u8]| {
        zip_of(&[
            ("serialized_exported_program.json", &program),
            ("serialized_state_dict.pt", b"x"),
            ("serialized_constants.pt", b"x"),
            ("serialized_example_inputs.pt", b"x"),
            ("version", version),
        ])
    };
    let ep = ExportedProgram::load_pt2(full(b"8.20"), Mode::Default).expect("legacy loads");
    assert!(ep.state_dict.as_ref().is_some_and(|sd| !sd.is_empty()));
    assert!(load_err(full(b"8"))
        .contains("AssertionError: Version in the saved file has incorrect length"));
    assert!(load_err(full(b"9.0")).contains(
        "RuntimeError: Serialized version ['9', '0'] does not match our current schema version (8, 20)."
    ));
    let no_inputs = zip_of(&[
        ("serialized_exported_program.json", &program),
        ("serialized_state_dict.pt", b"x"),
        ("serialized_constants.pt", b"x"),
        ("version", b"8.20"),
    ]);
    assert!(load_err(no_inputs).contains("AssertionError: serialized_example_inputs is None"));
    let no_program = zip_of(&[("version", b"8.20")]);
    assert!(load_err(no_program).contains("AssertionError: serialized_exported_program is None"));
}

/// Probes derived from a program alone (what the `program` fuzz target
/// checks): the saved hints pass the shape guards, and a static dim one
/// smaller is the guard failure PyTorch raises for the zoo's own
/// static-dim probe.
/// The committed `corpus/programs/NAME.derived-probes.jsonl` are what
/// `torchspec probes` writes now (their answers are checked against
/// PyTorch's goldens by the conformance check). After a change to the
/// deriver, rewrite them and re-capture the goldens with the commands the
/// README gives.
#[test]
fn derived_probe_files_are_current() {
    use torchspec::conformance::programs::derived_probe_lines;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regs = std::sync::Arc::new(
        torchspec::export::registrations::Registrations::read(
            root.join("corpus/programs/registrations.json"),
        )
        .expect("registrations read"),
    );
    let mut checked = 0;
    for file in torchspec::conformance::programs::program_files(root).expect("zoo lists") {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let ep = ExportedProgram::load_path_in(&file, Mode::Default, &regs).expect("zoo loads");
        let (lines, left_out) = derived_probe_lines(&ep, &stem);
        // pytree-types' example inputs hold `zoo_types.Point`, a global the
        // bounded pickle reader never resolves: its sample probe is left out.
        let refused_sample = |why: &String| {
            why.starts_with(&format!("probe `{stem}/sample` left out"))
                && why.contains("refusing to load the global `zoo_types.")
        };
        if stem == "pytree-types" {
            assert!(
                left_out.len() == 1 && refused_sample(&left_out[0]),
                "{stem}: {left_out:?}"
            );
        } else {
            assert!(left_out.is_empty(), "{stem}: {left_out:?}");
        }
        let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let path = file.with_extension("derived-probes.jsonl");
        let got = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            got == want,
            "{} is stale: rewrite it with `torchspec probes {} --registrations \
             corpus/programs/registrations.json` and re-capture the goldens",
            path.display(),
            file.display()
        );
        assert!(
            !lines.is_empty() || stem == "no-inputs",
            "{stem}: no probes"
        );
        checked += 1;
    }
    assert!(checked >= 60, "the zoo vanished");
}

#[test]
fn derived_probes_cover_every_family() {
    use torchspec::export::inputs::program_probes::derive_probes;
    let kinds = |name: &str| -> Vec<String> {
        let ep = ExportedProgram::load_path(zoo(name)).expect("zoo program loads");
        derive_probes(&ep)
            .into_iter()
            .filter_map(|p| p.kind)
            .collect()
    };
    let derived = kinds("derived-dims");
    for kind in [
        "ok",
        "dim-below-min",
        "dim-at-min",
        "dim-at-max",
        "dim-above-max",
        "zero-size",
        "derived-dim",
        "wrong-rank",
        "dtype",
        "structure",
        "extra-kwarg",
    ] {
        assert!(
            derived.iter().any(|k| k == kind),
            "derived-dims: no `{kind}` probe"
        );
    }
    let nested = kinds("nested-inputs");
    for kind in ["static-dim", "missing-kwarg", "misnamed-kwarg"] {
        assert!(
            nested.iter().any(|k| k == kind),
            "nested-inputs: no `{kind}` probe"
        );
    }
    assert!(kinds("scalar-inputs").iter().any(|k| k == "scalar-range"));
}
