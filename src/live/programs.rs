//! Generated programs (`torchspec fuzz --live --programs`): plan `index` of
//! `seed` ([`plan`](super::plan)) built, exported and saved by PyTorch, and
//! every row `check` has for a zoo program compared on it.
//!
//! ```text
//! Plan::generate(seed, index) ──▶ oracle `plan` request: build, export, save
//!     into a scratch root laid out as the corpus (program, probes, goldens)
//! torchspec probes ──▶ NAME.derived-probes.jsonl ──▶ oracle `plan_probes`
//! conformance::programs::program_rows + weights::archive_row (as `check`)
//!     ──▶ every row agrees, or a divergence: shrink the plan (remove ops,
//!         outputs, inputs, dynamism) while the signature holds
//!     ──▶ corpus/programs/NAME.{pt2,plan.json,...} + goldens + allow-list
//!         + corpus/programs/packets/NAME.md
//! ```
//!
//! A plan PyTorch cannot export is [`Step::Skipped`], tallied by stage and
//! exception type, never a divergence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::conformance::programs::{derived_probe_lines, program_rows, PROGRAMS};
use crate::conformance::weights::archive_row;
use crate::conformance::{AllowList, CaseReport, Verdict, GOLDENS};
use crate::error::{Error, Result};
use crate::export::registrations::Registrations;
use crate::export::schema::Mode;
use crate::export::ExportedProgram;

use super::oracle::{OracleFailure, ProcessOracle, Requests};
use super::plan::Plan;
use super::regress::{allow_line, allow_list, fence, write_file};
use super::{Config, KeptLine, Step, Target};
use crate::shard::fnv1a64;

/// Where plans are exported while they are judged (under the root).
pub const SCRATCH: &str = "target/live/plans";
/// Repro packets of kept programs.
pub const PACKETS: &str = "corpus/programs/packets";
/// Oracle round trips a program shrink may take (each one is an export).
const SHRINK_BUDGET: usize = 60;

/// What one plan came to.
#[derive(Debug)]
pub enum Outcome {
    /// PyTorch could not make it: the stage and the exception type.
    NotExported { stage: String, exception: String },
    /// Every row of the exported program.
    Rows(Vec<CaseReport>),
}

/// The `--programs` target.
pub struct Programs {
    root: PathBuf,
    registrations: Arc<Registrations>,
    /// The last plan that diverged (what `keep` shrinks).
    last: Option<(u64, Plan)>,
}

impl Programs {
    pub fn new(root: &Path, registrations: Arc<Registrations>) -> Programs {
        Programs {
            root: root.to_path_buf(),
            registrations,
            last: None,
        }
    }

    /// Export `plan` as `name` into a fresh scratch root and compare every
    /// row; the scratch root is left for `keep` to copy from.
    pub fn run_plan(
        &self,
        oracle: &mut dyn Requests,
        plan: &Plan,
        name: &str,
        oracle_time: &mut Duration,
    ) -> std::result::Result<(Outcome, PathBuf), OracleFailure> {
        let dir = self.root.join(SCRATCH).join(name);
        if let Some(outcome) = export_plan(oracle, plan, &dir, name, true, oracle_time)? {
            return Ok((outcome, dir));
        }
        let rows = self
            .rows(oracle, &dir, name, oracle_time)
            .map_err(|e| OracleFailure::Garbage(format!("generated program {name}: {e}")))?;
        Ok((Outcome::Rows(rows), dir))
    }

    /// The derived probes (asked of the oracle), then every row of `check`.
    pub(crate) fn rows(
        &self,
        oracle: &mut dyn Requests,
        dir: &Path,
        name: &str,
        oracle_time: &mut Duration,
    ) -> Result<Vec<CaseReport>> {
        let file = dir.join(PROGRAMS).join(format!("{name}.pt2"));
        if let Ok(ep) = ExportedProgram::load_path_in(&file, Mode::Default, &self.registrations) {
            let (lines, _) = derived_probe_lines(&ep, name);
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            write_file(&file.with_extension("derived-probes.jsonl"), &text)?;
            let t = Instant::now();
            let body = json!({"root": absolute(dir), "name": name});
            let reply = oracle.request("plan_probes", name, &body);
            *oracle_time += t.elapsed();
            reply.map_err(|f| Error::new(format!("plan_probes: {f}")))?;
        }
        let allow = AllowList::new();
        let mut rows = Vec::new();
        program_rows(dir, GOLDENS, &allow, &self.registrations, &file, &mut rows)?;
        let weights = dir.join(GOLDENS).join("weights");
        archive_row(dir, &weights, &allow, &self.registrations, &file, &mut rows)?;
        Ok(rows)
    }

    /// Judge plan `index` of `seed` against any oracle (tests use a closure).
    pub fn judge_with(
        &mut self,
        oracle: &mut dyn Requests,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> (Step, Vec<String>) {
        let plan = Plan::generate(seed, index);
        let id = format!("plan-{seed}-{index}");
        let outcome = self.run_plan(oracle, &plan, &id, oracle_time);
        let _ = std::fs::remove_dir_all(self.root.join(SCRATCH).join(&id));
        match outcome {
            Err(failure) => {
                let record = json!({"failure": failure.to_string(), "plan": plan.to_json()});
                let step = Step::OracleFailed {
                    id,
                    failure,
                    record,
                };
                (step, Vec::new())
            }
            Ok((Outcome::NotExported { stage, exception }, _)) => (
                Step::Skipped,
                vec![format!("not exported: {stage} {exception}")],
            ),
            Ok((Outcome::Rows(rows), _)) => {
                let tallies = row_tallies(&rows, &plan);
                match rows_signature(&rows) {
                    None if rows.iter().any(is_unsupported) => (Step::Unsupported, tallies),
                    None => (Step::Agree, tallies),
                    Some(signature) => {
                        self.last = Some((index, plan));
                        let name = kept_name(&signature);
                        (
                            Step::Diverge {
                                id,
                                signature,
                                name,
                                case: None,
                            },
                            tallies,
                        )
                    }
                }
            }
        }
    }

    /// Shrink the last divergent plan (at `index`) and keep it.
    pub fn keep_with(
        &mut self,
        oracle: &mut dyn Requests,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>> {
        let Some((_, plan)) = self.last.take().filter(|(at, _)| *at == index) else {
            return Ok(None);
        };
        let original_id = format!("plan-{index}");
        let (plan, steps) = self.shrink(oracle, plan, signature, oracle_time);
        let name = kept_name(signature);
        let (outcome, dir) = match self.run_plan(oracle, &plan, &name, oracle_time) {
            Ok(x) => x,
            Err(_) => return Ok(None),
        };
        let Outcome::Rows(rows) = outcome else {
            return Ok(None);
        };
        if rows_signature(&rows).as_deref() != Some(signature) {
            return Ok(None);
        }
        self.keep_files(&dir, &name, &plan, signature, &rows)?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Some(KeptLine {
            name: name.clone(),
            signature: signature.to_string(),
            original_id,
            shrink_steps: steps,
            path: format!("{PROGRAMS}/{name}.pt2"),
        }))
    }

    /// Greedy: take the first smaller plan that keeps the signature, again
    /// and again, within the budget.
    fn shrink(
        &self,
        oracle: &mut dyn Requests,
        mut plan: Plan,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> (Plan, usize) {
        let (mut asked, mut steps) = (0, 0);
        'outer: while asked < SHRINK_BUDGET {
            for candidate in plan.shrink_candidates() {
                if asked >= SHRINK_BUDGET {
                    break 'outer;
                }
                asked += 1;
                let id = format!("shrink-{asked}");
                let got = self.run_plan(oracle, &candidate, &id, oracle_time);
                let _ = std::fs::remove_dir_all(self.root.join(SCRATCH).join(&id));
                if let Ok((Outcome::Rows(rows), _)) = got {
                    if rows_signature(&rows).as_deref() == Some(signature) {
                        plan = candidate;
                        steps += 1;
                        continue 'outer;
                    }
                }
            }
            break;
        }
        (plan, steps)
    }

    /// Copy the program exported into `dir`, its probes, its goldens and
    /// its plan into the corpus: a zoo program from now on.
    pub(crate) fn copy_program(&self, dir: &Path, name: &str, plan: &Plan) -> Result<()> {
        for (from, to) in [(PROGRAMS, PROGRAMS), (GOLDENS, GOLDENS)] {
            copy_tree(&dir.join(from), &self.root.join(to))?;
        }
        let plan_text = serde_json::to_string_pretty(&plan.to_json()).unwrap_or_default();
        write_file(
            &self.root.join(PROGRAMS).join(format!("{name}.plan.json")),
            &(plan_text + "\n"),
        )
    }

    /// [`copy_program`](Self::copy_program), then allow-list every row that does not agree (untriaged); write
    /// the packet.
    pub(crate) fn keep_files(
        &self,
        dir: &Path,
        name: &str,
        plan: &Plan,
        signature: &str,
        rows: &[CaseReport],
    ) -> Result<()> {
        self.copy_program(dir, name, plan)?;
        let packet = format!("{PACKETS}/{name}.md");
        for row in rows.iter().filter(|r| !agrees(r)) {
            let (verdict, differs) = match &row.verdict {
                Verdict::Diverge(d) => ("diverge", Some(d.differs.as_slice())),
                Verdict::MissingGolden => ("no golden", None),
                _ => ("unsupported", None),
            };
            let reason = format!(
                "live fuzz divergence, not triaged yet (generated program, {}): see {packet}",
                row.category
            );
            allow_list(&self.root, &allow_line(&row.id, &reason, verdict, differs))?;
        }
        write_file(
            &self.root.join(&packet),
            &packet_text(name, plan, signature, rows),
        )
    }
}

impl Target for Programs {
    const UNIT: &'static str = "programs";

    fn judge(
        &mut self,
        oracle: &mut ProcessOracle,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> (Step, Vec<String>) {
        self.judge_with(oracle, seed, index, oracle_time)
    }

    fn is_kept(&self, root: &Path, name: &str) -> bool {
        root.join(PROGRAMS).join(format!("{name}.pt2")).exists()
    }

    fn keep(
        &mut self,
        oracle: &mut ProcessOracle,
        _cfg: &Config,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>> {
        self.keep_with(oracle, index, signature, oracle_time)
    }
}

/// Ask the oracle to export `plan` as `name` into the fresh scratch root
/// `dir` (laid out as the corpus, goldens included): `None` when it did,
/// else the stage that raised and the exception type.
/// With `goldens` false only the archive is written (request `plan_goldens`
/// writes the rest later).
pub(crate) fn export_plan(
    oracle: &mut dyn Requests,
    plan: &Plan,
    dir: &Path,
    name: &str,
    goldens: bool,
    oracle_time: &mut Duration,
) -> std::result::Result<Option<Outcome>, OracleFailure> {
    let _ = std::fs::remove_dir_all(dir);
    let body = json!({"plan": plan.to_json(), "root": absolute(dir), "name": name,
                      "goldens": goldens});
    let t = Instant::now();
    let reply = oracle.request("plan", name, &body);
    *oracle_time += t.elapsed();
    let reply = reply?;
    if reply.get("exported") == Some(&Json::Bool(true)) {
        return Ok(None);
    }
    let field = |k: &str| {
        reply
            .get(k)
            .and_then(Json::as_str)
            .unwrap_or("?")
            .to_string()
    };
    Ok(Some(Outcome::NotExported {
        stage: field("stage"),
        exception: field("type"),
    }))
}

pub(crate) fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn agrees(r: &CaseReport) -> bool {
    matches!(r.verdict, Verdict::Agree | Verdict::Runs)
}

fn is_unsupported(r: &CaseReport) -> bool {
    matches!(r.verdict, Verdict::Unsupported(_))
}

/// The divergence signature of a program's rows: each failing row's
/// category and what differs, deduplicated (`None`: no row fails).
pub fn rows_signature(rows: &[CaseReport]) -> Option<String> {
    let parts: BTreeSet<String> = rows
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::Diverge(d) if r.category == "serialized bytes" => {
                Some(format!("{}: {}", r.category, first_change(&d.diff)))
            }
            Verdict::Diverge(d) => Some(format!("{}: {}", r.category, d.differs.join(","))),
            Verdict::MissingGolden => Some(format!("{}: no golden", r.category)),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "program {}",
            parts.into_iter().collect::<Vec<_>>().join("; ")
        )
    })
}

/// What a serialized-bytes divergence changes first: the first removed or
/// added line of its diff, digits written `N` (the bytes alone say nothing
/// that tells two divergences apart).
fn first_change(diff: &str) -> String {
    let line = diff
        .lines()
        .find(|l| {
            (l.starts_with('-') && !l.starts_with("---"))
                || (l.starts_with('+') && !l.starts_with("+++"))
        })
        .unwrap_or("bytes");
    let mut out = String::new();
    for c in line.chars().take(80) {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn kept_name(signature: &str) -> String {
    format!("live-plan-{:08x}", fnv1a64(signature.as_bytes()) as u32)
}

/// Rows by verdict and the plan's export mode, for the summary.
fn row_tallies(rows: &[CaseReport], plan: &Plan) -> Vec<String> {
    let mut t: Vec<String> = rows
        .iter()
        .map(|r| {
            let kind = r.category.split(' ').next().unwrap_or("row");
            format!("rows {kind}: {}", r.verdict.kind())
        })
        .collect();
    t.push(format!(
        "exported: {}{}",
        if plan.strict { "strict" } else { "non-strict" },
        if plan.decompose { ", decomposed" } else { "" }
    ));
    t
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(from) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(from, e)),
    };
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for entry in entries.flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| Error::io(&src, e))?;
        }
    }
    Ok(())
}

fn packet_text(name: &str, plan: &Plan, signature: &str, rows: &[CaseReport]) -> String {
    let mut out = format!(
        "# {name}\n\nA generated program (`torchspec fuzz --live --programs`) on which the \
         reference and PyTorch 2.15.0 disagree.\n\n- signature: `{signature}`\n- plan: {}\n\
         - program: `corpus/programs/{name}.pt2` (plan in `corpus/programs/{name}.plan.json`, \
         built by `oracle/plans.py`)\n\n## Rows that do not agree\n\n",
        plan.summary()
    );
    for r in rows.iter().filter(|r| !agrees(r)) {
        let body = match &r.verdict {
            Verdict::Diverge(d) => d.diff.clone(),
            Verdict::Unsupported(w) => format!("unsupported: {w}"),
            v => v.kind().to_string(),
        };
        out += &format!(
            "### `{}` ({})\n\n{}\n",
            r.id,
            r.category,
            fence("diff", &body)
        );
    }
    out += &format!(
        "## Reproduce\n\n{}",
        fence(
            "sh",
            &format!(
                "cargo run --release -- check   # the rows above\n\
                 .oracle/bin/python oracle/capture.py --program corpus/programs/{name}.pt2\n\
                 cargo run --release -- program corpus/programs/{name}.pt2"
            )
        )
    );
    out
}
