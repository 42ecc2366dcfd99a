//! `reader-inspect` on every corpus archive: it never panics, and what it
//! prints agrees with PyTorch's goldens (`corpus/goldens/torch-2.15.0/`):
//! the user inputs and range constraints of the program report, its
//! operator counts, and each parameter's name, dtype and shape as
//! `oracle/weights.py` lists them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn archives() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["corpus/programs", "corpus/weights"] {
        for e in std::fs::read_dir(root().join(dir)).expect("corpus folder") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "pt2") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The first line of a golden file, parsed.
fn golden(kind: &str, stem: &str) -> Option<Vec<Value>> {
    let path = root().join(format!("corpus/goldens/torch-2.15.0/{kind}/{stem}.jsonl"));
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .map(|l| serde_json::from_str(l).expect("golden line"))
            .collect(),
    )
}

/// `{s77: VR[2, 64], u0: VR[0, int_oo]}` as `s77: [2, 64]` lines.
fn golden_ranges(s: &str) -> Vec<String> {
    let inner = s.trim_start_matches('{').trim_end_matches('}');
    let mut out: Vec<String> = inner
        .split("], ")
        .filter(|p| !p.is_empty())
        .map(|p| {
            let p = p
                .trim_end_matches(']')
                .replace("VR[", "[")
                .replace("-int_oo", "-inf");
            format!("{}]", p.replace("int_oo", "inf"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_corpus_archive_prints_what_pytorch_says() {
    let mut compared = 0;
    for path in archives() {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_reader-inspect"))
            .arg(&path)
            .output()
            .expect("runs");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stem}: {stderr}");
        assert_ne!(out.status.code(), Some(101), "{stem}: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        let with = |prefix: &str| -> Vec<String> {
            let mut v: Vec<String> = lines
                .iter()
                .filter_map(|l| l.strip_prefix(prefix).map(str::to_string))
                .collect();
            v.sort();
            v
        };
        let weights = golden("weights", &stem);
        let refused = weights
            .as_ref()
            .is_some_and(|w| w.iter().any(|l| l.get("error").is_some()));
        if refused {
            // `torch.export.load` refuses the archive: so does the reader.
            assert!(
                !out.status.success(),
                "{stem}: PyTorch refuses it\n{stdout}"
            );
            continue;
        }
        // What a plain `import torch` cannot read either (the goldens were
        // captured in a process that registered the custom op and the
        // pytree types), and a tensor subclass, which needs `torch.load`.
        let cannot = [
            (
                "custom-op",
                "We failed to resolve torch.ops.torchspec.scale.default",
            ),
            ("pytree-types", "NotImplementedError"),
            ("tensor-subclass", "is pickled (use_pickle"),
            (
                "legacy-format",
                "pre-2.8 archive, whose state dict and constants are pickled",
            ),
        ];
        if let Some((_, why)) = cannot.iter().find(|(s, _)| *s == stem) {
            assert!(
                !out.status.success() && stderr.contains(why),
                "{stem}: {stderr}"
            );
            continue;
        }
        let Some(program) = golden("programs", &stem) else {
            continue;
        };
        let report = &program[0]["report"];
        assert!(out.status.success(), "{stem}: {stderr}");
        // The user inputs, in order: a name, or a constant's value.
        let inputs: Vec<(&str, &str)> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("input ")?.split_once(": "))
            .collect();
        let user = report["user_inputs"].as_array().unwrap();
        assert_eq!(inputs.len(), user.len(), "{stem}: user inputs {inputs:?}");
        for ((name, ty), theirs) in inputs.iter().zip(user) {
            match theirs {
                // (A str constant is its value too.)
                Value::String(n) => assert!(
                    name == n || *ty == format!("constant {n}"),
                    "{stem}: {name}: {ty} for {n}"
                ),
                Value::Null => assert_eq!(*ty, "constant None", "{stem}: {name}"),
                Value::Bool(b) => {
                    let b = if *b { "True" } else { "False" };
                    assert_eq!(*ty, format!("constant {b}"), "{stem}: {name}")
                }
                v => assert_eq!(*ty, format!("constant {v}"), "{stem}: {name}"),
            }
        }
        // The range constraints.
        let ranges = golden_ranges(report["range_constraints"].as_str().unwrap());
        assert_eq!(with("range "), ranges, "{stem}: ranges");
        // Each operator of the program's graph, counted (subgraphs add more).
        let graph = report["graph"].as_str().unwrap();
        let mut theirs = BTreeMap::new();
        for part in graph.split("call_function[target=").skip(1) {
            *theirs
                .entry(part.split(']').next().unwrap().to_string())
                .or_insert(0) += 1;
        }
        let ours: BTreeMap<String, i32> = with("op ")
            .iter()
            .map(|l| {
                let (t, n) = l.rsplit_once(": ").unwrap();
                (t.to_string(), n.parse().unwrap())
            })
            .collect();
        for (target, n) in &theirs {
            let mine = ours.get(target).copied().unwrap_or(0);
            if graph.contains("get_attr[") {
                assert!(mine >= *n, "{stem}: {target} {mine} < {n}");
            } else {
                assert_eq!(mine, *n, "{stem}: {target}");
            }
        }
        if !graph.contains("get_attr[") {
            assert_eq!(ours.len(), theirs.len(), "{stem}: operators");
        }
        // The parameters: the state dict's, with PyTorch's dtypes and shapes.
        let params = report["state_dict"].as_object().unwrap();
        let mut expected: Vec<String> = Vec::new();
        for (name, meta) in params.iter().filter(|(_, m)| m["parameter"] == true) {
            let shape: Vec<String> = meta["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            expected.push(format!(
                "{name} {} [{}]",
                meta["dtype"].as_str().unwrap(),
                shape.join(", ")
            ));
        }
        expected.sort();
        let printed: Vec<String> = with("param ")
            .iter()
            .map(|l| l.split(": ").next().unwrap().to_string())
            .collect();
        assert_eq!(printed, expected, "{stem}: parameters");
        compared += 1;
    }
    assert!(compared >= 60, "only {compared} archives compared");
}
