//! The mutant fuzzer's pieces that need no PyTorch: the change between a zoo
//! program's JSON and a mutant's as hunks, shrinking them, writing them
//! back as `(old, new)` edits, and the oracle's outcome records read as
//! readings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use torchspec::conformance::mutants::{apply_edits, program_json, with_program_json, Reading};
use torchspec::conformance::programs::zoo_registrations;
use torchspec::conformance::Verdict;
use torchspec::live::mutants::Mutants;
use torchspec::live::mutants::{apply_hunks, edits_of, hunks, shrink_hunks};
use torchspec::live::oracle::OracleFailure;
use torchspec::live::Step;

fn zoo_text() -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs/mlp-dynamic.pt2");
    program_json(&std::fs::read(path).expect("zoo archive")).expect("program JSON")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any set of replacements: the hunks rebuild the mutant, and so do the
    /// edits written from them.
    #[test]
    fn hunks_and_edits_rebuild_the_mutant(
        changes in prop::collection::vec((0usize..10_000, 0usize..12, "[a-z\"{}:, 0-9]{0,6}"), 1..5)
    ) {
        let old = zoo_text();
        let mut new = old.clone();
        for (at, len, text) in changes {
            let mut at = at % new.len();
            while !new.is_char_boundary(at) { at -= 1; }
            let mut end = (at + len).min(new.len());
            while !new.is_char_boundary(end) { end += 1; }
            new.replace_range(at..end, &text);
        }
        let h = hunks(&old, &new);
        prop_assert_eq!(apply_hunks(&old, &h), new.clone());
        let edits = edits_of(&old, &h);
        prop_assert_eq!(apply_edits(&old, &edits), Some(new));
    }
}

#[test]
fn shrinking_drops_the_hunks_the_signature_does_not_need() {
    let old = zoo_text();
    let new = old
        .replacen("\"max_val\": 64}", "\"max_val\": 1}", 1)
        .replacen("\"major\": 8,", "\"major\": 9,", 1);
    let all = hunks(&old, &new);
    assert_eq!(all.len(), 2, "{all:?}");
    // The "signature" needs only the schema version change.
    let (left, steps) = shrink_hunks(&old, all, 100, |t| t.contains("\"major\": 9,"));
    assert_eq!(left.len(), 1);
    assert!(steps >= 1);
    assert!(apply_hunks(&old, &left).contains("\"major\": 9,"));
    assert!(!apply_hunks(&old, &left).contains("\"max_val\": 1}"));
}

#[test]
fn an_archive_with_its_program_json_replaced_reads_back() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs/mlp-dynamic.pt2");
    let bytes = std::fs::read(path).unwrap();
    let text = zoo_text().replacen("\"minor\": 20}", "\"minor\": 21}", 1);
    let rewritten = with_program_json(&bytes, &text).unwrap();
    assert_eq!(program_json(&rewritten).unwrap(), text);
}

#[test]
fn oracle_outcomes_read_as_readings() {
    // torch.export.load: the deserializer's own exception ("original"), not
    // load()'s generic RuntimeError.
    let python = json!({"outcome": "error", "type": "RuntimeError", "message": "We ran into...",
                        "original": {"type": "KeyError", "message": "'other'"}});
    assert_eq!(
        Reading::of_python(&python),
        Some(Reading::Raises {
            exception: Some("KeyError".into()),
            message: "'other'".into()
        })
    );
    assert_eq!(
        Reading::of_python(&json!({"outcome": "ok"})),
        Some(Reading::Loads)
    );
    assert_eq!(
        Reading::of_cpp(&json!({"outcome": "error", "type": "RuntimeError", "message": "m"})),
        Some(Reading::Raises {
            exception: Some("RuntimeError".into()),
            message: "m".into()
        })
    );
    assert_eq!(Reading::of_python(&json!({"outcome": "timeout"})), None);
}

/// A fake oracle: mutant `mutant` of mlp-dynamic, which "PyTorch" refuses
/// with a planted `KeyError` whenever the text holds `planted` and loads
/// otherwise; the C++ reader always loads.
fn planted_oracle(
    mutant: String,
    planted: &'static str,
) -> impl FnMut(&str, &str, &Json) -> Result<Json, OracleFailure> {
    move |kind, _id, body| {
        let text = match kind {
            "mutant" => mutant.clone(),
            _ => body["model_json"].as_str().unwrap_or_default().to_string(),
        };
        Ok(planted_reply(kind, "mlp-dynamic", text, planted))
    }
}

/// The fake oracle's reply to `kind` (`mutant` or `mutant_load`) on program
/// JSON `text` of `program`: "PyTorch" refuses it with a planted `KeyError`
/// when it holds `planted` and loads it otherwise; the C++ reader loads.
pub fn planted_reply(kind: &str, program: &str, text: String, planted: &str) -> Json {
    let python = if text.contains(planted) {
        json!({"outcome": "error", "type": "RuntimeError", "message": "We ran into an error",
               "original": {"type": "KeyError", "message": "'planted'"}})
    } else {
        json!({"outcome": "ok"})
    };
    let cpp = json!({"outcome": "ok", "written_back": "same"});
    let golden = json!({"python": python, "cpp": cpp}).to_string();
    let mut reply = json!({"python": python, "cpp": cpp, "golden": golden});
    if kind == "mutant" {
        reply["program"] = program.into();
        reply["class"] = "schema_version".into();
        reply["mutation"] = "planted".into();
        reply["model_json"] = text.into();
    }
    reply
}

fn scratch_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("torchspec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let programs = root.join("corpus/programs");
    std::fs::create_dir_all(&programs).unwrap();
    std::fs::create_dir_all(root.join("corpus/cases")).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/programs");
    for f in ["mlp-dynamic.pt2", "registrations.json"] {
        std::fs::copy(repo.join(f), programs.join(f)).unwrap();
    }
    root
}

#[test]
fn a_planted_difference_is_kept_as_a_mutant_the_check_fails_until_allow_listed() {
    let root = scratch_root("mutants");
    let registrations = zoo_registrations(&root).unwrap();
    // Two changes; only the minor version is what "PyTorch" refuses.
    let mutant = zoo_text()
        .replacen("\"minor\": 20}", "\"minor\": 21}", 1)
        .replacen("\"max_val\": 64}", "\"max_val\": 63}", 1);
    let mut oracle = planted_oracle(mutant, "\"minor\": 21}");
    let mut m = Mutants::new(&root, registrations.clone(), false);
    let mut t = Duration::ZERO;
    let (step, tallies) = m.judge_with(&mut oracle, 1, 0, &mut t);
    let Step::Diverge { signature, .. } = step else {
        panic!("no divergence: {step:?}");
    };
    assert_eq!(
        signature,
        "mutant schema_version: PyTorch KeyError, torchspec loads"
    );
    assert!(
        tallies.contains(&"Python and C++ readers disagree".to_string()),
        "{tallies:?}"
    );
    // Python refuses where C++ loads: an upstream packet.
    let upstream: Vec<_> = std::fs::read_dir(root.join("docs/upstream"))
        .unwrap()
        .collect();
    assert_eq!(upstream.len(), 1);

    let kept = m
        .keep_with(&mut oracle, &root, 50, 0, &signature, &mut t)
        .unwrap()
        .expect("kept");
    let file = torchspec::conformance::mutants::read_mutant(&root.join(&kept.path)).unwrap();
    // Shrunk to the one change that matters.
    assert_eq!(file.edits.len(), 1, "{:?}", file.edits);
    assert!(file.edits[0].1.contains("\"minor\": 21}"));
    let golden = root.join(format!(
        "corpus/goldens/torch-2.15.0/mutants/{}.json",
        kept.name
    ));
    assert!(golden.exists());

    // The check reads it back: a divergence, allow-listed as untriaged.
    let report = torchspec::conformance::run(&root).unwrap();
    let row = report
        .cases
        .iter()
        .find(|c| c.id == kept.name)
        .expect("a mutant row");
    assert!(
        matches!(row.verdict, Verdict::Diverge(_)),
        "{:?}",
        row.verdict
    );
    assert!(row.allowed.as_ref().is_some_and(|a| a.untriaged));
    assert!(row.failure().is_none(), "{:?}", row.failure());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_agreeing_mutant_is_agreement() {
    let root = scratch_root("mutants-agree");
    let registrations = zoo_registrations(&root).unwrap();
    let mut oracle = planted_oracle(zoo_text(), "never there");
    let mut m = Mutants::new(&root, registrations, false);
    let mut t = Duration::ZERO;
    let (step, tallies) = m.judge_with(&mut oracle, 1, 0, &mut t);
    assert_eq!(step, Step::Agree);
    assert!(
        tallies.contains(&"class schema_version: agree".to_string()),
        "{tallies:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The fake oracle with extras: the mutant's class is `class`, the readers'
/// disagreement of upstream class `upstream` (when given), both writers'
/// round trips `round_trip` (when given), the lane `small`.
fn oracle_with(
    mutant: String,
    planted: &'static str,
    upstream: Option<u64>,
    round_trip: Option<Json>,
) -> impl FnMut(&str, &str, &Json) -> Result<Json, OracleFailure> {
    move |kind, _id, body| {
        let text = match kind {
            "mutant" => mutant.clone(),
            _ => body["model_json"].as_str().unwrap_or_default().to_string(),
        };
        let mut reply = planted_reply(kind, "mlp-dynamic", text, planted);
        if kind == "mutant" {
            reply["lane"] = "small".into();
            if let Some(c) = upstream {
                reply["upstream_class"] = c.into();
            }
            if let Some(rt) = &round_trip {
                reply["round_trip"] = rt.clone();
            }
        }
        Ok(reply)
    }
}

#[test]
fn a_class_5_disagreement_is_counted_not_written_as_a_packet() {
    let root = scratch_root("mutants-class5");
    let registrations = zoo_registrations(&root).unwrap();
    let mutant = zoo_text().replacen("\"minor\": 20}", "\"minor\": 21}", 1);
    let mut oracle = oracle_with(mutant, "\"minor\": 21}", Some(5), None);
    let mut m = Mutants::new(&root, registrations, false);
    let mut t = Duration::ZERO;
    let (_, tallies) = m.judge_with(&mut oracle, 1, 0, &mut t);
    assert!(
        tallies.contains(&"upstream class 5: schema_version".to_string()),
        "{tallies:?}"
    );
    assert!(tallies.contains(&"lane small".to_string()), "{tallies:?}");
    assert!(
        !root.join("docs/upstream").exists(),
        "a class-5 packet was written"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn round_trips_are_tallied_by_signature_and_the_first_of_each_is_logged() {
    let root = scratch_root("mutants-round-trip");
    let registrations = zoo_registrations(&root).unwrap();
    let rt = json!({
        "cpp": {"outcome": "differs",
                "signatures": ["C++ deserialize/serialize_exported_program: $.x.as_float: '-Infinity' -> 'Infinity'"],
                "first": {"path": "$.x.as_float", "input": "'-Infinity'", "output": "'Infinity'"}},
        "python": {"outcome": "same"},
    });
    let rt_paths = json!({
        "cpp": {"outcome": "same"},
        "python": {"outcome": "differs",
                   "signatures": ["torch.export.load/save: $.y: str changed",
                                  "torch.export.load/save: $.x: int -> int (changed)"],
                   "paths": ["$.y", "$.x"],
                   "first": {"path": "$.y", "input": "'a'", "output": "'b'"}},
    });
    let mut oracle = oracle_with(zoo_text(), "never there", None, Some(rt));
    let log = root.join("target/rt.jsonl");
    let mut m = Mutants::new(&root, registrations, false).logging_round_trips_to(log.clone());
    let mut t = Duration::ZERO;
    for index in 0..2 {
        let (step, tallies) = m.judge_with(&mut oracle, 1, index, &mut t);
        assert_eq!(step, Step::Agree);
        assert!(
            tallies.contains(&"round trip C++: differs".to_string()),
            "{tallies:?}"
        );
        assert!(
            tallies.contains(&"round trip torch.export.save: same".to_string()),
            "{tallies:?}"
        );
        // Per mutation class too (the planted mutant's class).
        assert!(
            tallies
                .iter()
                .any(|l| l.starts_with("round trip C++ ") && l.ends_with(": differs")),
            "{tallies:?}"
        );
        // The planted mutation names no path: the change is "elsewhere".
        assert!(
            tallies
                .iter()
                .any(|l| l.starts_with("round trip finding (elsewhere): C++")
                    && l.ends_with("'-Infinity' -> 'Infinity'")),
            "{tallies:?}"
        );
    }
    // Two mutants of one signature: one line.
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    let record: Json = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(record["mutant"], json!([1, 0]));
    assert_eq!(record["reader"], "cpp");

    // Each signature placed by its own first path against the mutated one.
    let mut oracle = oracle_with(zoo_text(), "never there", None, Some(rt_paths));
    let mut at_x = move |kind: &str, id: &str, body: &Json| {
        let mut reply = oracle(kind, id, body)?;
        if kind == "mutant" {
            reply["mutation"] = "retype int at $.x: 1 -> 2".into();
        }
        Ok::<Json, OracleFailure>(reply)
    };
    let (_, tallies) = m.judge_with(&mut at_x, 1, 2, &mut t);
    for want in [
        "round trip finding (elsewhere): torch.export.load/save: $.y: str changed",
        "round trip finding (at the mutation): torch.export.load/save: $.x: int -> int (changed)",
    ] {
        assert!(tallies.contains(&want.to_string()), "{tallies:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A fake oracle that records the timeout scale of each request.
struct Scales {
    lanes: Json,
    seen: Vec<(String, u32)>,
}

impl torchspec::live::oracle::Requests for Scales {
    fn request(&mut self, kind: &str, id: &str, body: &Json) -> Result<Json, OracleFailure> {
        self.request_scaled(kind, id, body, 1)
    }

    fn request_scaled(
        &mut self,
        kind: &str,
        _id: &str,
        _body: &Json,
        scale: u32,
    ) -> Result<Json, OracleFailure> {
        self.seen.push((kind.to_string(), scale));
        Ok(match kind {
            "mutant_lanes" => self.lanes.clone(),
            _ => json!({"no_site": "field_delete", "lane": "small"}),
        })
    }
}

#[test]
fn the_large_lane_gets_its_timeout_factor_and_each_lane_its_rate() {
    let root = scratch_root("mutants-lanes");
    let registrations = zoo_registrations(&root).unwrap();
    let lanes = json!({"period": 4, "timeout_factor": 15,
                       "lanes": {"small": ["a"], "large": ["mlp-dynamic"]}});
    let parsed = torchspec::live::mutants::Lanes::parse(&lanes);
    assert_eq!(
        (0..8).filter(|&i| parsed.is_large(i)).collect::<Vec<_>>(),
        vec![3, 7]
    );
    let mut oracle = Scales {
        lanes,
        seen: Vec::new(),
    };
    let mut m = Mutants::new(&root, registrations, false);
    let mut t = Duration::ZERO;
    for index in 0..4 {
        let (step, tallies) = m.judge_with(&mut oracle, 1, index, &mut t);
        assert_eq!(step, Step::Unsupported);
        assert!(tallies.contains(&"lane small".to_string()), "{tallies:?}");
    }
    // Asked once; mutant 3 is of the large lane.
    let kinds: Vec<_> = oracle
        .seen
        .iter()
        .map(|(k, s)| format!("{k} {s}"))
        .collect();
    assert_eq!(
        kinds,
        [
            "mutant_lanes 1",
            "mutant 1",
            "mutant 1",
            "mutant 1",
            "mutant 15"
        ]
    );
    let tallies = [
        ("lane large".to_string(), 3),
        ("lane small".to_string(), 600),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        torchspec::live::lane_rates(&tallies, 300.0),
        " (large 0.01/s, small 2.00/s)"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A packet's one-liner on a program that names the zoo's pytree types or
/// custom ops imports their registrations first (the workers do), so stock
/// torch reads it as the fuzzer's oracle did; other programs' do not.
#[test]
fn packet_one_liners_register_what_their_program_needs() {
    use torchspec::live::mutants::{python_c, registers};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = |name: &str| {
        let bytes = std::fs::read(root.join(format!("corpus/programs/{name}.pt2"))).unwrap();
        program_json(&bytes).unwrap()
    };
    let regs = zoo_registrations(root).unwrap();
    assert!(registers(&text("pytree-types"), &regs));
    assert!(registers(&text("custom-op"), &regs));
    assert!(!registers(&text("mlp-dynamic"), &regs));
    let with = python_c("pytree-types", &[], "torch.export.load(b)", true);
    let without = python_c("mlp-dynamic", &[], "torch.export.load(b)", false);
    assert!(with.contains("import zoo_types"), "{with}");
    assert!(!without.contains("zoo_types"), "{without}");
}
