//! The live fuzzer's parts without Python: shard partitions, signatures and
//! dedup, the shrinker against a fake oracle function, the process pool's
//! restarts against a shell stand-in, repro packets.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;
use torchspec::case::{eval_case, Case, Outcome, ResultLine};
use torchspec::conformance::Verdict;
use torchspec::live::compare::{compare, signature, Finding};
use torchspec::live::gen::{family_of, Generator, FAMILIES};
use torchspec::live::oracle::{
    parse_reply, Oracle, OracleCommand, OracleFailure, ProcessOracle, Reply,
};
use torchspec::live::regress::{self, Kept};
use torchspec::live::{shrink_divergence, Summary};
use torchspec::pyval::PyException;
use torchspec::shard::Shard;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

proptest! {
    /// Every id is in exactly one of n shards.
    #[test]
    fn every_id_in_exactly_one_shard(id in ".{0,40}", n in 1u64..20) {
        let owners: Vec<u64> = (1..=n).filter(|&k| Shard { k, n }.has_id(&id)).collect();
        prop_assert_eq!(owners.len(), 1);
    }

    /// Shard k's positions enumerate exactly the indices it owns.
    #[test]
    fn shard_positions_cover_the_seed_space(n in 1u64..12, limit in 0u64..500) {
        let mut seen = vec![0u32; limit as usize];
        for k in 1..=n {
            let s = Shard { k, n };
            for j in 0.. {
                let i = s.index(j);
                if i >= limit { break; }
                prop_assert!(s.has_index(i));
                seen[i as usize] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&c| c == 1));
    }
}

#[test]
fn corpus_cases_split_across_shards_exactly_once() {
    let mut ids = Vec::new();
    for file in torchspec::conformance::case_files(root()).unwrap() {
        torchspec::case::file::each_case_in(&file, |_, c| {
            ids.push(c.id);
            Ok(())
        })
        .unwrap();
    }
    assert!(ids.len() > 2000);
    for n in [2u64, 3, 8] {
        let mut total = 0;
        let mut per_shard = Vec::new();
        for k in 1..=n {
            let here: HashSet<&String> =
                ids.iter().filter(|id| Shard { k, n }.has_id(id)).collect();
            total += here.len();
            per_shard.push(here.len());
        }
        assert_eq!(total, ids.len(), "n = {n}");
        // Roughly balanced: no shard under half its share.
        let share = ids.len() / n as usize;
        assert!(per_shard.iter().all(|&c| c * 2 > share), "{per_shard:?}");
    }
}

/// Copy `rel` (a file) from the repository into `dst`.
fn copy_in(dst: &Path, rel: &str) {
    let to = dst.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(root().join(rel), to).unwrap();
}

#[test]
fn check_shards_together_are_the_whole_check() {
    // A small corpus (a case file and the kept regressions) in a temp root:
    // the shards of `check` are disjoint and together the whole check.
    let dir = std::env::temp_dir().join(format!("torchspec-shard-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for f in ["source-name.jsonl", "lookup-walk.jsonl"] {
        copy_in(&dir, &format!("corpus/cases/{f}"));
        copy_in(&dir, &format!("corpus/goldens/torch-2.15.0/{f}"));
    }
    for f in torchspec::conformance::regression_files(root()).unwrap() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        copy_in(&dir, &format!("corpus/regressions/{name}"));
        copy_in(
            &dir,
            &format!("corpus/goldens/torch-2.15.0/regressions/{name}"),
        );
    }
    let ids = |s: Shard| {
        let r = torchspec::conformance::run_shard(&dir, s).unwrap();
        r.cases.into_iter().map(|c| c.id).collect::<Vec<_>>()
    };
    let mut whole = ids(Shard::ALL);
    whole.sort();
    assert!(whole.len() > 50);
    for n in [2, 3] {
        let mut together = Vec::new();
        for k in 1..=n {
            let here = ids(Shard { k, n });
            assert!(!here.is_empty());
            together.extend(here);
        }
        together.sort();
        assert_eq!(together, whole, "n = {n}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shard_parsing() {
    assert_eq!("3/4".parse::<Shard>(), Ok(Shard { k: 3, n: 4 }));
    assert!("0/4".parse::<Shard>().is_err());
    assert!("5/4".parse::<Shard>().is_err());
    assert!("x".parse::<Shard>().is_err());
}

fn ok(id: &str, json: &str) -> ResultLine {
    ResultLine {
        id: id.into(),
        outcome: Outcome::Ok(serde_json::from_str(json).unwrap()),
        wiring: None,
    }
}

fn err(id: &str, ty: &str, msg: &str) -> ResultLine {
    ResultLine {
        id: id.into(),
        outcome: Outcome::Error(PyException {
            type_name: ty.into(),
            message: msg.into(),
        }),
        wiring: None,
    }
}

#[test]
fn signatures_name_what_differs() {
    let case = Generator::new().case(1, 0);
    assert_eq!(family_of(0), "build");
    let sig = |g: &ResultLine, o: &ResultLine| signature("build", &case, g, o);
    assert_eq!(
        sig(
            &ok("a", r#"{"repr":"x","jsonable":1}"#),
            &ok("a", r#"{"repr":"y","jsonable":1}"#)
        ),
        "build build pytorch=ok torchspec=ok differs=repr"
    );
    assert_eq!(
        sig(
            &ok("a", r#"{"repr":"x","jsonable":1}"#),
            &ok("a", r#"{"repr":"x","jsonable":1.0}"#)
        ),
        "build build pytorch=ok torchspec=ok differs=jsonable"
    );
    assert_eq!(
        sig(&err("a", "TypeError", "m"), &err("a", "TypeError", "n")),
        "build build pytorch=error:TypeError torchspec=error:TypeError differs=message"
    );
    assert_eq!(
        sig(&err("a", "TypeError", "m"), &ok("a", r#"{"repr":"x"}"#)),
        "build build pytorch=error:TypeError torchspec=ok differs=outcome"
    );
    // Dedup: two divergences of one kind are one signature whatever the text.
    assert_eq!(
        sig(
            &err("a", "ValueError", "one"),
            &err("a", "ValueError", "two")
        ),
        sig(
            &err("b", "ValueError", "three"),
            &err("b", "ValueError", "four")
        ),
    );
    // As `check` does: unsupported is not a divergence; agreement is none.
    let unsupported = ResultLine {
        id: "a".into(),
        outcome: Outcome::Unsupported("why".into()),
        wiring: None,
    };
    assert_eq!(
        compare("build", &case, &ok("a", "{}"), &unsupported),
        Finding::Unsupported("why".into())
    );
    assert_eq!(
        compare(
            "build",
            &case,
            &ok("a", r#"{"repr":"1"}"#),
            &ok("a", r#"{"repr":"1"}"#)
        ),
        Finding::Agree
    );
}

#[test]
fn generation_is_deterministic_per_index() {
    let (g, h) = (Generator::new(), Generator::new());
    for i in [0u64, 1, 7, 10, 11, 1000, 123_456] {
        assert_eq!(g.case(5, i), h.case(5, i));
        assert_eq!(g.case(5, i).id, format!("live-s5-{i}"));
    }
    assert_ne!(g.case(5, 11), g.case(6, 11));
    // Each family in turn, and each case line reads back as itself.
    for i in 0..FAMILIES.len() as u64 * 3 {
        let c = g.case(9, i);
        assert_eq!(Case::parse(&c.to_json().to_string()).unwrap(), c);
    }
}

/// A fake PyTorch: the reference's answer, except that a `repr` holding
/// `needle` gets a marker appended — a "divergence" on every case whose
/// result prints `needle`.
fn fake_oracle(needle: &'static str) -> impl FnMut(&Case) -> Result<Reply, OracleFailure> {
    move |case: &Case| {
        let mut r = eval_case(case);
        if let Outcome::Ok(serde_json::Value::Object(m)) = &mut r.outcome {
            if let Some(serde_json::Value::String(s)) = m.get_mut("repr") {
                if s.contains(needle) {
                    s.push_str(" <fake>");
                }
            }
        }
        let line = r.to_json().to_string();
        Ok(Reply { line, result: r })
    }
}

#[test]
fn shrinking_keeps_the_divergence_and_makes_it_smaller() {
    let gen = Generator::new();
    let mut oracle = fake_oracle("IntVar(");
    let mut found = 0;
    for index in (0..400u64).filter(|i| family_of(*i) == "build") {
        let case = gen.case(3, index);
        let mut t = Duration::ZERO;
        let (finding, _, _) = torchspec::live::judge(&mut oracle, "build", &case, &mut t);
        let Finding::Diverge { signature, .. } = finding else {
            continue;
        };
        found += 1;
        let kept = shrink_divergence(&mut oracle, &gen, 3, index, &signature, 300, &mut t)
            .expect("the fake oracle never fails");
        assert_eq!(kept.signature, signature);
        assert_eq!(kept.case.id, kept.name);
        let before = case.to_json().to_string().len();
        let after = kept.case.to_json().to_string().len();
        assert!(after <= before, "{after} > {before}");
        // Still a divergence, still a valid case line.
        let again = Case::parse(&kept.case.to_json().to_string()).unwrap();
        assert_eq!(again, kept.case);
        assert!(kept.golden.outcome != kept.ours.outcome);
        assert!(kept.golden_line.contains("<fake>"));
        if found >= 5 {
            break;
        }
    }
    assert!(
        found >= 3,
        "only {found} fake divergences among generated build cases"
    );
}

#[test]
fn shrinking_reaches_a_minimal_case() {
    // Everything diverges: the shrinker goes as far as the strategy allows,
    // which for a build case is a tiny value.
    let gen = Generator::new();
    let mut oracle = |case: &Case| -> Result<Reply, OracleFailure> {
        let r = ResultLine {
            id: case.id.clone(),
            outcome: Outcome::Error(PyException {
                type_name: "X".into(),
                message: String::new(),
            }),
            wiring: None,
        };
        Ok(Reply {
            line: r.to_json().to_string(),
            result: r,
        })
    };
    let index = (0..100u64)
        .find(|i| family_of(*i) == "build" && gen.case(4, *i).to_json().to_string().len() > 300)
        .unwrap();
    let mut t = Duration::ZERO;
    let (Finding::Diverge { signature, .. }, _, _) =
        torchspec::live::judge(&mut oracle, "build", &gen.case(4, index), &mut t)
    else {
        panic!("not a divergence")
    };
    let kept = shrink_divergence(&mut oracle, &gen, 4, index, &signature, 2000, &mut t).unwrap();
    let len = kept.case.to_json().to_string().len();
    assert!(len < 160, "shrunk to {len} bytes: {}", kept.case.to_json());
}

#[test]
fn oracle_failures_are_reported_not_lost() {
    let mut seen = Vec::new();
    let mut oracle = |case: &Case| {
        seen.push(case.id.clone());
        Err(OracleFailure::Timeout(Duration::from_secs(1)))
    };
    let case = Generator::new().case(1, 2);
    let mut t = Duration::ZERO;
    let (finding, reply, _) = torchspec::live::judge(&mut oracle, "source_name", &case, &mut t);
    assert_eq!(
        finding,
        Finding::OracleFailed(OracleFailure::Timeout(Duration::from_secs(1)))
    );
    assert!(reply.is_none());
    assert_eq!(seen, vec![case.id]);
}

#[test]
fn replies_are_checked() {
    assert!(matches!(
        parse_reply("a", "not json"),
        Err(OracleFailure::Garbage(_))
    ));
    assert!(matches!(
        parse_reply("a", r#"{"id":"b","ok":{}}"#),
        Err(OracleFailure::Garbage(_))
    ));
    assert!(matches!(
        parse_reply("a", r#"{"id":"a"}"#),
        Err(OracleFailure::Garbage(_))
    ));
    assert!(matches!(
        parse_reply("a", r#"{"id":"a","unsupported":{"reason":""}}"#),
        Err(OracleFailure::Garbage(_))
    ));
    assert_eq!(
        parse_reply("a", r#"{"id":"a","invalid":"unknown kind"}"#),
        Err(OracleFailure::Invalid("unknown kind".into()))
    );
    let r = parse_reply("a", r#"{"id":"a","error":{"type":"T","message":"m"}}"#).unwrap();
    assert_eq!(r.result, err("a", "T", "m"));
}

fn fake_process(timeout_ms: u64) -> ProcessOracle {
    ProcessOracle::new(OracleCommand {
        python: "/bin/sh".into(),
        capture: root().join("tests/data/fake-oracle.sh"),
        log: None,
        timeout: Duration::from_millis(timeout_ms),
        startup_timeout: Duration::from_secs(20),
    })
}

fn with_id(id: &str) -> Case {
    let mut c = Generator::new().case(1, 2);
    c.id = id.into();
    c
}

#[test]
fn a_crashed_hung_or_garbled_worker_is_restarted() {
    let mut o = fake_process(1500);
    assert_eq!(
        o.eval(&with_id("one")).unwrap().line,
        r#"{"id":"one","ok":{"name":"fake"}}"#
    );
    assert_eq!(o.starts, 1);
    assert!(matches!(
        o.eval(&with_id("crash-1")),
        Err(OracleFailure::Crashed(_))
    ));
    assert!(o.eval(&with_id("two")).is_ok());
    assert!(matches!(
        o.eval(&with_id("hang-1")),
        Err(OracleFailure::Timeout(_))
    ));
    assert!(o.eval(&with_id("three")).is_ok());
    assert!(matches!(
        o.eval(&with_id("garbage-1")),
        Err(OracleFailure::Garbage(_))
    ));
    assert!(matches!(
        o.eval(&with_id("wrong-id")),
        Err(OracleFailure::Garbage(_))
    ));
    assert!(o.eval(&with_id("four")).is_ok());
    assert_eq!(o.starts, 5);
}

#[test]
fn a_missing_python_is_a_start_failure() {
    let mut o = ProcessOracle::new(OracleCommand {
        python: "/nonexistent/python".into(),
        capture: "capture.py".into(),
        log: None,
        timeout: Duration::from_secs(1),
        startup_timeout: Duration::from_secs(1),
    });
    assert!(matches!(
        o.eval(&with_id("x")),
        Err(OracleFailure::Start(_))
    ));
}

#[test]
fn packets_hold_what_a_maintainer_needs() {
    let case = with_id("live-build-0000abcd");
    let golden = err(&case.id, "ValueError", "expected \"#\"");
    let ours = eval_case(&case);
    let kept = Kept {
        name: case.id.clone(),
        signature: "sig".into(),
        family: "source_name".into(),
        original_id: "live-s1-2".into(),
        golden_line: golden.to_json().to_string(),
        diff: torchspec::diff::render_divergence(&golden, &ours),
        case,
        golden,
        ours,
        shrink_steps: 7,
    };
    let p = regress::packet(&kept);
    for part in [
        "## Case line",
        "## Reproduce with stock PyTorch",
        "## What PyTorch says",
        "## What the reference says",
        "## Diff",
        "## Rust test",
        "#[test]",
        "fn live_build_0000abcd()",
    ] {
        assert!(p.contains(part), "{part} missing from\n{p}");
    }
    assert!(p.contains(&kept.case.to_json().to_string()));
    assert!(p.contains("python -c 'import"), "no one-liner in\n{p}");
    // The raw string survives a `"#` inside it.
    assert!(regress::raw_literal(r##"a"#b"##).starts_with("r##\""));
    assert_eq!(
        regress::regression_name("source_name", "sig"),
        regress::regression_name("source_name", "sig")
    );
    assert!(regress::regression_name("source_name", "sig").starts_with("live-source-name-"));
    let _ = Summary::default().render();
}

#[test]
fn fuzzer_allow_list_entries_are_untriaged_and_say_how_they_diverge() {
    let case = with_id("live-build-0000abcd");
    let golden = err(&case.id, "ValueError", "expected \"#\"");
    let ours = eval_case(&case);
    let Verdict::Diverge(d) = torchspec::conformance::verdict(&golden, &ours) else {
        panic!("the case diverges");
    };
    let kept = Kept {
        name: case.id.clone(),
        signature: "sig".into(),
        family: "source_name".into(),
        original_id: "live-s1-2".into(),
        golden_line: golden.to_json().to_string(),
        diff: d.diff.clone(),
        case,
        golden,
        ours,
        shrink_steps: 7,
    };
    let dir = std::env::temp_dir().join(format!("torchspec-untriaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("allow.jsonl");
    std::fs::write(&path, regress::allow_entry(&kept)).unwrap();
    let list = torchspec::conformance::read_allow_list(&path).unwrap();
    let entry = &list[&kept.name];
    assert!(entry.untriaged);
    assert_eq!(entry.verdict.as_deref(), Some("diverge"));
    assert_eq!(entry.differs.as_ref(), Some(&d.differs));
    assert!(!d.differs.is_empty());
    assert_eq!(entry.mismatch(&Verdict::Diverge(d)), None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A signature whose regression agrees now stands for nothing: a new
/// instance is kept beside it (`NAMEr2`), never over it; one that still
/// diverges keeps the signature kept.
#[test]
fn a_fixed_regression_does_not_hide_its_signature() {
    let dir = std::env::temp_dir().join(format!("torchspec-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let name = "live-export-spec-3a3758a5";
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let case =
        std::fs::read_to_string(repo.join(format!("corpus/regressions/{name}.jsonl"))).unwrap();
    let golden = std::fs::read_to_string(repo.join(format!(
        "corpus/goldens/torch-2.15.0/regressions/{name}.jsonl"
    )))
    .unwrap();
    regress::write_file(&regress::case_path(&dir, name), &case).unwrap();
    let golden_path = dir.join(format!(
        "corpus/goldens/torch-2.15.0/regressions/{name}.jsonl"
    ));
    regress::write_file(&golden_path, &golden).unwrap();
    assert!(!regress::still_diverges(&dir, name));
    assert!(!regress::kept_and_diverging(&dir, name));
    assert_eq!(regress::free_name(&dir, name), format!("{name}r2"));
    // The same golden with another message: the regression diverges again.
    let other = golden.replace("Guard failed", "Guard held");
    assert_ne!(other, golden);
    regress::write_file(&golden_path, &other).unwrap();
    assert!(regress::kept_and_diverging(&dir, name));
    let _ = std::fs::remove_dir_all(&dir);
}
