//! The generated-program fuzzer's pieces that need no PyTorch: plans replay
//! valid and shrink to valid plans, and the target judges, skips and keeps
//! with a fake oracle that lays a zoo program and its goldens out as the
//! `plan` request does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use torchspec::conformance::programs::zoo_registrations;
use torchspec::live::mutants::Mutants;
use torchspec::live::oracle::OracleFailure;
use torchspec::live::plan::{all_ops, replay, Plan};
use torchspec::live::programs::Programs;
use torchspec::live::Step;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every generated plan replays (each op valid on its arguments' shapes),
    /// names only known ops, and each shrink candidate replays too.
    #[test]
    fn plans_replay_and_shrink_valid(seed in any::<u64>(), index in 0u64..1_000_000) {
        let plan = Plan::generate(seed, index);
        prop_assert!(replay(&plan).is_ok(), "{:?}", replay(&plan));
        let ops = all_ops();
        for op in &plan.ops {
            prop_assert!(ops.contains(&op.op.as_str()), "{}", op.op);
        }
        prop_assert!(!plan.outputs.refs.is_empty());
        for c in plan.shrink_candidates() {
            prop_assert!(replay(&c).is_ok());
            prop_assert_ne!(&c, &plan);
        }
    }
}

#[test]
fn the_op_table_is_large_and_unique() {
    let ops = all_ops();
    let mut sorted = ops.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ops.len(), "an op is listed twice");
    assert!(ops.len() >= 60, "{} ops", ops.len());
    // Over many plans, most ops are drawn.
    let drawn: std::collections::BTreeSet<String> = (0..3000)
        .flat_map(|i| Plan::generate(5, i).ops)
        .map(|o| o.op)
        .collect();
    assert!(
        drawn.len() * 10 >= ops.len() * 9,
        "only {} ops drawn",
        drawn.len()
    );
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("torchspec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("corpus/programs")).unwrap();
    std::fs::write(root.join("corpus/allow-list.jsonl"), "").unwrap();
    root
}

const GOLDENS: &str = "corpus/goldens/torch-2.15.0";

/// Copy zoo file `from` to `to`, renaming the program `identity` to `name`
/// where probe ids carry it.
fn copy_renamed(from: &Path, to: &Path, name: &str) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    match std::fs::read(from) {
        Ok(bytes) if from.extension().is_some_and(|e| e == "jsonl") => {
            let text = String::from_utf8(bytes)
                .unwrap()
                .replace("\"identity/", &format!("\"{name}/"));
            std::fs::write(to, text).unwrap();
        }
        Ok(bytes) => std::fs::write(to, bytes).unwrap(),
        Err(e) => panic!("{}: {e}", from.display()),
    }
}

/// A fake `plan` / `plan_probes` oracle: the zoo's `identity` program and
/// its goldens, laid out under the request's root; `edit` may spoil the
/// report golden.
fn fake_oracle(
    edit: fn(String) -> String,
) -> impl FnMut(&str, &str, &Json) -> Result<Json, OracleFailure> {
    move |kind, _id, body| {
        let root = PathBuf::from(body["root"].as_str().unwrap());
        let name = body["name"].as_str().unwrap();
        let zoo = repo().join("corpus/programs/identity");
        let golden = repo().join(GOLDENS).join("programs/identity");
        let (programs, goldens) = (root.join("corpus/programs"), root.join(GOLDENS));
        if kind == "plan_probes" {
            copy_renamed(
                &golden.with_extension("derived-probes.jsonl"),
                &goldens.join(format!("programs/{name}.derived-probes.jsonl")),
                name,
            );
            return Ok(json!({"written": true}));
        }
        for suffix in ["pt2", "probes.jsonl"] {
            copy_renamed(
                &zoo.with_extension(suffix),
                &programs.join(format!("{name}.{suffix}")),
                name,
            );
        }
        for suffix in ["serialized.jsonl", "probes.jsonl"] {
            copy_renamed(
                &golden.with_extension(suffix),
                &goldens.join(format!("programs/{name}.{suffix}")),
                name,
            );
        }
        let report = std::fs::read_to_string(golden.with_extension("jsonl")).unwrap();
        let report_path = goldens.join(format!("programs/{name}.jsonl"));
        std::fs::write(report_path, edit(report)).unwrap();
        copy_renamed(
            &repo().join(GOLDENS).join("weights/identity.jsonl"),
            &goldens.join(format!("weights/{name}.jsonl")),
            name,
        );
        Ok(json!({"exported": true}))
    }
}

fn programs_at(root: &Path) -> Programs {
    Programs::new(root, zoo_registrations(&repo()).unwrap())
}

#[test]
fn a_program_whose_rows_all_agree_is_agreement() {
    let root = scratch_root("plans-agree");
    let mut oracle = fake_oracle(|t| t);
    let (step, tallies) =
        programs_at(&root).judge_with(&mut oracle, 0, 3, &mut Duration::default());
    assert_eq!(step, Step::Agree, "{tallies:?}");
    assert!(
        tallies.iter().any(|t| t == "rows report: agree"),
        "{tallies:?}"
    );
    assert!(
        tallies.iter().any(|t| t == "rows weights: agree"),
        "{tallies:?}"
    );
    // The scratch program is gone once judged.
    assert!(!root.join("target/live/plans/plan-0-3").exists());
}

#[test]
fn a_plan_pytorch_cannot_export_is_skipped_and_tallied() {
    let root = scratch_root("plans-skip");
    let mut oracle = |_: &str, _: &str, _: &Json| {
        Ok(json!({"exported": false, "stage": "export", "type": "UserError", "message": "x"}))
    };
    let (step, tallies) =
        programs_at(&root).judge_with(&mut oracle, 0, 1, &mut Duration::default());
    assert_eq!(step, Step::Skipped);
    assert_eq!(tallies, vec!["not exported: export UserError".to_string()]);
}

#[test]
fn a_divergent_program_is_shrunk_and_kept_with_its_goldens() {
    let root = scratch_root("plans-keep");
    // PyTorch's report "says" another schema version: every report row diverges.
    let mut oracle = fake_oracle(|t| t.replace("\"schema_version\":[8,", "\"schema_version\":[9,"));
    let mut target = programs_at(&root);
    let mut time = Duration::ZERO;
    let (step, _) = target.judge_with(&mut oracle, 0, 3, &mut time);
    let Step::Diverge {
        signature, name, ..
    } = step
    else {
        panic!("expected a divergence, got {step:?}");
    };
    assert!(signature.contains("report: schema_version"), "{signature}");
    let kept = target
        .keep_with(&mut oracle, 3, &signature, &mut time)
        .unwrap()
        .expect("kept");
    assert_eq!(kept.name, name);
    let programs = root.join("corpus/programs");
    for suffix in ["pt2", "plan.json", "probes.jsonl", "derived-probes.jsonl"] {
        assert!(
            programs.join(format!("{name}.{suffix}")).exists(),
            "{suffix}"
        );
    }
    assert!(root
        .join(GOLDENS)
        .join(format!("programs/{name}.jsonl"))
        .exists());
    assert!(root
        .join(GOLDENS)
        .join(format!("weights/{name}.jsonl"))
        .exists());
    assert!(programs.join(format!("packets/{name}.md")).exists());
    // The shrunk plan is the smallest the fake oracle allows: one op or none.
    let plan: Plan = serde_json::from_str(
        &std::fs::read_to_string(programs.join(format!("{name}.plan.json"))).unwrap(),
    )
    .unwrap();
    assert!(plan.ops.len() <= 1, "{}", plan.summary());
    let allow = std::fs::read_to_string(root.join("corpus/allow-list.jsonl")).unwrap();
    // The rows are the fake's (the zoo program's ids), each one allow-listed.
    assert!(allow.contains("\"identity\""), "{allow}");
    assert!(allow.contains("\"untriaged\": true"), "{allow}");
}

/// The `plan` / `plan_goldens` / `plan_probes` fake above, plus `mutant` and
/// `mutant_load` on the program the request names (from its
/// `programs_dir`): "PyTorch" refuses any text holding `"minor": 21}` with a
/// planted `KeyError`; the mutant changes the minor version and a range.
fn generated_mutant_oracle() -> impl FnMut(&str, &str, &Json) -> Result<Json, OracleFailure> {
    let mut plan = fake_oracle(|t| t);
    move |kind, id, body| {
        let text = match kind {
            "plan" | "plan_goldens" | "plan_probes" => {
                if kind == "plan" && body["goldens"] == json!(false) {
                    // Only the archive, as the real request does.
                    let root = PathBuf::from(body["root"].as_str().unwrap());
                    let name = body["name"].as_str().unwrap();
                    let to = root.join(format!("corpus/programs/{name}.pt2"));
                    copy_renamed(&repo().join("corpus/programs/identity.pt2"), &to, name);
                    return Ok(json!({"exported": true}));
                }
                return plan(kind, id, body);
            }
            "mutant" => {
                let dir = PathBuf::from(body["programs_dir"].as_str().unwrap());
                let name = body["program"].as_str().unwrap();
                let bytes = std::fs::read(dir.join(format!("{name}.pt2"))).unwrap();
                torchspec::conformance::mutants::program_json(&bytes)
                    .unwrap()
                    .replacen("\"minor\": 20}", "\"minor\": 21}", 1)
            }
            _ => body["model_json"].as_str().unwrap().to_string(),
        };
        let program = body["program"].as_str().unwrap_or_default();
        Ok(crate::mutants::planted_reply(
            kind,
            program,
            text,
            "\"minor\": 21}",
        ))
    }
}

#[test]
fn mutants_of_a_generated_program_keep_the_program_in_the_zoo() {
    let root = scratch_root("plan-mutants");
    let registrations = zoo_registrations(&repo()).unwrap();
    let mut m = Mutants::new(&root, registrations, false).of_generated(4);
    let mut oracle = generated_mutant_oracle();
    let mut t = Duration::ZERO;
    // Mutant 5 is made from plan 1 (4 mutants a plan).
    let (step, tallies) = m.judge_with(&mut oracle, 7, 5, &mut t);
    let Step::Diverge { signature, .. } = step else {
        panic!("no divergence: {step:?} {tallies:?}");
    };
    assert!(!root.join("corpus/programs/live-plan-s7-1.pt2").exists());
    let kept = m
        .keep_with(&mut oracle, &root, 20, 5, &signature, &mut t)
        .unwrap()
        .expect("kept");
    let file = torchspec::conformance::mutants::read_mutant(&root.join(&kept.path)).unwrap();
    assert_eq!(file.program, "live-plan-s7-1");
    // The program joined the zoo with its plan and goldens.
    let programs = root.join("corpus/programs");
    for suffix in ["pt2", "plan.json", "probes.jsonl", "derived-probes.jsonl"] {
        assert!(
            programs.join(format!("live-plan-s7-1.{suffix}")).exists(),
            "{suffix}"
        );
    }
    assert!(root
        .join(GOLDENS)
        .join("programs/live-plan-s7-1.jsonl")
        .exists());
    // Its rows agree (the fake's goldens are the zoo program's): no packet.
    assert!(!programs.join("packets/live-plan-s7-1.md").exists());
    // A plan PyTorch cannot export gives skipped mutants.
    let mut refuse = |_: &str, _: &str, _: &Json| {
        Ok(json!({"exported": false, "stage": "export", "type": "UserError", "message": "x"}))
    };
    let (step, tallies) = m.judge_with(&mut refuse, 7, 9, &mut t);
    assert_eq!(step, Step::Skipped);
    assert_eq!(
        tallies,
        vec!["program not exported: export UserError".to_string()]
    );
    let _ = std::fs::remove_dir_all(&root);
}
