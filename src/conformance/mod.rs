//! The conformance check: every corpus case evaluated by the reference and
//! compared with PyTorch's golden, with the allow-list of known divergences.
//! Used by `torchspec check` and by `tests/conformance.rs`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::case::file::{each_case_in, parse_results, read_results};
use crate::case::{eval_case, Outcome, ResultLine};
use crate::diff::{render_divergence, results_agree};
use crate::error::{Error, Result};
use crate::live::shard::Shard;

pub mod programs;

/// The torch version this reference targets.
pub const TARGET_TORCH: &str = "2.15.0";
/// The goldens this reference targets.
pub const GOLDENS: &str = "corpus/goldens/torch-2.15.0";
pub const CASES: &str = "corpus/cases";
pub const ALLOW_LIST: &str = "corpus/allow-list.jsonl";
/// Cases kept by the live fuzzer (`torchspec fuzz --live`), one file each;
/// their goldens are in `GOLDENS/regressions/`.
pub const REGRESSIONS: &str = "corpus/regressions";

/// How one case compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Agree,
    /// The unified diff from PyTorch's result to ours.
    Diverge(String),
    Unsupported(String),
    MissingGolden,
    /// The version matrix (`check --torch X`): the reference disagrees with
    /// X's golden, and X's golden differs from the target's (2.15.0): a
    /// behaviour that moved between versions, not a failure. The diff from
    /// X's result to ours.
    Drift(String),
}

/// One case's verdict and what the allow-list says of it.
#[derive(Clone, Debug)]
pub struct CaseReport {
    pub id: String,
    pub kind: &'static str,
    pub category: String,
    pub file: PathBuf,
    pub line: usize,
    pub verdict: Verdict,
    /// The allow-list's reason, when the case is on it.
    pub allowed: Option<String>,
}

/// The suffix of a serialized-bytes row's id: row `P#serialized` compares
/// line `P` of `programs/NAME.serialized.jsonl`.
pub const SERIALIZED_SUFFIX: &str = "#serialized";

impl CaseReport {
    /// The id of the golden line this row compares (a serialized-bytes
    /// row's id without [`SERIALIZED_SUFFIX`]).
    pub fn golden_id(&self) -> &str {
        self.id.strip_suffix(SERIALIZED_SUFFIX).unwrap_or(&self.id)
    }

    /// Why this case fails the check, if it does.
    pub fn failure(&self) -> Option<String> {
        let loc = if self.line == 0 {
            format!("{}: `{}`", self.file.display(), self.id)
        } else {
            format!("{}:{}: `{}`", self.file.display(), self.line, self.id)
        };
        match (&self.verdict, &self.allowed) {
            (Verdict::Agree, Some(_)) => Some(format!(
                "{loc} now agrees with PyTorch: delete its entry from {ALLOW_LIST} (the list only shrinks)"
            )),
            (Verdict::Agree, None)
            | (Verdict::Diverge(_) | Verdict::Unsupported(_), Some(_))
            | (Verdict::Drift(_), _) => None,
            (Verdict::Diverge(diff), None) => Some(format!("{loc} diverges from PyTorch:\n{diff}")),
            (Verdict::Unsupported(why), None) => Some(format!(
                "{loc} is unsupported by the reference ({why}); implement it or allow-list it with a reason in {ALLOW_LIST}"
            )),
            (Verdict::MissingGolden, _) => Some(format!(
                "{loc} has no golden: run `oracle/regen-goldens.sh` (needs PyTorch, see README)"
            )),
        }
    }
}

/// The whole corpus, compared.
#[derive(Debug, Default)]
pub struct Report {
    pub cases: Vec<CaseReport>,
    /// Allow-list ids that name no corpus case.
    pub unknown_allowed: Vec<String>,
}

/// A golden file read in step with its case file (the oracle writes one
/// result per case, in order), so neither is ever whole in memory. A golden
/// file out of step with its cases (a case added or moved since the last
/// `oracle/regen-goldens.sh`) is read whole, once, into a map instead.
struct Goldens {
    path: PathBuf,
    lines: Option<std::io::Lines<std::io::BufReader<std::fs::File>>>,
    line: usize,
    map: Option<HashMap<String, ResultLine>>,
}

impl Goldens {
    fn open(path: &Path) -> Result<Goldens> {
        let lines = match std::fs::File::open(path) {
            Ok(f) => Some(std::io::BufReader::new(f).lines()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(path, e)),
        };
        Ok(Goldens {
            path: path.to_path_buf(),
            lines,
            line: 0,
            map: None,
        })
    }

    /// The golden of the case `id`, the next case of the file.
    fn get(&mut self, id: &str) -> Result<Option<ResultLine>> {
        if self.map.is_none() {
            let Some(lines) = &mut self.lines else {
                return Ok(None);
            };
            let next = lines
                .next()
                .transpose()
                .map_err(|e| Error::io(&self.path, e))?;
            self.line += 1;
            if let Some(text) = next.filter(|t| !t.trim().is_empty()) {
                let golden = parse_results(&text)
                    .map_err(|e| e.on_line(self.line).in_file(&self.path))?
                    .pop();
                if let Some(g) = golden.filter(|g| g.id == id) {
                    return Ok(Some(g));
                }
            }
            self.map = Some(
                read_results(&self.path)?
                    .into_iter()
                    .map(|r| (r.id.clone(), r))
                    .collect(),
            );
        }
        Ok(self.map.as_ref().and_then(|m| m.get(id).cloned()))
    }
}

/// `corpus/allow-list.jsonl`: `{"id": ..., "reason": ...}` per line.
pub fn read_allow_list(path: &Path) -> Result<HashMap<String, String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut out = HashMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: &str| Error::new(m.to_string()).on_line(i + 1).in_file(path);
        let json: serde_json::Value =
            serde_json::from_str(line).map_err(|e| err(&format!("invalid JSON: {e}")))?;
        let id = json
            .get("id")
            .and_then(|v| v.as_str())
            .ok_or_else(|| err("missing string `id`"))?;
        let reason = json
            .get("reason")
            .and_then(|v| v.as_str())
            .filter(|r| !r.trim().is_empty());
        let reason = reason.ok_or_else(|| err("every entry needs a non-empty `reason`"))?;
        if out.insert(id.to_string(), reason.to_string()).is_some() {
            return Err(err(&format!("duplicate id `{id}`")));
        }
    }
    Ok(out)
}

/// The case files of the corpus, sorted.
pub fn case_files(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join(CASES);
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// How the reference's result compares with PyTorch's golden (a case the
/// reference does not model is `Unsupported` whatever PyTorch said).
pub fn verdict(golden: &ResultLine, ours: &ResultLine) -> Verdict {
    match &ours.outcome {
        Outcome::Unsupported(why) => Verdict::Unsupported(why.clone()),
        _ if results_agree(golden, ours) => Verdict::Agree,
        _ => Verdict::Diverge(render_divergence(golden, ours)),
    }
}

/// The regression files kept by `torchspec fuzz --live`, sorted (none when
/// the folder does not exist).
pub fn regression_files(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join(REGRESSIONS);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Evaluate and compare every corpus case under `root`.
pub fn run(root: &Path) -> Result<Report> {
    run_shard(root, Shard::ALL)
}

/// Evaluate and compare the corpus cases of one shard (`--shard k/n`: a
/// case belongs to the shard of its id, see [`Shard::has_id`]). An
/// allow-list entry naming no case is reported by the shard of its id.
pub fn run_shard(root: &Path, shard: Shard) -> Result<Report> {
    run_against(root, GOLDENS, shard)
}

/// The version matrix: every corpus case scored against the goldens of
/// torch `version` (`corpus/goldens/torch-VERSION/`). Where the reference
/// disagrees with that golden and it differs from the target's (2.15.0)
/// golden of the same line, the verdict is `Drift`, not a divergence; the
/// allow-list (written for 2.15.0) applies only to lines that did not move,
/// and to `unsupported` rows (their reason is about the reference).
/// `version` 2.15.0 is `run`.
pub fn run_matrix(root: &Path, version: &str) -> Result<Report> {
    let target = crate::drift::GoldenSet::open(root, TARGET_TORCH)?;
    if version == TARGET_TORCH {
        return run(root);
    }
    let other = crate::drift::GoldenSet::open(root, version)?;
    let goldens = format!("{}/torch-{version}", crate::drift::set::GOLDENS_ROOT);
    let mut report = run_against(root, &goldens, Shard::ALL)?;
    let golden_dir = root.join(&goldens);
    for c in &mut report.cases {
        // The golden file of the row, relative to a golden set.
        let rel = if let Ok(r) = c.file.strip_prefix(CASES) {
            r.to_string_lossy().into_owned()
        } else if let Ok(r) = c.file.strip_prefix(REGRESSIONS) {
            format!("regressions/{}", r.to_string_lossy())
        } else if let Ok(r) = root.join(&c.file).strip_prefix(&golden_dir) {
            r.to_string_lossy().into_owned()
        } else {
            continue; // a row of no golden (the JSON round trip)
        };
        let id = c.golden_id();
        let moved = match (other.get(&rel, id), target.get(&rel, id)) {
            (Some(x), Some(t)) => x.text != t.text,
            (None, None) => false,
            _ => true,
        };
        if !moved {
            continue;
        }
        // An unsupported row's allow-list reason is about the reference (it
        // produced no output), not the golden, so it holds under any set.
        if let Verdict::Unsupported(_) = c.verdict {
            continue;
        }
        c.allowed = None;
        if let Verdict::Diverge(diff) = &c.verdict {
            c.verdict = Verdict::Drift(diff.clone());
        }
    }
    // "The list only shrinks" is a rule of the target's check: an entry for
    // a row this set has no golden for (not captured under torch X) is not
    // a failure here.
    report.unknown_allowed.clear();
    Ok(report)
}

fn run_against(root: &Path, goldens: &str, shard: Shard) -> Result<Report> {
    let allow = read_allow_list(&root.join(ALLOW_LIST))?;
    let mut report = Report::default();
    let mut seen = HashSet::new();
    // The live fuzzer's regressions are captured for the target torch; under
    // another set they count only where that set has captured them.
    let regression_goldens = root.join(goldens).join("regressions");
    let regressions = if goldens == GOLDENS || regression_goldens.is_dir() {
        regression_files(root)?
    } else {
        Vec::new()
    };
    let files = case_files(root)?
        .into_iter()
        .map(|f| (f, root.join(goldens), None))
        .chain(
            regressions
                .into_iter()
                .map(|f| (f, regression_goldens.clone(), Some("regressions"))),
        );
    for (file, golden_dir, fixed_category) in files {
        let category = match fixed_category {
            Some(c) => c.to_string(),
            None => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let Some(file_name) = file.file_name() else {
            continue;
        };
        let golden_path = golden_dir.join(file_name);
        let mut goldens = Goldens::open(&golden_path)?;
        let rel = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        each_case_in(&file, |line, case| {
            if !seen.insert(case.id.clone()) {
                return Err(Error::new(format!(
                    "duplicate case id `{}` across corpus files",
                    case.id
                ))
                .on_line(line)
                .in_file(&rel));
            }
            if !shard.has_id(&case.id) {
                // Still read in step, so the next case finds its golden.
                goldens.get(&case.id)?;
                return Ok(());
            }
            let ours = eval_case(&case);
            let verdict = match goldens.get(&case.id)? {
                None => Verdict::MissingGolden,
                Some(g) => verdict(&g, &ours),
            };
            // Derived-expression cases get their own row per file.
            let category = if case.uses_derived() {
                format!("{category} [derived]")
            } else {
                category.clone()
            };
            report.cases.push(CaseReport {
                allowed: allow.get(&case.id).cloned(),
                id: case.id,
                kind: case.body.kind(),
                category,
                file: rel.clone(),
                line,
                verdict,
            });
            Ok(())
        })?;
    }
    let mut program_rows = Vec::new();
    programs::run(root, goldens, &allow, &mut program_rows)?;
    for c in program_rows {
        seen.insert(c.id.clone());
        if shard.has_id(&c.id) {
            report.cases.push(c);
        }
    }
    report.unknown_allowed = allow
        .keys()
        .filter(|id| !seen.contains(*id) && shard.has_id(id))
        .cloned()
        .collect();
    report.unknown_allowed.sort();
    Ok(report)
}

#[derive(Default, Clone, Copy)]
struct Counts {
    cases: usize,
    agree: usize,
    diverge: usize,
    unsupported: usize,
    missing: usize,
    allowed: usize,
    drift: usize,
}

impl Report {
    /// Every failure of the check, in corpus order.
    pub fn failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self.cases.iter().filter_map(CaseReport::failure).collect();
        for id in &self.unknown_allowed {
            out.push(format!(
                "{ALLOW_LIST} names `{id}`, which is in no case file: delete the entry"
            ));
        }
        out
    }

    /// The conformance table: one row per case kind and category.
    pub fn table(&self) -> String {
        self.table_with(false)
    }

    /// The table of the version matrix: a `drift` column after `diverging`.
    pub fn matrix_table(&self) -> String {
        self.table_with(true)
    }

    /// Verdict counts over all rows: (agree, diverge, drift, unsupported, missing).
    pub fn totals(&self) -> (usize, usize, usize, usize, usize) {
        let mut t = (0, 0, 0, 0, 0);
        for c in &self.cases {
            match c.verdict {
                Verdict::Agree => t.0 += 1,
                Verdict::Diverge(_) => t.1 += 1,
                Verdict::Drift(_) => t.2 += 1,
                Verdict::Unsupported(_) => t.3 += 1,
                Verdict::MissingGolden => t.4 += 1,
            }
        }
        t
    }

    fn table_with(&self, drift: bool) -> String {
        let mut rows: BTreeMap<(&str, &str), Counts> = BTreeMap::new();
        let mut total = Counts::default();
        for c in &self.cases {
            for counts in [
                rows.entry((c.kind, c.category.as_str())).or_default(),
                &mut total,
            ] {
                counts.cases += 1;
                match c.verdict {
                    Verdict::Agree => counts.agree += 1,
                    Verdict::Diverge(_) => counts.diverge += 1,
                    Verdict::Unsupported(_) => counts.unsupported += 1,
                    Verdict::MissingGolden => counts.missing += 1,
                    Verdict::Drift(_) => counts.drift += 1,
                }
                if c.allowed.is_some() {
                    counts.allowed += 1;
                }
            }
        }
        let mut out = String::new();
        // (title, width); the drift column only in the matrix table.
        let mut columns: Vec<(&str, i32)> = vec![
            ("kind", -12),
            ("category", -32),
            ("cases", 7),
            ("agreeing", 9),
            ("diverging", 9),
        ];
        if drift {
            columns.push(("drift", 7));
        }
        columns.extend([
            ("unsupported", 11),
            ("no golden", 9),
            ("allow-listed", 12),
            ("agree %", 8),
        ]);
        let line = |out: &mut String, cells: &[String]| {
            let mut text = String::new();
            for (i, (cell, (_, w))) in cells.iter().zip(&columns).enumerate() {
                if i > 0 {
                    text.push(' ');
                }
                let width = w.unsigned_abs() as usize;
                if *w < 0 {
                    let _ = write!(text, "{cell:<width$}");
                } else {
                    let _ = write!(text, "{cell:>width$}");
                }
            }
            let _ = writeln!(out, "{text}");
        };
        let header: Vec<String> = columns.iter().map(|(t, _)| t.to_string()).collect();
        line(&mut out, &header);
        let row = |out: &mut String, kind: &str, cat: &str, c: &Counts| {
            let pct = if c.cases == 0 {
                0.0
            } else {
                100.0 * c.agree as f64 / c.cases as f64
            };
            let mut cells = vec![
                kind.to_string(),
                cat.to_string(),
                c.cases.to_string(),
                c.agree.to_string(),
                c.diverge.to_string(),
            ];
            if drift {
                cells.push(c.drift.to_string());
            }
            cells.extend([
                c.unsupported.to_string(),
                c.missing.to_string(),
                c.allowed.to_string(),
                format!("{pct:.1}"),
            ]);
            line(out, &cells);
        };
        for ((kind, cat), c) in &rows {
            row(&mut out, kind, cat, c);
        }
        row(&mut out, "all", "", &total);
        out
    }
}
