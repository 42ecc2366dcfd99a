//! The schema rows of the check: each case of `tests/data/schema/cases.jsonl`
//! (written by `oracle/make_schema_cases.py` from what PyTorch's
//! `ExportedProgramDeserializer` does with it) read by the reference in the
//! default mode: PyTorch's refusal word for word with its JSON path, or
//! PyTorch's reading written back byte for byte. A refusal of ours where
//! PyTorch reads on with a wrongly typed value (no Python exception) is
//! unsupported, not a guess.

use std::path::Path;

use serde_json::Value as Json;

use super::{AllowList, CaseReport, Divergence, Verdict};
use crate::error::{Error, Result};
use crate::export::schema::{dump_program, load_program, Mode};

/// The schema cases, relative to the repository root.
pub const SCHEMA_CASES: &str = "tests/data/schema/cases.jsonl";

/// The prefix of a schema row's id (`schema/valid`): case names are not
/// unique beside the corpus's ids (`complex` is also a zoo program).
pub const ID_PREFIX: &str = "schema/";

/// The rows of [`SCHEMA_CASES`] (one failing row when the file is missing).
pub(super) fn rows(root: &Path, allow: &AllowList, out: &mut Vec<CaseReport>) -> Result<()> {
    let path = root.join(SCHEMA_CASES);
    let row = |id: &str, line, verdict| CaseReport {
        allowed: allow.get(id).cloned(),
        id: id.to_string(),
        kind: "schema",
        category: "load_program".into(),
        file: SCHEMA_CASES.into(),
        line,
        verdict,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(row(SCHEMA_CASES, 0, Verdict::MissingGolden));
            return Ok(());
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: &str| Error::new(m).on_line(i + 1).in_file(&path);
        let case: Json =
            serde_json::from_str(line).map_err(|e| err(&format!("invalid JSON: {e}")))?;
        let name = case
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| err("missing string `name`"))?;
        let input = input_bytes(&case).map_err(|m| err(&m))?;
        let id = format!("{ID_PREFIX}{name}");
        out.push(row(&id, i + 1, verdict(&case, &input)));
    }
    Ok(())
}

/// The case's `input` text, or its `input_hex` bytes.
fn input_bytes(case: &Json) -> std::result::Result<Vec<u8>, String> {
    if let Some(text) = case.get("input").and_then(Json::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    let hex = case
        .get("input_hex")
        .and_then(Json::as_str)
        .ok_or("a case needs `input` or `input_hex`")?;
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| "`input_hex` is not hex".to_string())
}

/// PyTorch's outcome (`error` with `path`, or `dump`) against the reference's.
fn verdict(case: &Json, input: &[u8]) -> Verdict {
    let diverge = |diff: String, differs: &[&str]| {
        Verdict::Diverge(Divergence::new(
            diff,
            differs.iter().map(|d| d.to_string()).collect(),
        ))
    };
    let path = case.get("path").and_then(Json::as_str);
    match (load_program(input, Mode::Default), case.get("error")) {
        (Err(e), Some(error)) => {
            let at = path.map_or(String::new(), |p| format!("at {p}: "));
            let want = format!("{at}{}", error.as_str().unwrap_or_default());
            if e.to_string() == want {
                Verdict::Agree
            } else {
                diverge(format!("-{want}\n+{e}"), &["error"])
            }
        }
        (Err(e), None) if e.exception.is_none() => {
            Verdict::Unsupported(format!("PyTorch reads on; the reference refuses: {e}"))
        }
        (Err(e), None) => diverge(
            format!("PyTorch reads it; the reference raises {e}"),
            &["dump", "error"],
        ),
        (Ok(_), Some(error)) => diverge(
            format!("PyTorch raises {error}; the reference reads it"),
            &["dump", "error"],
        ),
        (Ok(loaded), None) => {
            let ours = dump_program(&loaded.program);
            let want = case.get("dump").and_then(Json::as_str).unwrap_or_default();
            if ours == want {
                Verdict::Agree
            } else {
                diverge(format!("-{want}\n+{ours}"), &["dump"])
            }
        }
    }
}
