//! The `torchspec` command line: `eval` a case file, `check` the corpus
//! against the goldens, `gen` generated cases.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use torchspec::case::file::eval_file;
use torchspec::case::CaseKind;
use torchspec::conformance;
use torchspec::export::passes::Pass;
use torchspec::shard::Shard;
use torchspec::testing::{derived, lookup, sample, strategies};

#[derive(Parser)]
#[command(
    name = "torchspec",
    version,
    about = "A reference implementation of PyTorch's dynamic-shape specs, checked against PyTorch"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate a case file and print one result line per case.
    Eval { file: PathBuf },
    /// Compare every corpus case with PyTorch's goldens and print the conformance table.
    Check {
        /// The repository root (holding `corpus/`).
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also list allow-listed divergences.
        #[arg(long)]
        verbose: bool,
        /// Only the cases of shard k of n (by a hash of the case id; the n
        /// shards together check every case exactly once).
        #[arg(long, value_name = "K/N")]
        shard: Option<Shard>,
        /// Score against the goldens of this torch version
        /// (`corpus/goldens/torch-X/`) instead of 2.15.0: a disagreement on a
        /// line whose golden differs from 2.15.0's is drift (its own
        /// column), not a failure.
        #[arg(long)]
        torch: Option<String>,
    },
    /// Differential fuzzing against PyTorch: generated cases checked live
    /// against a pool of `oracle/capture.py --serve` workers; divergences
    /// shrunk, deduplicated and kept in `corpus/regressions/`.
    Fuzz(FuzzArgs),
    /// Which goldens changed between two torch versions' golden sets,
    /// classified, with a minimal example and a `python -c` one-liner per
    /// class (markdown on stdout).
    Drift {
        /// The older version (e.g. 2.14.1).
        a: String,
        /// The newer version (e.g. 2.15.0).
        b: String,
        /// The repository root (holding `corpus/`).
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also write the report as an HTML page.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Print JSON (counts, examples and their one-liners) instead of markdown.
        #[arg(long)]
        json: bool,
    },
    /// Print the program report of an exported program (`.pt2` or program JSON).
    Program {
        path: PathBuf,
        /// Also report unknown fields, newer minor versions and unknown enum
        /// values (each with its JSON path); exit 1 when there are any.
        #[arg(long)]
        strict: bool,
        /// What the loading process registered beyond `import torch`: custom
        /// ops and pytree types the program names (`oracle/registrations.py`
        /// writes the file).
        #[arg(long)]
        registrations: Option<PathBuf>,
    },
    /// Run graph passes on an exported program (`shared/passes.md`) and print
    /// the report of the result.
    Transform {
        path: PathBuf,
        // The help lists the names of their declaration, `Pass`.
        #[arg(
            long = "pass",
            required = true,
            help = format!("A pass to run, in order (repeatable): {}", Pass::names())
        )]
        passes: Vec<String>,
        /// Also write the transformed program (`.pt2` or program JSON).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// What the loading process registered beyond `import torch`: custom
        /// ops and pytree types the program names (`oracle/registrations.py`
        /// writes the file).
        #[arg(long)]
        registrations: Option<PathBuf>,
    },
    /// Answer input probes (`shared/probe-format.md`: `{"id", "args",
    /// "kwargs"}` per line) as `ep.module()(*args, **kwargs)` would before
    /// its first kernel; a line that cannot be read gets a `bad_probe`
    /// result and the exit status is non-zero at the end.
    CheckInputs {
        program: PathBuf,
        probes: PathBuf,
        /// What the loading process registered beyond `import torch`: custom
        /// ops and pytree types the program names (`oracle/registrations.py`
        /// writes the file).
        #[arg(long)]
        registrations: Option<PathBuf>,
    },
    /// Write a probe file (`shared/probe-format.md`) for a program: its
    /// example inputs as saved (`data/sample_inputs/`, with their data), its
    /// inputs at the saved hints, each dynamic dim at min-1, min, max, max+1
    /// and zero, past a derived-dim relation, static dims off by one, wrong
    /// rank, dtype and structure, a missing, extra and misnamed kwarg, scalar
    /// inputs out of range.
    Probes {
        program: PathBuf,
        /// What the loading process registered beyond `import torch`.
        #[arg(long)]
        registrations: Option<PathBuf>,
    },
    /// The program's example inputs (`data/sample_inputs/model.pt`, read
    /// with the bounded pickle reader) as one probe-file line, id
    /// `STEM/sample`: what `check-inputs` reads.
    SampleInputs { program: PathBuf },
    /// Print generated cases (JSON Lines), deterministic in the seed.
    Gen {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: usize,
        /// The case kind to generate (`plan`: model plans of `fuzz --live --programs`).
        #[arg(long, default_value = CaseKind::Build.name())]
        kind: String,
    },
    /// Rewrite the repro packets of `corpus/regressions/` (after a fix, or
    /// when the `python -c` generator changes).
    Packets {
        #[arg(long, default_value = ".")]
        root: PathBuf,
    },
    /// Print, for each case of a case file (or only `--id ID`), a Python
    /// one-liner that shows its golden result with stock PyTorch: the shell
    /// command `python -c '…'`, or with `--source` the bare Python source
    /// (one line per case; a case too deep for `python -c` is an error line
    /// on stderr).
    Repro {
        file: PathBuf,
        #[arg(long)]
        id: Option<String>,
        #[arg(long)]
        source: bool,
    },
    /// The tensors of an exported program's `ep.state_dict` and
    /// `ep.constants`: one JSON line each (`docs/weights-format.md`), or a
    /// safetensors file.
    Weights {
        path: PathBuf,
        /// Add the sha256 of the bytes of each tensor's `contiguous()`.
        #[arg(long)]
        sha256: bool,
        /// Write the tensors to this safetensors file instead of printing
        /// lines.
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
        /// What the loading process registered beyond `import torch`
        /// (`oracle/registrations.py` writes the file).
        #[arg(long)]
        registrations: Option<PathBuf>,
    },
}

/// mimalloc: evaluation and loading allocate many small objects (14% fewer
/// instructions than the system allocator on a generated case file, same output).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `torchspec fuzz --live`'s options.
#[derive(clap::Args)]
struct FuzzArgs {
    /// Run against the live oracle (the only mode).
    #[arg(long, required = true)]
    live: bool,
    /// Mutated program files instead of spec cases (`oracle/mutate.py`'s
    /// mutants of the zoo, read by torch.export.load, the C++ deserializer
    /// and torchspec; kept in `corpus/mutants/`, Python-versus-C++ findings
    /// in `docs/upstream/`).
    #[arg(long)]
    mutate: bool,
    /// Generated programs instead of spec cases: model plans
    /// (`src/live/plan.rs`) exported by PyTorch (`oracle/plans.py`), every
    /// row of `check` compared; kept in `corpus/programs/`. With --mutate:
    /// mutants of generated programs instead of the zoo's.
    #[arg(long)]
    programs: bool,
    /// With --mutate --programs: mutants made from each generated program.
    #[arg(long, requires = "programs", default_value_t = 32)]
    mutants_per_program: u64,
    /// Generated `export_spec` cases (what a spec does to export, make_fx
    /// and compile; `shared/export-spec-format.md`) instead of the default
    /// families: their oracle takes tens of milliseconds a case.
    #[arg(long, conflicts_with_all = ["mutate", "programs"])]
    export_spec: bool,
    /// With --mutate: do not compare program reports when both load (faster).
    #[arg(long, requires = "mutate")]
    no_reports: bool,
    /// Stop after this many cases.
    #[arg(long)]
    count: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    time: Option<f64>,
    /// Oracle worker processes (one Rust thread each).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Only this shard of the seed's cases (index mod n).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Continue where the state file says the last run stopped.
    #[arg(long)]
    resume: bool,
    /// The state file (position, totals, signatures seen).
    #[arg(long, default_value = DEFAULT_STATE)]
    state: PathBuf,
    /// The repository root (holding `corpus/` and `oracle/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The Python with PyTorch.
    #[arg(long, default_value = ".oracle/bin/python")]
    python: PathBuf,
    /// Seconds an oracle worker may take on one case before it is
    /// killed, restarted and the case reported.
    #[arg(long, default_value_t = 20.0)]
    timeout: f64,
    /// Oracle round trips a shrink may take.
    #[arg(long, default_value_t = 400)]
    shrink_budget: usize,
    /// No progress bar (a status line every 30 s instead).
    #[arg(long)]
    no_progress: bool,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `torchspec sample-inputs`: the example inputs as a probe line.
fn sample_inputs(program: &Path, out: &mut impl Write) -> torchspec::Result<()> {
    let bytes = std::fs::read(program).map_err(|e| torchspec::Error::io(program, e))?;
    let stem = program.file_stem().unwrap_or_default().to_string_lossy();
    let line = torchspec::conformance::programs::sample_probe_line(&bytes, &stem)
        .map_err(|e| e.in_file(program))?
        .ok_or_else(|| {
            torchspec::Error::new("the archive has no `data/sample_inputs/`").in_file(program)
        })?;
    let _ = writeln!(out, "{line}");
    Ok(())
}

/// `torchspec probes`: one probe-file line per derived probe, its id
/// prefixed with the program's file stem (`cond/derived/ok/hints`); a probe
/// with a value that has no VALUE form is left out, with a note on stderr.
fn write_probes(
    program: &Path,
    registrations: Option<&Path>,
    out: &mut impl Write,
) -> torchspec::Result<()> {
    let (ep, _) = load_program(
        program,
        torchspec::export::schema::Mode::Default,
        registrations,
    )?;
    let stem = program.file_stem().unwrap_or_default().to_string_lossy();
    let (lines, left_out) = torchspec::conformance::programs::derived_probe_lines(&ep, &stem);
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    for why in left_out {
        eprintln!("{}: {why}", program.display());
    }
    Ok(())
}

/// One function per subcommand; each writes to `out` and says how to exit.
fn run(cli: Cli) -> torchspec::Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let code = match cli.command {
        Command::Eval { file } => eval_file(&file, &mut out).map(|_| ExitCode::SUCCESS)?,
        Command::Repro { file, id, source } => repro(&file, id.as_deref(), source, &mut out)?,
        Command::CheckInputs {
            program,
            probes,
            registrations,
        } => check_inputs(&program, &probes, registrations.as_deref(), &mut out)?,
        Command::SampleInputs { program } => {
            sample_inputs(&program, &mut out)?;
            ExitCode::SUCCESS
        }
        Command::Probes {
            program,
            registrations,
        } => {
            write_probes(&program, registrations.as_deref(), &mut out)?;
            ExitCode::SUCCESS
        }
        Command::Weights {
            path,
            sha256,
            out: file,
            registrations,
        } => {
            weights(
                &path,
                sha256,
                file.as_deref(),
                registrations.as_deref(),
                &mut out,
            )?;
            ExitCode::SUCCESS
        }
        Command::Program {
            path,
            strict,
            registrations,
        } => program(&path, strict, registrations.as_deref(), &mut out)?,
        Command::Transform {
            path,
            passes,
            out: out_path,
            registrations,
        } => transform(
            &path,
            &passes,
            out_path.as_deref(),
            registrations.as_deref(),
            &mut out,
        )?,
        Command::Fuzz(args) => fuzz(args, &mut out)?,
        Command::Packets { root } => {
            for name in torchspec::live::regress::rewrite_packets(&root)? {
                let _ = writeln!(out, "rewrote corpus/regressions/packets/{name}.md");
            }
            ExitCode::SUCCESS
        }
        Command::Drift {
            a,
            b,
            root,
            html,
            json,
        } => drift(&root, (&a, &b), html.as_deref(), json, &mut out)?,
        Command::Check {
            root,
            verbose,
            shard,
            torch,
        } => check(
            &root,
            verbose,
            shard.unwrap_or(Shard::ALL),
            torch.as_deref(),
            &mut out,
        )?,
        Command::Gen { seed, count, kind } => gen(seed, count, &kind, &mut out)?,
    };
    let _ = out.flush();
    Ok(code)
}

/// `torchspec repro`: the `python -c` one-liner (or its source) of each case.
fn repro(
    file: &Path,
    id: Option<&str>,
    source: bool,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    let mut found = false;
    torchspec::case::file::each_case_in(file, |line, case| {
        if id.is_some_and(|want| want != case.id) {
            return Ok(());
        }
        found = true;
        match torchspec::repro::python_one_liner(&case) {
            Ok(src) if source => {
                let _ = writeln!(out, "{src}");
            }
            Ok(src) => {
                let _ = writeln!(out, "{}", torchspec::repro::python_c_of(&src));
            }
            Err(e) => eprintln!("{}:{line}: `{}`: {e}", file.display(), case.id),
        }
        Ok(())
    })?;
    if let (Some(want), false) = (id, found) {
        return Err(torchspec::Error::new(format!("no case `{want}`")).in_file(file));
    }
    Ok(ExitCode::SUCCESS)
}

/// `torchspec check-inputs`: one result line per probe line; an error
/// after them when some line could not be read.
fn check_inputs(
    program: &Path,
    probes: &Path,
    registrations: Option<&Path>,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    let (ep, regs) = load_program(
        program,
        torchspec::export::schema::Mode::Default,
        registrations,
    )?;
    let lines = torchspec::export::inputs::probe::read_probes_in(probes, &regs)?;
    let mut bad = 0usize;
    for line in torchspec::export::inputs::check_probe_lines(&ep, &lines) {
        bad += usize::from(line.get("bad_probe").is_some());
        let _ = writeln!(out, "{}", torchspec::json::to_serde(&line));
    }
    if bad > 0 {
        let _ = out.flush();
        return Err(torchspec::Error::new(format!(
            "{bad} probe line(s) could not be read (see their bad_probe results)"
        ))
        .in_file(probes));
    }
    Ok(ExitCode::SUCCESS)
}

/// `torchspec program`: the report; in strict mode, exit 1 on findings.
fn program(
    path: &Path,
    strict: bool,
    registrations: Option<&Path>,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    let mode = if strict {
        torchspec::export::schema::Mode::Strict
    } else {
        torchspec::export::schema::Mode::Default
    };
    let (ep, _) = load_program(path, mode, registrations)?;
    let _ = writeln!(out, "{}", torchspec::json::report(&ep));
    if ep.diagnostics.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let _ = out.flush();
    for d in &ep.diagnostics {
        eprintln!("{}: {d}", path.display());
    }
    Ok(ExitCode::FAILURE)
}

/// `torchspec transform`: the report after the passes, and the program
/// written back with `-o`.
fn transform(
    path: &Path,
    passes: &[String],
    out_path: Option<&Path>,
    registrations: Option<&Path>,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    use torchspec_pyval::Raise;
    let (ep, _) = load_program(
        path,
        torchspec::export::schema::Mode::Default,
        registrations,
    )?;
    // Refuse an output name before any work, as a usage error.
    let format = out_path
        .map(torchspec::export::serialize::OutFormat::of)
        .transpose()?;
    let (report, result) = match torchspec::export::passes::transform(&ep, passes) {
        Ok(t) => (torchspec::json::report(&t), Some(t)),
        Err(Raise::Exception(e)) => (
            serde_json::json!({"error": {"type": e.type_name, "message": e.message}}),
            None,
        ),
        Err(Raise::Unsupported(why)) => {
            return Err(torchspec::Error::new(format!(
                "unsupported by the reference: {why}"
            )))
        }
    };
    let _ = writeln!(out, "{report}");
    if let (Some(o), Some(format)) = (out_path, format) {
        let Some(t) = result else {
            return Err(torchspec::Error::new(format!(
                "cannot write `{}`: a pass raised in PyTorch, so there is no program to write",
                o.display()
            )));
        };
        let bytes = torchspec::export::serialize::write_bytes(&t, o, format)?;
        std::fs::write(o, bytes).map_err(|e| torchspec::Error::io(o, e))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The live fuzzer's state file (`target/live/mutants-state.json` with --mutate).
const DEFAULT_STATE: &str = "target/live/state.json";

/// `torchspec fuzz --live`: generated cases against a pool of oracle workers.
fn fuzz(args: FuzzArgs, out: &mut impl Write) -> torchspec::Result<ExitCode> {
    let secs = |s: f64, what: &str| {
        std::time::Duration::try_from_secs_f64(s)
            .map_err(|_| torchspec::Error::new(format!("--{what} {s}: not a duration")))
    };
    let cfg = torchspec::live::Config {
        oracle: oracle_command(&args.root, args.python, secs(args.timeout, "timeout")?),
        root: args.root,
        seed: args.seed,
        count: args.count,
        time: args.time.map(|t| secs(t, "time")).transpose()?,
        jobs: args.jobs,
        shard: args.shard.unwrap_or(Shard::ALL),
        // Mutant runs keep their own state beside the case runs'.
        state: match args.state {
            s if args.mutate && args.programs && s == Path::new(DEFAULT_STATE) => {
                s.with_file_name("program-mutants-state.json")
            }
            s if args.mutate && s == Path::new(DEFAULT_STATE) => {
                s.with_file_name("mutants-state.json")
            }
            s if args.programs && s == Path::new(DEFAULT_STATE) => {
                s.with_file_name("programs-state.json")
            }
            s if args.export_spec && s == Path::new(DEFAULT_STATE) => {
                s.with_file_name("export-spec-state.json")
            }
            s => s,
        },
        resume: args.resume,
        shrink_budget: args.shrink_budget,
        progress: !args.no_progress && std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let summary = if args.mutate {
        let registrations = torchspec::conformance::programs::zoo_registrations(&cfg.root)?;
        let (root, reports) = (cfg.root.clone(), !args.no_reports);
        let generated = args.programs.then_some(args.mutants_per_program);
        let round_trips = cfg.state.with_extension("round-trips.jsonl");
        torchspec::live::run_target(&cfg, move || {
            let m = torchspec::live::mutants::Mutants::new(&root, registrations.clone(), reports)
                .logging_round_trips_to(round_trips.clone());
            match generated {
                Some(k) => m.of_generated(k),
                None => m,
            }
        })?
    } else if args.programs {
        let registrations = torchspec::conformance::programs::zoo_registrations(&cfg.root)?;
        let root = cfg.root.clone();
        torchspec::live::run_target(&cfg, move || {
            torchspec::live::programs::Programs::new(&root, registrations.clone())
        })?
    } else if args.export_spec {
        torchspec::live::run_target(&cfg, || {
            torchspec::live::Cases::of(&torchspec::live::gen::OPT_IN_FAMILIES)
        })?
    } else {
        torchspec::live::run(&cfg)?
    };
    let _ = write!(out, "{}", summary.render());
    Ok(ExitCode::SUCCESS)
}

/// How `torchspec fuzz --live` starts its oracle workers.
fn oracle_command(
    root: &Path,
    python: PathBuf,
    timeout: std::time::Duration,
) -> torchspec::live::oracle::OracleCommand {
    torchspec::live::oracle::OracleCommand {
        python: if python.is_relative() && !python.exists() {
            root.join(&python)
        } else {
            python
        },
        capture: root.join("oracle/capture.py"),
        log: None,
        timeout,
        startup_timeout: std::time::Duration::from_secs(600),
    }
}

/// `torchspec drift A B`: markdown (or JSON), and an HTML page with `--html`.
fn drift(
    root: &Path,
    (a, b): (&str, &str),
    html: Option<&Path>,
    json: bool,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    let report = torchspec::drift::compare(root, a, b)?;
    if json {
        let _ = writeln!(out, "{}", report.to_json());
    } else {
        let _ = write!(out, "{}", report.markdown());
    }
    if let Some(path) = html {
        std::fs::write(path, report.html())
            .map_err(|e| torchspec::Error::new(format!("cannot write: {e}")).in_file(path))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `torchspec check`: the conformance table, then each failure; exit 1 on any.
fn check(
    root: &Path,
    verbose: bool,
    shard: Shard,
    torch: Option<&str>,
    out: &mut impl Write,
) -> torchspec::Result<ExitCode> {
    let matrix = torch.filter(|v| *v != conformance::TARGET_TORCH);
    let mut report = match matrix {
        Some(v) => conformance::run_matrix(root, v)?,
        None => conformance::run_shard(root, shard)?,
    };
    report.cases.retain(|c| shard.has_id(&c.id));
    if let Some(v) = matrix {
        let drift = report.totals().drift;
        let _ = writeln!(
            out,
            "goldens of torch {v}; drift: {drift} line(s) where the reference disagrees with torch {v} and torch {v} differs from torch {}",
            conformance::TARGET_TORCH
        );
        let _ = write!(out, "{}", report.matrix_table());
    } else {
        let _ = write!(out, "{}", report.table());
    }
    if verbose {
        for c in report.cases.iter().filter(|c| c.allowed.is_some()) {
            let reason = c.allowed.as_ref().map_or("", |a| a.reason.as_str());
            let _ = writeln!(out, "allow-listed `{}`: {reason}", c.id);
        }
    }
    let failures = report.failures();
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let _ = writeln!(out);
    for f in &failures {
        let _ = writeln!(out, "FAIL {f}");
    }
    let _ = writeln!(out, "{} failure(s)", failures.len());
    Ok(ExitCode::FAILURE)
}

/// `torchspec gen`: `count` generated cases of `kind`, deterministic in `seed`.
fn gen(seed: u64, count: usize, kind: &str, out: &mut impl Write) -> torchspec::Result<ExitCode> {
    if kind == "plan" {
        // Model plans (`fuzz --live --programs`), one JSON object a line.
        for index in 0..count as u64 {
            let plan = torchspec::live::plan::Plan::generate(seed, index);
            let _ = writeln!(out, "{}", plan.to_json());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let cases = if let Some(kind) = CaseKind::from_name(kind) {
        kind_cases(kind, seed, count)
    } else if kind == "derived" {
        sample(
            derived::derived_case(),
            seed,
            count,
            &format!("derived-gen-s{seed}"),
        )
    } else if let Some(family) = kind.strip_prefix("derived-") {
        let strategy = derived::family_case(family).ok_or_else(|| {
            torchspec::Error::new(format!(
                "no derived family `{family}` (one of {})",
                derived::FAMILIES.join(", ")
            ))
        })?;
        sample(
            strategy,
            seed,
            count,
            &format!("derived-gen-{family}-s{seed}"),
        )
    } else {
        return Err(torchspec::Error::new(format!(
            "no generator for kind `{kind}` yet"
        )));
    };
    for case in cases {
        let _ = writeln!(out, "{}", case.to_json());
    }
    Ok(ExitCode::SUCCESS)
}

/// `count` generated cases of one case kind (`torchspec gen --kind KIND`).
fn kind_cases(kind: CaseKind, seed: u64, count: usize) -> Vec<torchspec::case::Case> {
    match kind {
        CaseKind::Build => sample(
            strategies::build_case(),
            seed,
            count,
            &format!("gen-build-s{seed}"),
        ),
        CaseKind::Lookup => sample(
            lookup::lookup_case(),
            seed,
            count,
            &format!("gen-lookup-s{seed}"),
        ),
        CaseKind::SourceName => sample(
            lookup::source_name_case(),
            seed,
            count,
            &format!("gen-source-name-s{seed}"),
        ),
        CaseKind::ExportSpec => sample(
            torchspec::testing::export_spec::export_spec_case(),
            seed,
            count,
            &format!("export-spec-gen-s{seed}"),
        ),
    }
}

/// `torchspec weights`: the lines of `docs/weights-format.md` on
/// stdout, or (`-o`) a safetensors file and a count on stderr.
fn weights(
    path: &std::path::Path,
    sha256: bool,
    out: Option<&std::path::Path>,
    registrations: Option<&Path>,
    w: &mut impl Write,
) -> torchspec::Result<()> {
    let (ep, _) = load_program(
        path,
        torchspec::export::schema::Mode::Default,
        registrations,
    )?;
    let in_file = |e: torchspec::Error| e.in_file(path);
    if let Some(file) = out {
        let tensors = ep.tensors().map_err(in_file)?;
        let n = torchspec::weights::write_safetensors(&tensors, file)?;
        eprintln!("wrote {n} tensor(s) to {}", file.display());
        return Ok(());
    }
    for line in torchspec::weights::lines(&ep, sha256).map_err(in_file)? {
        let _ = writeln!(w, "{line}");
    }
    Ok(())
}

/// The program at `path`, loaded in `mode` by a process with
/// `--registrations FILE` (or a plain `import torch`), and those registrations.
fn load_program(
    path: &Path,
    mode: torchspec::export::schema::Mode,
    registrations: Option<&Path>,
) -> torchspec::Result<(
    torchspec::export::ExportedProgram,
    std::sync::Arc<torchspec::export::registrations::Registrations>,
)> {
    let regs = read_registrations(registrations)?;
    let ep = torchspec::export::ExportedProgram::load_path_in(path, mode, &regs)?;
    Ok((ep, regs))
}

/// `--registrations FILE`, or a plain `import torch`.
fn read_registrations(
    path: Option<&std::path::Path>,
) -> torchspec::Result<std::sync::Arc<torchspec::export::registrations::Registrations>> {
    use torchspec::export::registrations::Registrations;
    Ok(match path {
        Some(p) => std::sync::Arc::new(torchspec::json::read_registrations(p)?),
        None => Registrations::plain().clone(),
    })
}
