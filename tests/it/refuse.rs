//! Programs `torch.export.load` refuses after one small change to a zoo
//! program (issue 20: the false accepts of the mutation run). Each test
//! edits the zoo archive's `models/model.json` in memory (a text
//! replacement, first occurrence) and expects the innermost exception
//! PyTorch raised or logged for the same edit, observed from torch 2.15.0
//! by loading the edited archive with `torch.export.load` (where the
//! failure is a RuntimeError, load() logs it and raises `RuntimeError: We
//! ran into an error when deserializing the saved file. ...`; the crate
//! reports the original exception).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use torchspec::export::archive::Pt2Archive;
use torchspec::export::registrations::Registrations;
use torchspec::export::schema::Mode;
use torchspec::export::ExportedProgram;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn zoo(name: &str) -> PathBuf {
    root().join("corpus/programs").join(format!("{name}.pt2"))
}

fn registrations() -> Arc<Registrations> {
    Arc::new(
        Registrations::read(root().join("corpus/programs/registrations.json"))
            .expect("registrations read"),
    )
}

/// The program JSON with each `(old, new)` replaced once, in order.
fn edited_json(name: &str, edits: &[(&str, &str)]) -> String {
    let json = Pt2Archive::open(zoo(name))
        .and_then(|mut a| a.read_program())
        .expect("zoo archive reads");
    let mut text = String::from_utf8(json).expect("utf-8");
    for (old, new) in edits {
        assert!(text.contains(old), "{name} has no {old}");
        text = text.replacen(old, new, 1);
    }
    text
}

/// The zoo archive with its program JSON edited, every other entry as is.
fn edited_pt2(name: &str, edits: &[(&str, &str)]) -> Vec<u8> {
    let json = edited_json(name, edits);
    let bytes = std::fs::read(zoo(name)).expect("zoo archive");
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zin.len() {
        let mut entry = zin.by_index(i).expect("entry");
        let entry_name = entry.name().to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("entry reads");
        if entry_name.ends_with("models/model.json") {
            data = json.clone().into_bytes();
        }
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        out.start_file(entry_name, options).expect("start");
        out.write_all(&data).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

fn json_error(name: &str, edits: &[(&str, &str)]) -> String {
    let json = edited_json(name, edits);
    match ExportedProgram::load_json_in(json.as_bytes(), Mode::Default, &registrations()) {
        Ok(_) => panic!("{name}: loaded a program PyTorch refuses"),
        Err(e) => e.to_string(),
    }
}

fn pt2_error(name: &str, edits: &[(&str, &str)]) -> String {
    let bytes = edited_pt2(name, edits);
    match ExportedProgram::load_pt2_in(bytes, Mode::Default, &registrations()) {
        Ok(_) => panic!("{name}: loaded a program PyTorch refuses"),
        Err(e) => e.to_string(),
    }
}

fn target(t: &str) -> String {
    format!("\"target\": \"{t}\"")
}

// Argument placement by the target's schema (`deserialize_inputs`).

#[test]
fn a_target_whose_schema_needs_an_argument_the_node_lacks_is_a_key_error() {
    // Observed from torch 2.15.0: KeyError: 'input' (tanh's `self` is not
    // batch_norm_gather_stats's first argument).
    let (old, new) = (
        target("torch.ops.aten.tanh.default"),
        target("torch.ops.aten.batch_norm_gather_stats.default"),
    );
    assert_eq!(
        json_error("strict-mode", &[(&old, &new)]),
        "KeyError: 'input'"
    );
}

#[test]
fn a_renamed_argument_is_missing_from_the_schema_walk() {
    // Observed from torch 2.15.0: KeyError: 'other' (the node inside the
    // no_grad subgraph).
    assert_eq!(
        json_error(
            "no-grad-region",
            &[("\"name\": \"other\"", "\"name\": \"bogus_arg\"")]
        ),
        "KeyError: 'other'"
    );
}

#[test]
fn a_mutable_overload_is_refused_by_the_aten_verifier() {
    // Observed from torch 2.15.0: addmm.out places its arguments (its
    // kwarg-only `out` has no default, so a missing one is skipped), then
    // the verifier refuses it.
    let (old, new) = (
        target("torch.ops.aten.addmm.default"),
        target("torch.ops.aten.addmm.out"),
    );
    assert_eq!(
        json_error("mlp-decomposed", &[(&old, &new)]),
        "SpecViolationError: operator 'aten.addmm.out' is not functional"
    );
}

#[test]
fn an_argument_without_a_kind_is_placed_by_the_old_rules() {
    // Observed from torch 2.15.0: loads (linear's `input` has no default
    // and is not kwarg-only: positional).
    let json = edited_json("mlp-static", &[(", \"kind\": 1}", "}")]);
    ExportedProgram::load_json_in(json.as_bytes(), Mode::Default, &registrations())
        .expect("PyTorch loads it");
}

// The signature verifier (`_verify_exported_program_signature`) and the
// graph lint of `Verifier._check_graph_module`.

#[test]
fn an_input_spec_naming_no_placeholder_is_refused() {
    // Observed from torch 2.15.0.
    let edit = (
        "\"user_input\": {\"arg\": {\"as_tensor\": {\"name\": \"x\"}}}",
        "\"user_input\": {\"arg\": {\"as_tensor\": {\"name\": \"dangling_x\"}}}",
    );
    assert_eq!(
        json_error("identity", &[edit]),
        "SpecViolationError: Input spec name dangling_x does not match node name x"
    );
}

#[test]
fn a_user_output_spec_naming_another_value_is_refused() {
    // Observed from torch 2.15.0 (the message ends with a space).
    let edit = (
        "\"user_output\": {\"arg\": {\"as_tensor\": {\"name\": \"x\"}}}",
        "\"user_output\": {\"arg\": {\"as_tensor\": {\"name\": \"dangling_x\"}}}",
    );
    assert_eq!(
        json_error("identity", &[edit]),
        "SpecViolationError: User output x is not in the correct order or is not found in the exported program's user_output list: ('dangling_x',). "
    );
}

#[test]
fn a_duplicated_input_spec_is_one_input_too_many() {
    // Observed from torch 2.15.0.
    let spec = "{\"parameter\": {\"arg\": {\"name\": \"p_qkv_weight\"}, \"parameter_name\": \"qkv.weight\"}}, ";
    let twice = format!("{spec}{spec}");
    assert_eq!(
        json_error("attention", &[(spec, &twice)]),
        "SpecViolationError: Number of graph inputs (5) does not match number of inputs in the graph signature (6)\nPlaceholders missing input_specs: set()\nInput_specs missing placeholders: set()"
    );
}

#[test]
fn a_buffer_or_parameter_missing_from_the_state_dict_is_refused() {
    // Observed from torch 2.15.0 (the archive's weights as saved).
    assert_eq!(
        pt2_error(
            "attention",
            &[(
                "\"buffer_name\": \"causal\"",
                "\"buffer_name\": \"causal_gone\""
            )]
        ),
        "in `models/model.json`: SpecViolationError: Buffer causal_gone is not in the state dict."
    );
    assert_eq!(
        pt2_error(
            "attention",
            &[(
                "\"parameter_name\": \"qkv.bias\"",
                "\"parameter_name\": \"qkv.gone\""
            )]
        ),
        "in `models/model.json`: SpecViolationError: Parameter qkv.gone is not in the state dict."
    );
    // The program JSON alone has no state dict to check against.
    let json = edited_json(
        "attention",
        &[(
            "\"buffer_name\": \"causal\"",
            "\"buffer_name\": \"causal_gone\"",
        )],
    );
    ExportedProgram::load_json_in(json.as_bytes(), Mode::Default, &registrations())
        .expect("no state dict, no state dict check");
}

#[test]
fn a_node_renamed_after_a_later_node_is_a_redefined_name() {
    // Observed from torch 2.15.0: `sync_fx_node` sets the name outside the
    // graph's namespace, and `Graph.lint()` (in the verifier) refuses it.
    assert_eq!(
        json_error(
            "dtypes",
            &[(
                "\"name\": \"_assert_tensor_metadata_default\"",
                "\"name\": \"to_4\""
            )]
        ),
        "RuntimeError: Node redefined name to_4!"
    );
}

#[test]
fn a_single_output_that_is_not_a_tensor_list_is_refused() {
    // Observed from torch 2.15.0 (`deserialize_multiple_outputs`).
    let out = r#""outputs": [{"as_tensor": {"name": "linear"}}]"#;
    assert_eq!(
        json_error("mlp-static", &[(out, r#""outputs": [{"as_int": 3}]"#)]),
        "AssertionError: expected list, got int"
    );
    assert_eq!(
        json_error("mlp-static", &[(out, r#""outputs": [{"as_ints": [3]}]"#)]),
        "AssertionError: expected TensorArgument, got int"
    );
}

// Range constraints, value metadata and node metadata.

#[test]
fn a_range_constraint_with_min_above_max_is_refused_before_the_graph() {
    // Observed from torch 2.15.0 (`ValueRanges(517, 512)` in
    // `ExportedProgramDeserializer.deserialize`).
    let edit = (
        r#""s17": {"min_val": 2, "max_val": null}"#,
        r#""s17": {"min_val": 517, "max_val": 512}"#,
    );
    assert_eq!(
        json_error("dim-auto", &[edit]),
        "ValueRangeError: Invalid ranges [517:512]"
    );
}

#[test]
fn a_hint_outside_its_symbols_range_is_refused() {
    // Observed from torch 2.15.0: the placeholder's size `s17` has hint 4
    // (`_update_var_to_range`).
    let edit = (
        r#""s17": {"min_val": 2, "max_val": null}"#,
        r#""s17": {"min_val": 18446744073709551616, "max_val": null}"#,
    );
    assert_eq!(
        json_error("dim-auto", &[edit]),
        "AssertionError: 4 not in VR[18446744073709551616, int_oo]"
    );
}

#[test]
fn an_unknown_dtype_or_an_integer_tensor_requiring_grad_is_refused() {
    // Observed from torch 2.15.0 (`_SERIALIZE_TO_TORCH_DTYPE[18]`, then
    // `torch.empty_strided(..., requires_grad=True)` of an int64 weight).
    assert_eq!(
        json_error("mlp-static", &[(r#""dtype": 7"#, r#""dtype": 18"#)]),
        "KeyError: 18"
    );
    let edit = (
        r#""dtype": 7, "sizes": [{"as_int": 8}, {"as_int": 4}], "requires_grad": true"#,
        r#""dtype": 5, "sizes": [{"as_int": 8}, {"as_int": 4}], "requires_grad": true"#,
    );
    assert_eq!(
        json_error("mlp-static", &[edit]),
        "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"
    );
}

#[test]
fn node_metadata_is_read_as_deserialize_metadata_reads_it() {
    // Observed from torch 2.15.0.
    let edit = (
        r#""nn_module_stack": "L__self__,,__main__._.<locals>.MLP;"#,
        r#""nn_module_stack": "a,(b,c;"#,
    );
    assert_eq!(
        json_error("mlp-static", &[edit]),
        "AssertionError: expected metadata_split to return 3 parts, got 2"
    );
    let edit = (
        r#""torch_fn": "lin"#,
        r#""custom": "{\u00e9}", "torch_fn": "lin"#,
    );
    assert_eq!(
        json_error("mlp-static", &[edit]),
        "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    );
}

#[test]
fn every_zoo_archive_passes_the_verifiers() {
    let dir = root().join("corpus/programs");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("zoo") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "pt2") {
            ExportedProgram::load_path_in(&path, Mode::Default, &registrations())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n > 20);
}
