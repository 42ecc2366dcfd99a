//! Comparing the reference with the oracle on one case, exactly as `check`
//! does ([`conformance::verdict`]), and the signature that deduplicates
//! divergences.

use serde_json::Value as Json;

use crate::case::{Case, Outcome, ResultLine};
use crate::conformance::{verdict, Verdict};
use crate::diff::json_eq;

use super::oracle::OracleFailure;

/// What one generated case gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    Agree,
    /// The reference does not model the case (not a divergence).
    Unsupported(String),
    /// A divergence: its signature and the unified diff PyTorch → ours.
    Diverge {
        signature: String,
        diff: String,
    },
    /// The oracle gave no result.
    OracleFailed(OracleFailure),
}

/// Compare the reference's result with PyTorch's for a case of `family`.
pub fn compare(family: &str, case: &Case, golden: &ResultLine, ours: &ResultLine) -> Finding {
    match verdict(golden, ours) {
        Verdict::Agree => Finding::Agree,
        Verdict::Unsupported(why) => Finding::Unsupported(why),
        Verdict::Diverge(d) => Finding::Diverge {
            signature: signature(family, case, golden, ours),
            diff: d.diff,
        },
        Verdict::MissingGolden | Verdict::Drift(_) | Verdict::Runs => {
            unreachable!("verdict() always has the golden, knows no drift and runs no probe")
        }
    }
}

fn outcome_class(o: &Outcome) -> String {
    match o {
        Outcome::Ok(_) => "ok".into(),
        Outcome::Error(e) => format!("error:{}", e.type_name),
        Outcome::Unsupported(_) => "unsupported".into(),
    }
}

/// The divergence signature: the generator family, the case kind, each
/// side's outcome (`ok`, or the exception type) and what differs (the keys
/// of `ok` whose values differ, or the error message). Two divergences with
/// one signature are taken for one bug: only the first is shrunk and kept.
pub fn signature(family: &str, case: &Case, golden: &ResultLine, ours: &ResultLine) -> String {
    let what = match (&golden.outcome, &ours.outcome) {
        (Outcome::Ok(a), Outcome::Ok(b)) => {
            let (a, b) = (as_object(a), as_object(b));
            let mut keys: Vec<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
            keys.sort_unstable();
            keys.dedup();
            keys.retain(|k| match (a.get(*k), b.get(*k)) {
                (Some(x), Some(y)) => !json_eq(x, y),
                _ => true,
            });
            keys.join(",")
        }
        (Outcome::Error(a), Outcome::Error(b)) if a.type_name == b.type_name => "message".into(),
        _ => "outcome".into(),
    };
    format!(
        "{family} {} pytorch={} torchspec={} differs={what}",
        case.body.kind(),
        outcome_class(&golden.outcome),
        outcome_class(&ours.outcome)
    )
}

fn as_object(j: &Json) -> serde_json::Map<String, Json> {
    match j {
        Json::Object(m) => m.clone(),
        other => {
            let mut m = serde_json::Map::new();
            m.insert(String::new(), other.clone());
            m
        }
    }
}
