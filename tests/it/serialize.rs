//! The writing side: a transformed program written back (program JSON or
//! `.pt2`) and loaded again reports exactly what the in-memory program
//! reports; `transform -o` picks the format by extension and refuses any
//! other name; a program loaded from its JSON alone cannot become a `.pt2`.

use std::path::{Path, PathBuf};
use std::process::Command;

use torchspec::export::passes::transform;
use torchspec::export::schema::Mode;
use torchspec::export::ExportedProgram;

const PIPELINES: &[&[&str]] = &[
    &[],
    &["dce"],
    &["remove-runtime-assertions"],
    &["remove-runtime-assertions", "dce"],
    &["add-inline-constraint-assertions"],
    &["common-getitem-elimination"],
    &["remove-unnecessary-copy"],
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn zoo() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("corpus/programs"))
        .expect("zoo")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pt2"))
        .collect();
    files.sort();
    files
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("torchspec-ser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[test]
fn transformed_programs_round_trip_through_json_and_pt2() {
    let mut checked = 0;
    for file in zoo() {
        // Programs whose call spec needs classes registered in the process
        // do not load from the file alone (allow-listed).
        let Ok(ep) = ExportedProgram::load_path(&file) else {
            continue;
        };
        for passes in PIPELINES {
            let passes: Vec<String> = passes.iter().map(|s| s.to_string()).collect();
            let t = if passes.is_empty() {
                ep.clone()
            } else {
                match transform(&ep, &passes) {
                    Ok(t) => t,
                    Err(_) => continue,
                }
            };
            let want = torchspec::json::report(&t);
            let what = format!("{} {passes:?}", file.display());

            let json = t.to_json().unwrap_or_else(|e| panic!("{what}: {e}"));
            let back = ExportedProgram::load_json(json.as_bytes(), Mode::Strict)
                .unwrap_or_else(|e| panic!("{what}: written JSON does not load: {e}"));
            assert!(
                back.diagnostics.is_empty(),
                "{what}: {:?}",
                back.diagnostics
            );
            let mut want_no_sd = want.clone();
            want_no_sd
                .as_object_mut()
                .expect("report object")
                .remove("state_dict");
            assert_reloaded(&back, &want_no_sd, &what, true);
            // Written again, the loaded program writes the same bytes.
            assert_eq!(
                back.to_json().expect("second write"),
                json,
                "{what}: stable"
            );

            // A pre-2.8 archive's weights are pickled: only its JSON is
            // written back.
            if ep.archive.is_none() {
                let e = t.serialize_pt2("out").expect_err("no pt2 weights to carry");
                assert!(e.to_string().contains("pre-2.8"), "{what}: {e}");
                checked += 1;
                continue;
            }
            let pt2 = t
                .serialize_pt2("out")
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let back = ExportedProgram::load_pt2(pt2, Mode::Default)
                .unwrap_or_else(|e| panic!("{what}: written .pt2 does not load: {e}"));
            assert_reloaded(&back, &want, &what, false);
            assert_eq!(
                back.state_dict, ep.state_dict,
                "{what}: weights carried over"
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 200,
        "only {checked} programs x pipelines checked"
    );
}

/// The reloaded program reports what the written one did. One upstream
/// exception: an output whose getitem DCE erased is written as
/// `{node}_unused_{i}` (or, for a `None` output of a higher-order op, as
/// `as_none`), and loading makes a getitem of it again (as
/// `torch.export.load` does after `torch.export.save`); DCE on the
/// reloaded program erases them again.
fn assert_reloaded(back: &ExportedProgram, want: &serde_json::Value, what: &str, no_sd: bool) {
    let mut got = torchspec::json::report(back);
    if no_sd {
        got.as_object_mut()
            .expect("report object")
            .remove("state_dict");
    }
    if got["graph"] != want["graph"] {
        let graph = got["graph"].as_str().unwrap_or_default().to_string();
        assert!(
            graph.contains("_unused_") || graph.contains("%as_none :"),
            "{what}: graphs differ:\n{graph}\n{}",
            want["graph"]
        );
        let dced = transform(back, &["dce".to_string()]).expect("dce");
        assert_eq!(
            torchspec::json::report(&dced)["graph"],
            want["graph"],
            "{what}: graph after DCE"
        );
        got["graph"] = want["graph"].clone();
    }
    assert_eq!(&got, want, "{what}: round trip");
}

#[test]
fn untransformed_program_writes_its_input_bytes() {
    // mlp-static was written by torch.export.save; loading and writing it
    // again gives PyTorch's bytes (its tensors have storage offset 0).
    let file = root().join("corpus/programs/mlp-static.pt2");
    let mut archive = torchspec::export::archive::Pt2Archive::open(&file).expect("archive");
    let original = archive.read_program().expect("model.json");
    let ep = ExportedProgram::load_path(&file).expect("loads");
    assert_eq!(ep.to_json().expect("writes").as_bytes(), &original[..]);
}

#[test]
fn dce_names_outputs_left_without_a_getitem() {
    let ep =
        ExportedProgram::load_path(root().join("corpus/programs/multi-output.pt2")).expect("loads");
    let t = transform(&ep, &["dce".to_string()]).expect("dce");
    let json = t.to_json().expect("writes");
    // `unbind` lost its unused getitems: PyTorch names those outputs
    // `{node}_unused_{index}` (`_output_node_name_at_index`).
    assert!(json.contains("{\"name\": \"unbind_unused_1\"}"), "{json}");
    assert!(!json.contains("\"getitem_7\""), "{json}");
}

#[test]
fn pt2_from_a_bare_json_is_refused() {
    let ep =
        ExportedProgram::load_path(root().join("corpus/programs/mlp-static.pt2")).expect("loads");
    let json = ep.to_json().expect("writes");
    let bare = ExportedProgram::load_json(json.as_bytes(), Mode::Default).expect("loads");
    let err = bare.serialize_pt2("x").expect_err("no weights");
    assert_eq!(
        err.to_string(),
        "writing a .pt2 needs the weights of the program's pt2 archive, and this program was \
         loaded from its JSON alone or from a pre-2.8 archive, whose weights are pickled \
         (write a .json instead)"
    );
}

fn transform_cli(program: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_torchspec"))
        .arg("transform")
        .arg(program)
        .args(["--pass", "remove-runtime-assertions", "--pass", "dce", "-o"])
        .arg(out)
        .output()
        .expect("torchspec runs")
}

#[test]
fn transform_out_writes_json_or_pt2_by_extension() {
    let program = root().join("corpus/programs/unbacked-item.pt2");
    let json_out = temp("unbacked.json");
    let out = transform_cli(&program, &json_out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the report is printed");
    let written = std::fs::read(&json_out).expect("written");
    assert!(written.starts_with(b"{\"graph_module\": "));
    let back = ExportedProgram::load_json(&written, Mode::Default).expect("loads");
    assert_eq!(torchspec::json::report(&back)["graph"], printed["graph"]);

    let pt2_out = temp("unbacked-out.pt2");
    let out = transform_cli(&program, &pt2_out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let archive = torchspec::export::archive::Pt2Archive::open(&pt2_out).expect("a .pt2");
    assert_eq!(archive.root(), "unbacked-out");
    let back = ExportedProgram::load_path(&pt2_out).expect("loads");
    assert_eq!(torchspec::json::report(&back), printed);
}

#[test]
fn transform_out_refuses_other_extensions() {
    let program = root().join("corpus/programs/unbacked-item.pt2");
    let bad = temp("unbacked.txt");
    let out = transform_cli(&program, &bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "refused before any output");
    assert!(!bad.exists());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: cannot write `{}`: the output name must end in `.json` (the program JSON) \
             or `.pt2` (an archive, as torch.export.save writes it)\n",
            bad.display()
        )
    );
}

#[test]
fn transform_out_after_a_raising_pass_writes_nothing() {
    let program = root().join("corpus/programs/unbacked-item.pt2");
    let out_path = temp("raised.json");
    let out = Command::new(env!("CARGO_BIN_EXE_torchspec"))
        .arg("transform")
        .arg(&program)
        .args([
            "--pass",
            "remove-runtime-assertions",
            "--pass",
            "add-inline-constraint-assertions",
            "-o",
        ])
        .arg(&out_path)
        .output()
        .expect("torchspec runs");
    assert_eq!(out.status.code(), Some(2));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(printed["error"]["type"], "SpecViolationError");
    assert!(!out_path.exists());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: cannot write `{}`: a pass raised in PyTorch, so there is no program to write\n",
            out_path.display()
        )
    );
}
