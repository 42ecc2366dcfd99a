//! The weights rows of the check: the tensors of each zoo program
//! (`corpus/programs/`) and of the weights corpus (`corpus/weights/`),
//! read by the reference as views over the archive, against what
//! `torch.export.load` gives (`goldens/.../weights/NAME.jsonl`,
//! `oracle/weights.py`): one row per archive, every line (kind, name,
//! dtype, shape, stride, storage offset, sha256 of `t.contiguous()`) equal
//! and in order.

use std::path::Path;

use serde_json::Value as Json;
use similar::TextDiff;

use super::{CaseReport, Divergence, Verdict};
use crate::diff::json_eq;
use crate::error::{Error, Result};
use crate::export::ExportedProgram;

/// The weights corpus: archives whose point is their tensors
/// (`oracle/weights_zoo.py`).
pub const WEIGHTS: &str = "corpus/weights";

/// The suffix of a weights row's id (`cond#weights`).
pub const WEIGHTS_SUFFIX: &str = "#weights";

fn archives(root: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files = super::programs::program_files(root)?;
    let dir = root.join(WEIGHTS);
    match std::fs::read_dir(&dir) {
        Ok(entries) => files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "pt2")),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&dir, e)),
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    // A golden is named after its archive alone.
    if let Some(w) = files
        .windows(2)
        .find(|w| w[0].file_name() == w[1].file_name())
    {
        return Err(Error::new(format!(
            "`{}` and `{}` would share the golden `weights/{}.jsonl`: rename the one in `{WEIGHTS}`",
            w[0].display(),
            w[1].display(),
            w[1].file_stem().map(|s| s.to_string_lossy()).unwrap_or_default()
        )));
    }
    Ok(files)
}

fn read_lines(path: &Path) -> Result<Vec<Json>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::new(format!("invalid JSON: {e}"))
                    .on_line(i + 1)
                    .in_file(path)
            })
        })
        .collect()
}

/// What the reference says of the archive: its lines, or the load error
/// as a golden would hold it (`{"error": {"type", "message"}}`), or why it
/// cannot tell (a refusal of its own: unsupported).
fn ours(loaded: &Result<ExportedProgram>) -> std::result::Result<Vec<Json>, String> {
    let ep = match loaded {
        Ok(ep) => ep,
        Err(e) => {
            return match &e.exception {
                Some(t) => {
                    let mut line = serde_json::json!({"error": {"type": t, "message": e.message}});
                    if let Some(inner) = e.logged() {
                        line["logged"] = serde_json::json!({
                            "type": inner.exception.clone().unwrap_or_default(),
                            "message": inner.message,
                        });
                    }
                    Ok(vec![line])
                }
                None => Err(format!("the reference cannot load the program: {e}")),
            }
        }
    };
    match crate::weights::lines(ep, true) {
        Ok(lines) => Ok(lines),
        Err(e) => {
            // Where `torch.export.load` itself would raise (it reads every
            // tensor), the golden is that exception.
            let (e, logged) = match &ep.archive {
                Some(bytes) => crate::export::weights::torch_export_load_error(bytes, e),
                None => (e, None),
            };
            let Some(t) = &e.exception else {
                return Err(e.to_string());
            };
            let mut line = serde_json::json!({"error": {"type": t, "message": e.message}});
            if let Some(inner) = logged {
                line["logged"] = serde_json::json!({
                    "type": inner.exception.unwrap_or_default(),
                    "message": inner.message,
                });
            }
            Ok(vec![line])
        }
    }
}

fn render(lines: &[Json]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

pub(super) fn rows(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let Some(golden_dir) = super::golden_dir(root, goldens, "weights") else {
        return Ok(());
    };
    let registrations = super::programs::zoo_registrations(root)?;
    for file in archives(root)? {
        archive_row(root, &golden_dir, allow, &registrations, &file, out)?;
    }
    Ok(())
}

/// The weights row of one archive: each tensor's line against
/// `golden_dir/NAME.jsonl` (a missing golden is a failing row).
pub fn archive_row(
    root: &Path,
    golden_dir: &Path,
    allow: &super::AllowList,
    registrations: &std::sync::Arc<crate::export::registrations::Registrations>,
    file: &Path,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let golden_path = golden_dir.join(format!("{name}.jsonl"));
    let grel = golden_path
        .strip_prefix(root)
        .unwrap_or(&golden_path)
        .to_path_buf();
    let id = format!("{name}{WEIGHTS_SUFFIX}");
    let verdict = if golden_path.exists() {
        let golden = read_lines(&golden_path)?;
        let loaded = ExportedProgram::load_path_in(
            file,
            crate::export::schema::Mode::Default,
            registrations,
        );
        match ours(&loaded) {
            Err(w) => Verdict::Unsupported(w),
            Ok(lines)
                if lines.len() == golden.len()
                    && lines.iter().zip(&golden).all(|(a, b)| json_eq(b, a)) =>
            {
                Verdict::Agree
            }
            Ok(lines) => {
                let (a, b) = (render(&golden), render(&lines));
                let diff = TextDiff::from_lines(&a, &b)
                    .unified_diff()
                    .context_radius(2)
                    .header("torch.export.load", "torchspec weights")
                    .to_string();
                Verdict::Diverge(Divergence::new(diff, vec!["weights".into()]))
            }
        }
    } else {
        Verdict::MissingGolden
    };
    out.push(CaseReport {
        allowed: allow.get(&id).cloned(),
        id,
        kind: "program",
        category: "weights sha256".into(),
        file: grel,
        line: 0,
        verdict,
    });
    Ok(())
}
