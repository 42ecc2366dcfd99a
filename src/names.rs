//! The names the harness shares with the oracle and its scripts, declared
//! once in Rust: the passes ([`Pass`]), the golden pass pipelines, the bench
//! pipeline and the case kinds ([`CaseKind`]), written as `oracle/names.json`
//! for `oracle/names.py` (Python, stdlib `json` only) and the shell scripts.
//!
//! `tests/it/names.rs` fails when `oracle/names.json` is not what
//! [`names_json`] writes (and rewrites it), so adding a pass or a case kind
//! is its own code, its declaration and its corpus.

use crate::case::CaseKind;
use crate::export::passes::Pass;

/// Where the oracle reads the names, from the repository root.
pub const NAMES_JSON: &str = "oracle/names.json";

/// The pass pipelines recorded in `corpus/goldens/torch-X/programs/NAME.jsonl`
/// and `NAME.serialized.jsonl`, one line each, in this order: the program as
/// loaded (no pass) first.
pub const GOLDEN_PIPELINES: &[&[Pass]] = &[
    &[],
    &[Pass::Dce],
    &[Pass::RemoveRuntimeAssertions],
    &[Pass::RemoveRuntimeAssertions, Pass::Dce],
    &[Pass::AddInlineConstraintAssertions],
    // Re-adding inline assertions after removing them: on programs with
    // unbacked symbols PyTorch's verifier raises ("Node.meta ge is missing
    // val field"), which records the whole-report error form.
    &[
        Pass::RemoveRuntimeAssertions,
        Pass::AddInlineConstraintAssertions,
    ],
    &[Pass::CommonGetitemElimination],
    &[Pass::RemoveUnnecessaryCopy],
];

/// The pipeline `benches/program.rs` times in the reference and
/// `oracle/program_timing.py` in PyTorch.
pub const BENCH_PIPELINE: &[Pass] = &[
    Pass::RemoveRuntimeAssertions,
    Pass::Dce,
    Pass::CommonGetitemElimination,
    Pass::RemoveUnnecessaryCopy,
];

/// The text of `oracle/names.json`: one entry a line, each list on its line.
///
/// ```
/// use torchspec::export::passes::Pass;
///
/// let text = torchspec::names::names_json();
/// let json: serde_json::Value = serde_json::from_str(&text).unwrap();
/// let passes = json["passes"].as_array().unwrap();
/// assert_eq!(passes.len(), Pass::ALL.len());
/// assert_eq!(passes[0], Pass::ALL[0].name());
/// ```
pub fn names_json() -> String {
    let passes = |ps: &[Pass]| list(ps.iter().map(|p| p.name()));
    let mut out = String::from("{\n");
    out.push_str(&format!(
        "  \"about\": {},\n",
        json_str(
            "Written from the Rust declarations (src/names.rs, Pass, CaseKind) \
             by `cargo test --test it names`; edit those, not this file."
        )
    ));
    out.push_str("  \"passes\": [\n");
    out.push_str(&lines(Pass::ALL.iter().map(|p| json_str(p.name()))));
    out.push_str("  ],\n  \"golden_pipelines\": [\n");
    out.push_str(&lines(GOLDEN_PIPELINES.iter().map(|p| passes(p))));
    out.push_str(&format!(
        "  ],\n  \"bench_pipeline\": {},\n",
        passes(BENCH_PIPELINE)
    ));
    out.push_str("  \"case_kinds\": [\n");
    out.push_str(&lines(CaseKind::ALL.iter().map(|k| {
        let keys = CaseKind::COMMON_KEYS.iter().chain(k.keys());
        let required = CaseKind::COMMON_REQUIRED.iter().chain(k.required());
        format!(
            "{{\"name\": {}, \"keys\": {}, \"required\": {}}}",
            json_str(k.name()),
            list(keys.copied()),
            list(required.copied())
        )
    })));
    out.push_str("  ]\n}\n");
    out
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// `["a", "b"]`.
fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.map(json_str).collect();
    format!("[{}]", items.join(", "))
}

/// The entries of a JSON array, four spaces in, comma-separated, a line each.
fn lines(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.map(|i| format!("    {i}")).collect();
    format!("{}\n", items.join(",\n"))
}
