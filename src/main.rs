//! The `torchspec` command line: `eval` a case file, `check` the corpus
//! against the goldens, `gen` generated cases.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use torchspec::case::file::eval_file;
use torchspec::conformance;
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
    },
    /// Print the program report of an exported program (`.pt2` or program JSON).
    Program {
        path: PathBuf,
        /// Also report unknown fields, newer minor versions and unknown enum
        /// values (each with its JSON path); exit 1 when there are any.
        #[arg(long)]
        strict: bool,
    },
    /// Run graph passes on an exported program (`shared/passes.md`) and print
    /// the report of the result.
    Transform {
        path: PathBuf,
        /// A pass to run, in order (repeatable): dce,
        /// remove-runtime-assertions, add-inline-constraint-assertions,
        /// common-getitem-elimination, remove-unnecessary-copy.
        #[arg(long = "pass", required = true)]
        passes: Vec<String>,
        /// Also write the transformed program (`.pt2` or program JSON).
        #[arg(short = 'o', long = "out")]
        out: Option<PathBuf>,
    },
    /// Answer input probes (`{"id", "kind", "args", "kwargs"}` per line) as
    /// `ep.module()(*args, **kwargs)` would before its first kernel.
    CheckInputs { program: PathBuf, probes: PathBuf },
    /// Print generated cases (JSON Lines), deterministic in the seed.
    Gen {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: usize,
        /// The case kind to generate.
        #[arg(long, default_value = "build")]
        kind: String,
    },
    /// Print the Rust wire types generated from torch's export schema.yaml
    /// (`> src/export/schema/generated.rs`).
    SchemaGen {
        /// The schema (default: the committed copy of upstream's).
        #[arg(long)]
        schema: Option<PathBuf>,
    },
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

fn run(cli: Cli) -> torchspec::Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match cli.command {
        Command::Eval { file } => {
            eval_file(&file, &mut out)?;
        }
        Command::CheckInputs { program, probes } => {
            let ep = torchspec::export::ExportedProgram::load_path(&program)?;
            let probes = torchspec::export::inputs::probe::read_probes(&probes)?;
            let outcomes = torchspec::export::inputs::check_probes(&ep, &probes);
            for (p, o) in probes.iter().zip(&outcomes) {
                let _ = writeln!(out, "{}", o.to_json(&p.id));
            }
        }
        Command::SchemaGen { schema } => {
            let yaml = match schema {
                Some(p) => std::fs::read_to_string(&p).map_err(|e| torchspec::Error::io(&p, e))?,
                None => torchspec::export::schema::codegen::SCHEMA_YAML.to_string(),
            };
            let _ = write!(
                out,
                "{}",
                torchspec::export::schema::codegen::generate(&yaml)?
            );
        }
        Command::Program { path, strict } => {
            let mode = if strict {
                torchspec::export::schema::Mode::Strict
            } else {
                torchspec::export::schema::Mode::Default
            };
            let ep = torchspec::export::ExportedProgram::load_path_with(&path, mode)?;
            let _ = writeln!(out, "{}", ep.report());
            if !ep.diagnostics.is_empty() {
                let _ = out.flush();
                for d in &ep.diagnostics {
                    eprintln!("{}: {d}", path.display());
                }
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Transform {
            path,
            passes,
            out: out_path,
        } => {
            let ep = torchspec::export::ExportedProgram::load_path(&path)?;
            // Refuse an output name before any work, as a usage error.
            let format = match &out_path {
                Some(o) => Some(torchspec::export::serialize::OutFormat::of(o)?),
                None => None,
            };
            let (report, result) = match torchspec::export::passes::transform(&ep, &passes) {
                Ok(t) => (t.report(), Some(t)),
                Err(torchspec::export::passes::PassError::Python(e)) => (
                    serde_json::json!({"error": {"type": e.type_name, "message": e.message}}),
                    None,
                ),
                Err(torchspec::export::passes::PassError::Unsupported(why)) => {
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
                let bytes = torchspec::export::serialize::write_bytes(&t, &o, format)?;
                std::fs::write(&o, bytes).map_err(|e| torchspec::Error::io(&o, e))?;
            }
        }
        Command::Check { root, verbose } => {
            let report = conformance::run(&root)?;
            let _ = write!(out, "{}", report.table());
            if verbose {
                for c in report.cases.iter().filter(|c| c.allowed.is_some()) {
                    let _ = writeln!(
                        out,
                        "allow-listed `{}`: {}",
                        c.id,
                        c.allowed.as_deref().unwrap_or("")
                    );
                }
            }
            let failures = report.failures();
            if !failures.is_empty() {
                let _ = writeln!(out);
                for f in &failures {
                    let _ = writeln!(out, "FAIL {f}");
                }
                let _ = writeln!(out, "{} failure(s)", failures.len());
                let _ = out.flush();
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Gen { seed, count, kind } => {
            let cases = match kind.as_str() {
                "build" => sample(
                    strategies::build_case(),
                    seed,
                    count,
                    &format!("gen-build-s{seed}"),
                ),
                "derived" => sample(
                    derived::derived_case(),
                    seed,
                    count,
                    &format!("derived-gen-s{seed}"),
                ),
                other if other.starts_with("derived-") => {
                    let family = &other["derived-".len()..];
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
                }
                "lookup" => sample(
                    lookup::lookup_case(),
                    seed,
                    count,
                    &format!("gen-lookup-s{seed}"),
                ),
                "source_name" => sample(
                    lookup::source_name_case(),
                    seed,
                    count,
                    &format!("gen-source-name-s{seed}"),
                ),
                other => {
                    return Err(torchspec::Error::new(format!(
                        "no generator for kind `{other}` yet"
                    )))
                }
            };
            for case in cases {
                let _ = writeln!(out, "{}", case.to_json());
            }
        }
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}
