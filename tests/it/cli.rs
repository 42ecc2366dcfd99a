//! The command line: a malformed case file is a non-zero exit naming the
//! line; a good one prints one result line per case.

use std::process::Command;

fn eval(text: &str) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("torchspec-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join(format!("{}.jsonl", text.len()));
    std::fs::write(&file, text).expect("case file");
    Command::new(env!("CARGO_BIN_EXE_torchspec"))
        .arg("eval")
        .arg(&file)
        .output()
        .expect("torchspec runs")
}

#[test]
fn malformed_file_names_the_line() {
    let out = eval("{\"id\":\"a\",\"kind\":\"build\",\"value\":1}\n{\"id\":\"b\",\"kind\":\"build\",\"value\":{\"op\":\"plus\",\"args\":[1,2]}}\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no partial output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.ends_with(".jsonl:2: at $.value.op: unknown op `plus`\n"),
        "{err}"
    );
}

#[test]
fn results_come_one_per_case_in_order() {
    // Structure only: what the results say is the goldens' business.
    let out = eval(concat!(
        "{\"id\":\"a\",\"kind\":\"build\",\"value\":{\"tuple\":[1]}}\n",
        "{\"id\":\"b\",\"kind\":\"source_name\",\"source\":{\"GlobalSource\":{\"global_name\":\"g\"}}}\n",
    ));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a result line is JSON");
            assert!(v.get("ok").is_some(), "{l}");
            v["id"].as_str().expect("id").to_string()
        })
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

fn weights(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_torchspec"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("weights")
        .args(args)
        .output()
        .expect("torchspec runs")
}

#[test]
fn weights_out_writes_a_safetensors_file_of_every_tensor() {
    let dir = std::env::temp_dir().join(format!("torchspec-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("w.safetensors");
    let program = "corpus/weights/weights-shared-storage.pt2";
    let out = weights(&[program, "-o", file.to_str().expect("utf-8 path")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).expect("written");
    let st = safetensors::SafeTensors::deserialize(&bytes).expect("a safetensors file");
    let ep = torchspec::export::ExportedProgram::load_path(program).expect("loads");
    let tensors = ep.tensors().expect("tensors");
    assert_eq!(st.len(), tensors.iter().count());
    for t in tensors.iter() {
        let view = st.tensor(t.name()).expect("each name once");
        assert_eq!(view.shape(), t.shape(), "{}", t.name());
        assert_eq!(
            view.data(),
            &*t.to_contiguous().expect("bytes"),
            "{}",
            t.name()
        );
    }
    // The lines: one per tensor, state dict first.
    let out = weights(&[program, "--sha256"]);
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON");
            assert_eq!(v["sha256"].as_str().map(str::len), Some(64), "{l}");
            v["kind"].as_str().expect("kind").to_string()
        })
        .collect();
    assert_eq!(kinds.len(), tensors.iter().count());
    let first_constant = kinds.iter().position(|k| k == "constants");
    let first_constant = first_constant.expect("the program has constants");
    assert!(kinds[..first_constant].iter().all(|k| k == "state_dict"));
    assert!(kinds[first_constant..].iter().all(|k| k == "constants"));
}

#[test]
fn weights_out_refuses_a_dtype_safetensors_has_not() {
    let dir = std::env::temp_dir().join(format!("torchspec-weights-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("c.safetensors");
    let out = weights(&[
        "corpus/weights/weights-complex-wide.pt2",
        "-o",
        file.to_str().expect("utf-8 path"),
    ]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`b_complex32` is torch.complex32, which safetensors has no dtype for"),
        "{err}"
    );
    assert!(!file.exists(), "nothing written");
}
