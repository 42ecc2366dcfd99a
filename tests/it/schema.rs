//! The schema 8.20 wire types: round trips of programs saved by PyTorch, and
//! each refusal word for word (that the generated code is up to date is
//! `xtask`'s test).

use std::path::Path;

use torchspec::export::schema::{dump_program, load_program, Mode};

fn program_files() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/programs");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn programs_round_trip_byte_for_byte() {
    let files = program_files();
    assert!(!files.is_empty());
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        for mode in [Mode::Default, Mode::Strict] {
            let loaded =
                load_program(&bytes, mode).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(
                loaded.diagnostics.is_empty(),
                "{}: {:?}",
                file.display(),
                loaded.diagnostics
            );
            let out = dump_program(&loaded.program);
            assert!(
                out.as_bytes() == bytes.as_slice(),
                "{}: dump differs from PyTorch's model.json",
                file.display()
            );
            let via_tree = torchspec::pyjson::dumps(&loaded.program.to_pyjson()).unwrap();
            assert!(via_tree == out, "{}: `to_pyjson` differs", file.display());
        }
    }
}

const CASES: &str = include_str!("../data/schema/cases.jsonl");

/// Strict mode's diagnostics, in walk order.
const STRICT: &[(&str, &[&str])] = &[
    (
        "version_newer_minor",
        &["at $.schema_version.minor: schema version 8.21 is newer than this reader's 8.20"],
    ),
    (
        "unknown_fields",
        &[
            "at $.extra: unknown field `extra` of `ExportedProgram`",
            "at $.graph_module.graph.nodes[0].future: unknown field `future` of `Node`",
        ],
    ),
    (
        "unknown_enum_values",
        &[
            "at $.graph_module.graph.nodes[0].inputs[0].kind: unknown `ArgumentKind` value 5",
            "at $.graph_module.graph.nodes[0].inputs[1].arg.as_scalar_type: unknown `ScalarType` value 77",
            "at $.graph_module.graph.tensor_values[\"x\"].dtype: unknown `ScalarType` value 99",
            "at $.graph_module.graph.tensor_values[\"x\"].layout: unknown `Layout` value 42",
        ],
    ),
];

/// One case line in both modes. What PyTorch does with it (its refusal or
/// its reading, in the default mode) is a row of the conformance check
/// (`src/conformance/schema.rs`, exceptions in `corpus/allow-list.jsonl`);
/// here: strict mode refuses and reads exactly what the default mode does,
/// with the diagnostics of `STRICT`, except that it refuses the raw values
/// of loose fields (rule `loose-field`) the default mode reads.
fn check(case: &serde_json::Value) {
    let name = case["name"].as_str().unwrap();
    let input: Vec<u8> = match case.get("input") {
        Some(text) => text.as_str().unwrap().as_bytes().to_vec(),
        None => {
            let hex = case["input_hex"].as_str().unwrap();
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect()
        }
    };
    let default = load_program(&input, Mode::Default);
    let strict = load_program(&input, Mode::Strict);
    match (default, strict) {
        (Err(_), Err(s)) if s.to_string().contains("strict rule `loose-field`") => {}
        (Err(d), Err(s)) => assert_eq!(d.to_string(), s.to_string(), "{name}"),
        (Ok(d), Ok(s)) => {
            assert!(d.diagnostics.is_empty(), "{name}");
            assert_eq!(dump_program(&d.program), dump_program(&s.program), "{name}");
            let expected: &[&str] = STRICT
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(&[], |(_, d)| d);
            let diagnostics: Vec<String> = s.diagnostics.iter().map(|d| d.to_string()).collect();
            assert_eq!(diagnostics, expected, "{name} (strict)");
        }
        (Ok(_), Err(s)) if s.to_string().contains("strict rule `loose-field`") => {}
        (d, s) => panic!("{name}: modes disagree: {:?} / {:?}", d.err(), s.err()),
    }
}

#[test]
fn strict_mode_reads_and_refuses_as_the_default_mode() {
    let mut n = 0;
    for line in CASES.lines() {
        check(&serde_json::from_str(line).unwrap());
        n += 1;
    }
    assert!(n >= 50, "{n} cases");
}

/// The schema walk recurses with the document; at the deepest nesting
/// `pyjson` accepts it must not overflow a test thread's stack (2 MiB, debug).
#[test]
fn deepest_document_does_not_overflow_the_stack() {
    let base = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/programs/linear.json"),
    )
    .unwrap();
    let needle = r#""arg": {"as_tensor": {"name": "x"}}"#;
    assert!(base.contains(needle));
    // `as_string_to_argument` nests two JSON levels per step.
    for steps in [496, 600] {
        let nested = format!(
            "{}{{\"as_int\": 1}}{}",
            r#"{"as_string_to_argument": {"k": "#.repeat(steps),
            "}}".repeat(steps)
        );
        let text = base.replacen(needle, &format!("\"arg\": {nested}"), 1);
        match load_program(text.as_bytes(), Mode::Strict) {
            Ok(loaded) => {
                assert!(steps < 500);
                let out = dump_program(&loaded.program);
                assert_eq!(out.len(), text.len());
            }
            Err(e) => {
                assert!(steps >= 500);
                assert!(
                    e.to_string()
                        .starts_with("json nested deeper than 1000 levels"),
                    "{e}"
                );
            }
        }
    }
}

/// Type forms schema.yaml 8.20 does not use are refused by the generator,
/// never mapped by a guess.
const PROGRAMS: &[&str] = &[
    include_str!("../data/programs/cond.json"),
    include_str!("../data/programs/dyn.json"),
    include_str!("../data/programs/linear.json"),
    include_str!("../data/programs/scalars.json"),
    include_str!("../data/programs/unicode.json"),
];

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(200))]
    /// A program with one twist anywhere is read or refused, never a panic;
    /// both modes agree on which (strict mode also refuses a loose field's
    /// raw value); what is read writes back stably.
    #[test]
    fn twisted_programs_are_read_or_refused(
        which in 0..PROGRAMS.len(),
        (steps, twist) in torchspec::testing::pyjson::arb_twist(),
    ) {
        use torchspec::pyjson;
        let mut doc = pyjson::loads(PROGRAMS[which]).unwrap();
        torchspec::testing::pyjson::apply_twist(&mut doc, &steps, twist);
        let text = pyjson::dumps(&doc).unwrap();
        let default = load_program(text.as_bytes(), Mode::Default);
        let strict = load_program(text.as_bytes(), Mode::Strict);
        match (default, strict) {
            (Ok(d), Ok(s)) => {
                proptest::prop_assert!(d.diagnostics.is_empty());
                let out = dump_program(&d.program);
                proptest::prop_assert_eq!(&dump_program(&s.program), &out);
                let again = load_program(out.as_bytes(), Mode::Default).unwrap();
                proptest::prop_assert_eq!(dump_program(&again.program), out);
            }
            // Strict mode stops at the first loose field's raw value,
            // before whatever Python then trips on.
            (Err(_), Err(s)) if s.to_string().contains("strict rule `loose-field`") => {}
            (Err(d), Err(s)) => proptest::prop_assert_eq!(d.to_string(), s.to_string()),
            (Ok(d), Err(s)) if s.to_string().contains("strict rule `loose-field`") => {
                proptest::prop_assert!(d.diagnostics.is_empty());
                let out = dump_program(&d.program);
                let again = load_program(out.as_bytes(), Mode::Default).unwrap();
                proptest::prop_assert_eq!(dump_program(&again.program), out);
            }
            (d, s) => proptest::prop_assert!(false, "modes disagree: {:?} / {:?}", d.err(), s.err()),
        }
    }
}
