//! Kept mutated program files: a zoo program with small edits to its
//! `models/model.json` (`corpus/mutants/NAME.json`, written by `torchspec
//! fuzz --live --mutate`) and what PyTorch's two readers did with it
//! (`GOLDENS/mutants/NAME.json`, written by the oracle: `torch.export.load`
//! and the C++ deserializer). One row each: the loader loads what
//! `torch.export.load` loads and raises what it raises, type and message.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::{CaseReport, Divergence, Verdict};
use crate::error::{Error, Result};
use crate::export::ExportedProgram;

/// Kept mutants, one JSON file each.
pub const MUTANTS: &str = "corpus/mutants";

/// A kept mutant: zoo program `program` with `edits` to its program JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MutantFile {
    pub name: String,
    /// The zoo program (`corpus/programs/PROGRAM.pt2`).
    pub program: String,
    /// The mutation class of `oracle/mutate.py`.
    pub class: String,
    /// What the mutation changed, as `oracle/mutate.py` describes it.
    pub mutation: String,
    /// The divergence signature it was kept for.
    pub signature: String,
    /// `(old, new)`: each `old` replaced once, in order ([`apply_edits`]).
    pub edits: Vec<(String, String)>,
}

/// What one reader did with a program file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    Loads,
    /// Refused: the Python exception it mirrors (none: a refusal of
    /// torchspec's own) and its message.
    Raises {
        exception: Option<String>,
        message: String,
    },
}

impl Reading {
    /// `torch.export.load`'s outcome as the oracle records it: the
    /// exception the deserializer raised (`original`, the end of the
    /// `__cause__` chain of what load() logged), not load()'s generic
    /// `RuntimeError`.
    pub fn of_python(outcome: &Json) -> Option<Reading> {
        match outcome.get("outcome")?.as_str()? {
            "ok" => Some(Reading::Loads),
            "error" => Reading::raised(outcome.get("original").unwrap_or(outcome)),
            _ => None,
        }
    }

    /// The C++ deserializer's outcome (`type` and `message` as raised).
    pub fn of_cpp(outcome: &Json) -> Option<Reading> {
        match outcome.get("outcome")?.as_str()? {
            "ok" => Some(Reading::Loads),
            "error" => Reading::raised(outcome),
            _ => None,
        }
    }

    fn raised(e: &Json) -> Option<Reading> {
        Some(Reading::Raises {
            exception: Some(e.get("type")?.as_str()?.to_string()),
            message: e.get("message")?.as_str()?.to_string(),
        })
    }

    /// torchspec's loader on the same bytes, its message cut as the oracle
    /// records PyTorch's.
    pub fn of_torchspec(loaded: &Result<ExportedProgram>) -> Reading {
        match loaded {
            Ok(_) => Reading::Loads,
            Err(e) => Reading::Raises {
                exception: e.exception.clone(),
                message: recorded_message(&e.message),
            },
        }
    }

    pub fn loads(&self) -> bool {
        matches!(self, Reading::Loads)
    }

    /// `loads`, or the exception type (`torchspec error` for a refusal
    /// that mirrors no Python exception).
    pub fn class(&self) -> &str {
        match self {
            Reading::Loads => "loads",
            Reading::Raises { exception, .. } => exception.as_deref().unwrap_or("torchspec error"),
        }
    }

    /// `loads`, or `Type: message`.
    pub fn render(&self) -> String {
        match self {
            Reading::Loads => "loads".into(),
            Reading::Raises { message, .. } => format!("{}: {message}", self.class()),
        }
    }
}

/// `oracle/mutant_outcomes.py`'s `exc_json`: a message longer than
/// `MAX_MESSAGE` characters is kept to its first `MAX_MESSAGE` and marked.
fn recorded_message(message: &str) -> String {
    const MAX_MESSAGE: usize = 4000;
    match message.char_indices().nth(MAX_MESSAGE) {
        None => message.to_string(),
        Some((cut, _)) => format!("{}...[truncated]", &message[..cut]),
    }
}

/// How torchspec's reading compares with PyTorch's: agree, or a divergence
/// in `outcome` (one loads, one raises), `exception` (the type) or `message`.
pub fn compare(python: &Reading, ours: &Reading) -> Verdict {
    let what = match (python, ours) {
        (Reading::Loads, Reading::Loads) => return Verdict::Agree,
        (Reading::Loads, _) | (_, Reading::Loads) => "outcome",
        _ if python.class() != ours.class() => "exception",
        _ if python != ours => "message",
        _ => return Verdict::Agree,
    };
    let diff = format!(
        "--- torch.export.load\n+++ torchspec\n-{}\n+{}\n",
        python.render(),
        ours.render()
    );
    Verdict::Diverge(Divergence::new(diff, vec![what.to_string()]))
}

/// How torchspec's loader compares with `torch.export.load` on one program
/// file: [`compare`], and when both load and PyTorch's report is known,
/// the reports as the program rows compare them.
pub fn judge(python: &Reading, report: Option<&Json>, ours: &Result<ExportedProgram>) -> Verdict {
    match (report, ours) {
        (Some(golden), Ok(ep)) if python.loads() => {
            let mine = crate::json::report(ep);
            if crate::diff::json_eq(golden, &mine) {
                Verdict::Agree
            } else {
                super::programs::report_divergence(golden, &mine)
            }
        }
        _ => compare(python, &Reading::of_torchspec(ours)),
    }
}

/// `text` with each `(old, new)` replaced once, in order; None when an
/// `old` is not there.
pub fn apply_edits(text: &str, edits: &[(String, String)]) -> Option<String> {
    let mut out = text.to_string();
    for (old, new) in edits {
        let at = out.find(old.as_str())?;
        out.replace_range(at..at + old.len(), new);
    }
    Some(out)
}

/// The archive entry holding the program JSON: `<root>/models/model.json`,
/// or the pre-2.8 layout's `serialized_exported_program.json`.
fn is_program_entry(name: &str) -> bool {
    name.ends_with("models/model.json") || name == "serialized_exported_program.json"
}

/// The program JSON of a `.pt2`, as text.
pub fn program_json(archive: &[u8]) -> Result<String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive))
        .map_err(|e| Error::new(format!("not a zip archive: {e}")))?;
    let name = (0..zip.len())
        .filter_map(|i| zip.name_for_index(i).map(str::to_string))
        .find(|n| is_program_entry(n))
        .ok_or_else(|| Error::new("no models/model.json in the archive"))?;
    let mut text = String::new();
    zip.by_name(&name)
        .map_err(|e| Error::new(format!("{name}: {e}")))?
        .read_to_string(&mut text)
        .map_err(|e| Error::new(format!("{name}: {e}")))?;
    Ok(text)
}

/// `archive` with its program JSON replaced by `text` (every other entry
/// as it was, stored uncompressed).
pub fn with_program_json(archive: &[u8], text: &str) -> Result<Vec<u8>> {
    let zip_err = |e: zip::result::ZipError| Error::new(format!("rewriting the archive: {e}"));
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(archive)).map_err(zip_err)?;
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(archive.len() > u32::MAX as usize);
    for i in 0..zin.len() {
        let mut entry = zin.by_index(i).map_err(zip_err)?;
        let name = entry.name().to_string();
        out.start_file(name.as_str(), options).map_err(zip_err)?;
        if is_program_entry(&name) {
            out.write_all(text.as_bytes())
        } else {
            std::io::copy(&mut entry, &mut out).map(|_| ())
        }
        .map_err(|e| Error::new(format!("rewriting the archive: {name}: {e}")))?;
    }
    Ok(out.finish().map_err(zip_err)?.into_inner())
}

/// The kept mutants, sorted by file name.
pub fn mutant_files(root: &Path) -> Result<Vec<PathBuf>> {
    super::files_in(&root.join(MUTANTS), "json", false)
}

/// Read a kept mutant.
pub fn read_mutant(path: &Path) -> Result<MutantFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("not a kept mutant: {e}")).in_file(path))
}

/// The mutant's archive: its zoo program with the edits applied.
pub fn mutant_archive(root: &Path, m: &MutantFile) -> Result<Vec<u8>> {
    let path = root
        .join("corpus/programs")
        .join(format!("{}.pt2", m.program));
    let archive = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let text = apply_edits(&program_json(&archive)?, &m.edits).ok_or_else(|| {
        Error::new(format!(
            "an edit of mutant {} is not in {}",
            m.name,
            path.display()
        ))
    })?;
    with_program_json(&archive, &text)
}

fn verdict_of(root: &Path, golden: &Path, m: &MutantFile) -> Result<Verdict> {
    if !golden.exists() {
        return Ok(Verdict::MissingGolden);
    }
    let text = std::fs::read_to_string(golden).map_err(|e| Error::io(golden, e))?;
    let golden_json: Json = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("not a mutant golden: {e}")).in_file(golden))?;
    let python = golden_json
        .get("python")
        .and_then(Reading::of_python)
        .ok_or_else(|| Error::new("no `python` outcome").in_file(golden))?;
    let report = golden_json["python"].get("report");
    let registrations = super::programs::zoo_registrations(root)?;
    let loaded = ExportedProgram::load_pt2_in(
        mutant_archive(root, m)?,
        crate::export::schema::Mode::Default,
        &registrations,
    );
    Ok(judge(&python, report, &loaded))
}

/// One row per kept mutant (its name, `mutant-CLASS-HASH`).
pub(super) fn rows(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let Some(golden_dir) = super::golden_dir(root, goldens, "mutants") else {
        return Ok(());
    };
    for file in mutant_files(root)? {
        let m = read_mutant(&file)?;
        let golden = golden_dir.join(format!("{}.json", m.name));
        let id = m.name.clone();
        out.push(CaseReport {
            verdict: verdict_of(root, &golden, &m)?,
            allowed: allow.get(&id).cloned(),
            id,
            kind: "program",
            category: format!("mutant {}", m.class),
            file: file.strip_prefix(root).unwrap_or(&file).to_path_buf(),
            line: 0,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raises(t: &str, m: &str) -> Reading {
        Reading::Raises {
            exception: Some(t.into()),
            message: m.into(),
        }
    }

    #[test]
    fn compare_names_what_differs() {
        let differs = |v: Verdict| match v {
            Verdict::Diverge(d) => d.differs,
            _ => vec![],
        };
        assert_eq!(compare(&Reading::Loads, &Reading::Loads), Verdict::Agree);
        assert_eq!(
            compare(&raises("KeyError", "'x'"), &raises("KeyError", "'x'")),
            Verdict::Agree
        );
        assert_eq!(
            differs(compare(&Reading::Loads, &raises("KeyError", "'x'"))),
            ["outcome"]
        );
        assert_eq!(
            differs(compare(
                &raises("KeyError", "'x'"),
                &raises("TypeError", "'x'")
            )),
            ["exception"]
        );
        assert_eq!(
            differs(compare(
                &raises("KeyError", "'x'"),
                &raises("KeyError", "'y'")
            )),
            ["message"]
        );
    }

    #[test]
    fn edits_apply_in_order_or_not_at_all() {
        let e = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            apply_edits("a b a", &[e("a", "c"), e("a", "d")]).as_deref(),
            Some("c b d")
        );
        assert_eq!(apply_edits("a b", &[e("x", "y")]), None);
    }
}
