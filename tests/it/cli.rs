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
