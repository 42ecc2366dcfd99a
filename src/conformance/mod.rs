//! The conformance check: every corpus case evaluated by the reference and
//! compared with PyTorch's golden, with the allow-list of known divergences.
//! Used by `torchspec check` and by `tests/conformance.rs`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::case::file::{each_case_in, parse_results, read_results};
use crate::case::{eval_case, Outcome, ResultLine};
use crate::diff::{differing_paths, render_divergence, results_agree};
use crate::error::{Error, Result};
use crate::shard::Shard;

pub mod mutants;
pub mod programs;
pub mod pytree;
pub mod schema;
pub mod weights;

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
    /// The reference's result differs from PyTorch's.
    Diverge(Divergence),
    /// An input probe the reference says `runs` where PyTorch's kernel
    /// raised (golden `pre_kernel: false`): kernels are out of scope, so it
    /// is neither agreement nor a failure.
    Runs,
    Unsupported(String),
    MissingGolden,
    /// The version matrix (`check --torch X`): the reference disagrees with
    /// X's golden, and X's golden differs from the target's (2.15.0): a
    /// behaviour that moved between versions, not a failure. The diff from
    /// X's result to ours.
    Drift(String),
}

/// How a result differs from PyTorch's.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The unified diff from PyTorch's result to ours.
    pub diff: String,
    /// What differs, sorted: top-level keys of the compared lines or dotted
    /// paths under them (`ok.repr`, `error.message`, a report key, a pytree
    /// field). What an allow-list entry's `differs` records.
    pub differs: Vec<String>,
}

impl Divergence {
    /// A divergence of `differs` (sorted here), shown as `diff`.
    pub fn new(diff: impl Into<String>, mut differs: Vec<String>) -> Divergence {
        differs.sort();
        differs.dedup();
        Divergence {
            diff: diff.into(),
            differs,
        }
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.diff)
    }
}

impl Verdict {
    /// The verdict's name, as an allow-list entry's `verdict` spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Diverge(_) => "diverge",
            Verdict::Runs => "runs",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::MissingGolden => "no golden",
            Verdict::Drift(_) => "drift",
        }
    }
}

/// One line of `corpus/allow-list.jsonl`: why a case may fail, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct AllowEntry {
    pub reason: String,
    /// The verdict the case has, as triaged: `diverge` or `unsupported`
    /// (any, when absent).
    pub verdict: Option<String>,
    /// For a divergence, what differs ([`Divergence::differs`]; anything,
    /// when absent).
    pub differs: Option<Vec<String>>,
    /// Added by the live fuzzer and not looked at yet (`"untriaged": true`).
    pub untriaged: bool,
}

impl AllowEntry {
    /// Why `verdict` breaks this entry (it agrees or runs now, or fails
    /// otherwise than recorded), if it does.
    pub fn mismatch(&self, verdict: &Verdict) -> Option<String> {
        let kind = verdict.kind();
        match verdict {
            Verdict::Agree | Verdict::Runs => {
                return Some(format!(
                    "is `{kind}` now: delete its entry from {ALLOW_LIST} (the list only shrinks)"
                ))
            }
            Verdict::MissingGolden | Verdict::Drift(_) => return None,
            Verdict::Diverge(_) | Verdict::Unsupported(_) => {}
        }
        let shown = match verdict {
            Verdict::Diverge(d) => d.diff.clone(),
            Verdict::Unsupported(why) => why.clone(),
            _ => String::new(),
        };
        if let Some(want) = self.verdict.as_deref().filter(|w| *w != kind) {
            return Some(format!(
                "is allow-listed as `{want}` but is `{kind}` in {ALLOW_LIST}: re-triage it\n{shown}"
            ));
        }
        match (verdict, &self.differs) {
            (Verdict::Diverge(d), Some(want)) if *want != d.differs => Some(format!(
                "is allow-listed as differing in {want:?} but differs in {:?}: re-triage it in {ALLOW_LIST}\n{shown}",
                d.differs
            )),
            _ => None,
        }
    }
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
    /// The allow-list's entry, when the case is on it.
    pub allowed: Option<AllowEntry>,
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
            (Verdict::MissingGolden, _) => Some(format!(
                "{loc} has no golden: run `oracle/regen-goldens.sh` (needs PyTorch, see README)"
            )),
            (v, Some(entry)) => entry.mismatch(v).map(|m| format!("{loc} {m}")),
            (Verdict::Agree | Verdict::Runs | Verdict::Drift(_), None) => None,
            (Verdict::Diverge(diff), None) => Some(format!("{loc} diverges from PyTorch:\n{diff}")),
            (Verdict::Unsupported(why), None) => Some(format!(
                "{loc} is unsupported by the reference ({why}); implement it or allow-list it with a reason in {ALLOW_LIST}"
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

/// The allow-list as read: entries by case id.
pub type AllowList = HashMap<String, AllowEntry>;

/// `corpus/allow-list.jsonl`: `{"id", "reason"}` per line, with optional
/// `"verdict"` (`"diverge"` / `"unsupported"`), `"differs"` (an array of
/// strings) and `"untriaged"` (a bool).
pub fn read_allow_list(path: &Path) -> Result<AllowList> {
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
        let entry = allow_entry(&json).map_err(|m| err(&m))?;
        if out.insert(id.to_string(), entry).is_some() {
            return Err(err(&format!("duplicate id `{id}`")));
        }
    }
    Ok(out)
}

/// The fields of one allow-list line after its `id`.
fn allow_entry(json: &serde_json::Value) -> std::result::Result<AllowEntry, String> {
    use serde_json::Value as Json;
    let reason = json
        .get("reason")
        .and_then(Json::as_str)
        .filter(|r| !r.trim().is_empty())
        .ok_or("every entry needs a non-empty `reason`")?;
    let verdict = match json.get("verdict") {
        None => None,
        Some(Json::String(v)) if v == "diverge" || v == "unsupported" => Some(v.clone()),
        Some(_) => return Err("`verdict` must be \"diverge\" or \"unsupported\"".into()),
    };
    let differs = match json.get("differs") {
        None => None,
        Some(Json::Array(a)) => Some(
            a.iter()
                .map(|d| d.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("`differs` must be an array of strings")?,
        ),
        Some(_) => return Err("`differs` must be an array of strings".into()),
    };
    if differs.is_some() && verdict.as_deref() != Some("diverge") {
        return Err("`differs` needs `\"verdict\": \"diverge\"`".into());
    }
    let untriaged = match json.get("untriaged") {
        None => false,
        Some(Json::Bool(b)) => *b,
        Some(_) => return Err("`untriaged` must be a bool".into()),
    };
    Ok(AllowEntry {
        reason: reason.to_string(),
        verdict,
        differs: differs.map(|mut d| {
            d.sort();
            d.dedup();
            d
        }),
        untriaged,
    })
}

/// The files of `dir` ending `.ext`, sorted; a missing `dir` has none
/// unless it is `required`.
pub(crate) fn files_in(dir: &Path, ext: &str, required: bool) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// The golden folder `sub` of the set `goldens`, when its rows count: the
/// target's always (a missing golden is a failing row), an older torch's
/// once `oracle/regen-goldens.sh --torch X` has captured it.
pub(crate) fn golden_dir(root: &Path, goldens: &str, sub: &str) -> Option<PathBuf> {
    let dir = root.join(goldens).join(sub);
    (goldens == GOLDENS || dir.is_dir()).then_some(dir)
}

/// The case files of the corpus, sorted.
///
/// ```
/// let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
/// let files = torchspec::conformance::case_files(root)?;
/// assert!(files.iter().any(|f| f.ends_with("build-vars.jsonl")));
/// assert!(files.windows(2).all(|w| w[0] < w[1]));
/// # Ok::<(), torchspec::Error>(())
/// ```
pub fn case_files(root: &Path) -> Result<Vec<PathBuf>> {
    files_in(&root.join(CASES), "jsonl", true)
}

/// How the reference's result compares with PyTorch's golden (a case the
/// reference does not model is `Unsupported` whatever PyTorch said).
pub fn verdict(golden: &ResultLine, ours: &ResultLine) -> Verdict {
    match &ours.outcome {
        Outcome::Unsupported(why) => Verdict::Unsupported(why.clone()),
        _ if results_agree(golden, ours) => Verdict::Agree,
        _ => Verdict::Diverge(Divergence::new(
            render_divergence(golden, ours),
            differing_paths(&golden.to_json(), &ours.to_json(), 2),
        )),
    }
}

/// The regression files kept by `torchspec fuzz --live`, sorted (none when
/// the folder does not exist).
pub fn regression_files(root: &Path) -> Result<Vec<PathBuf>> {
    files_in(&root.join(REGRESSIONS), "jsonl", false)
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
        if let Verdict::Diverge(d) = &c.verdict {
            c.verdict = Verdict::Drift(d.diff.clone());
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
    pytree::rows(root, goldens, &allow, &mut program_rows)?;
    schema::rows(root, &allow, &mut program_rows)?;
    weights::rows(root, goldens, &allow, &mut program_rows)?;
    mutants::rows(root, goldens, &allow, &mut program_rows)?;
    for c in program_rows {
        if !seen.insert(c.id.clone()) {
            return Err(Error::new(format!(
                "duplicate row id `{}` ({}): the allow-list could not tell the rows apart",
                c.id,
                c.file.display()
            )));
        }
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

/// Row counts of the table, per verdict and per allow-list mark. Each row
/// has exactly one verdict: `cases = agree + diverge + runs + drift +
/// unsupported + missing`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    pub cases: usize,
    pub agree: usize,
    pub diverge: usize,
    /// Probes the reference says run where PyTorch's kernel raised.
    pub runs: usize,
    pub unsupported: usize,
    pub missing: usize,
    /// Rows with an allow-list entry (whatever their verdict).
    pub allowed: usize,
    /// Allow-listed rows whose entry is marked `untriaged` (the live fuzzer's).
    pub untriaged: usize,
    pub drift: usize,
}

impl Counts {
    fn add(&mut self, c: &CaseReport) {
        self.cases += 1;
        match c.verdict {
            Verdict::Agree => self.agree += 1,
            Verdict::Diverge(_) => self.diverge += 1,
            Verdict::Runs => self.runs += 1,
            Verdict::Unsupported(_) => self.unsupported += 1,
            Verdict::MissingGolden => self.missing += 1,
            Verdict::Drift(_) => self.drift += 1,
        }
        if let Some(entry) = &c.allowed {
            self.allowed += 1;
            self.untriaged += usize::from(entry.untriaged);
        }
    }
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

    /// Verdict counts over all rows.
    pub fn totals(&self) -> Counts {
        let mut t = Counts::default();
        for c in &self.cases {
            t.add(c);
        }
        t
    }

    fn table_with(&self, drift: bool) -> String {
        let mut rows: BTreeMap<(&str, &str), Counts> = BTreeMap::new();
        let mut total = Counts::default();
        for c in &self.cases {
            rows.entry((c.kind, c.category.as_str()))
                .or_default()
                .add(c);
            total.add(c);
        }
        let mut out = String::new();
        // (title, width); the drift column only in the matrix table.
        let mut columns: Vec<(&str, i32)> = vec![
            ("kind", -12),
            ("category", -32),
            ("cases", 7),
            ("agreeing", 9),
            ("diverging", 9),
            ("runs", 5),
        ];
        if drift {
            columns.push(("drift", 7));
        }
        columns.extend([
            ("unsupported", 11),
            ("no golden", 9),
            ("allow-listed", 12),
            ("untriaged", 9),
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
                c.runs.to_string(),
            ];
            if drift {
                cells.push(c.drift.to_string());
            }
            cells.extend([
                c.unsupported.to_string(),
                c.missing.to_string(),
                c.allowed.to_string(),
                c.untriaged.to_string(),
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
