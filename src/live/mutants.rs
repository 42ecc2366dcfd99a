//! Mutated program files (`torchspec fuzz --live --mutate`): mutant `index`
//! of `seed` is `oracle/mutate.py`'s (a zoo program with one schema-aware
//! change to its `models/model.json`), read by three readers:
//!
//! ```text
//! oracle `mutant` request ──▶ mutant JSON + torch.export.load's outcome
//!                             + the C++ deserializer's outcome
//! torchspec (default, --strict) on the same archive
//!     ──▶ torchspec vs Python: agree, or a divergence (ours to fix)
//!         ──▶ shrink (revert hunks of the change, `mutant_load` each step)
//!         ──▶ corpus/mutants/NAME.json + golden + allow-list + packet
//!     ──▶ Python vs C++ accept/refuse: an upstream finding
//!         ──▶ shrink ──▶ docs/upstream/NAME.md (both outcomes, python -c)
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::conformance::mutants::{
    apply_edits, judge, program_json, with_program_json, MutantFile, Reading, MUTANTS,
};
use crate::conformance::programs::PROGRAMS;
use crate::conformance::{Verdict, GOLDENS};
use crate::error::{Error, Result};
use crate::export::registrations::Registrations;
use crate::export::schema::Mode;
use crate::export::ExportedProgram;

use super::oracle::{OracleFailure, ProcessOracle, Requests};
use super::plan::Plan;
use super::programs::{absolute, export_plan, rows_signature, Outcome, Programs, SCRATCH};
use super::regress::{allow_line, allow_list, fence, write_file};
use super::{Config, KeptLine, Step, Target};
use crate::shard::fnv1a64;

/// Where Python-versus-C++ findings are kept.
pub const UPSTREAM: &str = "docs/upstream";

/// What the oracle said of one mutated program JSON.
#[derive(Clone, Debug)]
pub struct OracleReading {
    pub python: Reading,
    /// PyTorch's program report, when it loads and a report was asked for.
    pub report: Option<Json>,
    pub cpp: Reading,
    /// The golden line (`{"python", "cpp"}`) as the oracle writes it.
    pub golden: String,
}

impl OracleReading {
    fn parse(reply: &Json) -> Option<OracleReading> {
        let python = reply.get("python")?;
        Some(OracleReading {
            python: Reading::of_python(python)?,
            report: python.get("report").cloned(),
            cpp: Reading::of_cpp(reply.get("cpp")?)?,
            golden: reply.get("golden")?.as_str()?.to_string(),
        })
    }
}

/// A mutant as the oracle made it.
#[derive(Clone, Debug)]
struct Mutant {
    id: String,
    program: String,
    class: String,
    mutation: String,
    text: String,
    oracle: OracleReading,
    /// The lane of the draw it came from (`small`, `large`), when told.
    lane: Option<String>,
    /// `upstream_triage.py`'s class of a Python-versus-C++ disagreement (4 or
    /// 5), when the oracle measured it.
    upstream_class: Option<u64>,
    /// Both writers' round trips when both readers load (`round_trip`).
    round_trip: Option<Json>,
}

/// The lanes of `oracle/mutate.py`'s draw (the `mutant_lanes` request):
/// mutant `i` is of the large lane when `i % period == period - 1`; the large
/// lane's programs get `timeout_factor` times the per-case timeout.
#[derive(Clone, Debug, Default)]
pub struct Lanes {
    pub period: u64,
    pub timeout_factor: u32,
    pub large: HashSet<String>,
}

impl Lanes {
    pub fn parse(reply: &Json) -> Lanes {
        let large = reply
            .pointer("/lanes/large")
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Json::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Lanes {
            period: reply.get("period").and_then(Json::as_u64).unwrap_or(0),
            timeout_factor: reply
                .get("timeout_factor")
                .and_then(Json::as_u64)
                .map_or(1, |f| f.clamp(1, 1000) as u32),
            large,
        }
    }

    /// Whether mutant `index` is drawn from the large lane.
    pub fn is_large(&self, index: u64) -> bool {
        !self.large.is_empty() && self.period > 0 && index % self.period == self.period - 1
    }

    /// The timeout scale of a request on `program` (or mutant `index`).
    fn scale(&self, program: Option<&str>, index: Option<u64>) -> u32 {
        let large = program.is_some_and(|p| self.large.contains(p))
            || index.is_some_and(|i| self.is_large(i));
        if large {
            self.timeout_factor
        } else {
            1
        }
    }
}

/// torchspec's readings of one archive, and how the default one compares
/// with `torch.export.load`'s (as the `mutant` rows of `check` compare).
struct Ours {
    default: Reading,
    strict: Reading,
    verdict: Verdict,
}

/// The `--mutate` target: each worker keeps the zoo's archives it has used.
pub struct Mutants {
    root: PathBuf,
    registrations: Arc<Registrations>,
    /// Zoo program name → (archive bytes, program JSON text).
    zoo: HashMap<String, (Arc<Vec<u8>>, Arc<String>)>,
    /// Ask for and compare program reports when both sides load.
    reports: bool,
    /// The last mutant judged (what `keep` shrinks).
    last: Option<(u64, Mutant)>,
    /// Mutants of generated programs instead of the zoo's (`--programs`).
    generated: Option<Generated>,
    /// The draw's lanes (asked of the oracle on first use).
    lanes: Option<Lanes>,
    /// Where the first mutant of each round-trip signature is logged.
    round_trip_log: Option<PathBuf>,
    /// Round-trip signatures this worker has logged.
    round_trip_seen: HashSet<String>,
}

/// Mutants of generated programs: mutants `k*per_program ..
/// (k+1)*per_program` of a seed are made from plan `k` of that seed
/// ([`Plan::generate`]), exported by the oracle into a scratch root of this
/// worker's; a kept mutant's program joins the zoo.
struct Generated {
    per_program: u64,
    /// This worker's scratch directory.
    scratch: PathBuf,
    /// The plan mutated now: its index and, when PyTorch exported it, the
    /// program's name, plan and scratch root (laid out as the corpus).
    current: Option<(u64, std::result::Result<GeneratedProgram, String>)>,
}

struct GeneratedProgram {
    name: String,
    plan: Plan,
    root: PathBuf,
}

impl GeneratedProgram {
    fn programs_dir(&self) -> PathBuf {
        self.root.join(PROGRAMS)
    }
}

/// What making one mutant came to.
enum Made {
    Mutant(Box<Mutant>),
    /// No program (of its lane) has a site for the mutant's class.
    NoSite(Option<String>),
    /// The generated program to mutate could not be exported (stage, type).
    NotExported(String),
}

impl Mutants {
    pub fn new(root: &Path, registrations: Arc<Registrations>, reports: bool) -> Mutants {
        Mutants {
            root: root.to_path_buf(),
            registrations,
            zoo: HashMap::new(),
            reports,
            last: None,
            generated: None,
            lanes: None,
            round_trip_log: None,
            round_trip_seen: HashSet::new(),
        }
    }

    /// Log the first mutant of each round-trip signature (a JSON line each) to
    /// `path`.
    pub fn logging_round_trips_to(mut self, path: PathBuf) -> Mutants {
        self.round_trip_log = Some(path);
        self
    }

    /// The draw's lanes: asked of the oracle once (none for generated
    /// programs, or an oracle that does not answer the request).
    fn lanes(&mut self, oracle: &mut dyn Requests, oracle_time: &mut Duration) -> Lanes {
        if self.generated.is_some() {
            return Lanes::default();
        }
        if self.lanes.is_none() {
            let reply = Self::request(oracle, "mutant_lanes", "lanes", json!({}), oracle_time, 1);
            self.lanes = Some(reply.map(|r| Lanes::parse(&r)).unwrap_or_default());
        }
        self.lanes.clone().unwrap_or_default()
    }

    /// Mutate generated programs, `per_program` mutants each, instead of
    /// the zoo's.
    pub fn of_generated(mut self, per_program: u64) -> Mutants {
        static WORKER: AtomicU64 = AtomicU64::new(0);
        let worker = WORKER.fetch_add(1, Ordering::Relaxed);
        let scratch = self
            .root
            .join(SCRATCH)
            .join(format!("mutants-{}-{worker}", std::process::id()));
        self.generated = Some(Generated {
            per_program: per_program.max(1),
            scratch,
            current: None,
        });
        self
    }

    /// The generated program `name`, when it is the one mutated now.
    fn generated_program(&self, name: &str) -> Option<&GeneratedProgram> {
        match self.generated.as_ref()?.current.as_ref()? {
            (_, Ok(g)) if g.name == name => Some(g),
            _ => None,
        }
    }

    /// The directory holding program `name`'s archive.
    fn programs_dir(&self, name: &str) -> PathBuf {
        self.generated_program(name)
            .map(GeneratedProgram::programs_dir)
            .unwrap_or_else(|| self.root.join(PROGRAMS))
    }

    /// Make sure the plan mutant `index` is made from is exported: its
    /// program, or why PyTorch could not export it.
    fn ensure_generated(
        &mut self,
        oracle: &mut dyn Requests,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> std::result::Result<std::result::Result<String, String>, OracleFailure> {
        let Some(g) = self.generated.as_mut() else {
            return Ok(Err("no generated programs".into()));
        };
        let k = index / g.per_program;
        if g.current.as_ref().is_none_or(|(at, _)| *at != k) {
            if let Some((_, Ok(old))) = g.current.take() {
                self.zoo.remove(&old.name);
                let _ = std::fs::remove_dir_all(&old.root);
            }
            let plan = Plan::generate(seed, k);
            let name = format!("live-plan-s{seed}-{k}");
            let root = g.scratch.join(&name);
            let made = match export_plan(oracle, &plan, &root, &name, false, oracle_time)? {
                None => Ok(GeneratedProgram { name, plan, root }),
                Some(Outcome::NotExported { stage, exception }) => {
                    Err(format!("{stage} {exception}"))
                }
                Some(Outcome::Rows(_)) => Err("rows".into()),
            };
            g.current = Some((k, made));
        }
        Ok(match g.current.as_ref().map(|(_, m)| m) {
            Some(Ok(p)) => Ok(p.name.clone()),
            Some(Err(why)) => Err(why.clone()),
            None => Err("no plan".into()),
        })
    }

    /// Move the generated program `name` into the zoo (once): its files and
    /// goldens (asked of the oracle now), and an untriaged allow-list entry
    /// with a packet for each of its rows that does not agree.
    fn adopt_generated(
        &mut self,
        oracle: &mut dyn Requests,
        name: &str,
        oracle_time: &mut Duration,
    ) -> Result<()> {
        if self
            .root
            .join(PROGRAMS)
            .join(format!("{name}.pt2"))
            .exists()
        {
            return Ok(());
        }
        let Some(g) = self.generated_program(name) else {
            return Ok(());
        };
        let (dir, plan) = (g.root.clone(), g.plan.clone());
        let t = Instant::now();
        let body = json!({"plan": plan.to_json(), "root": absolute(&dir), "name": name});
        let reply = oracle.request("plan_goldens", name, &body);
        *oracle_time += t.elapsed();
        reply.map_err(|f| Error::new(format!("plan_goldens of {name}: {f}")))?;
        let programs = Programs::new(&self.root, self.registrations.clone());
        let rows = programs.rows(oracle, &dir, name, oracle_time)?;
        match rows_signature(&rows) {
            Some(sig) => programs.keep_files(&dir, name, &plan, &sig, &rows),
            None => programs.copy_program(&dir, name, &plan),
        }
    }

    fn zoo_program(&mut self, name: &str) -> Result<(Arc<Vec<u8>>, Arc<String>)> {
        if let Some(z) = self.zoo.get(name) {
            return Ok(z.clone());
        }
        let path = self.programs_dir(name).join(format!("{name}.pt2"));
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let text = program_json(&bytes).map_err(|e| e.in_file(&path))?;
        let z = (Arc::new(bytes), Arc::new(text));
        self.zoo.insert(name.to_string(), z.clone());
        Ok(z)
    }

    /// torchspec on `program` with its program JSON replaced by `text`,
    /// judged against the oracle's reading `o`.
    fn ours(&mut self, program: &str, text: &str, o: &OracleReading) -> Result<Ours> {
        let (archive, _) = self.zoo_program(program)?;
        let bytes = with_program_json(&archive, text)?;
        let regs = &self.registrations;
        let load = |mode| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ExportedProgram::load_pt2_in(bytes.clone(), mode, regs)
            }))
            .unwrap_or_else(|p| {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(Error::python("<torchspec panic>", why))
            })
        };
        let default = load(Mode::Default);
        Ok(Ours {
            verdict: judge(&o.python, o.report.as_ref(), &default),
            default: Reading::of_torchspec(&default),
            strict: Reading::of_torchspec(&load(Mode::Strict)),
        })
    }

    fn request(
        oracle: &mut dyn Requests,
        kind: &str,
        id: &str,
        body: Json,
        oracle_time: &mut Duration,
        scale: u32,
    ) -> std::result::Result<Json, OracleFailure> {
        let t = Instant::now();
        let reply = if scale > 1 {
            oracle.request_scaled(kind, id, &body, scale)
        } else {
            oracle.request(kind, id, &body)
        };
        *oracle_time += t.elapsed();
        reply
    }

    /// The oracle's reading of `program` with program JSON `text`.
    fn oracle_load(
        &self,
        oracle: &mut dyn Requests,
        program: &str,
        text: &str,
        oracle_time: &mut Duration,
    ) -> Option<OracleReading> {
        let mut body = json!({"program": program, "model_json": text, "report": self.reports});
        if let Some(g) = self.generated_program(program) {
            body["programs_dir"] = absolute(&g.programs_dir()).into();
        }
        let scale = self
            .lanes
            .as_ref()
            .map_or(1, |l| l.scale(Some(program), None));
        let reply =
            Self::request(oracle, "mutant_load", "shrink", body, oracle_time, scale).ok()?;
        OracleReading::parse(&reply)
    }
}

/// The divergence signature of torchspec's reading against PyTorch's (None:
/// they agree): the class, both outcomes, and what differs.
fn divergence_signature(class: &str, oracle: &OracleReading, ours: &Ours) -> Option<String> {
    let Verdict::Diverge(d) = &ours.verdict else {
        return None;
    };
    let (p, o) = (&oracle.python, &ours.default);
    Some(match d.differs.first().map(String::as_str) {
        Some("message") => format!("mutant {class}: {} message differs", p.class()),
        Some("outcome" | "exception") => {
            format!(
                "mutant {class}: PyTorch {}, torchspec {}",
                p.class(),
                o.class()
            )
        }
        _ => format!("mutant {class}: report differs in {}", d.differs.join(",")),
    })
}

/// Where a divergent mutant changed the program (the path of its mutation,
/// indices and map keys elided) and what each side said: the finer tally
/// that says which field a family's divergences come from.
fn site_tally(m: &Mutant, ours: &Ours) -> String {
    const MAPS: &[&str] = &[
        "tensor_values",
        "sym_int_values",
        "sym_bool_values",
        "sym_float_values",
        "custom_obj_values",
        "range_constraints",
        "metadata",
        "constants",
    ];
    let path = m
        .mutation
        .split_whitespace()
        .find(|w| w.starts_with('$'))
        .unwrap_or("$")
        .trim_end_matches(':');
    let mut out = String::new();
    let mut prev = "";
    for part in path.split('.') {
        let (name, _) = part.split_once('[').unwrap_or((part, ""));
        let shown = if MAPS.contains(&prev) { "*" } else { name };
        out += shown;
        if part.contains('[') {
            out += "[]";
        }
        out.push('.');
        prev = name;
    }
    out.pop();
    let said = |r: &Reading| {
        let text = r.render();
        let mut short: String = text.chars().take(70).collect();
        short = short.replace(|c: char| c.is_ascii_digit(), "N");
        short
    };
    format!(
        "site {}: {out} | PyTorch {} | torchspec {}",
        m.class,
        said(&m.oracle.python),
        said(&ours.default)
    )
}

/// The signature of a Python-versus-C++ disagreement on accept/refuse.
fn upstream_signature(class: &str, oracle: &OracleReading) -> Option<String> {
    (oracle.python.loads() != oracle.cpp.loads()).then(|| {
        format!(
            "{class}: torch.export.load {}, C++ deserialize_exported_program {}",
            oracle.python.class(),
            oracle.cpp.class()
        )
    })
}

fn name_of(prefix: &str, class: &str, signature: &str) -> String {
    format!(
        "{prefix}-{}-{:08x}",
        class.replace('_', "-"),
        fnv1a64(signature.as_bytes()) as u32
    )
}

/// The tallies of one mutant: agreement by class, outcomes per reader.
fn tallies(class: &str, oracle: &OracleReading, ours: &Ours, diverges: bool) -> Vec<String> {
    let verb = |r: &Reading| if r.loads() { "loads" } else { "refuses" };
    let mut t = vec![
        format!(
            "class {class}: {}",
            if diverges { "diverge" } else { "agree" }
        ),
        format!("reader torch.export.load {}", verb(&oracle.python)),
        format!("reader C++ {}", verb(&oracle.cpp)),
        format!("reader torchspec {}", verb(&ours.default)),
        format!("reader torchspec --strict {}", verb(&ours.strict)),
    ];
    match (oracle.python.loads(), ours.default.loads()) {
        (true, true) | (false, false) => t.push("accept/refuse agree".into()),
        (false, true) => t.push(format!("class {class}: torchspec loads, PyTorch refuses")),
        (true, false) => t.push(format!("class {class}: torchspec refuses, PyTorch loads")),
    }
    if !oracle.python.loads() && oracle.python.class() == ours.default.class() {
        t.push(format!("class {class}: same exception type"));
    }
    if !oracle.python.loads() && !ours.default.loads() {
        t.push("both refuse".into());
        if oracle.python.class() == ours.default.class() {
            t.push("both refuse: same exception type".into());
        }
        if oracle.python == ours.default {
            t.push("both refuse: same type and message".into());
        }
    }
    if oracle.python.loads() != oracle.cpp.loads() {
        t.push("Python and C++ readers disagree".into());
    }
    if ours.strict.loads() && !oracle.python.loads() {
        t.push("torchspec --strict loads what PyTorch refuses".into());
    }
    t
}

/// A change between two texts: bytes `start..end` of the old one become `new`.
#[derive(Clone, Debug, PartialEq)]
pub struct Hunk {
    pub start: usize,
    pub end: usize,
    pub new: String,
}

/// The hunks turning `old` into `new` (a character diff of the span between
/// their common prefix and suffix; changes closer than 16 characters are one).
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let (o, n) = (&old[prefix..], &new[prefix..]);
    let suffix = o
        .chars()
        .rev()
        .zip(n.chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>()
        .min(o.len())
        .min(n.len());
    let (o, n) = (&o[..o.len() - suffix], &n[..n.len() - suffix]);
    let oc: Vec<(usize, char)> = o.char_indices().collect();
    let nc: Vec<(usize, char)> = n.char_indices().collect();
    let (a, b): (Vec<char>, Vec<char>) = (
        oc.iter().map(|c| c.1).collect(),
        nc.iter().map(|c| c.1).collect(),
    );
    let byte = |v: &[(usize, char)], len: usize, i: usize| v.get(i).map_or(len, |c| c.0);
    // The hunks are the gaps between runs of 16 or more equal characters.
    let mut anchors = vec![(0, 0)];
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            if len >= 16 {
                anchors.push((old_index, new_index));
                anchors.push((old_index + len, new_index + len));
            }
        }
    }
    anchors.push((a.len(), b.len()));
    anchors
        .chunks(2)
        .filter(|gap| gap[0] != gap[1])
        .map(|gap| {
            let (os, ns) = gap[0];
            let (oe, ne) = gap[1];
            Hunk {
                start: prefix + byte(&oc, o.len(), os),
                end: prefix + byte(&oc, o.len(), oe),
                new: n[byte(&nc, n.len(), ns)..byte(&nc, n.len(), ne)].to_string(),
            }
        })
        .collect()
}

/// `old` with `hunks` (sorted, not overlapping) applied.
pub fn apply_hunks(old: &str, hunks: &[Hunk]) -> String {
    let mut out = String::with_capacity(old.len());
    let mut at = 0;
    for h in hunks {
        out += &old[at..h.start];
        out += &h.new;
        at = h.end;
    }
    out += &old[at..];
    out
}

/// `(old, new)` edits ([`apply_edits`]) that turn `old` into
/// `apply_hunks(old, hunks)`: each hunk with the least context that makes
/// its `old` unique, or one edit over the whole changed span.
pub fn edits_of(old: &str, hunks: &[Hunk]) -> Vec<(String, String)> {
    let want = apply_hunks(old, hunks);
    let one = |h: &Hunk| {
        let mut ctx = 8;
        loop {
            let s = floor_char(old, h.start.saturating_sub(ctx));
            let e = ceil_char(old, (h.end + ctx).min(old.len()));
            // Out to the nearest quote or space, so the context reads as tokens.
            let s = old[..s]
                .rfind(['"', ' '])
                .filter(|&i| s - i < 48)
                .unwrap_or(s);
            let e = old[e..]
                .find(['"', ' '])
                .map(|i| e + i + 1)
                .filter(|&x| x - e < 48)
                .unwrap_or(e);
            let snippet = &old[s..e];
            let unique = old.find(snippet) == Some(s) && old[s + 1..].find(snippet).is_none();
            if unique || (s == 0 && e == old.len()) {
                return (
                    snippet.to_string(),
                    format!("{}{}{}", &old[s..h.start], h.new, &old[h.end..e]),
                );
            }
            ctx *= 2;
        }
    };
    let edits: Vec<(String, String)> = hunks.iter().map(one).collect();
    if apply_edits(old, &edits).as_deref() == Some(want.as_str()) {
        return edits;
    }
    match (hunks.first(), hunks.last()) {
        (Some(f), Some(l)) => vec![one(&Hunk {
            start: f.start,
            end: l.end,
            new: want[f.start..want.len() - (old.len() - l.end)].to_string(),
        })],
        _ => Vec::new(),
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Drop hunks one at a time while `keeps(text)` holds, within `budget`
/// calls; returns the hunks left and the calls made.
pub fn shrink_hunks(
    old: &str,
    mut hunks: Vec<Hunk>,
    budget: usize,
    mut keeps: impl FnMut(&str) -> bool,
) -> (Vec<Hunk>, usize) {
    let mut steps = 0;
    let mut i = 0;
    while i < hunks.len() && hunks.len() > 1 && steps < budget {
        let mut fewer = hunks.clone();
        fewer.remove(i);
        steps += 1;
        if keeps(&apply_hunks(old, &fewer)) {
            hunks = fewer;
        } else {
            i += 1;
        }
    }
    (hunks, steps)
}

/// A shrunk mutant: its edits, the oracle's reading of them, the steps taken.
type Shrunk = (Vec<(String, String)>, OracleReading, usize);

impl Mutants {
    fn make(
        &mut self,
        oracle: &mut dyn Requests,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> std::result::Result<Made, (String, OracleFailure)> {
        let id = format!("mutant-s{seed}-{index}");
        let mut body = json!({"seed": seed, "index": index, "report": self.reports});
        if self.generated.is_some() {
            let program = match self.ensure_generated(oracle, seed, index, oracle_time) {
                Err(f) => return Err((id, f)),
                Ok(Err(why)) => return Ok(Made::NotExported(why)),
                Ok(Ok(name)) => name,
            };
            body["programs_dir"] = absolute(&self.programs_dir(&program)).into();
            body["program"] = program.into();
        }
        let scale = self.lanes(oracle, oracle_time).scale(None, Some(index));
        let reply = Self::request(oracle, "mutant", &id, body, oracle_time, scale)
            .map_err(|f| (id.clone(), f))?;
        if reply.get("no_site").is_some() {
            let lane = reply.get("lane").and_then(Json::as_str).map(str::to_string);
            return Ok(Made::NoSite(lane));
        }
        let field = |k: &str| reply.get(k).and_then(Json::as_str).map(str::to_string);
        let garbage = || {
            let text = reply.to_string();
            (
                id.clone(),
                OracleFailure::Garbage(text.chars().take(200).collect()),
            )
        };
        let (Some(program), Some(class), Some(mutation), Some(text), Some(oracle)) = (
            field("program"),
            field("class"),
            field("mutation"),
            field("model_json"),
            OracleReading::parse(&reply),
        ) else {
            return Err(garbage());
        };
        Ok(Made::Mutant(Box::new(Mutant {
            id: id.clone(),
            program,
            class,
            mutation,
            text,
            oracle,
            lane: field("lane"),
            upstream_class: reply.get("upstream_class").and_then(Json::as_u64),
            round_trip: reply.get("round_trip").cloned(),
        })))
    }

    /// Shrink `m` while `sig` (of the oracle's and our readings) stays the
    /// same; the edits left, the oracle's reading of the result, the steps.
    fn shrink(
        &mut self,
        oracle: &mut dyn Requests,
        m: &Mutant,
        budget: usize,
        oracle_time: &mut Duration,
        sig: impl Fn(&OracleReading, &Ours) -> Option<String>,
    ) -> Result<Option<Shrunk>> {
        let (_, original) = self.zoo_program(&m.program)?;
        let want = sig(&m.oracle, &self.ours(&m.program, &m.text, &m.oracle)?);
        let all = hunks(&original, &m.text);
        let (left, steps) = shrink_hunks(&original, all, budget, |text| {
            let Some(o) = self.oracle_load(oracle, &m.program, text, oracle_time) else {
                return false;
            };
            self.ours(&m.program, text, &o)
                .is_ok_and(|ours| sig(&o, &ours) == want)
        });
        let edits = edits_of(&original, &left);
        let text = apply_edits(&original, &edits).unwrap_or_default();
        Ok(self
            .oracle_load(oracle, &m.program, &text, oracle_time)
            .map(|o| (edits, o, steps)))
    }

    /// Keep a Python-versus-C++ disagreement (once per signature).
    fn note_upstream(
        &mut self,
        oracle: &mut dyn Requests,
        m: &Mutant,
        signature: &str,
        budget: usize,
        oracle_time: &mut Duration,
    ) -> Result<()> {
        let name = name_of("upstream", &m.class, signature);
        let path = self.root.join(UPSTREAM).join(format!("{name}.md"));
        if path.exists() {
            return Ok(());
        }
        let class = m.class.clone();
        let Some((edits, o, steps)) = self.shrink(oracle, m, budget, oracle_time, |o, _| {
            upstream_signature(&class, o)
        })?
        else {
            return Ok(());
        };
        write_file(
            &path,
            &upstream_packet(&name, signature, m, &edits, &o, steps, &self.registrations),
        )
    }
}

impl Mutants {
    /// Judge mutant `index` of `seed` with `oracle` ([`Target::judge`]).
    pub fn judge_with(
        &mut self,
        oracle: &mut dyn Requests,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> (Step, Vec<String>) {
        let m = match self.make(oracle, seed, index, oracle_time) {
            Ok(Made::Mutant(m)) => *m,
            Ok(Made::NoSite(lane)) => {
                let mut t = vec!["no site for the class".to_string()];
                t.extend(lane.map(|l| format!("lane {l}")));
                return (Step::Unsupported, t);
            }
            Ok(Made::NotExported(why)) => {
                return (Step::Skipped, vec![format!("program not exported: {why}")]);
            }
            Err((id, failure)) => {
                let record = json!({"failure": failure.to_string(), "mutant": [seed, index]});
                return (
                    Step::OracleFailed {
                        id,
                        failure,
                        record,
                    },
                    Vec::new(),
                );
            }
        };
        let ours = match self.ours(&m.program, &m.text, &m.oracle) {
            Ok(o) => o,
            Err(e) => {
                let failure = OracleFailure::Garbage(format!("zoo program {}: {e}", m.program));
                let record = json!({"failure": failure.to_string(), "mutant": [seed, index]});
                return (
                    Step::OracleFailed {
                        id: m.id,
                        failure,
                        record,
                    },
                    Vec::new(),
                );
            }
        };
        let sig = divergence_signature(&m.class, &m.oracle, &ours);
        let mut t = tallies(&m.class, &m.oracle, &ours, sig.is_some());
        if let Some(lane) = &m.lane {
            t.push(format!("lane {lane}"));
        }
        if let Some(sig) = &sig {
            t.push(format!("divergence {sig}"));
            t.push(site_tally(&m, &ours));
        }
        if let Some(up) = upstream_signature(&m.class, &m.oracle) {
            // A finding for upstream, not a divergence of ours. Class 5 (C++
            // loads what only Python's semantic checks refuse) is counted per
            // mutation class for upstream_triage.py's one note, never a packet.
            if let Some(c) = m.upstream_class {
                t.push(format!("upstream class {c}: {}", m.class));
            }
            if m.upstream_class != Some(5) {
                let budget = if self.is_large(&m.program) { 2 } else { 16 };
                if let Err(e) = self.note_upstream(oracle, &m, &up, budget, oracle_time) {
                    eprintln!("cannot keep the upstream finding {up}: {e}");
                }
            }
        }
        t.extend(self.round_trip_tallies(seed, index, &m));
        let step = match sig {
            None => Step::Agree,
            Some(signature) => Step::Diverge {
                id: m.id.clone(),
                name: name_of("mutant", &m.class, &signature),
                signature,
                case: None,
            },
        };
        self.last = Some((index, m));
        (step, t)
    }

    /// Whether `program` is of the large lane (its shrinking is capped).
    fn is_large(&self, program: &str) -> bool {
        self.lanes
            .as_ref()
            .is_some_and(|l| l.large.contains(program))
    }

    /// The tallies of both writers' round trips of a mutant both readers
    /// load (`round trip READER: OUTCOME`, per mutation class `round trip
    /// READER CLASS: OUTCOME`, and `round trip finding: SIGNATURE`
    /// per signature, `at the mutation` when the first changed path is under
    /// the mutated one, else `elsewhere`: a change the mutation did not ask
    /// for); the first mutant of each signature is logged.
    fn round_trip_tallies(&mut self, seed: u64, index: u64, m: &Mutant) -> Vec<String> {
        let Some(rt) = m.round_trip.as_ref() else {
            return Vec::new();
        };
        let mutated = m
            .mutation
            .split_whitespace()
            .find(|w| w.starts_with('$'))
            .map(|w| w.trim_end_matches(':').to_string());
        let mut out = Vec::new();
        for (reader, label) in [("cpp", "C++"), ("python", "torch.export.save")] {
            let Some(r) = rt.get(reader) else { continue };
            let outcome = r.get("outcome").and_then(Json::as_str).unwrap_or("?");
            out.push(format!("round trip {label}: {outcome}"));
            out.push(format!("round trip {label} {}: {outcome}", m.class));
            let first = r.pointer("/first/path").and_then(Json::as_str);
            let paths = r.get("paths").and_then(Json::as_array);
            for (i, sig) in r
                .get("signatures")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .enumerate()
            {
                // The signature's own first path (the reader's first one when
                // the oracle gives none).
                let path = match paths {
                    Some(p) => p.get(i).and_then(Json::as_str),
                    None => first,
                };
                let place = match (&mutated, path) {
                    (_, None) => "",
                    (Some(m), Some(p)) if p.starts_with(m.as_str()) => "at the mutation",
                    _ => "elsewhere",
                };
                let label = if place.is_empty() {
                    format!("round trip finding: {sig}")
                } else {
                    format!("round trip finding ({place}): {sig}")
                };
                if self.round_trip_seen.insert(label.clone()) {
                    if let Some(log) = &self.round_trip_log {
                        let record = json!({
                            "mutant": [seed, index], "program": m.program, "class": m.class,
                            "lane": m.lane, "mutation": m.mutation, "reader": reader,
                            "signature": sig, "place": place, "round_trip": r,
                        });
                        append_line(log, &record);
                    }
                }
                out.push(label);
            }
        }
        out
    }

    /// Shrink and keep the divergence of the mutant judged last
    /// ([`Target::keep`]), under `root` with `budget` oracle round trips.
    pub fn keep_with(
        &mut self,
        oracle: &mut dyn Requests,
        root: &Path,
        budget: usize,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>> {
        let Some((_, m)) = self.last.take().filter(|(at, _)| *at == index) else {
            return Ok(None);
        };
        let class = m.class.clone();
        let budget = if self.is_large(&m.program) {
            budget.min(4)
        } else {
            budget
        };
        let Some((edits, o, steps)) = self.shrink(oracle, &m, budget, oracle_time, |o, ours| {
            divergence_signature(&class, o, ours)
        })?
        else {
            return Ok(None);
        };
        let (_, original) = self.zoo_program(&m.program)?;
        let text = apply_edits(&original, &edits).unwrap_or_default();
        let ours = self.ours(&m.program, &text, &o)?;
        self.adopt_generated(oracle, &m.program, oracle_time)?;
        let name = name_of("mutant", &m.class, signature);
        let file = MutantFile {
            name: name.clone(),
            program: m.program.clone(),
            class: m.class.clone(),
            mutation: m.mutation.clone(),
            signature: signature.to_string(),
            edits,
        };
        let needs_registrations = registers(&text, &self.registrations);
        write_kept(
            root,
            &file,
            &o,
            &ours.verdict,
            &m.id,
            steps,
            needs_registrations,
        )?;
        Ok(Some(KeptLine {
            path: format!("{MUTANTS}/{name}.json"),
            name,
            signature: signature.to_string(),
            original_id: m.id,
            shrink_steps: steps,
        }))
    }
}

impl Target for Mutants {
    const UNIT: &'static str = "mutants";

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
        root.join(MUTANTS).join(format!("{name}.json")).exists()
    }

    fn keep(
        &mut self,
        oracle: &mut ProcessOracle,
        cfg: &Config,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>> {
        self.keep_with(
            oracle,
            &cfg.root,
            cfg.shrink_budget,
            index,
            signature,
            oracle_time,
        )
    }
}

/// Append `record` as one line to `path` (one write, so workers' lines do
/// not interleave).
fn append_line(path: &Path, record: &Json) {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{record}\n").as_bytes()));
}

/// Write a kept mutant, its golden (the oracle's line), its allow-list
/// entry (untriaged) and its packet.
fn write_kept(
    root: &Path,
    file: &MutantFile,
    o: &OracleReading,
    verdict: &Verdict,
    original: &str,
    steps: usize,
    needs_registrations: bool,
) -> Result<()> {
    let signature = &file.signature;
    let text = serde_json::to_string_pretty(file).expect("a mutant serializes") + "\n";
    write_file(
        &root.join(MUTANTS).join(format!("{}.json", file.name)),
        &text,
    )?;
    write_file(
        &root
            .join(GOLDENS)
            .join("mutants")
            .join(format!("{}.json", file.name)),
        &format!("{}\n", o.golden),
    )?;
    let packet = format!(
        "# {name}\n\nKept by `torchspec fuzz --live --mutate` from `{original}` (shrunk in \
         {steps} oracle round trips).\n\nSignature: `{signature}`\n\n{readings}\
         ## Reproduce\n\n{repro}",
        name = file.name,
        readings = readings(&file.program, &file.class, &file.mutation, &file.edits, o),
        repro = fence(
            "sh",
            &format!(
                "cargo run --release -- check   # row `{}`\n{}",
                file.name,
                python_c(
                    &file.program,
                    &file.edits,
                    "torch.export.load(b)",
                    needs_registrations,
                )
            )
        ),
    );
    write_file(
        &root
            .join(MUTANTS)
            .join("packets")
            .join(format!("{}.md", file.name)),
        &packet,
    )?;
    let differs = match verdict {
        Verdict::Diverge(d) => Some(d.differs.as_slice()),
        _ => None,
    };
    let reason = format!(
        "live fuzz divergence, not triaged yet ({signature}): see {MUTANTS}/packets/{}.md",
        file.name
    );
    allow_list(root, &allow_line(&file.name, &reason, "diverge", differs))
}

/// Whether a program JSON names a custom op or pytree type of `regs` (the
/// zoo's: `oracle/zoo_types.py`, imported by the fuzzer's workers), which
/// a process must register before PyTorch reads it.
pub fn registers(program_json: &str, regs: &Registrations) -> bool {
    let names = regs.ops.keys().chain(regs.pytree_types.keys());
    names.into_iter().any(|n| program_json.contains(n.as_str()))
}

/// A `python -c` script: zoo program `program` with `edits` applied to its
/// program JSON (the text in `t`, the archive in `b`), then `call`; with
/// `registers`, it first imports the zoo's registrations as the workers do.
pub fn python_c(program: &str, edits: &[(String, String)], call: &str, registers: bool) -> String {
    let edits = serde_json::to_string(edits).unwrap_or_default();
    let prelude = if registers {
        "import sys; sys.path.insert(0, \"oracle\"); import zoo_types  # registers the zoo custom ops and pytree types\n"
    } else {
        ""
    };
    let script = format!(
        "\nimport io, json, zipfile, torch\n{prelude}\
         z = zipfile.ZipFile(\"corpus/programs/{program}.pt2\")\n\
         n = ([i for i in z.namelist() if i.endswith(\"models/model.json\")]\n\
         \x20    or [\"serialized_exported_program.json\"])[0]\n\
         t = z.read(n).decode()\n\
         for old, new in json.loads({e}):\n    t = t.replace(old, new, 1)\n\
         b = io.BytesIO()\n\
         with zipfile.ZipFile(b, \"w\") as o:\n\
         \x20   for i in z.infolist():\n\
         \x20       o.writestr(i, t if i.filename == n else z.read(i))\n\
         b.seek(0)\n{call}\n",
        e = python_str(&edits),
    );
    format!("python -c {}", shell_quote(&script))
}

fn python_str(s: &str) -> String {
    Json::from(s).to_string()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The part of a packet both kinds share: the zoo program, the mutation,
/// the edits and what each of PyTorch's readers did.
fn readings(
    program: &str,
    class: &str,
    mutation: &str,
    edits: &[(String, String)],
    o: &OracleReading,
) -> String {
    format!(
        "Zoo program `corpus/programs/{program}.pt2`, mutation class `{class}`: {mutation}\n\n\
         ## Edits to models/model.json\n\n{edits}\n\
         ## torch.export.load (Python)\n\n{python}\n\
         ## torch._C._export.deserialize_exported_program (C++)\n\n{cpp}\n",
        edits = fence(
            "json",
            &serde_json::to_string_pretty(edits).unwrap_or_default()
        ),
        python = fence("text", &o.python.render()),
        cpp = fence("text", &o.cpp.render()),
    )
}

fn upstream_packet(
    name: &str,
    signature: &str,
    m: &Mutant,
    edits: &[(String, String)],
    o: &OracleReading,
    steps: usize,
    regs: &Registrations,
) -> String {
    format!(
        "# {name}\n\nFound by `torchspec fuzz --live --mutate` on `{id}` (shrunk in {steps} \
         oracle round trips): PyTorch 2.15.0's two readers of the same program JSON \
         disagree.\n\nSignature: `{signature}`\n\n{readings}\
         ## Reproduce with stock torch (from the repository root)\n\n{repro}",
        id = m.id,
        readings = readings(&m.program, &m.class, &m.mutation, edits, o),
        repro = fence(
            "sh",
            &format!(
                "{}\n{}",
                python_c(
                    &m.program,
                    edits,
                    "torch.export.load(b)\nprint(\"loads\")",
                    registers(&m.text, regs)
                ),
                python_c(
                    &m.program,
                    edits,
                    "torch._C._export.deserialize_exported_program(t)\nprint(\"loads\")",
                    registers(&m.text, regs)
                )
            )
        ),
    )
}
