//! Live differential fuzzing (`torchspec fuzz --live`): generated cases
//! checked against a persistent PyTorch oracle as they are made.
//!
//! ```text
//! gen (proptest strategies, (seed, index) → case) ──▶ reference eval
//!     ──▶ oracle pool (capture.py --serve × jobs) ──▶ compare (as `check`)
//!     ──▶ divergence: signature seen? ── no ──▶ shrink (ValueTree, oracle each step)
//!     ──▶ regress: corpus/regressions/NAME.jsonl + golden + allow-list + packet
//! ```
//!
//! Each worker thread owns one oracle process; workers take shard-local
//! positions from one counter, so `--jobs` changes speed, never which cases
//! run. Time is split between the oracle (waiting on PyTorch) and the Rust
//! side (generation, reference, comparison, shrinking logic, writing).

pub mod compare;
pub mod gen;
pub mod mutants;
pub mod oracle;
pub mod plan;
pub mod programs;
pub mod regress;
pub mod shrink;
pub mod state;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::case::{eval_case, Case, Outcome, ResultLine};
use crate::error::{Error, Result};
use crate::pyval::PyException;

use crate::shard::Shard;
use compare::{compare, Finding};
use gen::Generator;
use oracle::{Oracle, OracleCommand, OracleFailure, ProcessOracle};
use regress::Kept;
use state::State;

/// A live run's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// The repository root (holding `corpus/`).
    pub root: PathBuf,
    pub seed: u64,
    /// Stop after this many cases (in this invocation).
    pub count: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    pub jobs: usize,
    pub shard: Shard,
    pub state: PathBuf,
    pub resume: bool,
    /// The oracle command (its `log` is the folder for per-worker logs).
    pub oracle: OracleCommand,
    /// Oracle round trips a shrink may take.
    pub shrink_budget: usize,
    /// Draw the progress bar (else a status line every 30 s on stderr).
    pub progress: bool,
}

/// What a live run did (totals include a resumed run's).
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub state: State,
    /// Kept in this invocation.
    pub kept: Vec<KeptLine>,
    /// Oracle failures of this invocation, per class.
    pub failures: BTreeMap<&'static str, u64>,
    pub first: u64,
    pub next: u64,
    /// What a position is (`cases`, `mutants`).
    pub unit: &'static str,
}

/// One kept divergence, as the summary lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptLine {
    pub name: String,
    pub signature: String,
    /// The generated item it was shrunk from.
    pub original_id: String,
    pub shrink_steps: usize,
    /// Where it was kept (relative to the root).
    pub path: String,
}

/// What judging one position came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Agree,
    /// The reference does not model it (not a divergence).
    Unsupported,
    /// Nothing to compare: PyTorch cannot make the item (a plan it cannot
    /// export). Counted apart, never a divergence.
    Skipped,
    /// The oracle gave no answer; `record` is the failure log's line.
    OracleFailed {
        id: String,
        failure: OracleFailure,
        record: serde_json::Value,
    },
    /// A divergence of `signature`, kept under `name` once shrunk; `case`
    /// is the item itself where it is a line of JSON (a spec case), for
    /// the divergence log.
    Diverge {
        id: String,
        signature: String,
        name: String,
        case: Option<serde_json::Value>,
    },
}

/// One kind of live run: what position `index` of `seed` is, how it is
/// judged against the oracle, and how a divergence is shrunk and kept.
/// Each worker builds its own (from the factory given to [`run`]).
pub trait Target {
    /// What a position is, in the summary (`cases`, `mutants`).
    const UNIT: &'static str;

    /// Judge position `index`: the step, and labels to count (each adds 1
    /// to its tally in the run's state). Time spent waiting on the oracle is
    /// added to `oracle_time`.
    fn judge(
        &mut self,
        oracle: &mut ProcessOracle,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> (Step, Vec<String>);

    /// Whether the divergence `name` is already kept under `root`.
    fn is_kept(&self, root: &std::path::Path, name: &str) -> bool;

    /// Shrink the divergence of `signature` found at `index` and keep it
    /// under `cfg.root` (Ok(None): the oracle failed on the shrunk item).
    fn keep(
        &mut self,
        oracle: &mut ProcessOracle,
        cfg: &Config,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>>;
}

/// Generated spec cases ([`gen`]), judged as `check` judges them.
pub struct Cases {
    gen: Generator,
}

impl Cases {
    pub fn new() -> Cases {
        Cases {
            gen: Generator::new(),
        }
    }

    /// Cases of `families` alone (`--export-spec`).
    pub fn of(families: &[&'static str]) -> Cases {
        Cases {
            gen: Generator::of(families),
        }
    }
}

impl Default for Cases {
    fn default() -> Self {
        Cases::new()
    }
}

impl Target for Cases {
    const UNIT: &'static str = "cases";

    fn judge(
        &mut self,
        oracle: &mut ProcessOracle,
        seed: u64,
        index: u64,
        oracle_time: &mut Duration,
    ) -> (Step, Vec<String>) {
        let family = self.gen.family(index);
        let case = self.gen.case(seed, index);
        let step = match judge(oracle, family, &case, oracle_time).0 {
            Finding::Agree => Step::Agree,
            Finding::Unsupported(_) => Step::Unsupported,
            Finding::OracleFailed(failure) => {
                let mut record = serde_json::Map::new();
                record.insert("failure".into(), failure.to_string().into());
                record.insert("case".into(), case.to_json());
                Step::OracleFailed {
                    id: case.id,
                    failure,
                    record: record.into(),
                }
            }
            Finding::Diverge { signature, .. } => Step::Diverge {
                name: regress::regression_name(family, &signature),
                case: Some(case.to_json()),
                id: case.id,
                signature,
            },
        };
        (step, Vec::new())
    }

    fn is_kept(&self, root: &std::path::Path, name: &str) -> bool {
        regress::kept_and_diverging(root, name)
    }

    fn keep(
        &mut self,
        oracle: &mut ProcessOracle,
        cfg: &Config,
        index: u64,
        signature: &str,
        oracle_time: &mut Duration,
    ) -> Result<Option<KeptLine>> {
        let family = self.gen.family(index);
        let name = regress::free_name(&cfg.root, &regress::regression_name(family, signature));
        let kept = shrink_divergence_as(
            oracle,
            &self.gen,
            (cfg.seed, index),
            signature,
            name,
            cfg.shrink_budget,
            oracle_time,
        );
        let Some(k) = kept else { return Ok(None) };
        regress::write(&cfg.root, &k)?;
        Ok(Some(KeptLine {
            path: format!("corpus/regressions/{}.jsonl", k.name),
            name: k.name,
            signature: k.signature,
            original_id: k.original_id,
            shrink_steps: k.shrink_steps,
        }))
    }
}

impl Summary {
    /// The oracle's share of the workers' busy time.
    pub fn oracle_share(&self) -> f64 {
        share(self.state.oracle_secs, self.state.rust_secs)
    }

    pub fn render(&self) -> String {
        let s = &self.state;
        let mut out = String::new();
        let rate = if s.wall_secs > 0.0 {
            s.cases as f64 / s.wall_secs
        } else {
            0.0
        };
        out += &format!(
            "live run: seed {} shard {} positions {}..{} (resume with --resume)\n",
            s.seed, s.shard, self.first, self.next
        );
        out += &format!(
            "{} {} ({:.0}/s over {:.0}s): agree {}, unsupported {}, oracle failures {}\n",
            self.unit, s.cases, rate, s.wall_secs, s.agree, s.unsupported, s.oracle_failures
        );
        if s.skipped > 0 {
            out += &format!("  not made by PyTorch (counted apart): {}\n", s.skipped);
        }
        for (class, n) in &self.failures {
            out += &format!("  oracle {class}: {n}\n");
        }
        out += &format!(
            "divergences: {} raw, {} unique; kept {} this run\n",
            s.divergences_raw,
            s.signatures.len(),
            self.kept.len()
        );
        for k in &self.kept {
            out += &format!("  {} ({}) -> {}\n", k.signature, k.original_id, k.path);
        }
        for (label, n) in &s.tallies {
            if label.starts_with("lane ") && s.wall_secs > 0.0 {
                let rate = *n as f64 / s.wall_secs;
                out += &format!("  {label}: {n} ({rate:.2}/s)\n");
            } else {
                out += &format!("  {label}: {n}\n");
            }
        }
        let total = s.oracle_secs + s.rust_secs;
        out += &format!(
            "time: oracle {:.1}s ({:.1}%), Rust side {:.1}s ({:.1}%)\n",
            s.oracle_secs,
            100.0 * share(s.oracle_secs, s.rust_secs),
            s.rust_secs,
            if total > 0.0 {
                100.0 * s.rust_secs / total
            } else {
                0.0
            }
        );
        out
    }
}

fn share(oracle: f64, rust: f64) -> f64 {
    if oracle + rust > 0.0 {
        oracle / (oracle + rust)
    } else {
        0.0
    }
}

/// The reference's result, a panic included (as a divergence, never a crash).
pub fn eval_reference(case: &Case) -> ResultLine {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eval_case(case))) {
        Ok(r) => r,
        Err(p) => ResultLine {
            id: case.id.clone(),
            outcome: Outcome::Error(PyException {
                type_name: "<torchspec panic>".into(),
                message: p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
            }),
            wiring: None,
        },
    }
}

/// Judge one case with `oracle`; the oracle's time is added to `oracle_time`.
pub fn judge(
    oracle: &mut impl Oracle,
    family: &str,
    case: &Case,
    oracle_time: &mut Duration,
) -> (Finding, Option<oracle::Reply>, ResultLine) {
    let ours = eval_reference(case);
    let t = Instant::now();
    let reply = oracle.eval(case);
    *oracle_time += t.elapsed();
    match reply {
        Err(f) => (Finding::OracleFailed(f), None, ours),
        Ok(reply) => (
            compare(family, case, &reply.result, &ours),
            Some(reply),
            ours,
        ),
    }
}

/// Shrink a divergence of `signature` found on generated case `index`, and
/// judge the shrunk case once more under its regression name (its golden is
/// that reply). None when the oracle fails on the final case.
pub fn shrink_divergence(
    oracle: &mut impl Oracle,
    gen: &Generator,
    seed: u64,
    index: u64,
    signature: &str,
    budget: usize,
    oracle_time: &mut Duration,
) -> Option<Kept> {
    let name = regress::regression_name(gen.family(index), signature);
    shrink_divergence_as(
        oracle,
        gen,
        (seed, index),
        signature,
        name,
        budget,
        oracle_time,
    )
}

/// [`shrink_divergence`] kept under `name` (a later regression of a
/// signature whose first one is fixed: [`regress::free_name`]).
pub fn shrink_divergence_as(
    oracle: &mut impl Oracle,
    gen: &Generator,
    (seed, index): (u64, u64),
    signature: &str,
    name: String,
    budget: usize,
    oracle_time: &mut Duration,
) -> Option<Kept> {
    let family = gen.family(index);
    let mut tree = gen.tree(seed, index);
    let shrunk = shrink::shrink(&mut *tree, &name, budget, |c| {
        matches!(judge(oracle, family, c, oracle_time).0,
            Finding::Diverge { signature: s, .. } if s == signature)
    });
    let (finding, reply, ours) = judge(oracle, family, &shrunk.case, oracle_time);
    let (Finding::Diverge { signature: s, diff }, Some(reply)) = (finding, reply) else {
        return None;
    };
    Some(Kept {
        name,
        signature: s,
        family: family.to_string(),
        original_id: gen.id(seed, index),
        case: shrunk.case,
        golden_line: reply.line,
        golden: reply.result,
        ours,
        diff,
        shrink_steps: shrunk.steps,
    })
}

/// Counters shared by the workers.
#[derive(Default)]
struct Shared {
    next: AtomicU64,
    stop: AtomicBool,
    cases: AtomicU64,
    agree: AtomicU64,
    unsupported: AtomicU64,
    skipped: AtomicU64,
    oracle_failures: AtomicU64,
    divergences_raw: AtomicU64,
    oracle_nanos: AtomicU64,
    rust_nanos: AtomicU64,
    /// Positions done at or past the watermark (the resume point).
    done: Mutex<(u64, BTreeSet<u64>)>,
    signatures: Mutex<BTreeSet<String>>,
    failures: Mutex<BTreeMap<&'static str, u64>>,
    tallies: Mutex<BTreeMap<String, u64>>,
    /// Serializes writes to the corpus and the failure log.
    write: Mutex<()>,
}

impl Shared {
    fn mark_done(&self, j: u64) {
        let mut guard = self.done.lock().expect("not poisoned");
        let (watermark, above) = &mut *guard;
        above.insert(j);
        while above.remove(watermark) {
            *watermark += 1;
        }
    }
}

enum Event {
    Line(String),
    Kept(KeptLine),
    Fatal(String),
}

/// Run the live fuzzer on generated spec cases.
pub fn run(cfg: &Config) -> Result<Summary> {
    run_target(cfg, Cases::new)
}

/// Run the live fuzzer on `T`s (one built by `make` in each worker).
pub fn run_target<T: Target>(
    cfg: &Config,
    make: impl Fn() -> T + Clone + Send + 'static,
) -> Result<Summary> {
    let mut prior = if cfg.resume && cfg.state.exists() {
        let s = State::load(&cfg.state)?;
        if s.seed != cfg.seed || s.shard != cfg.shard.to_string() {
            return Err(Error::new(format!(
                "{} is the state of seed {} shard {}, not seed {} shard {}",
                cfg.state.display(),
                s.seed,
                s.shard,
                cfg.seed,
                cfg.shard
            )));
        }
        s
    } else {
        State {
            seed: cfg.seed,
            shard: cfg.shard.to_string(),
            ..State::default()
        }
    };
    let first = prior.next;
    let end = cfg
        .count
        .map(|c| first.saturating_add(c))
        .unwrap_or(u64::MAX);
    let shared = Arc::new(Shared::default());
    shared.next.store(first, Ordering::SeqCst);
    shared.done.lock().expect("fresh").0 = first;
    *shared.signatures.lock().expect("fresh") = prior.signatures.clone();
    let log_dir = cfg
        .oracle
        .log
        .clone()
        .unwrap_or_else(|| cfg.state.with_file_name("oracle-logs"));
    std::fs::create_dir_all(&log_dir).map_err(|e| Error::io(&log_dir, e))?;
    let started = Instant::now();
    let deadline = cfg.time.map(|t| started + t);
    let (tx, rx) = mpsc::channel::<Event>();

    let mut handles = Vec::new();
    for w in 0..cfg.jobs.max(1) {
        let shared = Arc::clone(&shared);
        let tx = tx.clone();
        let cfg = cfg.clone();
        let mut cmd = cfg.oracle.clone();
        cmd.log = Some(log_dir.join(format!("oracle-{w}.log")));
        let make = make.clone();
        let handle = std::thread::Builder::new()
            .name(format!("live-{w}"))
            .stack_size(256 << 20)
            .spawn(move || worker(&cfg, make(), cmd, &shared, end, deadline, &tx))
            .map_err(|e| Error::new(format!("cannot start a worker thread: {e}")))?;
        handles.push(handle);
    }
    drop(tx);

    let bar = progress_bar(cfg, end - first, T::UNIT);
    let mut kept = Vec::new();
    let mut fatal = None;
    let mut last_status = Instant::now();
    let mut last_save = Instant::now();
    let snapshot = |prior: &State, shared: &Shared, wall: f64| -> State {
        let mut s = prior.clone();
        s.next = shared.done.lock().expect("not poisoned").0;
        s.cases += shared.cases.load(Ordering::Relaxed);
        s.agree += shared.agree.load(Ordering::Relaxed);
        s.unsupported += shared.unsupported.load(Ordering::Relaxed);
        s.skipped += shared.skipped.load(Ordering::Relaxed);
        s.oracle_failures += shared.oracle_failures.load(Ordering::Relaxed);
        s.divergences_raw += shared.divergences_raw.load(Ordering::Relaxed);
        s.signatures = shared.signatures.lock().expect("not poisoned").clone();
        for (label, n) in shared.tallies.lock().expect("not poisoned").iter() {
            *s.tallies.entry(label.clone()).or_default() += n;
        }
        s.oracle_secs += shared.oracle_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        s.rust_secs += shared.rust_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        s.wall_secs += wall;
        s
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Event::Line(l)) => say(&bar, l),
            Ok(Event::Kept(k)) => {
                say(
                    &bar,
                    format!(
                        "kept {} ({}, shrunk in {} steps)",
                        k.name, k.signature, k.shrink_steps
                    ),
                );
                prior.kept.push(k.name.clone());
                kept.push(k);
            }
            Ok(Event::Fatal(why)) => {
                shared.stop.store(true, Ordering::SeqCst);
                fatal = Some(why);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let wall = started.elapsed().as_secs_f64();
        let s = snapshot(&prior, &shared, wall);
        let this_run = shared.cases.load(Ordering::Relaxed);
        let lanes = lane_rates(&shared.tallies.lock().expect("not poisoned"), wall);
        let msg = format!(
            "{:.0} {}/s{lanes} | {} divergences ({} unique) | oracle {:.1}% of time",
            this_run as f64 / wall.max(1e-9),
            T::UNIT,
            s.divergences_raw,
            s.signatures.len(),
            100.0 * share(s.oracle_secs, s.rust_secs)
        );
        bar.set_position(this_run);
        bar.set_message(msg.clone());
        if !cfg.progress && last_status.elapsed() >= Duration::from_secs(30) {
            eprintln!("[{:.0}s] {} {} | {msg}", wall, s.cases, T::UNIT);
            last_status = Instant::now();
        }
        if last_save.elapsed() >= Duration::from_secs(10) {
            s.save(&cfg.state)?;
            last_save = Instant::now();
        }
    }
    for h in handles {
        let _ = h.join();
    }
    bar.finish_and_clear();
    let state = snapshot(&prior, &shared, started.elapsed().as_secs_f64());
    state.save(&cfg.state)?;
    if let Some(why) = fatal {
        return Err(Error::new(why));
    }
    let failures = shared.failures.lock().expect("not poisoned").clone();
    Ok(Summary {
        next: state.next,
        state,
        kept,
        failures,
        first,
        unit: T::UNIT,
    })
}

/// The rate of each lane a target tallies (`lane NAME` labels, this run's
/// counts over `wall` seconds), as ` (NAME R/s, ...)`; empty without lanes.
pub fn lane_rates(tallies: &BTreeMap<String, u64>, wall: f64) -> String {
    let lanes: Vec<String> = tallies
        .iter()
        .filter_map(|(label, n)| {
            let lane = label.strip_prefix("lane ")?;
            Some(format!("{lane} {:.2}/s", *n as f64 / wall.max(1e-9)))
        })
        .collect();
    if lanes.is_empty() {
        String::new()
    } else {
        format!(" ({})", lanes.join(", "))
    }
}

/// A line above the bar, or on stderr when there is no bar.
fn say(bar: &indicatif::ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

fn progress_bar(cfg: &Config, len: u64, unit: &str) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if !cfg.progress {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let bar = if len == u64::MAX {
        ProgressBar::new_spinner()
    } else {
        ProgressBar::new(len)
    };
    let template = if len == u64::MAX {
        format!("{{spinner}} {{elapsed_precise}} {{pos}} {unit} | {{msg}}")
    } else {
        "{elapsed_precise} [{bar:30}] {pos}/{len} | {msg}".to_string()
    };
    bar.set_style(
        ProgressStyle::with_template(&template)
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

#[allow(clippy::too_many_arguments)]
fn worker<T: Target>(
    cfg: &Config,
    mut target: T,
    cmd: OracleCommand,
    shared: &Shared,
    end: u64,
    deadline: Option<Instant>,
    tx: &mpsc::Sender<Event>,
) {
    let mut oracle = ProcessOracle::new(cmd);
    // The first start is not a position: a missing Python or torch ends the run.
    let t = Instant::now();
    if let Err(f) = oracle.start() {
        let _ = tx.send(Event::Fatal(f.to_string()));
        return;
    }
    shared
        .oracle_nanos
        .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    loop {
        if shared.stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let j = shared.next.fetch_add(1, Ordering::SeqCst);
        if j >= end {
            break;
        }
        let busy = Instant::now();
        let mut oracle_time = Duration::ZERO;
        let index = cfg.shard.index(j);
        let (step, tallies) = target.judge(&mut oracle, cfg.seed, index, &mut oracle_time);
        shared.cases.fetch_add(1, Ordering::Relaxed);
        {
            let mut t = shared.tallies.lock().expect("not poisoned");
            for label in tallies {
                *t.entry(label).or_default() += 1;
            }
        }
        match step {
            Step::Agree => {
                shared.agree.fetch_add(1, Ordering::Relaxed);
            }
            Step::Unsupported => {
                shared.unsupported.fetch_add(1, Ordering::Relaxed);
            }
            Step::Skipped => {
                shared.skipped.fetch_add(1, Ordering::Relaxed);
            }
            Step::OracleFailed {
                id,
                failure,
                record,
            } => note_failure(cfg, shared, tx, &id, &failure, &record),
            Step::Diverge {
                id,
                signature,
                name,
                case,
            } => {
                shared.divergences_raw.fetch_add(1, Ordering::Relaxed);
                let fresh = shared
                    .signatures
                    .lock()
                    .expect("not poisoned")
                    .insert(signature.clone());
                let kept_before = target.is_kept(&cfg.root, &name);
                note_divergence(cfg, shared, tx, &id, &signature, &name, kept_before, case);
                if fresh && !kept_before {
                    // One keeper at a time: keeping appends to shared files.
                    let _guard = shared.write.lock().expect("not poisoned");
                    let kept = target.keep(&mut oracle, cfg, index, &signature, &mut oracle_time);
                    let _ = tx.send(match kept {
                        Ok(Some(k)) => Event::Kept(k),
                        Ok(None) => Event::Line(format!(
                            "divergence on {id} not kept: the oracle failed on the shrunk item"
                        )),
                        Err(e) => Event::Fatal(format!("cannot keep {name}: {e}")),
                    });
                }
            }
        }
        let total = busy.elapsed();
        shared
            .oracle_nanos
            .fetch_add(oracle_time.as_nanos() as u64, Ordering::Relaxed);
        shared.rust_nanos.fetch_add(
            total.saturating_sub(oracle_time).as_nanos() as u64,
            Ordering::Relaxed,
        );
        shared.mark_done(j);
    }
}

/// Log a divergence, every one of them (a signature is kept once, but a
/// later divergence of it may be another bug: the log says which cases to
/// look at), and append it to the run's divergence log.
#[allow(clippy::too_many_arguments)]
fn note_divergence(
    cfg: &Config,
    shared: &Shared,
    tx: &mpsc::Sender<Event>,
    id: &str,
    signature: &str,
    name: &str,
    kept_before: bool,
    case: Option<serde_json::Value>,
) {
    let note = if kept_before {
        format!(" (its signature is kept already: {name})")
    } else {
        String::new()
    };
    let _ = tx.send(Event::Line(format!(
        "divergence on {id}: {signature}{note}"
    )));
    let mut record = serde_json::Map::new();
    record.insert("id".into(), id.into());
    record.insert("signature".into(), signature.into());
    record.insert("name".into(), name.into());
    record.insert("kept_before".into(), kept_before.into());
    if let Some(case) = case {
        record.insert("case".into(), case);
    }
    append_log(
        cfg,
        shared,
        "divergences.jsonl",
        &serde_json::Value::Object(record),
    );
}

/// Append `record` as one line to the log `file` beside the state file
/// (one writer at a time).
fn append_log(cfg: &Config, shared: &Shared, file: &str, record: &serde_json::Value) {
    let log = cfg.state.with_file_name(file);
    let _guard = shared.write.lock().expect("not poisoned");
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| writeln!(f, "{record}"));
}

/// Count an oracle failure and append it to the run's failure log.
fn note_failure(
    cfg: &Config,
    shared: &Shared,
    tx: &mpsc::Sender<Event>,
    id: &str,
    failure: &OracleFailure,
    record: &serde_json::Value,
) {
    shared.oracle_failures.fetch_add(1, Ordering::Relaxed);
    *shared
        .failures
        .lock()
        .expect("not poisoned")
        .entry(failure.class())
        .or_default() += 1;
    let _ = tx.send(Event::Line(format!("oracle failure on {id}: {failure}")));
    append_log(cfg, shared, "oracle-failures.jsonl", record);
}
