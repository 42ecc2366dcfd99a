//! The program half of the conformance check: every zoo program under
//! `corpus/programs/` loaded (and transformed) by the reference, its report
//! compared key by key with PyTorch's golden
//! (`corpus/goldens/torch-2.15.0/programs/NAME.jsonl`, one line per pass
//! pipeline), and its program JSON written back byte for byte.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use similar::TextDiff;

use super::{CaseReport, Divergence, Verdict};
use crate::diff::json_eq;
use crate::error::{Error, Result};
use crate::export::ExportedProgram;

pub const PROGRAMS: &str = "corpus/programs";
/// The registrations of the process that captured the program goldens
/// (`oracle/registrations.py`).
pub const REGISTRATIONS: &str = "corpus/programs/registrations.json";

/// `GOLDENS/programs/NAME{suffix}.jsonl`: the report (`""`), `.probes` or
/// `.serialized` golden file of a zoo program.
fn program_golden(root: &Path, goldens: &str, name: &str, suffix: &str) -> PathBuf {
    root.join(goldens)
        .join("programs")
        .join(format!("{name}{suffix}.jsonl"))
}

/// What oracle/capture.py's process registered (oracle/zoo_types.py):
/// `corpus/programs/registrations.json`, else a plain `import torch`.
pub fn zoo_registrations(
    root: &Path,
) -> Result<std::sync::Arc<crate::export::registrations::Registrations>> {
    Ok(match root.join(REGISTRATIONS) {
        p if p.exists() => std::sync::Arc::new(crate::json::read_registrations(&p)?),
        _ => crate::export::registrations::Registrations::plain().clone(),
    })
}

/// The zoo's archives, sorted.
pub fn program_files(root: &Path) -> Result<Vec<PathBuf>> {
    super::files_in(&root.join(PROGRAMS), "pt2", false)
}

/// One golden line: `{"id", "passes", "report"}`.
struct Golden {
    line: usize,
    id: String,
    passes: Vec<String>,
    report: Json,
}

fn read_goldens(path: &Path) -> Result<Vec<Golden>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: String| Error::new(m).on_line(i + 1).in_file(path);
        let json: Json =
            serde_json::from_str(line).map_err(|e| err(format!("invalid JSON: {e}")))?;
        let id = json
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| err("missing string `id`".into()))?
            .to_string();
        let passes = match json.get("passes") {
            None => Vec::new(),
            Some(Json::Array(a)) => a
                .iter()
                .map(|p| p.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| err("`passes` must be an array of strings".into()))?,
            Some(_) => return Err(err("`passes` must be an array of strings".into())),
        };
        let report = json
            .get("report")
            .cloned()
            .ok_or_else(|| err("missing `report`".into()))?;
        out.push(Golden {
            line: i + 1,
            id,
            passes,
            report,
        });
    }
    Ok(out)
}

/// A key-sorted, pretty rendering, so a diff shows the keys that moved.
fn pretty(v: &Json) -> String {
    fn sorted(v: &Json) -> Json {
        match v {
            Json::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Json::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut s = serde_json::to_string_pretty(&sorted(v)).unwrap_or_default();
    // Multi-line strings (graph text) read better unescaped.
    s = s.replace("\\n", "\n        ");
    s
}

/// The unified diff from PyTorch's report to ours, keys that differ listed first.
pub fn report_diff(golden: &Json, ours: &Json) -> String {
    let keys = crate::diff::differing_paths(golden, ours, 1);
    let (a, b) = (pretty(golden), pretty(ours));
    let diff = TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header("pytorch", "torchspec")
        .to_string();
    format!("keys differing: {}\n{diff}", keys.join(", "))
}

/// The divergence of two report-like objects: [`report_diff`], with the
/// top-level keys that differ.
pub(crate) fn report_divergence(golden: &Json, ours: &Json) -> Verdict {
    Verdict::Diverge(Divergence::new(
        report_diff(golden, ours),
        crate::diff::differing_paths(golden, ours, 1),
    ))
}

/// A divergence of a whole artifact (`what`: `bytes`, `load`), shown as `diff`.
fn whole(what: &str, diff: String) -> Verdict {
    Verdict::Diverge(Divergence::new(diff, vec![what.to_string()]))
}

/// The one row of a golden file that does not exist: a failure, never zero rows.
fn missing_row(allow: &super::AllowList, id: String, category: &str, file: PathBuf) -> CaseReport {
    CaseReport {
        allowed: allow.get(&id).cloned(),
        id,
        kind: "program",
        category: category.into(),
        file,
        line: 0,
        verdict: Verdict::MissingGolden,
    }
}

/// The report of `program` after `passes`, or the whole-report error.
pub fn report_after(
    program: &ExportedProgram,
    passes: &[String],
) -> std::result::Result<Json, String> {
    if passes.is_empty() {
        return Ok(crate::json::report(program));
    }
    crate::export::passes::transform_report(program, passes)
        .map(|r| crate::json::report_to_serde(&r))
}

pub(super) fn run(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let registrations = zoo_registrations(root)?;
    for file in program_files(root)? {
        program_rows(root, goldens, allow, &registrations, &file, out)?;
    }
    Ok(())
}

/// The rows of one program `file` (under `root/corpus/programs/`): its
/// probe files, the JSON round trip, the serialized bytes and the report
/// after each golden pipeline, against the goldens under `root/goldens`.
pub fn program_rows(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    registrations: &std::sync::Arc<crate::export::registrations::Registrations>,
    file: &Path,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
    let golden_path = program_golden(root, goldens, &name, "");
    let loaded =
        ExportedProgram::load_path_in(file, crate::export::schema::Mode::Default, registrations);
    let entry = ZooEntry {
        name: &name,
        loaded: &loaded,
        registrations,
    };
    for kind in PROBE_FILES {
        probe_rows(root, goldens, allow, &entry, kind, out)?;
    }
    let (original, roundtrip) = json_round_trip(file)?;
    serialized_rows(root, goldens, allow, &name, &loaded, &original, out)?;
    let id = format!("{name}#json");
    out.push(CaseReport {
        allowed: allow.get(&id).cloned(),
        id,
        kind: "program",
        category: "json round trip".into(),
        file: rel.clone(),
        line: 0,
        verdict: roundtrip,
    });
    if !golden_path.exists() {
        out.push(missing_row(
            allow,
            name.clone(),
            "report",
            rel_to(root, &golden_path),
        ));
        return Ok(());
    }
    report_rows(root, allow, &loaded, &golden_path, out)
}

/// The program's JSON and the verdict on writing it back: it must be
/// PyTorch's bytes. (The wire layer alone: a program whose pytree types the
/// loading process must register still writes back.)
fn json_round_trip(file: &Path) -> Result<(Vec<u8>, Verdict)> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, e))?;
    let original = crate::export::archive::program_json(&bytes).map_err(|e| e.in_file(file))?;
    let wire = crate::export::schema::load_program(&original, crate::export::schema::Mode::Default);
    let roundtrip = match &wire {
        Ok(w) => {
            let ours = crate::export::schema::dump_program(&w.program);
            if ours.as_bytes() == original.as_slice() {
                Verdict::Agree
            } else {
                let a = String::from_utf8_lossy(&original).replace(", \"", ",\n\"");
                let b = ours.replace(", \"", ",\n\"");
                whole(
                    "bytes",
                    TextDiff::from_lines(&a, &b)
                        .unified_diff()
                        .context_radius(2)
                        .header("pytorch model.json", "torchspec dump_program")
                        .to_string(),
                )
            }
        }
        Err(e) => whole("load", format!("the reference cannot load it: {e}")),
    };
    Ok((original, roundtrip))
}

/// One row per golden pipeline of the report file at `golden_path`: our
/// report after its passes (or the load error) against PyTorch's.
fn report_rows(
    root: &Path,
    allow: &super::AllowList,
    loaded: &Result<ExportedProgram>,
    golden_path: &Path,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let grel = golden_path
        .strip_prefix(root)
        .unwrap_or(golden_path)
        .to_path_buf();
    for g in read_goldens(golden_path)? {
        let ours: Json = match loaded {
            Ok(ep) => match report_after(ep, &g.passes) {
                Ok(r) => r,
                Err(unsupported) => {
                    out.push(CaseReport {
                        allowed: allow.get(&g.id).cloned(),
                        id: g.id.clone(),
                        kind: "program",
                        category: category(&g.passes),
                        file: grel.clone(),
                        line: g.line,
                        verdict: Verdict::Unsupported(unsupported),
                    });
                    continue;
                }
            },
            Err(e) => match &e.exception {
                Some(t) => serde_json::json!({"error": {"type": t, "message": e.message}}),
                None => {
                    serde_json::json!({"error": {"type": "torchspec", "message": e.to_string()}})
                }
            },
        };
        let verdict = if json_eq(&g.report, &ours) {
            Verdict::Agree
        } else {
            report_divergence(&g.report, &ours)
        };
        out.push(CaseReport {
            allowed: allow.get(&g.id).cloned(),
            id: g.id,
            kind: "program",
            category: category(&g.passes),
            file: grel.clone(),
            line: g.line,
            verdict,
        });
    }
    Ok(())
}

/// One line of `goldens/.../programs/NAME.serialized.jsonl`.
struct SerializedGolden {
    line: usize,
    id: String,
    passes: Vec<String>,
    expected: Expected,
}

enum Expected {
    /// A pass (or the save) raised: `{"type", "message"}`.
    Error(Json),
    Bytes {
        sha256: String,
        length: u64,
        equals_input: bool,
        text: Option<String>,
    },
}

fn read_serialized_goldens(path: &Path) -> Result<Vec<SerializedGolden>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: &str| Error::new(m).on_line(i + 1).in_file(path);
        let json: Json =
            serde_json::from_str(line).map_err(|e| err(&format!("invalid JSON: {e}")))?;
        let id = json
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| err("missing string `id`"))?
            .to_string();
        let passes = json
            .get("passes")
            .and_then(Json::as_array)
            .and_then(|a| a.iter().map(|p| p.as_str().map(str::to_string)).collect())
            .ok_or_else(|| err("`passes` must be an array of strings"))?;
        let expected = match (json.get("error"), json.get("serialized")) {
            (Some(e), None) => Expected::Error(e.clone()),
            (None, Some(s)) => Expected::Bytes {
                sha256: s
                    .get("sha256")
                    .and_then(Json::as_str)
                    .ok_or_else(|| err("missing string `serialized.sha256`"))?
                    .to_string(),
                length: s
                    .get("length")
                    .and_then(Json::as_u64)
                    .ok_or_else(|| err("missing integer `serialized.length`"))?,
                equals_input: s
                    .get("equals_input")
                    .and_then(Json::as_bool)
                    .ok_or_else(|| err("missing boolean `serialized.equals_input`"))?,
                text: s.get("text").and_then(Json::as_str).map(str::to_string),
            },
            _ => return Err(err("a line needs exactly one of `error` and `serialized`")),
        };
        out.push(SerializedGolden {
            line: i + 1,
            id,
            passes,
            expected,
        });
    }
    Ok(out)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A line-per-field rendering of program JSON for a readable diff.
fn json_lines(s: &str) -> String {
    s.replace(", \"", ",\n\"").replace("{\"", "{\n\"")
}

/// What the reference writes for `program` after `passes`: the program
/// JSON, or the error a pass raised (type, message).
pub fn serialized_after(
    program: &ExportedProgram,
    passes: &[String],
) -> std::result::Result<std::result::Result<String, (String, String)>, String> {
    use crate::export::passes::transform;
    use torchspec_pyval::Raise;
    let transformed;
    let ep = if passes.is_empty() {
        program
    } else {
        match transform(program, passes) {
            Ok(t) => {
                transformed = t;
                &transformed
            }
            Err(Raise::Exception(e)) => return Ok(Err((e.type_name, e.message))),
            Err(Raise::Unsupported(w)) => return Err(w),
        }
    };
    match ep.to_json() {
        Ok(s) => Ok(Ok(s)),
        Err(e) => match &e.exception {
            Some(t) => Ok(Err((t.clone(), e.message.clone()))),
            None => Err(e.to_string()),
        },
    }
}

/// The serialized-bytes rows: the program JSON the reference writes after
/// each pipeline against what `torch.export.save` wrote
/// (`goldens/.../programs/NAME.serialized.jsonl`: sha256 and length, the
/// text itself for a short program that differs from its input).
fn serialized_rows(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    name: &str,
    loaded: &Result<ExportedProgram>,
    input_json: &[u8],
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let golden_path = program_golden(root, goldens, name, ".serialized");
    if !golden_path.exists() {
        let id = format!("{name}{}", super::SERIALIZED_SUFFIX);
        let file = rel_to(root, &golden_path);
        out.push(missing_row(allow, id, "serialized bytes", file));
        return Ok(());
    }
    let grel = golden_path
        .strip_prefix(root)
        .unwrap_or(&golden_path)
        .to_path_buf();
    for g in read_serialized_goldens(&golden_path)? {
        let ours = match loaded {
            Ok(ep) => serialized_after(ep, &g.passes),
            Err(e) => Err(format!("the reference cannot load the program: {e}")),
        };
        let verdict = match (ours, &g.expected) {
            (Err(w), _) => Verdict::Unsupported(w),
            (Ok(Err((t, m))), Expected::Error(ge)) => {
                if ge.get("type").and_then(Json::as_str) == Some(t.as_str())
                    && ge.get("message").and_then(Json::as_str) == Some(m.as_str())
                {
                    Verdict::Agree
                } else {
                    report_divergence(ge, &serde_json::json!({"type": t, "message": m}))
                }
            }
            (Ok(Err((t, m))), Expected::Bytes { .. }) => Verdict::Diverge(Divergence::new(
                format!("PyTorch writes the program; the reference raises {t}: {m}"),
                vec!["error".into(), "serialized".into()],
            )),
            (Ok(Ok(s)), Expected::Error(ge)) => Verdict::Diverge(Divergence::new(
                format!(
                    "PyTorch raises {ge}; the reference writes {} bytes",
                    s.len()
                ),
                vec!["error".into(), "serialized".into()],
            )),
            (
                Ok(Ok(s)),
                Expected::Bytes {
                    sha256,
                    length,
                    equals_input,
                    text,
                },
            ) => {
                if s.len() as u64 == *length && sha256_hex(s.as_bytes()) == *sha256 {
                    Verdict::Agree
                } else {
                    let want = match (text, equals_input) {
                        (Some(t), _) => Some(t.clone()),
                        (None, true) => Some(String::from_utf8_lossy(input_json).into_owned()),
                        (None, false) => None,
                    };
                    whole(
                        "serialized",
                        match want {
                            Some(w) => TextDiff::from_lines(&json_lines(&w), &json_lines(&s))
                                .unified_diff()
                                .context_radius(2)
                                .header("torch.export.save model.json", "torchspec")
                                .to_string(),
                            None => format!(
                                "PyTorch writes {length} bytes (sha256 {sha256}); the reference \
                             writes {} bytes (sha256 {})",
                                s.len(),
                                sha256_hex(s.as_bytes())
                            ),
                        },
                    )
                }
            }
        };
        let id = format!("{}{}", g.id, super::SERIALIZED_SUFFIX);
        out.push(CaseReport {
            allowed: allow.get(&id).cloned(),
            id,
            kind: "program",
            category: "serialized bytes".into(),
            file: grel.clone(),
            line: g.line,
            verdict,
        });
    }
    Ok(())
}

/// `path` relative to `root`, as rows name their files.
fn rel_to(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

fn category(passes: &[String]) -> String {
    if passes.is_empty() {
        "report".into()
    } else {
        format!("pass {}", passes.join("+"))
    }
}

/// The probe files of a zoo program, `corpus/programs/NAME.{kind}.jsonl`:
/// `probes` (written by `oracle/zoo.py` from the example inputs) and
/// `derived-probes` (written by `torchspec probes` from the program alone).
pub const PROBE_FILES: [&str; 2] = ["probes", "derived-probes"];

/// A zoo program as the probe rows see it.
struct ZooEntry<'a> {
    name: &'a str,
    loaded: &'a Result<ExportedProgram>,
    registrations: &'a crate::export::registrations::Registrations,
}

/// The lines of `torchspec probes` for `ep`, ids prefixed with `stem/`, and
/// a note for each probe left out (a value with no VALUE form). The first
/// line is the program's own example inputs with their data
/// (`data/sample_inputs/model.pt`, id `stem/sample`, as `torchspec
/// sample-inputs` prints it) when it came from an archive that has them.
pub fn derived_probe_lines(ep: &ExportedProgram, stem: &str) -> (Vec<Json>, Vec<String>) {
    let mut lines = Vec::new();
    let mut left_out = Vec::new();
    if let Some(archive) = &ep.archive {
        match sample_probe_line(archive, stem) {
            Ok(Some(line)) => lines.push(line),
            Ok(None) => {}
            Err(e) => left_out.push(format!("probe `{stem}/sample` left out: {e}")),
        }
    }
    for mut probe in crate::export::inputs::program_probes::derive_probes(ep) {
        probe.id = format!("{stem}/{}", probe.id);
        match probe.to_line() {
            Ok(line) => lines.push(crate::json::to_serde(&line)),
            Err(why) => left_out.push(format!("probe `{}` left out: {why}", probe.id)),
        }
    }
    (lines, left_out)
}

/// The archive's example inputs (`data/sample_inputs/model.pt`) as one
/// probe line, id `stem/sample`; `None` when it has none.
pub fn sample_probe_line(archive: &[u8], stem: &str) -> Result<Option<Json>> {
    let inputs = crate::export::sample_inputs::read(archive, None)?;
    Ok(inputs.map(|(args, kwargs)| {
        let (args, kwargs) = (crate::json::to_serde(&args), crate::json::to_serde(&kwargs));
        serde_json::json!({"id": format!("{stem}/sample"), "kind": "sample", "args": args, "kwargs": kwargs})
    }))
}

/// The input-probe rows of one probe file: `check-inputs` on
/// `corpus/programs/NAME.{kind}.jsonl` against
/// `goldens/.../programs/NAME.{kind}.jsonl`. A golden error raised by
/// a kernel (`pre_kernel: false`) against our `runs` is [`Verdict::Runs`]:
/// kernels are out of scope, so it neither agrees nor fails.
fn probe_rows(
    root: &Path,
    goldens: &str,
    allow: &super::AllowList,
    entry: &ZooEntry<'_>,
    kind: &str,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let ZooEntry {
        name,
        loaded,
        registrations,
    } = *entry;
    use crate::export::inputs::probe::{all_readable, read_probes_in};
    use crate::export::inputs::{InputChecker, Outcome};
    use torchspec_pyval::Raise;
    let probes_path = root.join(PROGRAMS).join(format!("{name}.{kind}.jsonl"));
    if kind != "probes" && !probes_path.exists() {
        return Ok(());
    }
    let golden_path = program_golden(root, goldens, name, &format!(".{kind}"));
    if !golden_path.exists() {
        let file = rel_to(root, &golden_path);
        out.push(missing_row(allow, format!("{name}/{kind}"), kind, file));
        return Ok(());
    }
    let probes = all_readable(read_probes_in(&probes_path, registrations)?)
        .map_err(|e| e.in_file(&probes_path))?;
    let grel = golden_path
        .strip_prefix(root)
        .unwrap_or(&golden_path)
        .to_path_buf();
    let checker = match loaded {
        Ok(ep) => InputChecker::new(ep),
        Err(e) => Err(format!("the reference cannot load the program: {e}")),
    };
    let text = std::fs::read_to_string(&golden_path).map_err(|e| Error::io(&golden_path, e))?;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: &str| Error::new(m).on_line(i + 1).in_file(&golden_path);
        let g: Json = serde_json::from_str(line).map_err(|e| err(&format!("invalid JSON: {e}")))?;
        let id = g
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| err("missing string `id`"))?;
        let probe = probes
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| err(&format!("no probe `{id}` in the probe file")))?;
        let ours = match &checker {
            Ok(c) => c.check(probe),
            Err(w) => Outcome::Stopped(Raise::Unsupported(w.clone())),
        };
        let kernel_error = g.get("pre_kernel") == Some(&Json::Bool(false));
        let verdict = match (&ours, g.get("ok"), g.get("error")) {
            (Outcome::Stopped(Raise::Unsupported(w)), _, _) => Verdict::Unsupported(w.clone()),
            (Outcome::Runs, Some(_), _) => Verdict::Agree,
            (Outcome::Runs, None, Some(_)) if kernel_error => Verdict::Runs,
            (Outcome::Stopped(Raise::Exception(e)), None, Some(ge))
                if !kernel_error
                    && ge.get("type").and_then(Json::as_str) == Some(e.type_name.as_str())
                    && ge.get("message").and_then(Json::as_str) == Some(e.message.as_str()) =>
            {
                Verdict::Agree
            }
            _ => report_divergence(&g, &crate::json::to_serde(&ours.to_json(id))),
        };
        out.push(CaseReport {
            allowed: allow.get(id).cloned(),
            id: id.to_string(),
            kind: "program",
            category: format!(
                "{} {}",
                if kind == "probes" {
                    "probe"
                } else {
                    "derived probe"
                },
                probe.kind.as_deref().unwrap_or("-")
            ),
            file: grel.clone(),
            line: i + 1,
            verdict,
        });
    }
    Ok(())
}
